// The `analyzer` command line: parses arguments by each command's option table and calls the library; nothing else
// lives here.
import { EXIT, NsError, exitCodeOf, formatError } from '../lib/errors.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { summarize } from './samples/summary.js'
import { fitSources, compare } from './compare.js'
import { writeReport, FORMATS } from './report/report.js'
import { correlate } from './correlate.js'
import { X_FIELDS } from './points.js'
import { formatSummary, formatFit, formatCompare, formatCorrelate } from './text-format.js'
import { MAIN_HELP, SUMMARY_HELP, FIT_HELP, COMPARE_HELP, REPORT_HELP, CORRELATE_HELP, REPLICATE_HELP, EXPORT_HELP } from './cli-help.js'
import { EXPORT_FORMATS, EXPORT_TABLES, exportRuns } from './export.js'
import { replicate } from './replicate.js'
import { formatReplication } from './replication/text.js'
import { STUDY_IDS } from './replication/published.js'

const help = option({ flag: 'help', short: 'h', type: 'boolean' })
const json = option({ flag: 'json', type: 'boolean' })
const model = (choices) => option({ flag: 'model', type: 'choice', choices, default: 'usl' })
/** How points are made from runs and fitted: what N is, the curves, the bootstrap, the weights, invalid runs. */
const POINT_FLAGS = [
  option({ flag: 'x', type: 'choice', choices: X_FIELDS, default: 'instances' }),
  option({ flag: 'group-by', type: 'text' }),
  option({ flag: 'bootstrap', type: 'whole', min: 0, max: 100000, default: 0 }),
  option({ flag: 'seed', type: 'whole', min: 0, max: 4294967295, default: 1 }),
  option({ flag: 'weights', type: 'choice', choices: ['relative', 'none', 'sd'], default: 'relative' }),
  option({ flag: 'include-invalid', type: 'boolean' })
]
const OUT = option({
  flag: 'out',
  short: 'o',
  type: 'text',
  check: (v) => { if (v === '') throw new NsError('NS_ERR_BAD_FLAG', '--out: needs a file path, e.g. -o report.html'); return v }
})

/** Flags and help of each command. */
export const COMMANDS = Object.freeze({
  summary: { options: [option({ flag: 'label', type: 'text' }), json, help], help: SUMMARY_HELP, min: 1, max: 1, what: 'one JTL file or run folder' },
  fit: {
    options: [model(['usl', 'amdahl', 'both']), ...POINT_FLAGS, json, help],
    help: FIT_HELP,
    min: 1,
    max: Infinity,
    what: 'a sweep folder or a points CSV'
  },
  compare: {
    options: [model(['usl', 'amdahl']), ...POINT_FLAGS, option({ flag: 'margin', type: 'number', min: 0.1, max: 100, default: 5 }),
      option({ flag: 'effect', type: 'number', min: 0.1, max: 1000, default: 10 }), json, help],
    help: COMPARE_HELP,
    min: 1,
    max: Infinity,
    what: 'one or more sweep folders or CSVs'
  },
  report: {
    options: [OUT, option({ flag: 'format', type: 'choice', choices: FORMATS, default: 'html' }), option({ flag: 'title', type: 'text' }),
      ...POINT_FLAGS, help],
    help: REPORT_HELP,
    min: 1,
    max: Infinity,
    what: 'one or more sweep folders (or points CSVs)'
  },
  correlate: { options: [json, help], help: CORRELATE_HELP, min: 1, max: Infinity, what: 'one or more sweep folders' },
  replicate: {
    options: [option({ flag: 'study', type: 'choice', choices: STUDY_IDS }), option({ flag: 'include-invalid', type: 'boolean' }), json, help],
    help: REPLICATE_HELP,
    min: 1,
    max: Infinity,
    what: 'one or more sweep folders of the study'
  },
  export: {
    options: [option({ flag: 'format', type: 'choice', choices: EXPORT_FORMATS, default: 'csv' }),
      option({ flag: 'table', type: 'choice', choices: EXPORT_TABLES, default: 'runs' }), option({ flag: 'include-invalid', type: 'boolean' }), OUT, help],
    help: EXPORT_HELP,
    min: 1,
    max: Infinity,
    what: 'one or more run or sweep folders'
  }
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
  if (!spec) throw new NsError('NS_ERR_BAD_FLAG', `unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')} (analyzer --help)`)
  const { values, positionals } = parseCommandLine(rest, spec.options)
  if (values.help) return { command, help: true, inputs: [], options: {} }
  if (positionals.length < spec.min) throw new NsError('NS_ERR_BAD_FILE', `analyzer ${command} needs ${spec.what} (see analyzer ${command} --help)`)
  if (positionals.length > spec.max) throw new NsError('NS_ERR_BAD_FLAG', `analyzer ${command} takes ${spec.what}; unexpected "${positionals[spec.max]}"`)
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
      if (!opts.study) throw new NsError('NS_ERR_BAD_FLAG', `--study: is required: which study the sweep reproduces; one of: ${STUDY_IDS.join(', ')}`)
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
