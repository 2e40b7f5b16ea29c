// A sweep's plan: the grid's cells as validated run configs, their order per repeat (seeded), and how long it takes;
// planSweep puts them together with the calibration and the swarm check, once, before anything runs.
import { existsSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { randomInt } from 'node:crypto'
import { NsError, badFlag, exitCodeOf } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { checkOption, flagOf, keyOf } from '../../lib/options.js'
import { WHOLE_SERVER_KEYS, RUN_OPTION, validateRunConfig } from '../../lib/run-options.js'
import { seededRandom } from '../../lib/random.js'
import { freeBytes, makeWritableDir } from '../../lib/run-files.js'
import { loadBenchmark, targetName } from '../../benchmarks/index.js'
import { loadExperiment, resolveLevel } from './experiment.js'
import { shapeKeyOf } from '../shape-runner.js'
import { calibrateToFile, readCalibration, CALIBRATION_DEFAULTS } from '../calibrate/calibrate.js'
import { checkSwarmNodes, largestNodes } from './sweep-nodes.js'
import { typicalProbes, checkProbeDuration } from '../capacity/capacity.js'
import { SWEEP_BYTES, SWEEP_SAMPLES_DEFAULT, checkRoom, plannedCost, samplesFormat } from './sweep-estimate.js'

/**
 * Seconds a run costs beyond warm-up + duration (sampler, summary, files), and a deployment per strategy (measured
 * here).
 */
export const COSTS = Object.freeze({
  run: 0.5,
  deploy: { local: { up: 0.5, cm: 0.8, pm2: 1.8, hs: 1.2 }, swarm: { up: 12, cm: 12, pm2: 14, hs: 15 } }
})

/** A fresh seed for the order (printed, so `--seed` reproduces it). */
export const newSeed = () => randomInt(1, 2 ** 31 - 1)

/**
 * A copy of the list in a random order (Fisher-Yates).
 * @template T
 * @param {T[]} list
 * @param {() => number} random
 * @returns {T[]}
 */
export function shuffle (list, random) {
  const a = [...list]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

/**
 * Every cell of the grid as run values (typed, as the file gives them) and a validated run config, so a bad value
 * reads like the flag's error, with the experiment's line in front. Calibration levels resolve through `calibration`;
 * without it they validate with a placeholder and `config.concurrency` is null until resolveLevels fills it in.
 * @param {any} exp from loadExperiment
 * @param {{ out: string, backend?: string, calibration?: any, cwd?: string }} opts backend overrides the file's
 */
export function buildCells (exp, { out, backend, calibration, cwd = process.cwd() }) {
  if (exp.nodes && backend === 'local') {
    throw badFlag('--backend', `local cannot run ${exp.file}: its nodes (line ${exp.lineOf('nodes')}) are Swarm worker nodes; use --backend swarm or auto`)
  }
  const cells = []
  for (const benchmark of exp.benchmarks) {
    for (const strategy of exp.strategies) {
      for (const node of exp.nodes?.[strategy] ?? [null]) {
        for (const inst of exp.instances[strategy]) {
          for (const load of exp.loads[strategy]) {
            cells.push(buildCell(exp, { benchmark, strategy, node, inst, load, index: cells.length }, { out, backend, cwd }))
          }
        }
      }
    }
  }
  return calibration ? resolveLevels(exp, cells, calibration) : cells
}

/** One cell of the grid: its run values, the YAML path of each axis value, its calibration level and its config. */
function buildCell (exp, { benchmark, strategy, node, inst, load, index }, { out, backend, cwd }) {
  const level = typeof load.value === 'string' ? load.value : null
  // a setting that only some strategies take (lb: hs's alone) goes to those
  const settings = Object.fromEntries(Object.entries(exp.settings)
    .filter(([key]) => !RUN_OPTION[key].strategies || RUN_OPTION[key].strategies.includes(strategy)))
  const values = {
    samples: SWEEP_SAMPLES_DEFAULT, // a sweep keeps its samples gzipped unless the file says otherwise
    ...settings,
    strategy,
    instances: exp.perNode ? inst.value * node.value : inst.value,
    nodes: node?.value,
    benchmark,
    // a level validates with 1 connection until the calibration says how many; a capacity search chooses its own
    ...(exp.capacity ? {} : { [exp.loadKey]: level ? 1 : load.value }),
    app: exp.app,
    params: exp.params[benchmark ?? ''] ?? {},
    backend: backend ?? exp.settings.backend,
    out,
    quiet: true
  }
  const paths = { '--instances': inst.path, '--nodes': node?.path ?? [], [`--${exp.loadKey}`]: load.path }
  const config = checkCell(exp, values, paths, strategy, cwd)
  return { index, values, paths, level, capacity: exp.capacity, shape: shapeKeyOf(config), config: level ? { ...config, concurrency: null } : config }
}

function checkCell (exp, values, paths, strategy, cwd) {
  try {
    const config = validateRunConfig(values, { cwd })
    if (exp.capacity) checkProbeDuration(config)
    return config
  } catch (err) {
    throw atLine(exp, err, paths, strategy)
  }
}

/**
 * The cells with their calibration levels as connections ("relaxed*cores" -> 6), checked as --concurrency is.
 * @param {any} exp
 * @param {any[]} cells from buildCells
 * @param {any} calibration a calibration file's content
 */
export function resolveLevels (exp, cells, calibration) {
  return cells.map(cell => {
    if (!cell.level) return cell
    const concurrency = resolveLevel(cell.level, calibration)
    try {
      checkOption(RUN_OPTION.concurrency, concurrency)
    } catch (err) {
      throw atLine(exp, err, cell.paths, cell.values.strategy)
    }
    return { ...cell, values: { ...cell.values, concurrency }, config: Object.freeze({ ...cell.config, concurrency }) }
  })
}

/**
 * A run value's error as "<file>:<line>: <key> (<flag>) (strategy s): <reason>", its line found from the error's data
 * (`details.key`, `details.param`) and the YAML path of the cell's value. Other errors pass through.
 * @param {any} exp
 * @param {any} err
 * @param {Record<string, (string|number)[]>} [paths] YAML paths by flag
 * @param {string} [strategy]
 */
export function atLine (exp, err, paths = {}, strategy) {
  if (!(err instanceof NsError) || !/^NS_ERR_BAD_(FLAG|APP)$/.test(err.code)) return err
  const row = RUN_OPTION[err.details?.key]
  const flag = row ? flagOf(row) : null
  let key = row?.experiment ?? 'strategies'
  if (flag === '--benchmark') key = exp.benchmarks.length > 1 ? 'benchmarks' : 'benchmark'
  // instances-per-node x nodes is the run's --instances: the message names the product
  if (flag === '--instances' && exp.perNode) key = 'instances-per-node'
  const param = err.details?.param
  const reason = row ? err.details.reason : err.message
  let line = exp.lineOf(key, paths[flag] ?? [])
  // a refused param: its own line, whether params are shared ({ key }) or per benchmark ({ benchmark: { key } })
  if (param) line = Math.max(exp.lineOf(key, [param]), ...exp.benchmarks.filter(Boolean).map(b => exp.lineOf(key, [b, param])))
  return fail('EXPERIMENT_VALUE_INVALID', {
    file: exp.file, line, key, flag, strategy, param, reason, perNode: key === 'instances-per-node', hint: err.hint
  }, { cause: err })
}

/**
 * Loads each benchmark and checks its params, as a run would before it starts, naming the line on failure.
 * @param {any} exp
 */
export async function checkBenchmarks (exp) {
  // a whole server has no benchmark to load: each cell's config checks its files
  if (exp.settings.server !== undefined || exp.settings.image !== undefined) return
  for (const benchmark of exp.benchmarks) {
    try {
      const bench = await loadBenchmark({ benchmark: benchmark ?? (exp.app ? undefined : RUN_OPTION.benchmark.default), app: exp.app })
      bench.options?.(exp.params[benchmark ?? ''] ?? {})
    } catch (err) {
      const e = err instanceof NsError ? err : badFlag(flagOf(RUN_OPTION.params), err.message, { key: keyOf(RUN_OPTION.params) })
      throw atLine(exp, e)
    }
  }
}

/**
 * The order of runs. `shapes`: the shapes in a random order, each deployed once, its cells shuffled anew for every
 * repeat. `blocks`: every repeat is a block holding each cell once, shapes and cells shuffled per block (drift cannot
 * line up with any factor, at the cost of one deployment per shape per repeat: a block never opens with the shape the
 * block before closed with, which the shape runner would keep deployed).
 * @param {{ index: number, shape: string }[]} cells
 * @param {{ repeats: number, order: 'shapes'|'blocks', seed: number }} opts
 * @returns {{ index: number, cell: number, repeat: number }[]}
 */
export function buildPlan (cells, { repeats, order, seed }) {
  const random = seededRandom(seed)
  const byShape = new Map()
  for (const c of cells) {
    if (!byShape.has(c.shape)) byShape.set(c.shape, [])
    byShape.get(c.shape).push(c.index)
  }
  const seq = []
  if (order === 'blocks') {
    let last = null
    for (let r = 1; r <= repeats; r++) {
      const shapes = shuffle([...byShape.keys()], random)
      // a block opened by the shape the one before closed with would run on that deployment: the next repeat deploys
      if (shapes.length > 1 && shapes[0] === last) shapes.push(shapes.shift())
      for (const shape of shapes) {
        for (const cell of shuffle(byShape.get(shape), random)) seq.push({ cell, repeat: r })
      }
      last = shapes.at(-1)
    }
  } else {
    for (const shape of shuffle([...byShape.keys()], random)) {
      for (let r = 1; r <= repeats; r++) {
        for (const cell of shuffle(byShape.get(shape), random)) seq.push({ cell, repeat: r })
      }
    }
  }
  return seq.map((s, index) => ({ index, ...s }))
}

/**
 * Runs, deployments, seconds and bytes of the plan entries still to run (all of them for a new sweep). The plan's
 * figures (warm-up + duration, the requests the load brings, the run's files) give way to what the sweep's finished
 * runs took, per cell where the cell has some, else their mean: `basis` says which.
 * @param {{ cell: number, fresh?: boolean }[]} entries in order
 * @param {{ shape: string, config: any, capacity?: any }[]} cells
 * @param {{ backendName?: string, calibration?: any, measured?: import('./sweep-estimate.js').Measured,
 *   sweepBytes?: boolean }} [opts] the backend that will run (local or swarm); the calibration file's content (its
 *   probes' throughput); what the finished runs cost; sweepBytes: count the sweep's own files (a new sweep)
 */
export function estimatePlan (entries, cells, { backendName = 'local', calibration, measured, sweepBytes = true } = {}) {
  let seconds = 0
  let bytes = sweepBytes ? SWEEP_BYTES.fixed + SWEEP_BYTES.perEntry * entries.length : 0
  let deployments = 0
  let last = null
  const assumed = new Set()
  const bases = new Set()
  const formats = new Set()
  for (const e of entries) {
    const c = cells[e.cell]
    // a capacity search deploys its shape afresh, and so does an entry that is a deployment of its own (adaptive)
    if (c.shape !== last || c.capacity || e.fresh) {
      deployments++
      seconds += (COSTS.deploy[backendName] ?? COSTS.deploy.local)[c.config.strategy] ?? 2
      last = c.shape
    }
    const cellMeasured = measured?.byCell.get(e.cell)
    const m = cellMeasured ?? (measured?.all.n ? measured.all : null)
    if (m) {
      bases.add(cellMeasured ? 'cell' : 'overall')
      seconds += m.seconds / m.n
      bytes += m.bytes / m.n
      continue
    }
    bases.add('plan')
    formats.add(samplesFormat(c.config))
    // a capacity entry is a search: its probes, each a run
    const runs = c.capacity ? typicalProbes(c.capacity) : 1
    const cost = plannedCost(c, { runs, calibration, overhead: COSTS.run })
    seconds += cost.seconds
    bytes += cost.bytes
    if (cost.assumed) assumed.add(targetName(c.config))
  }
  const basis = bases.size > 1 ? 'mixed' : [...bases][0] ?? 'plan'
  return { runs: entries.length, deployments, seconds: Math.round(seconds), bytes: Math.round(bytes), basis, samples: [...formats], assumedRates: [...assumed] }
}

/** The most a missing calibration adds: every probe of the budget, each warm-up + duration + a run's overhead. */
export function calibrationBound (c) {
  const probes = c['max-probes'] ?? CALIBRATION_DEFAULTS.maxProbes
  return probes * ((c.duration ?? CALIBRATION_DEFAULTS.duration) + (c.warmup ?? CALIBRATION_DEFAULTS.warmup) + COSTS.run)
}

/** The backend whose costs the estimate uses: nodes are Swarm worker nodes whatever the file says (auto). */
export const estimateBackend = (exp, backend) => ((backend ?? exp.settings.backend) === 'swarm' || exp.nodes ? 'swarm' : 'local')

/**
 * Makes the experiment's missing calibration file (its `calibrate` settings, on the first benchmark), or reads it.
 * @returns {Promise<any|null>} null when the experiment uses no calibration level
 */
async function calibrationOf (exp, { backend, say, onProbe, signal }) {
  if (!exp.usesLevels) return null
  if (existsSync(exp.calibration)) return readCalibration(exp.calibration)
  const c = exp.calibrate
  const first = exp.benchmarks[0]
  let config
  try {
    config = validateRunConfig({
      strategy: c.strategy ?? 'up',
      instances: c.instances ?? 1,
      benchmark: first,
      app: exp.app,
      params: exp.params[first ?? ''] ?? {},
      ...Object.fromEntries(WHOLE_SERVER_KEYS.filter(k => exp.settings[k] !== undefined).map(k => [k, exp.settings[k]])),
      duration: c.duration ?? CALIBRATION_DEFAULTS.duration,
      warmup: c.warmup ?? CALIBRATION_DEFAULTS.warmup,
      driver: exp.settings.driver,
      backend: backend ?? exp.settings.backend,
      // the levels are found on the set-up the runs use: raw Node unpinned when the file says so (affinity: none)
      ...(exp.settings.affinity !== undefined && RUN_OPTION.affinity.strategies?.includes(c.strategy ?? 'up') && { affinity: exp.settings.affinity }),
      // and on the cores the runs' server is given (--server-cpus), the load kept off them as the runs' is
      ...Object.fromEntries(['serverCpus', 'loadCpus'].filter(k => exp.settings[k] !== undefined).map(k => [k, exp.settings[k]])),
      concurrency: 1,
      out: join(dirname(exp.calibration), `${basename(exp.calibration, '.json')}-probes`),
      quiet: true
    })
  } catch (err) {
    throw atLine(exp, err)
  }
  say(`calibration ${exp.calibration} is missing: calibrating ${config.benchmark} on ${config.strategy} x${config.instances} first`)
  return calibrateToFile(config, exp.calibration, {
    confirm: c.confirm,
    maxConcurrency: c['max-concurrency'],
    maxProbes: c['max-probes'],
    signal,
    onProbe
  })
}

/**
 * Everything a new sweep settles before its first run: the experiment read and checked (every cell validated, every
 * benchmark loaded, the swarm's workers counted when it has nodes), its seeded order and estimate, and its calibration
 * (made first when the file is missing, unless dryRun). A swarm too small for the nodes axis is an error naming the
 * line; for a dry run, a warning.
 * @param {string} file the experiment file
 * @param {{ profile?: string, out: string, backend?: string, connection?: string, seed?: number, dryRun?: boolean,
 *   say?: (line: string) => void, onProbe?: (probe: any) => void, signal?: AbortSignal, check?: (exp: any) => any }}
 *   opts say: what it does, in lines; onProbe: each calibration probe; connection: overrides the file's (as backend
 *   does); check: refuses the experiment before anything else (--until answered's question), or returns the one to plan
 *   (a knee question's N added)
 */
export async function planSweep (file, { profile, out, backend, connection, seed = newSeed(), dryRun = false, say = () => {}, onProbe, signal, check }) {
  const loaded = await loadExperiment(file, { profile })
  const read = check?.(loaded) ?? loaded
  const exp = connection ? { ...read, connection, settings: { ...read.settings, connection } } : read
  // a dry run writes nothing; a sweep's folder must be writable before a calibration or a run starts
  if (!dryRun) await makeWritableDir(out, { flag: '--out' })
  await checkBenchmarks(exp)
  let cells = buildCells(exp, { out, backend })
  const warnings = []
  try {
    await checkSwarmNodes(cells)
  } catch (err) {
    const largest = largestNodes(cells)
    const e = atLine(exp, err, largest?.paths, largest?.config.strategy)
    if (!dryRun) throw e
    warnings.push(`${e.message} (without --dry-run the sweep stops here, exit ${exitCodeOf(e)})`)
  }
  const backendName = estimateBackend(exp, backend)
  const free = await freeBytes(dryRun && !existsSync(out) ? nearestFolder(out) : out)
  if (!dryRun && exp.usesLevels && !existsSync(exp.calibration)) {
    // before calibrating: the runs whose requests the calibration will tell cannot fit even with none at all
    const floor = estimatePlan(buildPlan(cells, { repeats: exp.repeats, order: exp.order, seed }), cells.map(withoutSamples), { backendName })
    checkRoom({ bytes: floor.bytes, free, dir: out, flag: '--out' })
  }
  const calibration = exp.usesLevels &&
    (dryRun ? (existsSync(exp.calibration) ? await readCalibration(exp.calibration) : null) : await calibrationOf(exp, { backend, say, onProbe, signal }))
  if (calibration) cells = resolveLevels(exp, cells, calibration)
  const plan = buildPlan(cells, { repeats: exp.repeats, order: exp.order, seed })
  const estimate = estimatePlan(plan, cells, { backendName, calibration })
  if (!dryRun) checkRoom({ bytes: estimate.bytes, free: await freeBytes(out), dir: out, flag: '--out' })
  return { exp, cells, plan, seed, calibration: calibration || null, estimate, free, out, warnings, backend }
}

/** A cell whose runs keep no samples: what it writes whatever its requests. */
const withoutSamples = (cell) => ({ ...cell, config: { ...cell.config, samples: 'none' } })

/** The folder itself or its nearest parent that exists: the file system a folder not yet made will be on. */
function nearestFolder (dir) {
  let d = resolve(dir)
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d)
  return d
}
