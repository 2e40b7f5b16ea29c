// A sweep's plan: the grid's cells as validated run configs, their order per repeat (seeded), and how long it takes.
import { randomInt } from 'node:crypto'
import { validateRunConfig } from './config.js'
import { loadBenchmark } from '../benchmarks/index.js'
import { NsError, badFlag } from './errors.js'
import { DEFAULTS } from './defaults.js'
import { resolveLevel } from './experiment.js'
import { shapeKeyOf } from './shape-runner.js'
import { seededRandom } from '../analyzer/stats-math.js'

/** Which experiment key a run flag comes from, for messages. */
const KEY_OF_FLAG = { '--strategy': 'strategies', '--instances': 'instances', '--concurrency': 'concurrency', '--rate': 'rate', '--param': 'params', '--app': 'app' }

/** Seconds a run costs beyond warm-up + duration (sampler, summary, files), and a deployment per strategy (measured here). */
export const COSTS = Object.freeze({
  run: 0.5,
  deploy: { local: { up: 0.5, cm: 0.8, pm2: 1.8, hs: 1.2 }, swarm: { up: 12, cm: 12, pm2: 14, hs: 15 } }
})

/** A fresh seed for the order (printed, so `--seed` reproduces it). */
export const newSeed = () => randomInt(1, 2 ** 31 - 1)

function shuffle (list, random) {
  const a = [...list]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

/**
 * Every cell of the grid as flag values and a validated run config (validateRunConfig, so a bad value reads like the
 * flag error, with the experiment's line in front). Calibration levels resolve through `calibration`; without it
 * they validate with a placeholder and `config.concurrency` is null until the calibration exists.
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
            cells.push(buildCell(exp, { benchmark, strategy, node, inst, load, index: cells.length }, { out, backend, calibration, cwd }))
          }
        }
      }
    }
  }
  return cells
}

/** One cell of the grid: its flag values, its calibration level, its shape and its validated config. */
function buildCell (exp, { benchmark, strategy, node, inst, load, index }, { out, backend, calibration, cwd }) {
  const level = typeof load.value === 'string' ? load.value : null
  const resolved = level && calibration ? resolveLevel(level, calibration) : null
  const loadValue = level ? (resolved ?? 1) : load.value
  const values = {
    strategy,
    instances: String(exp.perNode ? inst.value * node.value : inst.value),
    nodes: node ? String(node.value) : undefined,
    benchmark,
    [exp.loadKey]: loadValue === undefined ? undefined : String(loadValue),
    duration: str(exp.duration),
    warmup: str(exp.warmup),
    driver: exp.driver,
    backend: backend ?? exp.backend,
    'cpus-per-instance': str(exp.cpusPerInstance),
    app: exp.app,
    param: Object.entries(exp.params[benchmark ?? ''] ?? {}).map(([k, v]) => `${k}=${v}`),
    lb: strategy === 'hs' ? exp.lb : undefined, // the load balancer is hs's alone
    'ready-timeout': str(exp.readyTimeout),
    out,
    quiet: true
  }
  const paths = { '--instances': inst.path, '--nodes': node?.path ?? [], [`--${exp.loadKey}`]: load.path }
  const config = validateCell(exp, values, paths, strategy, cwd)
  return {
    index,
    values,
    paths,
    level,
    shape: shapeKeyOf(config),
    config: level && !calibration ? { ...config, concurrency: null } : config
  }
}

const str = v => (v === undefined ? undefined : String(v))

function validateCell (exp, values, paths, strategy, cwd) {
  try {
    return validateRunConfig(values, { cwd })
  } catch (err) {
    throw atLine(exp, err, paths, strategy)
  }
}

/** Rewrites a flag error ("--instances: ...") as "<file>:<line>: instances (--instances): ...". */
export function atLine (exp, err, paths = {}, strategy) {
  if (!(err instanceof NsError) || !/^NS_ERR_BAD_(FLAG|APP)$/.test(err.code)) return err
  const m = /^(--[a-z-]+)[:\s]/.exec(err.message)
  const flag = m?.[1]
  let key = flag ? (KEY_OF_FLAG[flag] ?? flag.slice(2)) : 'strategies'
  if (flag === '--benchmark') key = exp.benchmarks.length > 1 ? 'benchmarks' : 'benchmark'
  // instances-per-node x nodes is the run's --instances: the message names the product
  if (flag === '--instances' && exp.perNode) key = 'instances-per-node'
  let rest = m ? err.message.slice(flag.length).replace(/^:\s*/, '').trim() : err.message
  if (key === 'instances-per-node') rest += ' (the run\'s instances = instances-per-node x nodes)'
  let line = exp.lineOf(key, paths[flag] ?? [])
  const param = flag === '--param' ? /^([\w-]+):/.exec(rest)?.[1] : undefined
  // a refused param: its own line, whether params are shared ({ key }) or per benchmark ({ benchmark: { key } })
  if (param) line = Math.max(exp.lineOf(key, [param]), ...exp.benchmarks.filter(Boolean).map(b => exp.lineOf(key, [b, param])))
  const where = strategy ? ` (strategy ${strategy})` : ''
  return new NsError('NS_ERR_BAD_FILE', `${exp.file}:${line}: ${key}${flag ? ` (${flag})` : ''}${where}: ${rest}`, { cause: err, hint: err.hint })
}

/**
 * Loads each benchmark and checks its params, as a run would before it starts, naming the line on failure.
 * @param {any} exp
 */
export async function checkBenchmarks (exp) {
  for (const benchmark of exp.benchmarks) {
    try {
      const bench = await loadBenchmark({ benchmark: benchmark ?? (exp.app ? undefined : DEFAULTS.benchmark), app: exp.app })
      bench.options?.(exp.params[benchmark ?? ''] ?? {})
    } catch (err) {
      const e = err instanceof NsError ? err : new NsError('NS_ERR_BAD_FLAG', `--param: ${err.message}`)
      throw atLine(exp, e)
    }
  }
}

/**
 * The order of runs. `shapes`: the shapes in a random order, each deployed once, its cells shuffled anew for every
 * repeat. `blocks`: every repeat is a block holding each cell once, shapes and cells shuffled per block (drift cannot
 * line up with any factor, at the cost of one deployment per shape per repeat).
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
    for (let r = 1; r <= repeats; r++) {
      for (const shape of shuffle([...byShape.keys()], random)) {
        for (const cell of shuffle(byShape.get(shape), random)) seq.push({ cell, repeat: r })
      }
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
 * Runs, deployments and seconds of the plan entries still to run (all of them for a new sweep).
 * @param {{ cell: number }[]} entries in order
 * @param {{ shape: string, config: any }[]} cells
 * @param {{ backendName?: string }} [opts] the backend that will run (local or swarm)
 */
export function estimatePlan (entries, cells, { backendName = 'local' } = {}) {
  let seconds = 0
  let deployments = 0
  let last = null
  for (const e of entries) {
    const c = cells[e.cell]
    if (c.shape !== last) {
      deployments++
      seconds += (COSTS.deploy[backendName] ?? COSTS.deploy.local)[c.config.strategy] ?? 2
      last = c.shape
    }
    seconds += c.config.warmup + c.config.duration + COSTS.run
  }
  return { runs: entries.length, deployments, seconds: Math.round(seconds) }
}

/** "1 h 02 min", "4 min 10 s", "12 s". */
export function formatDuration (seconds) {
  const s = Math.max(0, Math.round(seconds))
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
  if (s >= 60) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${s} s`
}
