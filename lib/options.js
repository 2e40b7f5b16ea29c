// Option tables: every command's flags as rows (type, limits, default, help line), parsed from the command line and
// checked by one rule whether a value comes as text (a flag) or typed (an experiment file).
import { parseArgs } from 'node:util'
import { badFlag } from './errors.js'

/**
 * @typedef {object} Option a row of an option table
 * @property {string} flag the flag without its dashes: 'instances' is --instances
 * @property {string} [short] one letter: 'n' is -n
 * @property {string} [key] the field it fills in a command's values (default: the flag in camelCase)
 * @property {'whole'|'number'|'choice'|'text'|'boolean'|'list'|'map'|'object'} type the value's type: whole numbers and
 *   numbers are written in decimal digits, a choice is one of `choices`, a list collects a repeated flag, a map is an
 *   object of texts (a repeated KEY=VALUE flag), an object is what the option's fromText makes of its text
 * @property {number} [min] the smallest value allowed (with `above`: values must be greater)
 * @property {boolean} [above]
 * @property {number | (() => number)} [max] the largest value allowed (a function: a limit of this machine)
 * @property {readonly string[]} [choices]
 * @property {readonly string[]} [words] words a number option also takes in place of a number ('auto')
 * @property {any} [default]
 * @property {string} [arg] the value's name in --help: N in "--instances N"
 * @property {string | string[]} [help] its --help text (lines after the first are continuations); {default} is its
 *   default
 * @property {(text: string, option: Option) => any} [fromText] how its text becomes the value, where the type's way
 *   does not fit
 * @property {(value: any, option: Option) => any} [check] checks after the type's, returning the value (normalised)
 * @property {string} [experiment] the experiment file's key for it (run options only)
 * @property {readonly string[]} [backends] only these backends take it
 * @property {readonly string[]} [strategies] only these strategies take it
 * @property {boolean} [verbatim] the next word is its value even when it starts with "-" (a server's own flags)
 * @property {'shape'|'load'|'output'} [side] what the value decides (run options): `shape` what is deployed (runs that
 *   differ in it need deployments of their own), `load` how the load is driven, `output` what is judged, written or
 *   printed
 * @property {readonly ('capacity'|'calibrate')[]} [also] the commands besides run that take it as run does
 * @property {true} [toDriver] (`load` rows) the load drivers take the value as it is, under its key: the run passes it,
 *   a load agent accepts it (the rest of a driver's load is worked out: url, method, headers, duration, label)
 */

/**
 * A row, frozen and typed as one (for tables written as literals).
 * @param {Option} o
 * @returns {Readonly<Option>}
 */
export const option = (o) => Object.freeze(o)

const WHOLE = /^\s*[+-]?\d+\s*$/
const DECIMAL = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/

/** --flag as the user writes it. */
export const flagOf = (/** @type {Option} */ o) => `--${o.flag}`

/** The field an option fills: its key, or its flag in camelCase. */
export const keyOf = (/** @type {Option} */ o) => o.key ?? o.flag.replace(/-([a-z])/g, (m, c) => c.toUpperCase())

/** A bad value of an option, with the flag and the field as data. */
export const badOption = (/** @type {Option} */ o, reason) => badFlag(flagOf(o), reason, { key: keyOf(o) })

/** One of the words a number option takes in place of a number. */
const isWord = (/** @type {Option} */ o, value) => typeof value === 'string' && Boolean(o.words?.includes(value))

const isTextMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(x => typeof x === 'string')

/** Repeated KEY=VALUE texts as an object of texts. */
function mapFromText (o, list) {
  /** @type {Record<string, string>} */
  const out = {}
  for (const item of list) {
    const eq = item.indexOf('=')
    if (eq <= 0) throw badOption(o, `"${item}" is not key=value (e.g. --${o.flag} n=104729)`)
    out[item.slice(0, eq).trim()] = item.slice(eq + 1)
  }
  return out
}

const maxOf = (o) => (typeof o.max === 'function' ? o.max() : o.max)

/** "a whole number >= 1 and <= 64", "a number > 0 and <= 86400". */
function rangeText (o) {
  const kind = o.type === 'whole' ? 'a whole number' : 'a number'
  const low = o.min === undefined ? '' : ` ${o.above ? '>' : '>='} ${o.min}`
  const high = o.max === undefined ? '' : ` ${low ? 'and ' : ''}<= ${maxOf(o)}`
  const words = o.words?.length ? `, or ${o.words.join(' or ')}` : ''
  return `${kind}${low}${high}${words}`
}

/**
 * Why a value does not have the option's type (a number where a number belongs, one of the choices...), or null.
 * Ranges are not looked at: an experiment file's forms are checked when it is read, its values when each run is made.
 * @param {Option} o
 * @param {unknown} value
 * @returns {string | null}
 */
export function typeProblem (o, value) {
  const shown = typeof value === 'string' ? `"${value}"` : JSON.stringify(value)
  if (isWord(o, value)) return null
  if (o.type === 'whole' && !Number.isInteger(value)) return `${shown} is not a whole number; allowed: ${rangeText(o)}`
  if (o.type === 'number' && !(typeof value === 'number' && Number.isFinite(value))) return `${shown} is not a number; allowed: ${rangeText(o)}`
  if (o.type === 'choice' && !o.choices.includes(/** @type {string} */ (value))) return `${shown} is not allowed; one of: ${o.choices.join(', ')}`
  if (o.type === 'text' && typeof value !== 'string') return `${shown} is not text`
  if (o.type === 'boolean' && typeof value !== 'boolean') return `${shown} is not true or false`
  if (o.type === 'list' && !(Array.isArray(value) && value.every(v => typeof v === 'string'))) return `${shown} is not a list of text`
  if (o.type === 'map' && !isTextMap(value)) return `${shown} is not a mapping of key: value texts`
  if (o.type === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) return `${shown} is not ${o.arg ?? 'a value'}`
  return null
}

/**
 * Checks a typed value against its option: type, range, and the option's own check. Returns the value (normalised).
 * @param {Option} o
 * @param {unknown} value
 * @throws {import('./errors.js').NsError} NS_ERR_BAD_FLAG naming the flag, with `details.key`
 */
export function checkOption (o, value) {
  const problem = typeProblem(o, value)
  if (problem) throw badOption(o, problem)
  if ((o.type === 'whole' || o.type === 'number') && !isWord(o, value)) {
    const v = /** @type {number} */ (value)
    const max = maxOf(o)
    if ((o.min !== undefined && (o.above ? v <= o.min : v < o.min)) || (max !== undefined && v > max)) {
      throw badOption(o, `${v} is out of range; allowed: ${rangeText(o)}`)
    }
  }
  return o.check ? o.check(value, o) : value
}

/**
 * A value as written on the command line, made typed by the one rule: whole numbers and numbers in decimal digits
 * (so "1e1", "0x10" and "10s" are refused everywhere), then checked.
 * @param {Option} o
 * @param {string | string[] | boolean} text
 */
export function readOption (o, text) {
  if (o.fromText) return checkOption(o, o.fromText(/** @type {any} */ (text), o))
  if (o.type === 'map') return checkOption(o, mapFromText(o, /** @type {string[]} */ (text)))
  if (isWord(o, text)) return checkOption(o, text)
  if (o.type === 'whole' || o.type === 'number') {
    const ok = (o.type === 'whole' ? WHOLE : DECIMAL).test(/** @type {string} */ (text))
    if (!ok) throw badOption(o, `"${text}" is not ${o.type === 'whole' ? 'a whole number' : 'a number'}; allowed: ${rangeText(o)}`)
    return checkOption(o, Number(text))
  }
  return checkOption(o, text)
}

/**
 * Parses a command line by a table: every flag checked and typed by its row (no defaults filled in), the rest as
 * positionals. Unknown flags and missing values are NS_ERR_BAD_FLAG naming the flag.
 * @param {string[]} argv
 * @param {readonly Option[]} table
 * @returns {{ values: Record<string, any>, positionals: string[] }} values by key (keyOf), only the flags given
 */
export function parseCommandLine (argv, table) {
  // `--server-arg --port` is the value "--port": joined as --server-arg=--port before parseArgs reads it
  const verbatim = new Set(table.filter(o => o.verbatim).map(flagOf))
  const words = []
  for (let i = 0; i < argv.length; i++) {
    const joined = verbatim.has(argv[i]) && i + 1 < argv.length && !words.includes('--')
    words.push(joined ? `${argv[i]}=${argv[++i]}` : argv[i])
  }
  const spec = Object.fromEntries(table.map(o => [o.flag, {
    type: /** @type {'string'|'boolean'} */ (o.type === 'boolean' ? 'boolean' : 'string'),
    ...(o.short ? { short: o.short } : {}),
    ...(o.type === 'list' || o.type === 'map' ? { multiple: true } : {})
  }]))
  let parsed
  try {
    parsed = parseArgs({ args: words, options: spec, allowPositionals: true, strict: true })
  } catch (err) {
    const m = /--[a-z][\w-]*/i.exec(err.message) ?? /'(-\w)/.exec(err.message)
    const flag = m ? m[m.length - 1] : 'arguments'
    const known = table.map(flagOf).join(', ')
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw badFlag(flag, `unknown flag; known flags: ${known}`)
    if (/ambiguous/.test(err.message)) {
      throw badFlag(flag, `needs a value; write a value that starts with "-" as ${flag}=-1 ` +
        '(and note that negative values are not allowed for most flags)')
    }
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw badFlag(flag, 'needs a value')
    throw badFlag(flag, err.message)
  }
  const values = {}
  for (const o of table) {
    const text = /** @type {string | string[] | boolean | undefined} */ (parsed.values[o.flag])
    if (text !== undefined) values[keyOf(o)] = readOption(o, text)
  }
  return { values, positionals: parsed.positionals }
}

/**
 * A command's values with every option that was not given at its default (an option without one stays unset).
 * @param {Record<string, any>} values as parseCommandLine gives them
 * @param {readonly Option[]} table
 * @returns {Record<string, any>}
 */
export function withDefaults (values, table) {
  /** @type {Record<string, any>} */
  const out = { ...values }
  for (const o of table) if (out[keyOf(o)] === undefined && o.default !== undefined) out[keyOf(o)] = o.default
  return out
}

/**
 * The options' lines of a --help text: " -n, --instances N <help>", the help column at `width` after the flag's start.
 * @param {readonly Option[]} table
 * @param {{ width?: number }} [opts]
 */
export function optionsHelp (table, { width = 24 } = {}) {
  const lines = []
  for (const o of table) {
    if (!o.help) continue
    const name = `--${o.flag}${o.arg ? ` ${o.arg}` : ''}`
    const [first, ...more] = [].concat(o.help).map(line => line.replaceAll('{default}', String(o.default)))
    lines.push(`  ${o.short ? `-${o.short},` : '   '} ${name.padEnd(width - 1)} ${first}`)
    for (const line of more) lines.push(`${' '.repeat(width + 6)}${line}`)
  }
  return lines.join('\n')
}
