// `executor sweep`: runs an experiment file's grid (or resumes one), one line per run and an overall bar on stderr.
import { existsSync } from 'node:fs'
import { resolve, join, dirname, basename } from 'node:path'
import { parseFlags, validateRunConfig } from './config.js'
import { loadExperiment, PROFILE_NAMES } from './experiment.js'
import { buildCells, buildPlan, checkBenchmarks, estimatePlan, formatDuration, newSeed, atLine, COSTS } from './sweep-plan.js'
import { createSweep, openSweep, executeSweep, countEntries, benchmarkName, shapeText, cellConfigs } from './sweep.js'
import { checkSwarmNodes, largestNodes } from './sweep-nodes.js'
import { analyseSweep, formatSweepEnd } from './sweep-summary.js'
import { calibrateToFile, readCalibration, CALIBRATION_DEFAULTS } from './calibrate.js'
import { formatProbe } from './cli-calibrate.js'
import { createSweepProgress } from './progress.js'
import { EXIT, NsError, badFlag, exitCodeOf, formatError } from './errors.js'
import { BACKENDS, DEFAULTS } from './defaults.js'

export const SWEEP_OPTIONS = Object.freeze({
  out: { type: 'string', short: 'o' },
  profile: { type: 'string' },
  'dry-run': { type: 'boolean' },
  resume: { type: 'string' },
  'fail-fast': { type: 'boolean' },
  seed: { type: 'string' },
  backend: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  verbose: { type: 'boolean', short: 'v' },
  'no-report': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' }
})

export const SWEEP_HELP = `Usage: executor sweep <experiment.yml> [options]
       executor sweep --resume <sweep-dir>

Runs an experiment file's grid (strategies x instances [x nodes] x benchmarks x loads, repeated) and writes
<out>/<sweep-id>/sweep.json (plan, seed, status of every run) and one run folder per run, each
written as soon as it ends. One deployment serves every load level and repeat of a shape.
At the end it prints the fit or the per-core table and writes report.html (analyzer report).

Options:
  -o, --out DIR          results folder (default ./${DEFAULTS.out})
      --profile P        ${PROFILE_NAMES.join(' | ')}: the file's named overrides (default: default)
      --dry-run          print the plan (runs, deployments, order, estimated time) and run nothing; with
                         nodes, too few swarm workers is a warning here (without it: exit 2 before any run)
      --resume DIR       finish a sweep folder: skips finished runs, redoes interrupted, failed and degraded ones
      --fail-fast        stop at the first failed run (default: record it and go on)
      --seed N           the order's seed (printed at the start; the same seed gives the same order)
      --backend B        ${BACKENDS.join(' | ')}: overrides the file's backend
      --no-report        do not write <sweep-dir>/report.html (analyzer report) at the end
      --json             print sweep.json (and the analysis) on stdout and nothing else there
  -q, --quiet            no per-run lines on stderr
  -v, --verbose          also every run's own log lines (deploy, load, teardown)
  -h, --help             this help

Ctrl-C stops the current run, removes every process and leaves the folder resumable.
Exit codes: 0 every run done · 1 a run failed or was degraded (a node lost), or Ctrl-C · 2 bad input (file:line named) · 3 a needed part is missing`

/**
 * Parses `executor sweep` arguments.
 * @param {string[]} argv
 */
export function parseSweepArguments (argv) {
  const { values, positionals } = parseFlags(argv, SWEEP_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length > 1) throw new NsError('NS_ERR_BAD_FLAG', `unexpected argument "${positionals[1]}": give one experiment file`)
  if (!positionals.length && !values.resume) throw new NsError('NS_ERR_BAD_FLAG', 'give an experiment file (executor sweep experiments/ibench-smisn.yml) or --resume DIR')
  if (values.profile !== undefined && !PROFILE_NAMES.includes(values.profile)) throw badFlag('--profile', `"${values.profile}" is not allowed; one of: ${PROFILE_NAMES.join(', ')}`)
  if (values.backend !== undefined && !BACKENDS.includes(values.backend)) throw badFlag('--backend', `"${values.backend}" is not allowed; one of: ${BACKENDS.join(', ')}`)
  let seed
  if (values.seed !== undefined) {
    seed = Number(values.seed)
    if (!Number.isInteger(seed) || seed < 1 || seed >= 2 ** 31) throw badFlag('--seed', `"${values.seed}" is not allowed; allowed: a whole number >= 1 and < 2147483648`)
  }
  if (values.resume !== undefined && (values.profile || values.seed || values.backend)) {
    throw badFlag('--resume', 'takes the plan, seed and backend from the sweep folder; drop --profile, --seed and --backend')
  }
  return {
    help: false,
    file: positionals[0],
    resume: values.resume,
    out: resolve(values.out ?? DEFAULTS.out),
    profile: values.profile,
    dryRun: Boolean(values['dry-run']),
    failFast: Boolean(values['fail-fast']),
    seed,
    backend: values.backend,
    json: Boolean(values.json),
    quiet: Boolean(values.quiet),
    verbose: Boolean(values.verbose),
    noReport: Boolean(values['no-report'])
  }
}

/**
 * The experiment's calibration: read from its file, or made first when the file is missing (unless dryRun).
 * @returns {Promise<any|null>}
 */
async function calibrationFor (exp, { backend, dryRun, say, signal }) {
  if (!exp.usesLevels) return null
  if (existsSync(exp.calibration)) return readCalibration(exp.calibration)
  if (dryRun) return null
  const c = exp.calibrate
  const probes = join(dirname(exp.calibration), `${basename(exp.calibration, '.json')}-probes`)
  let config
  try {
    config = validateRunConfig({
      strategy: c.strategy ?? 'up',
      instances: String(c.instances ?? 1),
      benchmark: exp.benchmarks[0],
      app: exp.app,
      param: Object.entries(exp.params[exp.benchmarks[0] ?? ''] ?? {}).map(([k, v]) => `${k}=${v}`),
      duration: String(c.duration ?? CALIBRATION_DEFAULTS.duration),
      warmup: String(c.warmup ?? CALIBRATION_DEFAULTS.warmup),
      driver: exp.driver,
      backend: backend ?? exp.backend,
      concurrency: '1',
      out: probes,
      quiet: true
    })
  } catch (err) {
    throw atLine(exp, err)
  }
  say(`calibration ${exp.calibration} is missing: calibrating ${config.benchmark} on ${config.strategy} x${config.instances} first`)
  let n = 0
  return calibrateToFile(config, exp.calibration, {
    confirm: c.confirm,
    maxConcurrency: c['max-concurrency'],
    maxProbes: c['max-probes'],
    signal,
    onProbe: p => say(formatProbe(p, ++n))
  })
}

/** The most a missing calibration adds: every probe of the budget, each warm-up + duration + a run's overhead. */
function calibrationBound (c) {
  const probes = c['max-probes'] ?? CALIBRATION_DEFAULTS.maxProbes
  return probes * ((c.duration ?? CALIBRATION_DEFAULTS.duration) + (c.warmup ?? CALIBRATION_DEFAULTS.warmup) + COSTS.run)
}

/**
 * Before anything runs, a sweep with nodes needs that many ready workers: the shortfall is an error naming the nodes
 * line (exit 2; no engine: exit 3), or for a dry run a warning printed with the plan.
 * @returns {Promise<string|null>} the warning (dry run only)
 */
async function nodesWarning (exp, cells, { dryRun }) {
  try {
    await checkSwarmNodes(cells)
    return null
  } catch (err) {
    const largest = largestNodes(cells)
    const e = atLine(exp, err, largest?.paths, largest?.config.strategy)
    if (!dryRun) throw e
    return `${e.message} (without --dry-run the sweep stops here, exit ${exitCodeOf(e)})`
  }
}

/** The dry-run's view: grid, counts, estimate, seed and the order. */
function formatPlan (exp, cells, plan, { seed, estimate, backend, calibration, warnings }) {
  const lines = [`experiment ${exp.name} (profile ${exp.profile}) from ${exp.file}`]
  const perStrategy = axis => exp.strategies.map(s => `${s} ${axis[s].map(i => i.value).join(',')}`).join(' · ')
  const loads = [...new Set(Object.values(exp.loads).flat().map(l => l.value ?? DEFAULTS.concurrency))].join(',')
  const nodes = exp.nodes ? ` × nodes (${perStrategy(exp.nodes)})` : ''
  lines.push(`grid: ${exp.benchmarks.map(b => b ?? DEFAULTS.benchmark).join(', ')} × ${exp.perNode ? 'instances per node' : 'instances'} (${perStrategy(exp.instances)})${nodes} × ${exp.loadKey} ${loads} = ${cells.length} cells × ${exp.repeats} repeat${exp.repeats === 1 ? '' : 's'}`)
  lines.push(`plan: ${estimate.runs} runs on ${estimate.deployments} deployments (order: ${exp.order}), each ${exp.warmup ?? DEFAULTS.warmup} s warm-up + ${exp.duration ?? DEFAULTS.duration} s`)
  const backendName = backend ?? exp.backend ?? DEFAULTS.backend
  lines.push(`estimated time: ${formatDuration(estimate.seconds)} on the ${backendName} backend${backendName === 'auto' ? ' (figures of the local backend; on Swarm each deployment adds about 12 s)' : ''}`)
  if (exp.usesLevels) {
    lines.push(calibration
      ? `calibration ${exp.calibration}: relaxed ${calibration.relaxed.concurrency}, exhausted ${calibration.exhausted?.concurrency ?? '-'}, ${calibration.cores} cores`
      : `calibration ${exp.calibration} is missing: it is made first, adding up to ${formatDuration(calibrationBound(exp.calibrate))}`)
  }
  for (const w of warnings) lines.push(`warning: ${w}`)
  lines.push(`seed ${seed} (the same --seed gives the same order)`, 'order:')
  for (const e of plan.slice(0, 200)) lines.push(`  ${String(e.index + 1).padStart(4)}  ${entryText(cells[e.cell])}  repeat ${e.repeat}`)
  if (plan.length > 200) lines.push(`  ... ${plan.length - 200} more (--json lists them all)`)
  return lines.join('\n')
}

function entryText (cell) {
  const c = cell.config
  const load = c.rate !== undefined ? `rate ${c.rate}/s` : `c=${c.concurrency ?? '?'}`
  return `${shapeText(c).padEnd(c.nodes ? 17 : 7)} ${benchmarkName(c).padEnd(9)} ${load}${cell.level ? ` (${cell.level})` : ''}`
}

/** The analyzer's HTML report in the sweep folder; a report that cannot be made is said, not fatal to the sweep. */
async function reportOf (sweep) {
  try {
    const { writeReport } = await import('../analyzer/report.js')
    const r = await writeReport([sweep.dir], { x: sweep.experiment.analysis?.x })
    return { path: r.path, error: null }
  } catch (err) {
    return { path: null, error: err.message }
  }
}

/**
 * `executor sweep ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function sweepCommand (argv, { stdout, stderr, signal }) {
  const startedAt = Date.now()
  try {
    const args = parseSweepArguments(argv)
    if (args.help) { stdout.write(SWEEP_HELP + '\n'); return EXIT.OK }
    const bar = createSweepProgress({ enabled: !args.json && !args.quiet && Boolean(stderr.isTTY), stream: stderr })
    const say = args.quiet ? () => {} : line => bar.line(line)
    let sweep
    if (args.resume) {
      if (args.file) say(`--resume: the plan comes from ${args.resume}/sweep.json; ${args.file} is not read`)
      sweep = await openSweep(args.resume)
      const cells = cellConfigs(sweep)
      await checkSwarmNodes([...new Set(sweep.plan.filter(e => e.status !== 'done').map(e => cells[e.cell]))])
        .catch(err => { throw Object.assign(err, { message: `--resume ${args.resume}: ${err.message}` }) })
      const left = sweep.plan.filter(e => e.status !== 'done').length
      say(`resuming ${sweep.id}: ${sweep.plan.length - left} of ${sweep.plan.length} runs done, ${left} to run (seed ${sweep.seed})`)
    } else {
      const exp = await loadExperiment(args.file, { profile: args.profile })
      await checkBenchmarks(exp)
      const seed = args.seed ?? newSeed()
      let calibration = await calibrationFor(exp, { backend: args.backend, dryRun: true, say, signal })
      let cells = buildCells(exp, { out: args.out, backend: args.backend, calibration })
      let plan = buildPlan(cells, { repeats: exp.repeats, order: exp.order, seed })
      // nodes are Swarm worker nodes: the estimate is the swarm's whatever backend the file says (auto)
      const backendName = (args.backend ?? exp.backend) === 'swarm' || exp.nodes ? 'swarm' : 'local'
      const warning = await nodesWarning(exp, cells, { dryRun: args.dryRun })
      if (args.dryRun) {
        const estimate = estimatePlan(plan, cells, { backendName })
        const warnings = warning ? [warning] : []
        stdout.write((args.json
          ? JSON.stringify({ experiment: exp.name, profile: exp.profile, seed, estimate, warnings, calibration: calibration && { relaxed: calibration.relaxed, exhausted: calibration.exhausted, cores: calibration.cores }, plan: plan.map(e => ({ ...e, label: entryText(cells[e.cell]).replace(/\s+/g, ' ') })) }, null, 2)
          : formatPlan(exp, cells, plan, { seed, estimate, backend: args.backend ?? (exp.nodes ? 'swarm' : undefined), calibration, warnings })) + '\n')
        return EXIT.OK
      }
      if (exp.usesLevels && !calibration) {
        calibration = await calibrationFor(exp, { backend: args.backend, dryRun: false, say, signal })
        cells = buildCells(exp, { out: args.out, backend: args.backend, calibration })
        plan = buildPlan(cells, { repeats: exp.repeats, order: exp.order, seed })
      }
      sweep = await createSweep({ exp, cells, plan, seed, out: args.out, backend: args.backend, calibration })
      say(`sweep ${sweep.id}: ${sweep.estimate.runs} runs on ${sweep.estimate.deployments} deployments · seed ${seed} · estimated ${formatDuration(sweep.estimate.seconds)}`)
    }
    const total = sweep.plan.length
    const started = Date.now()
    const doneAtStart = countEntries(sweep.plan).done
    // time left: the runs still to go at the mean time a run has taken so far (the plan's estimate before the first)
    const secondsLeft = () => {
      const c = countEntries(sweep.plan)
      const left = c.pending + c.running
      const finished = c.done + c.failed + c.degraded - doneAtStart
      return finished > 0 ? left * (Date.now() - started) / 1000 / finished : (sweep.estimate?.seconds ?? 0) * left / Math.max(1, total)
    }
    let current = { label: '', eta: 0, at: Date.now() }
    const draw = (label) => {
      const c = countEntries(sweep.plan)
      const left = Math.max(0, current.eta - (Date.now() - current.at) / 1000)
      bar.update({ done: c.done, total, failed: c.failed + c.degraded, remaining: formatDuration(left), current: label })
    }
    await executeSweep(sweep, {
      log: args.verbose ? line => say(`  ${line}`) : () => {},
      signal,
      failFast: args.failFast,
      onStart (e) {
        current = { label: e.label, eta: secondsLeft(), at: Date.now() }
        draw(e.label)
      },
      onProgress: () => draw(current.label),
      onEnd (e, run) {
        const n = `[${String(e.index + 1).padStart(String(total).length)}/${total}]`
        const s = run?.summary
        const what = e.status === 'done' && s
          ? `${Math.round(s.throughput).toLocaleString('en')} req/s · p95 ${s.latency.p95.toFixed(1)} ms · ${s.errors} errors · busiest core ${run.cpu?.highest ?? '-'}%`
          : `${e.status.toUpperCase()}: ${String(e.reason).split('\n')[0]}`
        say(`${n} ${e.label} · repeat ${e.repeat}  ${what}  (${e.seconds ?? 0} s)`)
        current = { label: '', eta: secondsLeft(), at: Date.now() }
        draw('')
      }
    })
    bar.done()
    const analysis = sweep.status === 'interrupted' ? null : await analyseSweep(sweep)
    if (analysis && !args.noReport) analysis.report = await reportOf(sweep)
    stdout.write((args.json
      ? JSON.stringify({ ...sweep, analysis }, null, 2)
      : formatSweepEnd(sweep, analysis, { seconds: (Date.now() - startedAt) / 1000 })) + '\n')
    return sweep.status === 'done' ? EXIT.OK : EXIT.FAILED
  } catch (err) {
    stderr.write(formatError(err) + '\n')
    return signal?.aborted ? EXIT.FAILED : exitCodeOf(err)
  }
}
