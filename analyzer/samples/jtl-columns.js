// Reads a CSV JTL's first line: which column holds what, which delimiter, or why the file is not a JTL at all.
import { parse } from 'csv-parse/sync'
import { fail } from '../../lib/messages.js'
import { JTL_COLUMNS } from '../../lib/run-files.js'

/** JMeter 5.6's default CSV JTL columns, in order (what a header-less file is assumed to hold). */
export const DEFAULT_COLUMNS = JTL_COLUMNS

/** What the reader does with a column (the scanner switches on these numbers). */
export const ROLE = Object.freeze({ SKIP: 0, TIMESTAMP: 1, ELAPSED: 2, LABEL: 3, SUCCESS: 4, BYTES: 5, SENT_BYTES: 6, RESPONSE_MESSAGE: 7 })

const ROLE_OF = {
  timeStamp: ROLE.TIMESTAMP,
  elapsed: ROLE.ELAPSED,
  label: ROLE.LABEL,
  success: ROLE.SUCCESS,
  bytes: ROLE.BYTES,
  sentBytes: ROLE.SENT_BYTES,
  responseMessage: ROLE.RESPONSE_MESSAGE
}
const REQUIRED = ['timeStamp', 'elapsed', 'label', 'success']

/**
 * @typedef {{ columns: string[], roles: Uint8Array, delimiter: number, assumed: boolean, headerBytes: number,
 *   index: Record<string, number> }} JtlLayout
 */

/** @returns {JtlLayout} */
function layoutOf (columns, delimiter, assumed, headerBytes) {
  const roles = new Uint8Array(columns.length)
  /** @type {Record<string, number>} */
  const index = {}
  columns.forEach((name, i) => {
    if (index[name] === undefined) index[name] = i
    if (ROLE_OF[name] !== undefined && index[name] === i) roles[i] = ROLE_OF[name]
  })
  return { columns, roles, delimiter, assumed, headerBytes, index }
}

/**
 * Works out the layout from the file's first line (without its line break).
 * @param {string} firstLine
 * @param {number} headerBytes bytes of the first line including its line break (and a BOM)
 * @param {string} file for messages
 * @returns {JtlLayout}
 */
export function detectLayout (firstLine, headerBytes, file) {
  const trimmed = firstLine.trim()
  if (trimmed.startsWith('<')) {
    throw fail('JTL_IS_XML', { file })
  }
  const delimiter = ['\t', ';', '|'].find(d => firstLine.includes(d) && !firstLine.includes(',')) ?? ','
  let fields
  try {
    fields = parse(firstLine, { delimiter, relax_quotes: true, relax_column_count: true })[0] ?? []
  } catch {
    fields = firstLine.split(delimiter)
  }
  if (fields.includes('timeStamp') && fields.includes('elapsed')) {
    const missing = REQUIRED.filter(c => !fields.includes(c))
    if (missing.length) {
      throw fail('JTL_COLUMNS_MISSING', { file, missing, required: REQUIRED })
    }
    return layoutOf(fields, delimiter.charCodeAt(0), false, headerBytes)
  }
  // No header: JMeter only writes one when print_field_names is on; assume its default columns if they fit.
  if (/^\d+$/.test(fields[0] ?? '') && fields.length === DEFAULT_COLUMNS.length) {
    return layoutOf([...DEFAULT_COLUMNS], delimiter.charCodeAt(0), true, 0)
  }
  throw fail('JTL_HEADER_UNKNOWN', { file, defaults: DEFAULT_COLUMNS.length })
}
