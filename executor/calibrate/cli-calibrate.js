// `executor calibrate`: the relaxed and exhausted run-levels of a server, written to a file experiments reference.
import { resolve, join, dirname, basename, extname } from 'node:path'
import { EXIT } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { flagOf, keyOf, option, optionsHelp, parseCommandLine } from '../../lib/options.js'
import { RUN_OPTION, RUN_OPTIONS, validateRunConfig } from '../../lib/run-options.js'
import { calibrateToFile, CALIBRATION_DEFAULTS, RELAXED_WINDOW } from './calibrate.js'
import { formatCalibration, formatProbe } from './calibrate-text.js'

/** @typedef {import('../../lib/options.js').Option} Option */

const D = CALIBRATION_DEFAULTS
/** The run's options a probe takes as they are (help: "as for executor run"). */
const OUTPUT_FLAGS = ['json', 'quiet', 'help']
const AS_FOR_RUN = RUN_OPTIONS.filter(o => o.also?.includes('calibrate'))

/**
 * The flags of `executor calibrate`: the run's, with the probes' defaults, and the search's own.
 * @type {readonly Option[]}
 */
export const CALIBRATE_OPTIONS = Object.freeze([
  option({ ...RUN_OPTION.benchmark, help: 'the benchmark (default {default}); -p KEY=VALUE and --app as for executor run' }),
  option({ ...RUN_OPTION.params, help: undefined }),
  option({ ...RUN_OPTION.app, help: undefined }),
  option({ ...RUN_OPTION.strategy, default: 'up', help: `${RUN_OPTION.strategy.choices.join(' | ')} (default {default}: raw Node, as the thesis calibrated)` }),
  option({ ...RUN_OPTION.instances, default: 1, help: 'default {default}' }),
  option({ ...RUN_OPTION.duration, default: D.duration, help: 'seconds measured per probe (default {default})' }),
  option({ ...RUN_OPTION.warmup, default: D.warmup, help: 'warm-up seconds per probe (default {default})' }),
  option({
    flag: 'confirm',
    type: 'whole',
    min: 1,
    max: 20,
    default: D.confirm,
    arg: 'N',
    help: 'repeats that confirm each level (default {default}; the thesis used 5)'
  }),
  option({
    flag: 'max-concurrency',
    type: 'whole',
    min: 2,
    max: RUN_OPTION.concurrency.max,
    default: D.maxConcurrency,
    arg: 'C',
    help: 'highest concurrency probed (default {default})'
  }),
  option({ flag: 'max-probes', type: 'whole', min: 3, max: 500, default: D.maxProbes, arg: 'N', help: 'at most this many probe runs (default {default})' }),
  option({ flag: 'out', short: 'o', type: 'text', arg: 'FILE', help: 'the calibration file (default results/calibration-<benchmark>-<strategy><N>.json)' }),
  option({ flag: 'runs', type: 'text', arg: 'DIR', help: 'where the probe runs go (default <FILE without .json>-probes/)' }),
  ...AS_FOR_RUN.map(o => option({ ...o, help: undefined })),
  option({ flag: 'json', type: 'boolean', help: 'print the calibration file on stdout and nothing else there' }),
  option({ ...RUN_OPTION.quiet, help: 'no probe lines on stderr' }),
  RUN_OPTION.help
])

export const CALIBRATE_HELP = `Usage: executor calibrate --benchmark NAME [--strategy up] [--instances 1] [options]

Finds the run-levels of the multi-core study (thesis section 2.3.1) on one deployment:
  relaxed    the concurrency at which the server's busiest core sits at ${RELAXED_WINDOW[0]}-${RELAXED_WINDOW[1]}% (run.json cpu.highest):
             doubling from 1 connection, then bisection
  exhausted  the highest concurrency without a single failed request: doubling from the relaxed
             level until a request fails (or --max-concurrency), then bisection to 2%
Each level is confirmed by repeating it (--confirm). An experiment uses the file with
"calibration: FILE" and "concurrency: [relaxed, relaxed*cores, exhausted]".

Options:
${optionsHelp(CALIBRATE_OPTIONS.filter(o => !OUTPUT_FLAGS.includes(o.flag)))}
      ${AS_FOR_RUN.map(flagOf).join(', ')}
                              as for executor run
${optionsHelp(CALIBRATE_OPTIONS.filter(o => OUTPUT_FLAGS.includes(o.flag)))}

Exit codes: 0 done · 1 a probe failed or Ctrl-C · 2 bad input · 3 a needed part is missing`

/**
 * Parses `executor calibrate` arguments into a run config for the probes, the file and the search limits.
 * @param {string[]} argv
 * @param {{ cwd?: string }} [ctx]
 */
export function parseCalibrateArguments (argv, { cwd = process.cwd() } = {}) {
  const { values, positionals } = parseCommandLine(argv, CALIBRATE_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor calibrate' })
  // the probes' own defaults (strategy up, 1 instance, short probes) and the search's; the run's fill in as for a run
  for (const o of CALIBRATE_OPTIONS) if (o.default !== RUN_OPTION[keyOf(o)]?.default) values[keyOf(o)] ??= o.default
  const { confirm, maxConcurrency, maxProbes, out, runs, json, ...probe } = values
  const bench = probe.benchmark ?? (probe.app ? basename(probe.app, extname(probe.app)) : RUN_OPTION.benchmark.default)
  const file = resolve(cwd, out ?? join('results', `calibration-${bench}-${probe.strategy}${probe.instances}.json`))
  if (!file.endsWith('.json')) throw fail('CALIBRATION_OUT_NOT_JSON', { out })
  const probeRuns = resolve(cwd, runs ?? join(dirname(file), `${basename(file, '.json')}-probes`))
  // a probe's concurrency is the search's to choose: it starts from 1
  const config = validateRunConfig({ ...probe, concurrency: 1, out: probeRuns }, { cwd })
  return { help: false, config, file, json: Boolean(json), limits: { confirm, maxConcurrency, maxProbes } }
}

/**
 * `executor calibrate ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function calibrateCommand (argv, { stdout, stderr, signal }) {
  const parsed = parseCalibrateArguments(argv)
  if (parsed.help) { stdout.write(CALIBRATE_HELP + '\n'); return EXIT.OK }
  const { config, file, limits } = parsed
  const say = config.quiet ? () => {} : line => stderr.write(line + '\n')
  let n = 0
  const cal = await calibrateToFile(config, file, { ...limits, signal, onProbe: p => say(formatProbe(p, ++n)) })
  stdout.write((parsed.json ? JSON.stringify(cal, null, 2) : formatCalibration(cal)) + '\n')
  return EXIT.OK
}
