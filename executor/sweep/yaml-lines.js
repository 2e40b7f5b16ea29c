// Loads a YAML document and remembers the source line of every key and list item, for errors that name the line.
import { load, parseEvents, getScalarValue, EVENT_ID } from 'js-yaml'
import { fail } from '../../lib/messages.js'

/**
 * Parses YAML text. Returns the data and `lineOf(path)`: the 1-based line of the key (or list item) at a path such
 * as ['profiles', 'smoke', 'instances'], or of its nearest ancestor that has one.
 * A syntax error is NS_ERR_BAD_FILE naming the file and line.
 * @param {string} text
 * @param {string} file for messages
 * @returns {{ data: unknown, lineOf: (path: (string|number)[]) => number }}
 */
export function loadYamlWithLines (text, file) {
  let data
  let events
  try {
    data = load(text, { filename: file })
    events = parseEvents(text, { filename: file })
  } catch (err) {
    const line = Number.isInteger(err?.mark?.line) ? err.mark.line + 1 : null
    const reason = String(err?.reason ?? err?.message ?? err).split('\n')[0]
    throw fail('NOT_PARSED', { file, line, format: 'YAML', reason }, { cause: err })
  }
  const starts = lineStarts(text)
  /** @type {Map<string, number>} offset of each path's key or item */
  const offsets = new Map()
  /** @type {{ kind: 'map'|'seq', path: (string|number)[], key: string|null, keyAt: number, index: number }[]} */
  const stack = []
  for (const ev of events) {
    if (ev.type === EVENT_ID.POP) { stack.pop(); continue }
    if (ev.type === EVENT_ID.DOCUMENT) { stack.push({ kind: 'seq', path: [], key: null, keyAt: 0, index: 0 }); continue }
    const top = stack.at(-1)
    const at = ev.type === EVENT_ID.SCALAR ? ev.valueStart : 'start' in ev ? ev.start : 0
    let path
    if (top.kind === 'map' && top.key === null) {
      // a key: remember it until its value arrives (a collection as a key is not used by experiment files)
      top.key = ev.type === EVENT_ID.SCALAR ? getScalarValue(text, ev) : '?'
      top.keyAt = at
      if (ev.type === EVENT_ID.MAPPING || ev.type === EVENT_ID.SEQUENCE) stack.push({ kind: 'seq', path: [...top.path, '?'], key: null, keyAt: at, index: 0 })
      continue
    }
    if (top.kind === 'map') {
      path = [...top.path, top.key]
      offsets.set(JSON.stringify(path), top.keyAt)
      top.key = null
    } else {
      path = stack.length === 1 ? [] : [...top.path, top.index++]
      offsets.set(JSON.stringify(path), at)
    }
    if (ev.type === EVENT_ID.MAPPING) stack.push({ kind: 'map', path, key: null, keyAt: at, index: 0 })
    else if (ev.type === EVENT_ID.SEQUENCE) stack.push({ kind: 'seq', path, key: null, keyAt: at, index: 0 })
  }
  const lineOf = (path) => {
    for (let n = path.length; n >= 0; n--) {
      const off = offsets.get(JSON.stringify(path.slice(0, n)))
      if (off !== undefined) return lineAt(starts, off)
    }
    return 1
  }
  return { data, lineOf }
}

function lineStarts (text) {
  const out = [0]
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) out.push(i + 1)
  return out
}

/** 1-based line of an offset (binary search over line starts). */
function lineAt (starts, offset) {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid] <= offset) lo = mid
    else hi = mid - 1
  }
  return lo + 1
}
