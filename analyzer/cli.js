// The `analyzer` command line: parses arguments by each command's option table and calls the library; nothing else
// lives here.
import { EXIT, exitCodeOf, formatError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { summarize } from './samples/summary.js'
import { fitSources, compare } from './compare.js'
import { writeReport, FORMATS } from './report/report.js'
import { correlate } from './correlate.js'
import { X_FIELDS } from './points.js'
import { formatSummary, formatFit, formatCompare, formatCorrelate } from './text-format.js'
import { MAIN_HELP, SUMMARY_HELP, FIT_HELP, COMPARE_HELP, REPORT_HELP, CORRELATE_HELP, REPLICATE_HELP, EXPORT_HELP, commandHelp } from './cli-help.js'
import { EXPORT_FORMATS, EXPORT_TABLES, exportRuns } from './export.js'
import { replicate } from './replicate.js'
import { formatReplication } from './replication/text.js'
import { STUDY_IDS } from './replication/published.js'

const help = option({ flag: 'help', short: 'h', type: 'boolean', help: 'this help' })
/**
 * The same flag with its command's help.
 * @param {import('../lib/options.js').Option} row
 * @param {string | string[]} text
 */
const saying = (row, text) => option({ ...row, help: text })
const json = option({ flag: 'json', type: 'boolean', help: 'print the result as JSON' })
const includeInvalid = option({
  flag: 'include-invalid',
  type: 'boolean',
  help: 'use the runs whose validity flags say they did not measure the server too'
})
const model = (choices, text) => option({ flag: 'model', type: 'choice', choices, default: 'usl', arg: 'M', help: text })
/** How points are made from runs and fitted: what N is, the curves, the bootstrap, the weights, invalid runs. */
const X = option({ flag: 'x', type: 'choice', choices: X_FIELDS, default: 'instances', arg: 'X', help: `${X_FIELDS.join(' | ')} (default instances)` })
const GROUP_BY = option({ flag: 'group-by', type: 'text', arg: 'F,..', help: 'run config fields that make separate curves (default strategy,benchmark)' })
const BOOTSTRAP = option({
  flag: 'bootstrap',
  type: 'whole',
  min: 0,
  max: 100000,
  default: 0,
  arg: 'N',
  help: 'seeded bootstrap intervals instead of t intervals (0..100000)'
})
const SEED = option({ flag: 'seed', type: 'whole', min: 0, max: 4294967295, default: 1, arg: 'S', help: 'bootstrap seed (default 1)' })
const WEIGHTS = option({
  flag: 'weights',
  type: 'choice',
  choices: ['relative', 'none', 'sd'],
  default: 'relative',
  arg: 'W',
  help: 'relative (default: log throughput, profile intervals) | none | sd (not calibrated)'
})
const OUT = option({
  flag: 'out',
  short: 'o',
  type: 'text',
  arg: 'FILE',
  check: (v) => { if (v === '') throw fail('OUT_WITHOUT_PATH'); return v }
})

const SUMMARY = [option({ flag: 'label', type: 'text', arg: 'L', help: 'only samples with this label' }),
  saying(json, 'print the summary as JSON (file, rows, malformed, total, labels)'), help]
const FIT = [
  model(['usl', 'amdahl', 'both'], 'usl | amdahl | both (default usl; both also tests whether lambda > 0 matters)'),
  saying(X, ['instances | concurrency | nodes: what N is (default instances); over nodes the',
    'point of each node count is its best instances and concurrency (Ibenchjs Table 4)']),
  saying(GROUP_BY, ['run config fields that make separate curves', '(default strategy,benchmark; with --x concurrency also instances)']),
  saying(BOOTSTRAP, ['also N seeded bootstrap refits (0..100000): the repeats resampled within each',
    'N, or the residuals; not calibrated (shown with --weights none|sd, else --json)']),
  saying(SEED, 'bootstrap seed (default 1): same seed, same intervals'),
  saying(WEIGHTS, ['relative (default: log throughput, profile intervals) | none (unweighted, as',
    'published fits; t intervals from the Jacobian) | sd: each run by 1/variance of',
    'the runs at its N (needs repeats); none and sd are not calibrated']),
  saying(includeInvalid, 'fit the runs whose validity flags say they did not measure the server too'),
  saying(json, 'print the fits as JSON'), help
]
const COMPARE = [
  model(['usl', 'amdahl'], 'usl | amdahl (default usl)'), X, saying(GROUP_BY, 'as for fit (default strategy,benchmark)'),
  saying(BOOTSTRAP, 'use seeded bootstrap intervals instead of t intervals'), SEED, WEIGHTS, includeInvalid,
  option({ flag: 'margin', type: 'number', min: 0.1, max: 100, default: 5, arg: 'P', help: 'equivalence margin in percent (default 5: within +-5%)' }),
  option({ flag: 'effect', type: 'number', min: 0.1, max: 1000, default: 10, arg: 'P', help: 'the difference in percent the power is said for (default 10)' }),
  saying(json, ['print the comparison as JSON: rows, settings, pairs (a, b, family: the tests',
    'Holm corrected over, tests: { quantity, n, label, units, ratio, ci95, p, pHolm,',
    'pEquivalence, pEquivalenceHolm, outcome, why, power { value, unitsFor80, text },', 'line })']),
  help
]
const REPORT = [
  saying(OUT, 'where to write (default: report.html in the first sweep folder; the path is printed)'),
  option({
    flag: 'format',
    type: 'choice',
    choices: FORMATS,
    default: 'html',
    arg: 'F',
    help: ['html | md (default html); md prints Markdown tables and verdicts, no charts,', 'on stdout unless -o is given']
  }),
  option({ flag: 'title', type: 'text', arg: 'T', help: 'the page title (default: nodescale report: <folders>)' }),
  saying(X, ['instances | concurrency | nodes: what N is (default instances); with nodes the page',
    'also charts p95 and the server\'s CPU summed over the nodes vs the node count']),
  GROUP_BY, BOOTSTRAP, SEED, WEIGHTS, includeInvalid, help
]
const CORRELATE = [
  saying(json, ['print { factors, metrics, minCells, skipped, cells, rows } as JSON; each row is',
    '{ benchmark, factor, values, cells, runs, throughput, sd, relSd }, each of the last',
    'three { r, cells, why } (r null and why set for "n/a")']),
  help
]
const REPLICATE = [
  option({ flag: 'study', type: 'choice', choices: STUDY_IDS, arg: 'S', help: 'which study the sweep reproduces' }),
  saying(includeInvalid, 'count runs whose validity flags say not to trust them (left out, and counted, otherwise)'),
  saying(json, 'the same data, for scripts'), help
]
const EXPORT = [
  option({
    flag: 'format',
    type: 'choice',
    choices: EXPORT_FORMATS,
    default: 'csv',
    arg: 'F',
    help: 'csv (default: RFC 4180, a header line) | ndjson (one JSON object a line)'
  }),
  option({
    flag: 'table',
    type: 'choice',
    choices: EXPORT_TABLES,
    default: 'runs',
    arg: 'T',
    help: 'runs (default: a row per run, probe and capacity search) | fits (a row per group and model)'
  }),
  saying(includeInvalid, 'with --table fits: fit the runs whose validity flags say they did not measure the server too'),
  saying(OUT, 'write the rows there (the path is printed); default stdout'), help
]

/** Flags and help of each command: the help's options lines are made from the rows. */
export const COMMANDS = Object.freeze({
  summary: { options: SUMMARY, help: commandHelp(SUMMARY_HELP, SUMMARY), min: 1, max: 1, what: 'one JTL file or run folder' },
  fit: { options: FIT, help: commandHelp(FIT_HELP, FIT), min: 1, max: Infinity, what: 'a sweep folder or a points CSV' },
  compare: { options: COMPARE, help: commandHelp(COMPARE_HELP, COMPARE), min: 1, max: Infinity, what: 'one or more sweep folders or CSVs' },
  report: { options: REPORT, help: commandHelp(REPORT_HELP, REPORT), min: 1, max: Infinity, what: 'one or more sweep folders (or points CSVs)' },
  correlate: { options: CORRELATE, help: commandHelp(CORRELATE_HELP, CORRELATE), min: 1, max: Infinity, what: 'one or more sweep folders' },
  replicate: {
    options: REPLICATE,
    help: commandHelp(REPLICATE_HELP, REPLICATE),
    min: 1,
    max: Infinity,
    what: 'one or more sweep folders of the study'
  },
  export: { options: EXPORT, help: commandHelp(EXPORT_HELP, EXPORT), min: 1, max: Infinity, what: 'one or more run or sweep folders' }
})

/**
 * Parses `analyzer <command> ...` into a validated request (throws NsError on bad input); every option of the command
 * has its value, its default where it has one.
 * @param {string[]} argv process.argv.slice(2)
 * @returns {{ command: string|null, help: boolean, inputs: string[], options: Record<string, any> }}
 */
export function parseArguments (argv) {
  const [command, ...rest] = argv
  if (!command || command === '--help' || command === '-h' || command === 'help') return { command: null, help: true, inputs: [], options: {} }
  const spec = COMMANDS[command]
  if (!spec) throw fail('UNKNOWN_COMMAND', { command, commands: Object.keys(COMMANDS), help: 'analyzer --help' })
  const { values, positionals } = parseCommandLine(rest, spec.options)
  if (values.help) return { command, help: true, inputs: [], options: {} }
  if (positionals.length < spec.min) throw fail('ANALYZER_INPUT_MISSING', { command, what: spec.what })
  if (positionals.length > spec.max) throw fail('ANALYZER_INPUTS_TOO_MANY', { command, what: spec.what, arg: positionals[spec.max] })
  const { help: _, ...options } = withDefaults({ ...values, json: Boolean(values.json) }, spec.options)
  return { command, help: false, inputs: positionals, options }
}

/**
 * Runs the CLI and returns the exit code.
 * @param {string[]} argv process.argv.slice(2)
 * @param {{ stdout?: NodeJS.WritableStream, stderr?: NodeJS.WritableStream }} [io]
 */
export async function main (argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  try {
    const req = parseArguments(argv)
    if (req.help) {
      stdout.write((req.command ? COMMANDS[req.command].help : MAIN_HELP) + '\n')
      return argv.length ? EXIT.OK : EXIT.BAD_INPUT
    }
    const { json: asJson, ...opts } = req.options
    let result
    let text
    if (req.command === 'summary') {
      result = await summarize(req.inputs[0], opts)
      text = () => formatSummary(result)
    } else if (req.command === 'fit') {
      result = await fitSources(req.inputs, opts)
      text = () => formatFit(result)
    } else if (req.command === 'compare') {
      result = await compare(req.inputs, opts)
      text = () => formatCompare(result)
    } else if (req.command === 'correlate') {
      result = await correlate(req.inputs)
      text = () => formatCorrelate(result)
    } else if (req.command === 'replicate') {
      if (!opts.study) throw fail('STUDY_MISSING', { studies: STUDY_IDS })
      result = await replicate(req.inputs, { study: opts.study, includeInvalid: Boolean(opts.includeInvalid) })
      text = () => formatReplication(result)
    } else if (req.command === 'export') {
      result = await exportRuns(req.inputs, { ...opts, log: line => stderr.write(line + '\n') })
      text = () => (result.path ?? result.text)
    } else {
      result = await writeReport(req.inputs, { ...opts, log: line => stderr.write(line + '\n') })
      text = () => (result.path ?? result.text.trimEnd())
    }
    stdout.write((asJson ? JSON.stringify(result, null, 2) : text()) + '\n')
    return EXIT.OK
  } catch (err) {
    stderr.write(formatError(err) + '\n')
    return exitCodeOf(err)
  }
}
