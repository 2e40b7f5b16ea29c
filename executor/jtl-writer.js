// Writes samples in JMeter's CSV JTL format, buffered in large chunks, to a temp file renamed into place at the end.
import { openSync, write, writeSync, closeSync, close, renameSync, rm, existsSync, fstatSync, readSync, ftruncateSync } from 'node:fs'
import { JTL_COLUMNS } from '../lib/run-files.js'

/** JMeter 5.6's default CSV JTL columns, in order (formatJtlRow writes them in this order). */
export const JTL_FIELDS = JTL_COLUMNS

/** The header line (with its newline). */
export const JTL_HEADER = JTL_FIELDS.join(',') + '\n'

const SPECIAL = /[",\r\n]/
const QUOTES = /"/g

/**
 * JMeter's CSV quoting (CSVSaveService.quoteDelimiters): a field holding the delimiter, a quote, CR or LF
 * is wrapped in quotes with inner quotes doubled; anything else is written as is.
 * @param {unknown} value
 * @returns {string}
 */
export function quoteCsv (value) {
  if (value === undefined || value === null) return ''
  const s = String(value)
  return SPECIAL.test(s) ? '"' + s.replace(QUOTES, '""') + '"' : s
}

// Labels, URLs, thread names and status texts repeat on every row: quote each distinct value once.
const quoted = new Map()
function q (value) {
  if (value === undefined || value === null || value === '') return ''
  let out = quoted.get(value)
  if (out === undefined) {
    out = quoteCsv(value)
    if (quoted.size > 4096) quoted.clear()
    quoted.set(value, out)
  }
  return out
}

/**
 * One CSV line (with its newline) for one sample.
 * @param {JtlSample} s
 * @returns {string}
 */
export function formatJtlRow (s) {
  return s.timeStamp + ',' + s.elapsed + ',' + q(s.label) + ',' + q(s.responseCode) + ',' + q(s.responseMessage) + ',' +
    q(s.threadName) + ',' + (s.dataType ?? 'text') + ',' + (s.success ? 'true' : 'false') + ',' + quoteCsv(s.failureMessage) + ',' +
    (s.bytes ?? 0) + ',' + (s.sentBytes ?? 0) + ',' + (s.grpThreads ?? 0) + ',' + (s.allThreads ?? 0) + ',' + q(s.URL) + ',' +
    (s.latency ?? 0) + ',' + (s.idleTime ?? 0) + ',' + (s.connect ?? 0) + '\n'
}

/**
 * @typedef {{ timeStamp: number, elapsed: number, label: string, responseCode: string|number, responseMessage?: string,
 *   threadName: string, dataType?: string, success: boolean, failureMessage?: string, bytes?: number, sentBytes?:
 *   number, grpThreads?: number, allThreads?: number, URL?: string, latency?: number, idleTime?: number, connect?:
 *   number }} JtlSample
 */

/**
 * @typedef {{ write: (sample: JtlSample) => void, writeLine: (line: string) => void, writeFields: (fields: string[]) =>
 *   void, close: () => Promise<void>, abort: () => void, readonly rows: number, readonly path: string }} JtlWriter
 */

/**
 * Opens `<path>.tmp`, writes the header, and returns a writer. Rows are joined into chunks of about
 * `chunkBytes` and written at explicit offsets by the thread pool, so the event loop never waits on the disk.
 * close() flushes, waits for every write and renames the file to `path`; abort() does the same synchronously
 * (for signal and exit handlers): every complete row written so far ends up in a readable file.
 * @param {string} path
 * @param {{ chunkBytes?: number }} [opts]
 * @returns {JtlWriter}
 */
export function createJtlWriter (path, { chunkBytes = 1 << 20 } = {}) {
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w')
  // Rows gather in a short string batch, encoded into a chunk Buffer every ~16 KB: one native call per batch, and
  // row strings die young instead of sitting in a 1 MB rope until the flush (survivors cost the GC far more).
  let batch = ''
  let chunk = Buffer.allocUnsafe(chunkBytes)
  let used = chunk.write(JTL_HEADER, 0, 'latin1')
  let pos = 0
  let rows = 0
  let done = false
  let failure = null
  /** @type {Map<number, Buffer>} chunks handed to the thread pool and not yet confirmed, by offset */
  const inflight = new Map()
  let drained = null

  function flush () {
    if (batch.length) encode()
    flushChunk()
  }

  function flushChunk () {
    if (used === 0) return
    const data = chunk.subarray(0, used)
    chunk = Buffer.allocUnsafe(chunkBytes)
    used = 0
    const at = pos
    pos += data.length
    inflight.set(at, data)
    write(fd, data, 0, data.length, at, (err) => {
      if (err && !failure) failure = err
      inflight.delete(at)
      if (inflight.size === 0 && drained) drained()
    })
  }

  function encode () {
    // a batch never splits across chunks: each chunk ends with a whole row
    if (used + batch.length * 3 > chunk.length) {
      flushChunk()
      if (batch.length * 3 > chunk.length) chunk = Buffer.allocUnsafe(batch.length * 3)
    }
    used += chunk.write(batch, used, 'utf8')
    batch = ''
  }

  function append (line) {
    if (done) return
    rows++
    batch += line
    if (batch.length >= 16384) encode()
  }

  return {
    get rows () { return rows },
    path,
    write (sample) { append(formatJtlRow(sample)) },
    /** A ready CSV line with its newline (formatJtlRow's output, or a faster equivalent built by the caller). */
    writeLine (line) { append(line) },
    /** A row given as its column values in JTL_FIELDS order (already unquoted strings). */
    writeFields (fields) {
      let line = ''
      for (let i = 0; i < fields.length; i++) line += (i ? ',' : '') + quoteCsv(fields[i])
      append(line + '\n')
    },
    async close () {
      if (done) return
      flush()
      done = true
      if (inflight.size) await new Promise(resolve => { drained = resolve })
      await new Promise((resolve) => close(fd, () => resolve(undefined)))
      if (failure) {
        await new Promise(resolve => rm(tmp, { force: true }, () => resolve(undefined)))
        throw failure
      }
      renameSync(tmp, path)
    },
    abort () {
      if (done) return
      done = true
      // Chunks still in the thread pool are written again at their offsets: the same bytes, so whichever lands last,
      // the file has no hole even if the process exits right after this.
      for (const [at, data] of inflight) writeSync(fd, data, 0, data.length, at)
      if (batch.length) encode()
      if (used) writeSync(fd, chunk, 0, used, pos)
      pos += used
      used = 0
      renameSync(tmp, path)
      if (inflight.size === 0) closeSync(fd)
      else drained = () => close(fd, () => {})
    }
  }
}

/**
 * Makes a readable JTL out of what a killed writer left behind: `<path>.tmp` is cut after its last complete row
 * and renamed to `path`. Returns true when it recovered a file.
 * @param {string} path
 * @returns {boolean}
 */
export function recoverJtl (path) {
  const tmp = `${path}.tmp`
  if (!existsSync(tmp)) return false
  const fd = openSync(tmp, 'r+')
  try {
    const size = fstatSync(fd).size
    const tail = Buffer.alloc(Math.min(size, 1 << 16))
    let end = size
    // walk back in blocks to the last newline
    for (let at = size; at > 0; at -= tail.length) {
      const from = Math.max(0, at - tail.length)
      const n = readSync(fd, tail, 0, at - from, from)
      const nl = tail.subarray(0, n).lastIndexOf(10)
      if (nl >= 0) { end = from + nl + 1; break }
      end = from
    }
    ftruncateSync(fd, end)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  return true
}
