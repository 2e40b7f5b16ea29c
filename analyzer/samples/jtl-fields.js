// Field-level pieces of the JTL reader: numbers and booleans read from bytes, JMeter's controller rows, the csv-parse
// path.
import { parse } from 'csv-parse/sync'

const CONTROLLER = Buffer.from('Number of samples in transaction')
const EMPTY_CONTROLLER = Buffer.from('Number of samples in transaction : 0')

/** A row's text without its line break, for malformed-row examples. */
export function rowText (data, s, e) {
  return data.toString('utf8', s, Math.min(e, s + 400)).replace(/\r?\n$/, '')
}

/** 1 for true, 0 for false (any case), -1 for anything else. */
export function boolAt (data, s, e) {
  const n = e - s
  const c = data[s] | 0x20
  if (n === 4 && c === 116 && (data[s + 1] | 0x20) === 114 && (data[s + 2] | 0x20) === 117 && (data[s + 3] | 0x20) === 101) return 1
  if (n === 5 && c === 102 && (data[s + 1] | 0x20) === 97 && (data[s + 2] | 0x20) === 108 && (data[s + 3] | 0x20) === 115 &&
    (data[s + 4] | 0x20) === 101) return 0
  return -1
}

/** A whole non-negative number in data[s..e), or -1. */
export function intAt (data, s, e) {
  if (e <= s || e - s > 15) return -1
  let v = 0
  for (let i = s; i < e; i++) {
    const d = data[i] - 48
    if (d < 0 || d > 9) return -1
    v = v * 10 + d
  }
  return v
}

/** JMeter's Sample.isController / isEmptyController: by the response message's prefix. */
export function controllerKind (data, s, e) {
  if (e - s < CONTROLLER.length || data[s] !== CONTROLLER[0]) return 0
  if (data.compare(CONTROLLER, 0, CONTROLLER.length, s, s + CONTROLLER.length) !== 0) return 0
  if (e - s >= EMPTY_CONTROLLER.length && data.compare(EMPTY_CONTROLLER, 0, EMPTY_CONTROLLER.length, s, s + EMPTY_CONTROLLER.length) === 0) return 2
  return 1
}

/**
 * Parses one row's text with csv-parse (relaxed quotes) into the projected values, or a reason it is malformed.
 * @param {string} text the row without its line break
 * @param {import('./jtl-columns.js').JtlLayout} layout
 * @param {boolean} truncated the row ended at the end of the file
 * @returns {{ reason: string } | { label: string, ts: number, elapsed: number, ok: boolean, bytes: number, sent:
 *   number, ctrl: number }}
 */
export function parseRowText (text, layout, truncated) {
  let fields
  try {
    const records = parse(text, { delimiter: String.fromCharCode(layout.delimiter), relax_quotes: true, relax_column_count: true })
    if (records.length !== 1) return { reason: 'a quoted field does not close where the row ends' }
    fields = records[0]
  } catch (err) {
    return { reason: `CSV quoting: ${err.message.split('\n')[0]}` }
  }
  const { index } = layout
  if (fields.length !== layout.columns.length) {
    return { reason: truncated ? 'truncated last line' : `${fields.length} fields, expected ${layout.columns.length}` }
  }
  const int = (name, dflt) => {
    const v = index[name] === undefined ? '' : fields[index[name]]
    if (v === '' && dflt !== undefined) return dflt
    return /^\d{1,15}$/.test(v) ? Number(v) : -1
  }
  const ts = int('timeStamp')
  const elapsed = int('elapsed')
  const success = String(fields[index.success]).toLowerCase()
  if (ts < 0) return { reason: 'timeStamp is not a whole number of ms since the epoch' }
  if (elapsed < 0) return { reason: 'elapsed is not a whole number of ms' }
  if (success !== 'true' && success !== 'false') return { reason: 'success is neither true nor false' }
  const bytes = int('bytes', 0)
  const sent = int('sentBytes', 0)
  if (bytes < 0 || sent < 0) return { reason: 'bytes or sentBytes is not a whole number' }
  const msg = index.responseMessage === undefined ? '' : fields[index.responseMessage]
  const ctrl = msg.startsWith(EMPTY_CONTROLLER.toString()) ? 2 : msg.startsWith(CONTROLLER.toString()) ? 1 : 0
  return { label: fields[index.label], ts, elapsed, ok: success === 'true', bytes, sent, ctrl }
}
