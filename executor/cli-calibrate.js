// `executor calibrate`: the relaxed and exhausted run-levels of a server, written to a file experiments reference.
import { resolve, join, dirname, basename, extname } from 'node:path'
import { parseFlags, RUN_OPTIONS, validateRunConfig } from './config.js'
import { calibrateToFile, CALIBRATION_DEFAULTS, RELAXED_WINDOW } from './calibrate.js'
import { EXIT, NsError, badFlag, exitCodeOf, formatError } from './errors.js'
import { formatDuration } from './sweep-plan.js'
import { LIMITS } from './defaults.js'

const { concurrency, rate, out, json, ...RUN_FLAGS } = RUN_OPTIONS
export const CALIBRATE_OPTIONS = Object.freeze({
  ...RUN_FLAGS,
  out: { type: 'string', short: 'o' },
  runs: { type: 'string' },
  confirm: { type: 'string' },
  'max-concurrency': { type: 'string' },
  'max-probes': { type: 'string' },
  json: { type: 'boolean' }
})

export const CALIBRATE_HELP = `Usage: executor calibrate --benchmark NAME [--strategy up] [--instances 1] [options]

Finds the run-levels of the multi-core study (thesis section 2.3.1) on one deployment:
  relaxed    the concurrency at which the server's busiest core sits at ${RELAXED_WINDOW[0]}-${RELAXED_WINDOW[1]}% (run.json cpu.highest):
             doubling from 1 connection, then bisection
  exhausted  the highest concurrency without a single failed request: doubling from the relaxed
             level until a request fails (or --max-concurrency), then bisection to 2%
Each level is confirmed by repeating it (--confirm). An experiment uses the file with
"calibration: FILE" and "concurrency: [relaxed, relaxed*cores, exhausted]".

Options:
  -b, --benchmark NAME        the benchmark (default page); -p KEY=VALUE and --app as for executor run
  -s, --strategy S            up | cm | pm2 | hs (default up: raw Node, as the thesis calibrated)
  -n, --instances N           default 1
  -d, --duration S            seconds measured per probe (default ${CALIBRATION_DEFAULTS.duration})
  -w, --warmup S              warm-up seconds per probe (default ${CALIBRATION_DEFAULTS.warmup})
      --confirm N             repeats that confirm each level (default ${CALIBRATION_DEFAULTS.confirm}; the thesis used 5)
      --max-concurrency C     highest concurrency probed (default ${CALIBRATION_DEFAULTS.maxConcurrency})
      --max-probes N          at most this many probe runs (default ${CALIBRATION_DEFAULTS.maxProbes})
  -o, --out FILE              the calibration file (default results/calibration-<benchmark>-<strategy><N>.json)
      --runs DIR              where the probe runs go (default <FILE without .json>-probes/)
      --backend, --driver, --cpus-per-instance, --lb, --port, --ready-timeout   as for executor run
      --json                  print the calibration file on stdout and nothing else there
  -q, --quiet                 no probe lines on stderr
  -h, --help                  this help

Exit codes: 0 done · 1 a probe failed or Ctrl-C · 2 bad input · 3 a needed part is missing`

function wholeNumber (flag, raw, min, max) {
  const v = Number(raw)
  if (!Number.isInteger(v) || v < min || v > max) throw badFlag(flag, `"${raw}" is not allowed; allowed: a whole number >= ${min} and <= ${max}`)
  return v
}

/**
 * Parses `executor calibrate` arguments into a run config for the probes, the file and the search limits.
 * @param {string[]} argv
 * @param {{ cwd?: string }} [ctx]
 */
export function parseCalibrateArguments (argv, { cwd = process.cwd() } = {}) {
  const { values, positionals } = parseFlags(argv, CALIBRATE_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length) throw new NsError('NS_ERR_BAD_FLAG', `unexpected argument "${positionals[0]}" (see executor calibrate --help)`)
  const strategy = values.strategy ?? 'up'
  const instances = values.instances ?? '1'
  const bench = values.benchmark ?? (values.app ? basename(values.app, extname(values.app)) : 'page')
  const file = resolve(cwd, values.out ?? join('results', `calibration-${bench}-${strategy}${instances}.json`))
  if (!file.endsWith('.json')) throw badFlag('--out', `${values.out}: the calibration file is JSON; give a name ending in .json`)
  const runs = resolve(cwd, values.runs ?? join(dirname(file), `${basename(file, '.json')}-probes`))
  const config = validateRunConfig({
    ...values,
    strategy,
    instances,
    duration: values.duration ?? String(CALIBRATION_DEFAULTS.duration),
    warmup: values.warmup ?? String(CALIBRATION_DEFAULTS.warmup),
    concurrency: '1',
    out: runs
  }, { cwd })
  return {
    help: false,
    config,
    file,
    json: Boolean(values.json),
    limits: {
      confirm: values.confirm === undefined ? undefined : wholeNumber('--confirm', values.confirm, 1, 20),
      maxConcurrency: values['max-concurrency'] === undefined ? undefined : wholeNumber('--max-concurrency', values['max-concurrency'], 2, LIMITS.concurrency),
      maxProbes: values['max-probes'] === undefined ? undefined : wholeNumber('--max-probes', values['max-probes'], 3, 500)
    }
  }
}

/** One stderr line per probe. */
export function formatProbe (p, n) {
  const phase = p.phase.padEnd(17)
  return `probe ${String(n).padStart(2)}  ${phase} c=${String(p.concurrency).padEnd(6)} busiest core ${p.highest.toFixed(1).padStart(5)}%  ${p.errors.toLocaleString('en')} errors  ${Math.round(p.throughput).toLocaleString('en')} req/s`
}

/** The human view of a calibration file. */
export function formatCalibration (cal) {
  const c = cal.config
  const lines = [`calibration: ${c.benchmark} on ${c.strategy} x${c.instances} (${c.backend}) · probes of ${cal.probe.duration} s · ${cal.probes.length} probes in ${formatDuration(cal.seconds)} · ${cal.cores} cores`]
  const r = cal.relaxed
  lines.push(`  relaxed    c=${r.concurrency}  busiest core ${r.highest}% (repeats ${r.repeats.join(', ')}: ${r.confirmed ? `confirmed in ${cal.window.join('-')}%` : `NOT all in ${cal.window.join('-')}%`})`)
  const e = cal.exhausted
  if (!e) lines.push('  exhausted  not found (the probe budget ran out first)')
  else if (e.concurrency === null) lines.push('  exhausted  none: requests failed even at the lowest concurrency')
  else lines.push(`  exhausted  c=${e.concurrency}  ${e.confirmed ? `no failed request in ${e.repeats.length} repeats` : 'not confirmed'}${e.bounded ? ' (the probe limit, --max-concurrency)' : ''}`)
  for (const n of cal.notes) lines.push(`  note: ${n}`)
  lines.push(`  written: ${cal.file} (probe runs in ${cal.probeRuns})`)
  return lines.join('\n')
}

/**
 * `executor calibrate ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function calibrateCommand (argv, { stdout, stderr, signal }) {
  try {
    const parsed = parseCalibrateArguments(argv)
    if (parsed.help) { stdout.write(CALIBRATE_HELP + '\n'); return EXIT.OK }
    const { config, file, limits } = parsed
    const say = config.quiet ? () => {} : line => stderr.write(line + '\n')
    let n = 0
    const cal = await calibrateToFile(config, file, { ...limits, signal, onProbe: p => say(formatProbe(p, ++n)) })
    stdout.write((parsed.json ? JSON.stringify(cal, null, 2) : formatCalibration(cal)) + '\n')
    return EXIT.OK
  } catch (err) {
    stderr.write(formatError(err) + '\n')
    return signal?.aborted ? EXIT.FAILED : exitCodeOf(err)
  }
}
