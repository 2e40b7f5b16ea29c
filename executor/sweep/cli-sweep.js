// `executor sweep`: runs an experiment file's grid (or resumes one), one line per run and an overall bar on stderr.
import { resolve } from 'node:path'
import { EXIT, badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { option, optionsHelp, parseCommandLine } from '../../lib/options.js'
import { RUN_OPTION } from '../../lib/run-options.js'
import { PROFILE_NAMES } from './experiment.js'
import { planSweep } from './sweep-plan.js'
import { createSweep, openSweep, executeSweep, countEntries, cellConfigs, isLeft, readSweepJson, saveSweep } from './sweep.js'
import { checkSwarmNodes } from './sweep-nodes.js'
import { analyseSweep } from './sweep-analysis.js'
import { diskText, formatDuration, formatPlan, formatRunLine, formatStatus, formatSweepEnd, planJson } from './sweep-text.js'
import { checkRoom, dirBytes } from './sweep-estimate.js'
import { freeBytes, isNoSpace, sweepFolder } from '../../lib/run-files.js'
import { takeLock } from './sweep-lock.js'
import { endSession, estimateLeft, startSession, sweepStatusOf } from './sweep-status.js'
import { formatProbe } from '../calibrate/calibrate-text.js'
import { createSweepProgress } from '../progress.js'
import { budgetSeconds, checkUntil, planAdaptive, runAdaptive } from './sweep-adaptive.js'
import { lookLine } from './sweep-adaptive-text.js'

/** @type {readonly import('../../lib/options.js').Option[]} */
export const SWEEP_OPTIONS = Object.freeze([
  option({ ...RUN_OPTION.out, help: 'results folder (default ./{default})' }),
  option({
    flag: 'profile',
    type: 'choice',
    choices: PROFILE_NAMES,
    arg: 'P',
    help: `${PROFILE_NAMES.join(' | ')}: the file's named overrides (default: default)`
  }),
  option({
    flag: 'dry-run',
    type: 'boolean',
    help: [
      'print the plan (runs, deployments, order, estimated time and disk, free space) and run',
      'nothing; with nodes, too few swarm workers is a warning here (without it: exit 2 before a run)'
    ]
  }),
  option({ flag: 'resume', type: 'text', arg: 'DIR', help: 'finish a sweep folder: skips finished runs, redoes interrupted, failed and degraded ones' }),
  option({
    flag: 'status',
    type: 'text',
    arg: 'DIR',
    help: [
      'where a sweep folder stands (runs done, failed, left; time and disk; the last error; the run',
      'in flight; whether a sweep process owns it), read only: while it runs elsewhere or once it died'
    ]
  }),
  option({
    flag: 'until',
    type: 'choice',
    choices: ['answered'],
    arg: 'WHEN',
    help: [
      'answered: run only the cells the file\'s question: needs, in blocks of fresh deployments, a look',
      'after each; stop once the question is answered (docs/how-to/adaptive.md)'
    ]
  }),
  option({
    flag: 'budget',
    type: 'number',
    min: 0,
    above: true,
    arg: 'TIME',
    fromText: budgetSeconds,
    help: [
      'with --until: the most time it may take (90s, 30m, 1.5h); it takes a look after each block, as',
      'many blocks as the budget holds by the estimate (without it: the file\'s repeats)'
    ]
  }),
  option({ flag: 'fail-fast', type: 'boolean', help: 'stop at the first failed run (default: record it and go on)' }),
  option({
    flag: 'seed',
    type: 'whole',
    min: 1,
    max: 2 ** 31 - 1,
    arg: 'N',
    help: 'the order\'s seed (printed at the start; the same seed gives the same order)'
  }),
  option({ ...RUN_OPTION.backend, default: undefined, help: `${RUN_OPTION.backend.choices.join(' | ')}: overrides the file's backend` }),
  option({
    ...RUN_OPTION.connection,
    default: undefined,
    help: `${RUN_OPTION.connection.choices.join(' | ')}: overrides the file's connection (close: a connection per request)`
  }),
  option({ flag: 'no-report', type: 'boolean', help: 'do not write <sweep-dir>/report.html (analyzer report) at the end' }),
  option({ flag: 'json', type: 'boolean', help: 'print sweep.json (and the analysis) on stdout and nothing else there' }),
  option({ ...RUN_OPTION.quiet, help: 'no per-run lines on stderr' }),
  option({ flag: 'verbose', short: 'v', type: 'boolean', help: 'also every run\'s own log lines (deploy, load, teardown)' }),
  RUN_OPTION.help
])

export const SWEEP_HELP = `Usage: executor sweep <experiment.yml> [options]
       executor sweep <experiment.yml> --until answered [--budget 30m] [options]
       executor sweep --resume <sweep-dir>
       executor sweep --status <sweep-dir> [--json]

Runs an experiment file's grid (strategies x instances [x nodes] x benchmarks x loads, repeated) and writes
<out>/<sweep-id>/sweep.json (plan, seed, status of every run) and one run folder per run, each
written as soon as it ends. With order: shapes (the default) one deployment serves every load level and repeat of a
shape, so its repeats are not independent; order: blocks deploys each repeat anew, which the analyzer's tests between
strategies need (the deployment is their unit; every shipped experiment uses it).
At the end it prints the fit or the per-core table, the estimate against what the sweep took, and writes
report.html (analyzer report). Before anything runs it estimates the time and the disk the runs take and refuses
(exit 2) when --out's file system has too little room; on --resume the finished runs' figures replace the plan's.
With --until answered it runs only the cells the file's question: needs, a block of fresh deployments at a time,
and after each block looks at one value per deployment: it stops once the question is answered (different,
equivalent within its margin, or estimated to its precision; the rest of its plan skipped), or a cell's runs are all
flagged not valid (3 of them: not measurable here), or runs the block the look chose, until its --budget.
A running sweep owns its folder through <sweep-dir>/sweep.lock: a second --resume of it is refused, a lock left by a
process of this host that is gone is taken over.

Options:
${optionsHelp(SWEEP_OPTIONS, { width: 19 })}

Ctrl-C stops the current run, removes every process and leaves the folder resumable; so does kill -9 (--resume
redoes the cut run and removes what it left deployed). A Docker daemon restart is waited for (up to 10 min): the run
it cut fails and is redone on --resume, the sweep goes on. A full disk stops the sweep with NS_ERR_NO_SPACE, every
file as it was: free space, then --resume.
Exit codes: 0 every run done · 1 a run failed or was degraded (a node lost), Ctrl-C, or a full disk · ` +
  '2 bad input (file:line named) · 3 a needed part is missing'

/**
 * Parses `executor sweep` arguments.
 * @param {string[]} argv
 */
export function parseSweepArguments (argv) {
  const { values, positionals } = parseCommandLine(argv, SWEEP_OPTIONS)
  if (values.help) return { help: true }
  if (values.status !== undefined) {
    if (positionals.length || values.resume !== undefined || values.dryRun || values.until || values.budget) {
      throw badFlag('--status', 'reads a sweep folder: give it alone (executor sweep --status DIR [--json])')
    }
    return { help: false, status: values.status, json: Boolean(values.json) }
  }
  if (positionals.length > 1) throw fail('EXTRA_EXPERIMENT_FILE', { arg: positionals[1] })
  if (!positionals.length && !values.resume) {
    throw fail('NO_EXPERIMENT_FILE')
  }
  if (values.resume !== undefined && (values.profile || values.seed || values.backend || values.connection)) {
    throw badFlag('--resume', 'takes the plan, seed, backend and connection from the sweep folder; drop --profile, --seed, --backend and --connection')
  }
  if (values.budget !== undefined && values.resume !== undefined) {
    throw badFlag('--budget', 'is a new sweep\'s: its looks are planned from it once; --resume keeps the folder\'s (start a new sweep for a larger budget)')
  }
  if (values.budget !== undefined && !values.until) throw badFlag('--budget', 'needs --until answered: only an adaptive sweep stops within a budget')
  return {
    help: false,
    status: undefined,
    file: positionals[0],
    resume: values.resume,
    out: resolve(values.out ?? RUN_OPTION.out.default),
    profile: values.profile,
    dryRun: Boolean(values.dryRun),
    failFast: Boolean(values.failFast),
    seed: values.seed,
    backend: values.backend,
    connection: values.connection,
    json: Boolean(values.json),
    quiet: Boolean(values.quiet),
    verbose: Boolean(values.verbose),
    noReport: Boolean(values.noReport),
    until: values.until,
    budget: values.budget
  }
}

/** The analyzer's HTML report in the sweep folder; a report that cannot be made is said, not fatal to the sweep. */
async function reportOf (sweep) {
  try {
    const { writeReport } = await import('../../analyzer/report/report.js')
    const r = await writeReport([sweep.dir], { x: sweep.experiment.analysis?.x })
    return { path: r.path, error: null }
  } catch (err) {
    return { path: null, error: err.message }
  }
}

/**
 * The sweep folder to resume, its lock taken first (nothing is touched while another process owns it), checked as a
 * new one is (enough workers, room on disk for what is left), said in lines.
 */
async function resumeSweep (dir, say, { until }) {
  const read = await readSweepJson(dir)
  if (until && !read.adaptive) throw badFlag('--until', `${dir} is not an adaptive sweep (it was started without --until); resume it without --until`)
  const lock = await takeLock(resolve(dir), { flag: '--resume', say })
  try {
    const sweep = await openSweep(dir)
    const cells = cellConfigs(sweep)
    await checkSwarmNodes([...new Set(sweep.plan.filter(isLeft).map(e => cells[e.cell]))])
      .catch(err => { throw Object.assign(err, { message: `--resume ${dir}: ${err.message}` }) })
    const estimate = await estimateLeft(sweep)
    const free = await freeBytes(sweep.dir)
    checkRoom({ bytes: estimate.bytes, free, dir: sweep.dir, flag: '--resume', what: 'the rest of this sweep' })
    const left = sweep.plan.filter(isLeft).length
    say(`resuming ${sweep.id}: ${sweep.plan.length - left} of ${sweep.plan.length} runs done, ${left} to run (seed ${sweep.seed}) · ` +
      `estimated ${formatDuration(estimate.seconds)} left`)
    const a = sweep.adaptive
    if (a) {
      say(a.verdict
        ? `adaptive: answered already (${a.verdict} at look ${a.looks.length} of ${a.maxLooks})`
        : `adaptive: ${a.looks.length} of at most ${a.maxLooks} looks taken, kept as they were; block ${a.looks.length + 1} next`)
    }
    say(diskText(estimate, { free, dir: sweep.dir }))
    return { sweep, lock, estimate }
  } catch (err) {
    await lock.release()
    throw err
  }
}

/**
 * `executor sweep ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function sweepCommand (argv, { stdout, stderr, signal }) {
  const startedAt = Date.now()
  const args = parseSweepArguments(argv)
  if (args.help) { stdout.write(SWEEP_HELP + '\n'); return EXIT.OK }
  if (args.status) {
    const st = await sweepStatusOf(args.status)
    stdout.write((args.json ? JSON.stringify(st, null, 2) : formatStatus(st)) + '\n')
    return EXIT.OK
  }
  const bar = createSweepProgress({ enabled: !args.json && !args.quiet && Boolean(stderr.isTTY), stream: stderr })
  const say = args.quiet ? () => {} : line => bar.line(line)
  let sweep, lock, estimate
  if (args.resume) {
    if (args.file) say(`--resume: the plan comes from ${args.resume}/sweep.json; ${args.file} is not read`)
    ;({ sweep, lock, estimate } = await resumeSweep(await sweepFolder(args.resume, '--resume'), say, { until: args.until }))
  } else {
    let probes = 0
    const { profile, out, backend, connection, seed, dryRun } = args
    // --until answered: the file's question is checked before anything is made (a calibration included)
    const check = args.until ? checkUntil : undefined
    const read = await planSweep(args.file, {
      profile,
      out,
      backend,
      connection,
      seed,
      dryRun,
      say,
      onProbe: p => say(formatProbe(p, ++probes)),
      signal,
      check
    })
    const planned = args.until ? planAdaptive(read, { budget: args.budget }) : read
    if (args.until && !dryRun) checkRoom({ bytes: planned.estimate.bytes, free: planned.free, dir: out, flag: '--out' })
    if (args.dryRun) {
      stdout.write((args.json ? JSON.stringify(planJson(planned), null, 2) : formatPlan(planned)) + '\n')
      return EXIT.OK
    }
    sweep = await createSweep({ ...planned, out: args.out })
    lock = await takeLock(sweep.dir, { flag: '--out', say })
    estimate = planned.estimate
    say(`sweep ${sweep.id}: ${estimate.runs} runs on ${estimate.deployments} deployments · seed ${sweep.seed} · estimated ${formatDuration(estimate.seconds)}`)
    say(diskText(estimate, { free: planned.free, dir: args.out }))
  }
  try {
    return await runSweep(sweep, { args, bar, say, signal, startedAt, estimate, stdout })
  } finally {
    await lock.release()
  }
}

/** The sweep's runs, one session of it, and its end printed; the lock is the caller's. */
async function runSweep (sweep, { args, bar, say, signal, startedAt, estimate, stdout }) {
  const session = startSession(sweep, { startedAt, estimate })
  // an adaptive sweep's plan changes at each look
  const total = () => sweep.plan.length
  const started = Date.now()
  const doneAtStart = countEntries(sweep.plan).done
  // time left: the runs still to go at the mean time a run has taken so far (the plan's estimate before the first)
  const secondsLeft = () => {
    const c = countEntries(sweep.plan)
    const left = c.pending + c.running
    const finished = c.done + c.failed + c.degraded - doneAtStart
    return finished > 0 ? left * (Date.now() - started) / 1000 / finished : estimate.seconds * left / Math.max(1, total() - doneAtStart)
  }
  let current = { label: '', eta: 0, at: Date.now() }
  const draw = (label) => {
    const c = countEntries(sweep.plan)
    const left = Math.max(0, current.eta - (Date.now() - current.at) / 1000)
    bar.update({ done: c.done, total: total(), failed: c.failed + c.degraded, remaining: formatDuration(left), current: label })
  }
  try {
    const hooks = {
      log: args.verbose ? line => say(`  ${line}`) : () => {},
      note: say,
      signal,
      failFast: args.failFast,
      onStart (e) {
        current = { label: e.label, eta: secondsLeft(), at: Date.now() }
        draw(e.label)
      },
      // a capacity search says its probes as they go
      onProgress: (e, p) => draw(p?.probe ? `${current.label} · probe ${p.probe.phase} ${p.probe.rate ?? ''} ${p.probe.verdict}` : current.label),
      onEnd (e, run) {
        say(formatRunLine(e, run, total()))
        current = { label: '', eta: secondsLeft(), at: Date.now() }
        draw('')
      }
    }
    // an adaptive sweep runs a block, looks, and runs the block the look chose, until its question is answered
    if (sweep.adaptive) await runAdaptive(sweep, { execute: only => executeSweep(sweep, { ...hooks, only }), say, signal, lookLine })
    else await executeSweep(sweep, hooks)
  } finally {
    bar.done()
    await endSession(sweep, session)
    // on a full disk this write fails as well: sweep.json stays as the last run left it, and the sweep's own error
    // (NS_ERR_NO_SPACE, with what to do) is the one the user sees
    await saveSweep(sweep).catch(err => { if (!isNoSpace(err)) throw err })
  }
  const analysis = sweep.status === 'interrupted' ? null : await analyseSweep(sweep)
  if (analysis && !args.noReport) {
    analysis.report = await reportOf(sweep)
    // the report is part of what the sweep wrote
    sweep.actual.bytes = await dirBytes(sweep.dir)
    await saveSweep(sweep)
  }
  stdout.write((args.json
    ? JSON.stringify({ ...sweep, analysis }, null, 2)
    : formatSweepEnd(sweep, analysis, { seconds: (Date.now() - startedAt) / 1000 })) + '\n')
  return sweep.status === 'done' ? EXIT.OK : EXIT.FAILED
}
