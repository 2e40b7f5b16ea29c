// Streams a CSV JTL, plain or gzip, with a byte-level scanner: projected columns only, numbers parsed from bytes, no
// per-row allocation.
import { open } from 'node:fs/promises'
import { createGunzip } from 'node:zlib'
import { ROLE, detectLayout } from './jtl-columns.js'
import { boolAt, intAt, controllerKind, rowText, parseRowText } from './jtl-fields.js'
import { fail } from '../../lib/messages.js'
import { MAX_SPAN_TENTHS } from './latency-histogram.js'

const LF = 10
const CR = 13
const QUOTE = 34
const FNV_OFFSET = 0x811c9dc5 | 0
const FNV_PRIME = 16777619
const MAX_EXAMPLES = 5
/**
 * The reader's bounds (docs/SECURITY.md, "Bounded parsers"): a row (a quoted field may hold line breaks) longer than
 * MAX_ROW_BYTES is NS_ERR_BAD_FILE naming the file and the row's line (an unterminated quote reads to the end of the
 * file); a label longer than MAX_LABEL_BYTES, or a label beyond the first MAX_LABELS distinct ones, makes its row
 * malformed (counted, with examples). Memory: the read buffer (at most 2 x MAX_ROW_BYTES + a chunk) and MAX_LABELS
 * histograms (analyzer/samples/latency-histogram.js states each one's bound).
 */
export const MAX_ROW_BYTES = 8 << 20
export const MAX_LABEL_BYTES = 1024
export const MAX_LABELS = 64

/**
 * What the scanner feeds: `record(label)` returns the object whose `add(start, elapsed, success, bytes, sentBytes)`
 * takes that label's samples (or null to skip the label); `controller(label)` the same for JMeter transaction
 * controller samples, which its dashboard counts per label but not in the total.
 * @typedef {{ record: (label: string) => any, controller: (label: string) => any }} JtlSink
 */

/**
 * @typedef {{ rows: number, blankLines: number, outsideWindow: number, malformed: { count: number, examples: { line:
 *   number, reason: string, text: string }[] }, layout: import('./jtl-columns.js').JtlLayout | null }} ScanResult
 */

/** @typedef {{ name: string, rec: any, ctrl: any }} LabelEntry */
/** @typedef {{ raw: Buffer, hash: number, entry: LabelEntry }} LabelBytes */

/** Scanner state for one file; parseChunk() is the hot loop. */
class JtlScanner {
  /**
   * @param {import('./jtl-columns.js').JtlLayout} layout
   * @param {JtlSink} sink
   * @param {{ from: number, to: number }} window
   */
  constructor (layout, sink, window) {
    this.layout = layout
    this.sink = sink
    this.from = window.from
    this.to = window.to
    this.line = layout.headerBytes > 0 ? 2 : 1
    /** the line of the row being added (what a histogram's bound error names) */
    this.at = this.line
    /** the earliest and latest end times of the rows taken so far */
    this.minEnd = Infinity
    this.maxEnd = -Infinity
    this.rows = 0
    this.blankLines = 0
    this.outsideWindow = 0
    this.malformed = { count: 0, examples: [] }
    /** @type {Map<number, LabelBytes[]>} labels by hash of their raw bytes */
    this.buckets = new Map()
    /** @type {Map<string, LabelEntry>} */
    this.byName = new Map()
    /** @type {LabelBytes | null} */
    this.last = null
    // Bytes that end or complicate an unquoted field: one table lookup per byte in the skip loops.
    this.stop = new Uint8Array(256)
    for (const b of [layout.delimiter, LF, CR, QUOTE]) this.stop[b] = 1
    this.delim = layout.delimiter
    /** the row parseChunk() read last, for endRow() */
    this.row = new Row()
    /** set by quotedEnd(): bytes follow a closing quote */
    this.quoteIrregular = false
  }

  /**
   * Notes a row's end time outside those seen so far: the rows of all labels together (the total a summary merges)
   * span at most a histogram's MAX_SPAN_TENTHS, or the row (this.at) is a coded error.
   * @param {number} end ms since the epoch
   */
  widen (end) {
    this.minEnd = Math.min(this.minEnd, end)
    this.maxEnd = Math.max(this.maxEnd, end)
    if (Math.floor(this.maxEnd / 100) - Math.floor(this.minEnd / 100) >= MAX_SPAN_TENTHS) {
      throw fail('JTL_SPAN_TOO_LONG', { from: this.minEnd, to: this.maxEnd, hours: MAX_SPAN_TENTHS / 36000 }, { details: { bound: 'span' } })
    }
  }

  bad (line, reason, text) {
    this.malformed.count++
    if (this.malformed.examples.length < MAX_EXAMPLES) this.malformed.examples.push({ line, reason, text: text.slice(0, 200) })
  }

  /** @returns {LabelEntry | null} null for a new label over the bounds */
  labelEntry (name) {
    let e = this.byName.get(name)
    if (!e) {
      if (Buffer.byteLength(name) > MAX_LABEL_BYTES || this.byName.size >= MAX_LABELS) return null
      e = { name, rec: this.sink.record(name), ctrl: undefined }
      this.byName.set(name, e)
    }
    return e
  }

  /**
   * Finds (or creates) the label of the bytes data[s..e) with hash h. Null for a new label over the bounds (too long,
   * or one too many). Quotes in the bytes are a quoted label's doubled ones (an unquoted label with a quote is read by
   * slowRow()): each pair is one quote of the name.
   * @returns {LabelBytes | null}
   */
  lookup (data, s, e, h) {
    let bucket = this.buckets.get(h)
    if (bucket) for (const item of bucket) if (sameBytes(item.raw, data, s, e)) return item
    if (e - s > MAX_LABEL_BYTES || this.byName.size >= MAX_LABELS) return null
    if (!bucket) {
      bucket = []
      this.buckets.set(h, bucket)
    }
    const name = data.toString('utf8', s, e).replaceAll('""', '"')
    const item = { raw: Buffer.from(data.subarray(s, e)), hash: h, entry: this.labelEntry(name) }
    bucket.push(item)
    return item
  }

  /** Adds one sample with its label resolved; ctrl: 0 plain, 1 transaction controller, 2 empty controller. */
  take (entry, name, ts, elapsed, ok, bytes, sent, ctrl) {
    if (ts < this.from || ts >= this.to) { this.outsideWindow++; return }
    if (ts + elapsed < this.minEnd || ts + elapsed > this.maxEnd) this.widen(ts + elapsed)
    if (ctrl === 0) {
      if (entry.rec) entry.rec.add(ts, elapsed, ok, bytes, sent)
    } else if (ctrl === 1) {
      if (entry.ctrl === undefined) entry.ctrl = this.sink.controller(name)
      if (entry.ctrl) entry.ctrl.add(ts, elapsed, ok, bytes, sent)
    }
  }

  /** A row the fast path could not vouch for (stray quotes): csv-parse decides, with relaxed quotes. */
  slowRow (text, line, truncated) {
    const r = parseRowText(text, this.layout, truncated)
    if ('reason' in r) return this.bad(line, r.reason, text)
    const entry = this.labelEntry(r.label)
    if (!entry) return this.bad(line, labelReason(), text)
    this.at = line
    this.take(entry, r.label, r.ts, r.elapsed, r.ok, r.bytes, r.sent, r.ctrl)
  }

  /**
   * Parses every complete row in data[0..len). Returns where the first incomplete row starts (len when all done).
   * The hot loop: a row's fields are found and the projected columns' values read from their bytes in one pass, into
   * locals. The steps around it are methods: blankLine(); quotedEnd() and quotedValue() for a quoted field; rowEnd()
   * for the line break; endRow() checks the row and adds its sample. The loop over a row's fields stays here: as a
   * method called per row it measured ~7% fewer rows/s, with a store to an object per field ~5% fewer.
   * @param {Buffer} data
   * @param {number} len
   * @param {boolean} eof no more bytes follow
   */
  parseChunk (data, len, eof) {
    const roles = this.layout.roles
    const nCols = roles.length
    const delim = this.delim
    const stop = this.stop
    let p = 0
    let line = this.line
    while (p < len) {
      if (data[p] === LF || data[p] === CR) { p = this.blankLine(data, p, len); line++; continue }
      const start = p
      const startLine = line
      let ts = -1
      let elapsed = -1
      let ok = -1
      let bytes = 0
      let sent = 0
      let ctrl = 0
      let labS = 0
      let labE = 0
      let labH = 0
      let field = 0
      let irregular = false
      let unterminated = false
      for (;;) {
        const role = field < nCols ? roles[field] : ROLE.SKIP
        if (p < len && data[p] === QUOTE) {
          // A quoted field: it may hold the delimiter, doubled quotes and line breaks.
          const s = p + 1
          p = this.quotedEnd(data, p, len, eof)
          if (p === -1) break
          if (p === UNCLOSED) { unterminated = true; p = len; break }
          for (let i = s; i < p; i++) if (data[i] === LF) line++
          if (this.quoteIrregular) { irregular = true; this.quoteIrregular = false }
          // (+: a number for sure, so that the locals stay unboxed doubles should the call not be inlined)
          const v = role === ROLE.SKIP ? 0 : +this.quotedValue(data, s, p - 1, role)
          if (role === ROLE.TIMESTAMP) ts = v
          else if (role === ROLE.ELAPSED) elapsed = v
          else if (role === ROLE.LABEL) { labS = s; labE = p - 1; labH = v } else if (role === ROLE.SUCCESS) ok = v
          else if (role === ROLE.RESPONSE_MESSAGE) ctrl = v
          else if (role === ROLE.BYTES) bytes = v
          else if (role === ROLE.SENT_BYTES) sent = v
        } else if (role === ROLE.SKIP) {
          while (p < len && stop[data[p]] === 0) p++
          while (p < len && data[p] === QUOTE) { irregular = true; p++; while (p < len && stop[data[p]] === 0) p++ }
        } else if (role === ROLE.LABEL) {
          // hashed while scanning (FNV-1a), for the label table
          let h = FNV_OFFSET
          labS = p
          while (p < len) {
            const c = data[p]
            if (stop[c] !== 0) { if (c !== QUOTE) break; irregular = true }
            h = Math.imul(h ^ c, FNV_PRIME)
            p++
          }
          labE = p
          labH = h
        } else if (role === ROLE.SUCCESS || role === ROLE.RESPONSE_MESSAGE) {
          const s = p
          while (p < len && stop[data[p]] === 0) p++
          while (p < len && data[p] === QUOTE) { irregular = true; p++; while (p < len && stop[data[p]] === 0) p++ }
          if (role === ROLE.SUCCESS) ok = boolAt(data, s, p)
          else ctrl = controllerKind(data, s, p)
        } else {
          // A number, parsed while scanning: -1 unless 1 to 15 digits (an empty bytes or sentBytes is 0).
          let v = 0
          let digits = 0
          let junk = false
          while (p < len) {
            const c = data[p]
            const d = c - 48
            if (d >= 0 && d <= 9) { v = v * 10 + d; digits++ } else if (c === delim || c === LF || c === CR) break
            else { junk = true; if (c === QUOTE) irregular = true }
            p++
          }
          if (junk || digits > 15) v = -1
          if (role === ROLE.TIMESTAMP) ts = digits ? v : -1
          else if (role === ROLE.ELAPSED) elapsed = digits ? v : -1
          else if (role === ROLE.BYTES) bytes = digits ? v : (junk ? -1 : 0)
          else sent = digits ? v : (junk ? -1 : 0)
        }
        field++
        if (p < len && data[p] === delim) p++
        else break
      }
      const end = p === -1 ? -1 : this.rowEnd(data, p, len, eof)
      if (end === -1) { p = start; line = startLine; break } // an incomplete row: the caller keeps it for the next chunk
      this.row.set(ts, elapsed, ok, bytes, sent, ctrl, labS, labE, labH, field, p >= len, irregular, unterminated)
      this.endRow(data, start, end, startLine)
      if (p < len) line++
      p = end
    }
    this.line = line
    return p
  }

  /**
   * Skips a blank line (LF, CR or CRLF) at data[p]; returns where the next row starts.
   * @param {Buffer} data
   * @param {number} p
   * @param {number} len
   */
  blankLine (data, p, len) {
    this.blankLines++
    return data[p] === CR && p + 1 < len && data[p + 1] === LF ? p + 2 : p + 1
  }

  /**
   * A quoted field's value, data[s..e) between its quotes, by its column's role: the label's hash, success (1, 0 or
   * -1), the controller kind (response message) or the number (-1 unless 1 to 15 digits; an empty bytes or sentBytes
   * is 0).
   * @param {Buffer} data
   * @param {number} s
   * @param {number} e
   * @param {number} role
   */
  quotedValue (data, s, e, role) {
    if (role === ROLE.LABEL) {
      let h = FNV_OFFSET
      for (let i = s; i < e; i++) h = Math.imul(h ^ data[i], FNV_PRIME)
      return h
    }
    if (role === ROLE.SUCCESS) return boolAt(data, s, e)
    if (role === ROLE.RESPONSE_MESSAGE) return controllerKind(data, s, e)
    if ((role === ROLE.BYTES || role === ROLE.SENT_BYTES) && s === e) return 0
    return intAt(data, s, e)
  }

  /**
   * Where the quoted field that starts at data[p] ends: past its closing quote (a doubled quote inside is one quote of
   * the value). Bytes between the closing quote and the field's end make the row irregular (this.quoteIrregular).
   * -1 when the end is past data[len) and more bytes follow; UNCLOSED when the file ends first.
   * @param {Buffer} data
   * @param {number} p the opening quote
   * @param {number} len
   * @param {boolean} eof
   */
  quotedEnd (data, p, len, eof) {
    const delim = this.delim
    let close = data.indexOf(QUOTE, p + 1)
    while (close !== -1 && close + 1 < len && data[close + 1] === QUOTE) close = data.indexOf(QUOTE, close + 2)
    if (close === -1 || close >= len) return eof ? UNCLOSED : -1
    if (close + 1 >= len && !eof) return -1
    p = close + 1
    if (p < len && data[p] !== delim && data[p] !== LF && data[p] !== CR) {
      this.quoteIrregular = true
      while (p < len && data[p] !== delim && data[p] !== LF) p++
      if (p >= len && !eof) return -1
    }
    return p
  }

  /**
   * Where the row whose last field ends at data[p] ends: past its line break (LF, CR or CRLF), or at data[len) when
   * that is the file's end; -1 when more bytes are needed to tell.
   * @param {Buffer} data
   * @param {number} p
   * @param {number} len
   * @param {boolean} eof
   */
  rowEnd (data, p, len, eof) {
    if (p >= len) return eof ? p : -1
    if (data[p] !== CR) return p + 1
    if (p + 1 < len && data[p + 1] === LF) return p + 2
    return p + 1 >= len && !eof ? -1 : p + 1
  }

  /**
   * Counts the row data[start..end) read into this.row, which starts at line `line`, and adds its sample; or counts it
   * malformed, with the reason (a row with stray quotes goes to slowRow()).
   * @param {Buffer} data
   * @param {number} start
   * @param {number} end
   * @param {number} line
   */
  endRow (data, start, end, line) {
    const { ts, elapsed, ok, bytes, sent, ctrl, labS, labE, labH, field, irregular, unterminated, endedAtEof } = this.row
    const nCols = this.layout.roles.length
    this.rows++
    if (unterminated) return this.bad(line, 'a quoted field is never closed (truncated last line?)', rowText(data, start, end))
    if (irregular) return this.slowRow(rowText(data, start, end), line, endedAtEof && field < nCols)
    const reason = this.row.fault(nCols)
    if (reason !== null) return this.bad(line, reason, rowText(data, start, end))
    const item = this.labelOf(data, labS, labE, labH)
    if (item === null) return this.bad(line, labelReason(), rowText(data, start, end))
    const entry = item.entry
    this.at = line
    if (ctrl === 0 && ts >= this.from && ts < this.to) {
      // a plain sample inside the window, the common case: straight to its label's record
      if (ts + elapsed < this.minEnd || ts + elapsed > this.maxEnd) this.widen(ts + elapsed)
      if (entry.rec !== null) entry.rec.add(ts, elapsed, ok === 1, bytes, sent)
    } else {
      this.take(entry, entry.name, ts, elapsed, ok === 1, bytes, sent, ctrl)
    }
  }

  /**
   * The label of the row's label bytes, data[s..e) with hash h; null for a new label over the bounds. Most rows repeat
   * the previous row's label: it is compared before the table is looked in.
   * @param {Buffer} data
   * @param {number} s
   * @param {number} e
   * @param {number} h
   * @returns {LabelBytes | null}
   */
  labelOf (data, s, e, h) {
    const last = this.last
    if (last !== null && last.hash === h && sameBytes(last.raw, data, s, e)) return last
    const item = this.lookup(data, s, e, h)
    if (item !== null) this.last = item
    return item
  }
}

/** The row JtlScanner.parseChunk() read last: its projected columns' values and what its fields were like. */
class Row {
  constructor () {
    this.set(-1, -1, -1, 0, 0, 0, 0, 0, 0, 0, false, false, false)
  }

  /**
   * The row's values once its fields are read.
   * @param {number} ts timeStamp (-1: not a whole number)
   * @param {number} elapsed (-1: not a whole number)
   * @param {number} ok success: 1, 0 or -1 (neither)
   * @param {number} bytes (-1: not a whole number)
   * @param {number} sent sentBytes (-1: not a whole number)
   * @param {number} ctrl 0 plain, 1 transaction controller, 2 empty controller (by the response message)
   * @param {number} labS the label's bytes are data[labS..labE)
   * @param {number} labE
   * @param {number} labH their hash
   * @param {number} field how many fields
   * @param {boolean} endedAtEof the row ended at the file's end, without a line break
   * @param {boolean} irregular a stray quote: csv-parse reads the row
   * @param {boolean} unterminated a quote never closed before the file's end
   */
  set (ts, elapsed, ok, bytes, sent, ctrl, labS, labE, labH, field, endedAtEof, irregular, unterminated) {
    this.ts = ts; this.elapsed = elapsed; this.ok = ok; this.bytes = bytes; this.sent = sent; this.ctrl = ctrl
    this.labS = labS; this.labE = labE; this.labH = labH
    this.field = field; this.endedAtEof = endedAtEof; this.irregular = irregular; this.unterminated = unterminated
  }

  /**
   * Why the row is malformed, or null: its field count, then its number and success columns.
   * @param {number} nCols the header's columns
   * @returns {string | null}
   */
  fault (nCols) {
    if (this.field !== nCols) return this.endedAtEof && this.field < nCols ? 'truncated last line' : `${this.field} fields, expected ${nCols}`
    if (this.ts < 0) return 'timeStamp is not a whole number of ms since the epoch'
    if (this.elapsed < 0) return 'elapsed is not a whole number of ms'
    if (this.ok < 0) return 'success is neither true nor false'
    if (this.bytes < 0 || this.sent < 0) return 'bytes or sentBytes is not a whole number'
    return null
  }
}

/**
 * Whether data[s..e) holds the bytes of raw.
 * @param {Buffer} raw
 * @param {Buffer} data
 * @param {number} s
 * @param {number} e
 */
function sameBytes (raw, data, s, e) {
  const n = raw.length
  if (e - s !== n) return false
  let i = 0
  while (i < n && data[s + i] === raw[i]) i++
  return i === n
}

/** quotedEnd(): the file ends inside a quoted field. */
const UNCLOSED = -2

const labelReason = () => `a label over ${MAX_LABEL_BYTES} bytes, or beyond the first ${MAX_LABELS} labels`

/**
 * Whether a file's first bytes are gzip's magic (what the readers and writers of samples tell plain from gzip by).
 * @param {Uint8Array} head the file's first bytes
 * @param {number} [length] how many of them were read
 */
export const isGzipHead = (head, length = head.length) => length >= 2 && head[0] === 0x1f && head[1] === 0x8b
const EMPTY_SCAN = () => ({ rows: 0, blankLines: 0, outsideWindow: 0, malformed: { count: 0, examples: [] }, layout: null })

/**
 * A scanner fed bytes as they come (a file's blocks, a gunzip stream's chunks, a writer's chunks): the first line says
 * the layout, then every complete row goes to the sink. `parse` reads in place and says how far it got (the caller
 * keeps the rest); `push` keeps the rest itself. `end()` reads what is left as the file's end and gives the result.
 */
export class JtlFeed {
  /**
   * @param {JtlSink} sink
   * @param {{ window?: { from?: number, to?: number }, file?: string }} [opts] file: named in a bad header's message
   */
  constructor (sink, { window = {}, file = 'JTL' } = {}) {
    this.sink = sink
    this.window = { from: window.from ?? -Infinity, to: window.to ?? Infinity }
    this.file = file
    /** @type {JtlScanner | null} */
    this.scanner = null
    this.layout = null
    /** @type {{ buf: Buffer, len: number, tried: number } | null} bytes of an incomplete row (buf[0..len)), kept by
     * push(); tried: how many there were when it was last parsed */
    this.carry = null
    /** @type {{ line: number, reason: string, text: string } | null} */
    this.cut = null
  }

  /**
   * Reads every complete row of data[0..len); returns how many bytes it used (the rest starts an incomplete row, or
   * the first line is not complete yet).
   * @param {Buffer} data
   * @param {boolean} eof no byte follows data
   */
  parse (data, eof) {
    let offset = 0
    if (!this.scanner) {
      if (data.length < 3 && !eof) return 0
      const start = data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0
      if (data.length - start === 0) return data.length
      let nl = data.indexOf(LF, start)
      if (nl === -1) {
        if (!eof && data.length > MAX_ROW_BYTES) this.tooLong()
        if (!eof) return 0
        nl = data.length
      }
      const firstLine = data.toString('utf8', start, nl).replace(/\r$/, '')
      this.layout = detectLayout(firstLine, Math.min(nl + 1, data.length), this.file)
      this.scanner = new JtlScanner(this.layout, this.sink, this.window)
      offset = this.layout.assumed ? start : this.layout.headerBytes
    }
    const scanner = this.scanner
    let used
    try {
      used = offset + scanner.parseChunk(offset ? data.subarray(offset) : data, data.length - offset, eof)
    } catch (err) {
      // a histogram's bound (analyzer/samples/latency-histogram.js) names the row that crossed it
      if (err?.code === 'NS_ERR_BAD_FILE' && err.details?.bound) {
        throw fail('LINE_INVALID', { file: this.file, line: scanner.at, reason: err.message }, { details: err.details })
      }
      throw err
    }
    if (!eof && data.length - used > MAX_ROW_BYTES) this.tooLong()
    return used
  }

  /** The incomplete row (or the first line) has grown past MAX_ROW_BYTES: a coded error naming its line. */
  tooLong () {
    const line = this.scanner?.line ?? 1
    throw fail('ROW_TOO_LONG', { file: this.file, line, maxMiB: MAX_ROW_BYTES >> 20 }, { details: { bound: 'row', line } })
  }

  /**
   * Feeds a chunk that follows the bytes fed so far; the chunk may be reused by the caller afterwards.
   * @param {Buffer} chunk
   */
  push (chunk) {
    if (!this.carry) {
      const used = this.parse(chunk, false)
      if (used < chunk.length) this.keep(chunk, used, chunk.length)
      return
    }
    // the carry lives at the front of a buffer that grows by doubling: appending a chunk copies the chunk only
    const c = this.carry
    if (c.len + chunk.length > c.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(c.buf.length * 2, c.len + chunk.length))
      c.buf.copy(bigger, 0, 0, c.len)
      c.buf = bigger
    }
    chunk.copy(c.buf, c.len)
    c.len += chunk.length
    // the incomplete row is read again from its start only once the bytes have doubled since the last try: each byte
    // is scanned O(1) times on average, and a row never grows past MAX_ROW_BYTES
    if (c.len < 2 * c.tried && c.len <= MAX_ROW_BYTES) return
    const data = c.buf.subarray(0, c.len)
    const used = this.parse(data, false)
    if (used === data.length) this.carry = null
    else if (used > 0) this.keep(data, used, data.length)
    else c.tried = c.len
  }

  /** Keeps data[from..to) as the carry (a copy: the caller may reuse its buffer). */
  keep (data, from, to) {
    const buf = Buffer.allocUnsafe(Math.max(to - from, 1 << 16))
    data.copy(buf, 0, from, to)
    this.carry = { buf, len: to - from, tried: to - from }
  }

  /**
   * Notes that the bytes stop short of the file's end (a truncated gzip stream): counted as one malformed entry.
   * @param {string} reason
   */
  truncated (reason) {
    this.cut = { line: this.scanner?.line ?? 1, reason, text: '' }
  }

  /** @returns {ScanResult} */
  end () {
    if (this.carry) this.parse(this.carry.buf.subarray(0, this.carry.len), true)
    this.carry = null
    const s = this.scanner
    const result = s ? { rows: s.rows, blankLines: s.blankLines, outsideWindow: s.outsideWindow, malformed: s.malformed, layout: this.layout } : EMPTY_SCAN()
    if (this.cut) {
      result.malformed.count++
      if (result.malformed.examples.length < MAX_EXAMPLES) result.malformed.examples.push(this.cut)
    }
    return result
  }
}

/**
 * Reads a CSV JTL, plain or gzip (told by its first bytes, not its name; concatenated gzip members read as one), and
 * feeds every valid sample to the sink, streaming in constant memory. Malformed rows are counted with a few examples;
 * a gzip stream that ends early (a killed run) gives its rows up to there and one malformed entry saying so; a file
 * that is not a CSV JTL at all throws NS_ERR_BAD_FILE.
 * @param {string} path
 * @param {JtlSink} sink
 * @param {{ window?: { from?: number, to?: number }, chunkSize?: number }} [opts]
 * @returns {Promise<ScanResult>}
 */
export async function scanJtl (path, sink, { window = {}, chunkSize = 1 << 22 } = {}) {
  const feed = new JtlFeed(sink, { window, file: path })
  const fh = await open(path, 'r')
  try {
    const magic = Buffer.alloc(2)
    const { bytesRead } = await fh.read(magic, 0, 2, 0)
    if (isGzipHead(magic, bytesRead)) await feedGzip(fh, feed, chunkSize)
    else await feedPlain(fh, feed, chunkSize)
    return feed.end()
  } finally {
    await fh.close()
  }
}

/** A plain file: blocks read into one buffer, parsed in place, the incomplete row moved to its front. */
async function feedPlain (fh, feed, chunkSize) {
  let buf = Buffer.allocUnsafe(chunkSize)
  let len = 0
  let pos = 0
  for (;;) {
    const { bytesRead } = await fh.read(buf, len, buf.length - len, pos)
    pos += bytesRead
    len += bytesRead
    const eof = bytesRead === 0
    const used = feed.parse(buf.subarray(0, len), eof)
    if (eof) return
    if (used === 0 && len === buf.length) {
      if (len >= MAX_ROW_BYTES) feed.tooLong()
      buf = grow(buf, len)
    }
    buf.copy(buf, 0, used, len)
    len -= used
  }
}

/** A gzip file: gunzipped in the thread pool while the previous chunk is parsed; an early end is noted, not thrown. */
async function feedGzip (fh, feed, chunkSize) {
  const gunzip = createGunzip({ chunkSize: Math.min(chunkSize, 1 << 20) })
  const input = fh.createReadStream({ start: 0, highWaterMark: 1 << 20, autoClose: false })
  input.on('error', (err) => gunzip.destroy(err))
  input.pipe(gunzip)
  try {
    for await (const chunk of gunzip) feed.push(chunk)
  } catch (err) {
    if (err.code !== 'Z_BUF_ERROR' && err.code !== 'Z_DATA_ERROR') throw err
    feed.truncated(`the gzip stream ${err.code === 'Z_BUF_ERROR' ? 'ends early' : 'is damaged'} (a killed run?); its rows up to there are read`)
  } finally {
    input.destroy()
  }
}

/** A bigger buffer for a row longer than the current one (a huge quoted message). */
function grow (buf, len) {
  const bigger = Buffer.allocUnsafe(buf.length * 2)
  buf.copy(bigger, 0, 0, len)
  return bigger
}
