// The samples of a run's generators made one: each generator's JTL (plain or gzip) read as a stream, its timestamps
// put on the executor's clock, and the rows merged in the order they ended into the run's samples file and latency
// histograms, through the run's one writer.
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createGunzip } from 'node:zlib'
import { createJtlWriter, samplesPathOf } from '../jtl-writer.js'
import { isGzipHead, MAX_LABELS, MAX_ROW_BYTES } from '../../analyzer/samples/jtl-reader.js'
import { readMicrosFile } from '../../analyzer/samples/micro-latency.js'
import { fail } from '../../lib/messages.js'

/** How much of a part is read at a time. */
const READ_CHUNK = 1 << 20
/**
 * A part's row (its lines joined where a quoted field holds a line break) is at most the JTL reader's MAX_ROW_BYTES
 * (counted in UTF-16 code units here); a longer one is NS_ERR_BAD_FILE naming the part and the row's line
 * (docs/SECURITY.md, "Bounded parsers"). Each byte is looked at a constant number of times.
 */
const MAX_ROW = MAX_ROW_BYTES

/** Whether a file is gzip, by its first bytes. */
async function isGzip (path) {
  const fh = await open(path, 'r')
  try {
    const head = Buffer.alloc(2)
    return isGzipHead(head, (await fh.read(head, 0, 2, 0)).bytesRead)
  } finally {
    await fh.close()
  }
}

/**
 * One generator's rows, a chunk at a time: `head` is the next row (null at the end), `next()` moves on and resolves
 * when a row is there. Rows keep JMeter's CSV as written; a quoted field holding a newline joins its lines again.
 * @param {string} path
 * @param {number} offsetMs this generator's clock minus the executor's: subtracted from each timestamp
 */
async function rowSource (path, offsetMs) {
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK })
  const text = (await isGzip(path) ? stream.pipe(createGunzip()) : stream).setEncoding('utf8')
  const source = new RowSource(path, offsetMs, text[Symbol.asyncIterator]())
  await source.fill()
  return source
}

/** A part's rows as rowSource reads them: the rows of the chunks read so far, and the row a chunk left unfinished. */
class RowSource {
  /** @type {{ ts: number, end: number, ok: boolean, line: string }[]} */
  rows = []
  at = 0
  /** @type {string[]} the row being read: its text so far, a piece per chunk, and its length */
  pending = []
  pendingLength = 0
  /** whether the row so far holds an odd number of quotes (a quoted field goes on past its next line break) */
  odd = false
  /** the line the row being read starts at (the header is line 1), and the line being read */
  rowLine = 1
  lineNo = 1
  header = true
  done = false
  /** the next quote at or after the position last asked about in the chunk (-1: none): each search moves on */
  nextQuote = -1

  /** @param {string} path @param {number} offsetMs @param {AsyncIterator<string>} chunks */
  constructor (path, offsetMs, chunks) {
    this.path = path
    this.shift = Math.round(offsetMs)
    this.chunks = chunks
  }

  get head () { return this.at < this.rows.length ? this.rows[this.at] : null }

  async next () {
    this.at++
    if (this.at >= this.rows.length && !this.done) await this.fill()
  }

  /** A row from its line: its timestamp on the executor's clock, its end, its success (the header, a bad row: none). */
  parse (line) {
    if (this.header) { this.header = false; return }
    const c1 = line.indexOf(',')
    const c2 = line.indexOf(',', c1 + 1)
    const ts = Number(line.slice(0, c1)) - this.shift
    const elapsed = Number(line.slice(c1 + 1, c2))
    if (!Number.isFinite(ts) || !Number.isFinite(elapsed)) return
    this.rows.push({ ts, end: ts + elapsed, ok: !/,false,/.test(line), line: this.shift ? ts + line.slice(c1) : line })
  }

  /** Toggles `odd` for every quote in text[from..to) of the chunk being read (ranges asked in order). */
  countQuotes (text, from, to) {
    if (this.nextQuote !== -1 && this.nextQuote < from) this.nextQuote = text.indexOf('"', from)
    while (this.nextQuote !== -1 && this.nextQuote < to) {
      this.odd = !this.odd
      this.nextQuote = text.indexOf('"', this.nextQuote + 1)
    }
  }

  /** Reads chunks until one ends a row (or the part ends). */
  async fill () {
    this.rows = []
    this.at = 0
    while (!this.rows.length && !this.done) {
      const { value, done: end } = await this.chunks.next()
      if (end) this.end()
      else this.read(value)
    }
  }

  /** The part's end: what is pending is its last row. */
  end () {
    this.done = true
    const last = this.pending.join('')
    if (last.trim()) this.parse(last)
    this.pending = []
  }

  /** A chunk's rows, each character looked at once: rows end at a line break outside quotes. @param {string} value */
  read (value) {
    let s = 0
    let p = 0
    this.nextQuote = value.indexOf('"')
    for (let nl = value.indexOf('\n'); nl !== -1; nl = value.indexOf('\n', p)) {
      this.countQuotes(value, p, nl)
      this.lineNo++
      p = nl + 1
      if (this.odd) continue
      const row = this.pending.length ? this.pending.join('') + value.slice(s, nl) : value.slice(s, nl)
      this.pending = []
      this.pendingLength = 0
      if (row) this.parse(row)
      s = p
      this.rowLine = this.lineNo
    }
    this.countQuotes(value, p, value.length)
    if (s < value.length) {
      this.pending.push(value.slice(s))
      this.pendingLength += value.length - s
      if (this.pendingLength > MAX_ROW) throw fail('ROW_TOO_LONG', { file: this.path, line: this.rowLine, maxMiB: MAX_ROW >> 20 })
    }
  }
}

/**
 * Merges the generators' samples into the run's: rows from `steadyStart` (inclusive) to `steadyEnd` (exclusive) on the
 * executor's clock, in the order they ended (each generator writes its rows as they end: the merge of k such streams
 * is in that order too). Writes the run's samples file by `samples` (jtl, gz, none) and, with `histogramPath`, the
 * latency histograms of the merged rows. Resolves with the rows taken from each part: a run's summary is the sum of
 * its generators' parts, and their latency the union's.
 * @param {{ path: string, offsetMs?: number, microsPath?: string | null }[]} parts microsPath: the part's µs histograms
 * @param {{ jtlPath: string, samples?: string, histogramPath?: string, steadyStart: number, steadyEnd: number }} out
 * @returns {Promise<{ path: string | null, rows: number, parts: { requests: number, errors: number }[] }>}
 */
export async function mergeSamples (parts, { jtlPath, samples = 'jtl', histogramPath, steadyStart, steadyEnd }) {
  const sources = await Promise.all(parts.map(p => rowSource(p.path, p.offsetMs ?? 0)))
  const counts = parts.map(() => ({ requests: 0, errors: 0 }))
  const writer = createJtlWriter(samplesPathOf(jtlPath, samples), { format: samples, histogramPath })
  // the parts' µs histograms, when every part kept them: the summary uses their sum only where it counts exactly the
  // rows merged here (none cut at the window's edges)
  const micros = histogramPath ? await Promise.all(parts.map(p => (p.microsPath ? readMicrosFile(p.microsPath, MAX_LABELS) : null))) : []
  if (micros.length && micros.every(m => m !== null)) for (const m of micros) writer.addMicros(/** @type {Map<string, any>} */ (m))
  try {
    for (;;) {
      let pick = -1
      for (let i = 0; i < sources.length; i++) {
        const h = sources[i].head
        if (h && (pick < 0 || h.end < /** @type {any} */ (sources[pick].head).end)) pick = i
      }
      if (pick < 0) break
      const row = /** @type {{ ts: number, ok: boolean, line: string }} */ (sources[pick].head)
      if (row.ts >= steadyStart && row.ts < steadyEnd) {
        counts[pick].requests++
        if (!row.ok) counts[pick].errors++
        writer.writeLine(row.line + '\n')
      }
      await sources[pick].next()
    }
  } catch (err) {
    writer.abort()
    throw err
  }
  await writer.close()
  return { path: writer.path, rows: writer.rows, parts: counts }
}
