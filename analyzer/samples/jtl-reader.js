// Streams a CSV JTL, plain or gzip, with a byte-level scanner: projected columns only, numbers parsed from bytes, no
// per-row allocation.
import { open } from 'node:fs/promises'
import { createGunzip } from 'node:zlib'
import { ROLE, detectLayout } from './jtl-columns.js'
import { boolAt, intAt, controllerKind, rowText, parseRowText } from './jtl-fields.js'
import { NsError } from '../../lib/errors.js'
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
      throw new NsError('NS_ERR_BAD_FILE', `end times from ${this.minEnd} to ${this.maxEnd} ms since the epoch span more than ${MAX_SPAN_TENTHS / 36000} h: ` +
        'the rows of a run span at most that', { details: { bound: 'span' } })
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
   * Finds (or creates) the label of the bytes data[s..e) with hash h; escaped = it held doubled quotes. Null for a new
   * label over the bounds (too long, or one too many).
   * @returns {LabelBytes | null}
   */
  lookup (data, s, e, h, escaped) {
    let bucket = this.buckets.get(h)
    if (bucket) {
      const n = e - s
      for (const item of bucket) {
        if (item.raw.length !== n) continue
        let i = 0
        while (i < n && data[s + i] === item.raw[i]) i++
        if (i === n) return item
      }
    }
    if (e - s > MAX_LABEL_BYTES || this.byName.size >= MAX_LABELS) return null
    if (!bucket) {
      bucket = []
      this.buckets.set(h, bucket)
    }
    let name = data.toString('utf8', s, e)
    if (escaped) name = name.replaceAll('""', '"')
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
   * @param {Buffer} data
   * @param {number} len
   * @param {boolean} eof no more bytes follow
   */
  parseChunk (data, len, eof) {
    const roles = this.layout.roles
    const nCols = roles.length
    const delim = this.layout.delimiter
    const stop = this.stop
    let p = 0
    let line = this.line
    let last = this.last
    rows: // eslint-disable-line no-labels
    while (p < len) {
      const rowStart = p
      const rowLine = line
      if (data[p] === LF || data[p] === CR) {
        p++
        if (data[p - 1] === CR && p < len && data[p] === LF) p++
        line++
        this.blankLines++
        continue
      }
      let ts = -1
      let elapsed = -1
      let ok = -1
      let bytes = 0
      let sent = 0
      let ctrl = 0
      let labS = 0
      let labE = 0
      let labH = 0
      let labEsc = false
      let field = 0
      let irregular = false
      let unterminated = false
      let endedAtEof = false
      for (;;) {
        const role = field < nCols ? roles[field] : ROLE.SKIP
        if (p < len && data[p] === QUOTE) {
          // A quoted field: it may hold the delimiter, doubled quotes and line breaks.
          let q = p + 1
          let esc = false
          let close = -1
          for (;;) {
            close = data.indexOf(QUOTE, q)
            if (close === -1 || close >= len) {
              if (!eof) { p = rowStart; line = rowLine; break rows } // eslint-disable-line no-labels
              unterminated = true
              break
            }
            if (close + 1 >= len && !eof) { p = rowStart; line = rowLine; break rows } // eslint-disable-line no-labels
            if (close + 1 < len && data[close + 1] === QUOTE) { esc = true; q = close + 2; continue }
            break
          }
          if (unterminated) { p = len; endedAtEof = true; break }
          const cs = p + 1
          for (let i = cs; i < close; i++) if (data[i] === LF) line++
          p = close + 1
          if (p < len && data[p] !== delim && data[p] !== LF && data[p] !== CR) {
            irregular = true
            while (p < len && data[p] !== delim && data[p] !== LF) p++
            if (p >= len && !eof) { p = rowStart; line = rowLine; break rows } // eslint-disable-line no-labels
          }
          if (role !== ROLE.SKIP) {
            if (role === ROLE.LABEL) {
              labS = cs; labE = close; labEsc = esc
              let h = FNV_OFFSET
              for (let i = cs; i < close; i++) h = Math.imul(h ^ data[i], FNV_PRIME)
              labH = h
            } else if (role === ROLE.SUCCESS) {
              ok = boolAt(data, cs, close)
            } else if (role === ROLE.RESPONSE_MESSAGE) {
              ctrl = controllerKind(data, cs, close)
            } else {
              const v = intAt(data, cs, close)
              if (role === ROLE.TIMESTAMP) ts = v
              else if (role === ROLE.ELAPSED) elapsed = v
              else if (role === ROLE.BYTES) bytes = cs === close ? 0 : v
              else sent = cs === close ? 0 : v
            }
          }
        } else if (role === ROLE.SKIP) {
          while (p < len && stop[data[p]] === 0) p++
          while (p < len && data[p] === QUOTE) { irregular = true; p++; while (p < len && stop[data[p]] === 0) p++ }
        } else if (role === ROLE.LABEL) {
          let h = FNV_OFFSET
          labS = p
          while (p < len) {
            const c = data[p]
            if (stop[c] !== 0) {
              if (c !== QUOTE) break
              irregular = true
            }
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
          // A number: parsed while scanning.
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
        if (p >= len) {
          if (!eof) { p = rowStart; line = rowLine; break rows } // eslint-disable-line no-labels
          field++
          endedAtEof = true
          break
        }
        field++
        const c = data[p]
        if (c === delim) { p++; continue }
        if (c === CR) {
          p++
          if (p < len && data[p] === LF) p++
          else if (p >= len && !eof) { p = rowStart; line = rowLine; break rows } // eslint-disable-line no-labels
        } else {
          p++
        }
        line++
        break
      }
      this.rows++
      if (unterminated) { this.bad(rowLine, 'a quoted field is never closed (truncated last line?)', rowText(data, rowStart, p)); continue }
      if (irregular) { this.slowRow(rowText(data, rowStart, p), rowLine, endedAtEof && field < nCols); continue }
      if (field !== nCols) {
        this.bad(rowLine, endedAtEof && field < nCols ? 'truncated last line' : `${field} fields, expected ${nCols}`, rowText(data, rowStart, p))
        continue
      }
      if (ts < 0) { this.bad(rowLine, 'timeStamp is not a whole number of ms since the epoch', rowText(data, rowStart, p)); continue }
      if (elapsed < 0) { this.bad(rowLine, 'elapsed is not a whole number of ms', rowText(data, rowStart, p)); continue }
      if (ok < 0) { this.bad(rowLine, 'success is neither true nor false', rowText(data, rowStart, p)); continue }
      if (bytes < 0 || sent < 0) { this.bad(rowLine, 'bytes or sentBytes is not a whole number', rowText(data, rowStart, p)); continue }
      // Most rows repeat the previous row's label: compare bytes before hashing into the table.
      let item = null
      if (last !== null && last.hash === labH && last.raw.length === labE - labS) {
        const raw = last.raw
        const n = raw.length
        let i = 0
        while (i < n && data[labS + i] === raw[i]) i++
        if (i === n) item = last
      }
      if (item === null) {
        item = this.lookup(data, labS, labE, labH, labEsc)
        if (item === null) { this.bad(rowLine, labelReason(), rowText(data, rowStart, p)); continue }
        last = item
      }
      const entry = item.entry
      this.at = rowLine
      if (ctrl === 0 && ts >= this.from && ts < this.to) {
        const end = ts + elapsed
        if (end < this.minEnd || end > this.maxEnd) this.widen(end)
        if (entry.rec !== null) entry.rec.add(ts, elapsed, ok === 1, bytes, sent)
      } else {
        this.take(entry, entry.name, ts, elapsed, ok === 1, bytes, sent, ctrl)
      }
    }
    this.line = line
    this.last = last
    return p
  }
}

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
        throw new NsError('NS_ERR_BAD_FILE', `${this.file}:${scanner.at}: ${err.message}`, { details: err.details })
      }
      throw err
    }
    if (!eof && data.length - used > MAX_ROW_BYTES) this.tooLong()
    return used
  }

  /** The incomplete row (or the first line) has grown past MAX_ROW_BYTES: a coded error naming its line. */
  tooLong () {
    const line = this.scanner?.line ?? 1
    throw new NsError('NS_ERR_BAD_FILE', `${this.file}:${line}: a row longer than ${MAX_ROW_BYTES >> 20} MiB (a quoted field never closed?)`,
      { details: { bound: 'row', line } })
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
