// `executor capacity`: the highest rate one shape serves within an objective, found by probing (open model).
import { EXIT } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { keyOf, option, optionsHelp, parseCommandLine } from '../../lib/options.js'
import { RUN_OPTION, RUN_OPTIONS, validateRunConfig } from '../../lib/run-options.js'
import { findCapacity, CAPACITY_DEFAULTS, CAPACITY_SEARCH_OPTIONS } from './capacity.js'
import { formatCapacity, formatCapacityProbe } from './capacity-text.js'

/** @typedef {import('../../lib/options.js').Option} Option */

const D = CAPACITY_DEFAULTS
/** The run's options that describe the shape and the load, as `executor run` takes them (their rows say `also:
 * capacity`). */
const AS_FOR_RUN = RUN_OPTIONS.filter(o => o.also?.includes('capacity'))

/**
 * The flags of `executor capacity`: the run's shape and load, each probe's length, the objective and the search's own.
 * @type {readonly Option[]}
 */
export const CAPACITY_OPTIONS = Object.freeze([
  ...AS_FOR_RUN,
  option({
    ...RUN_OPTION.duration,
    default: D.duration,
    help: 'seconds measured per probe, at least 4 (default {default}; the first whole second is not judged), or auto'
  }),
  RUN_OPTION.minDuration,
  RUN_OPTION.maxDuration,
  option({ ...RUN_OPTION.warmup, default: D.warmup, help: 'warm-up seconds per probe (default {default})' }),
  RUN_OPTION.slo,
  ...CAPACITY_SEARCH_OPTIONS,
  option({
    flag: 'start-rate',
    type: 'number',
    min: 0,
    above: true,
    max: 1000000,
    arg: 'R',
    help: 'the first rate probed (default: 76–84% of a closed-model probe\'s throughput)'
  }),
  option({ flag: 'json', type: 'boolean', help: 'print the capacity record on stdout and nothing else there' }),
  option({ ...RUN_OPTION.quiet, help: 'no probe lines on stderr' }),
  RUN_OPTION.help
])

export const CAPACITY_HELP = `Usage: executor capacity --strategy S --instances N [options]

Finds the capacity of one deployed shape: the offered rate (open model: requests leave on schedule,
latency counts from the intended send time) at which a probe meets the objective (--slo) with
probability 0.5, with its 95% interval. A probe meets when it is within the objective, its queue did
not grow over the window beyond its chance variation (the answers kept up with the sends; without a
count of them, ${Math.round(D.served * 100)}% of the rate served), and it is valid (neither the load generator nor the
host saturated). A closed-model probe estimates the capacity; the search starts at 76-84% of that (drawn) and
steps by x1.25 until a rate misses (or down until one is met; x2 from --start-rate), then places
--boundary-probes probes near the boundary (a stochastic approximation aimed at a 0.5 chance of
meeting), and reads the capacity and its interval from every probe (a probit curve's posterior). A
probe the load side could not drive (generator or host saturated, the server not busy) counts as no
miss: in the bracket it ends the search with a note, near the boundary it is probed again (the
search gives up after 3); a miss while something outside the run kept the host busy (run validity
"disturbed") is probed again, up to 3 times. Every search deploys its shape afresh; every probe is
a run; the search's folder holds them and capacity.json (docs/statistics/capacity.md).

Options:
${optionsHelp(CAPACITY_OPTIONS)}

Examples:
  executor capacity --strategy cm --instances 2 --benchmark cpu --slo p99=100ms,errors=0.1%
  executor capacity --strategy hs --instances 4 --cpus-per-instance 0.25 --benchmark cpu --json

Exit codes: 0 done (also when no capacity was found: the record says why) · 1 a probe failed or Ctrl-C · 2 bad input · 3 a needed part is missing`

/**
 * Parses `executor capacity` arguments into the probes' run config and the search's settings.
 * @param {string[]} argv
 * @param {{ cwd?: string }} [ctx]
 */
export function parseCapacityArguments (argv, ctx) {
  const { values, positionals } = parseCommandLine(argv, CAPACITY_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor capacity' })
  // the probes' own defaults (a little longer than a run's, to judge their steadiness); the run's fill in as for a run
  for (const o of CAPACITY_OPTIONS) if (o.default !== RUN_OPTION[keyOf(o)]?.default) values[keyOf(o)] ??= o.default
  const { boundary, maxProbes, startRate, json, ...run } = values
  // each probe's rate is the search's to choose: it validates with 1 request per second
  const config = validateRunConfig({ ...run, rate: 1 }, ctx)
  return { help: false, config, json: Boolean(json), search: { boundary, maxProbes, startRate } }
}

/**
 * `executor capacity ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function capacityCommand (argv, { stdout, stderr, signal }) {
  const parsed = parseCapacityArguments(argv)
  if (parsed.help) { stdout.write(CAPACITY_HELP + '\n'); return EXIT.OK }
  const { config, search } = parsed
  const say = config.quiet ? () => {} : line => stderr.write(line + '\n')
  let n = 0
  const record = await findCapacity(config, { ...search, signal, onProbe: p => say(formatCapacityProbe(p, ++n)) })
  stdout.write((parsed.json ? JSON.stringify(record, null, 2) : formatCapacity(record)) + '\n')
  return EXIT.OK
}
