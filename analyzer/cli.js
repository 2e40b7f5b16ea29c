// The `analyzer` command line: parses arguments and calls the library; nothing else lives here.
import { parseFlags } from '../executor/config.js'
import { EXIT, NsError, badFlag, exitCodeOf, formatError } from '../executor/errors.js'
import { summarize } from './summary.js'
import { fitSources, compare } from './compare.js'
import { writeReport, FORMATS } from './report.js'
import { correlate } from './correlate.js'
import { X_FIELDS } from './points.js'
import { formatSummary, formatFit, formatCompare, formatCorrelate } from './cli-format.js'
import { MAIN_HELP, SUMMARY_HELP, FIT_HELP, COMPARE_HELP, REPORT_HELP, CORRELATE_HELP } from './cli-help.js'

const help = { type: 'boolean', short: 'h' }
const json = { type: 'boolean' }
const POINT_FLAGS = { x: { type: 'string' }, 'group-by': { type: 'string' }, bootstrap: { type: 'string' }, seed: { type: 'string' }, weights: { type: 'string' } }
const FIT_FLAGS = { model: { type: 'string' }, ...POINT_FLAGS, json, help }
const REPORT_FLAGS = { out: { type: 'string', short: 'o' }, format: { type: 'string' }, title: { type: 'string' }, ...POINT_FLAGS, help }

/** Flags and help of each command. */
export const COMMANDS = Object.freeze({
  summary: { options: { label: { type: 'string' }, json, help }, help: SUMMARY_HELP, min: 1, max: 1, what: 'one JTL file or run folder' },
  fit: { options: FIT_FLAGS, help: FIT_HELP, min: 1, max: Infinity, what: 'a sweep folder or a points CSV' },
  compare: { options: FIT_FLAGS, help: COMPARE_HELP, min: 1, max: Infinity, what: 'one or more sweep folders or CSVs' },
  report: { options: REPORT_FLAGS, help: REPORT_HELP, min: 1, max: Infinity, what: 'one or more sweep folders (or points CSVs)' },
  correlate: { options: { json, help }, help: CORRELATE_HELP, min: 1, max: Infinity, what: 'one or more sweep folders' }
})

function oneOf (flag, value, allowed) {
  if (!allowed.includes(value)) throw badFlag(flag, `"${value}" is not allowed; allowed: ${allowed.join(', ')}`)
  return value
}

function wholeNumber (flag, raw, min, max) {
  const v = Number(raw)
  if (!/^\d+$/.test(String(raw).trim()) || v < min || v > max) throw badFlag(flag, `"${raw}" is not allowed; allowed: a whole number from ${min} to ${max}`)
  return v
}

/**
 * Parses `analyzer <command> ...` into a validated request (throws NsError on bad input).
 * @param {string[]} argv process.argv.slice(2)
 * @returns {{ command: string|null, help: boolean, inputs: string[], options: Record<string, any> }}
 */
export function parseArguments (argv) {
  const [command, ...rest] = argv
  if (!command || command === '--help' || command === '-h' || command === 'help') return { command: null, help: true, inputs: [], options: {} }
  const spec = COMMANDS[command]
  if (!spec) throw new NsError('NS_ERR_BAD_FLAG', `unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')} (analyzer --help)`)
  const { values, positionals } = parseFlags(rest, spec.options)
  if (values.help) return { command, help: true, inputs: [], options: {} }
  if (positionals.length < spec.min) throw new NsError('NS_ERR_BAD_FILE', `analyzer ${command} needs ${spec.what} (see analyzer ${command} --help)`)
  if (positionals.length > spec.max) throw new NsError('NS_ERR_BAD_FLAG', `analyzer ${command} takes ${spec.what}; unexpected "${positionals[spec.max]}"`)
  const options = { json: Boolean(values.json) }
  if (command === 'summary') {
    if (values.label !== undefined) options.label = values.label
  } else if (command !== 'correlate') {
    if (command === 'report') {
      options.format = oneOf('--format', values.format ?? 'html', FORMATS)
      if (values.out === '') throw badFlag('--out', 'needs a file path, e.g. -o report.html')
      if (values.out !== undefined) options.out = values.out
      if (values.title !== undefined) options.title = values.title
    } else {
      options.model = oneOf('--model', values.model ?? 'usl', command === 'fit' ? ['usl', 'amdahl', 'both'] : ['usl', 'amdahl'])
    }
    options.x = oneOf('--x', values.x ?? 'instances', X_FIELDS)
    if (values['group-by'] !== undefined) options.groupBy = values['group-by']
    options.bootstrap = values.bootstrap === undefined ? 0 : wholeNumber('--bootstrap', values.bootstrap, 0, 100000)
    options.seed = values.seed === undefined ? 1 : wholeNumber('--seed', values.seed, 0, 4294967295)
    options.weights = oneOf('--weights', values.weights ?? 'none', ['none', 'sd'])
  }
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
