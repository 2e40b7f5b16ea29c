// Writes samples in JMeter's CSV JTL format, plain or gzip or not at all, buffered in large chunks, to a temp file
// renamed into place at the end, and the run's latency histograms built from the same rows.
import { openSync, write, writeSync, closeSync, close, renameSync, rm, existsSync, fstatSync, readSync, ftruncateSync, writeFileSync } from 'node:fs'
import { gzip, gzipSync, gunzipSync } from 'node:zlib'
import { JTL_COLUMNS, writeJsonAtomic } from '../lib/run-files.js'
import { JtlFeed, scanJtl, isGzipHead } from '../analyzer/samples/jtl-reader.js'
import { histogramSink, latencyFileOf } from '../analyzer/samples/latency-file.js'
import { microRecorder } from '../analyzer/samples/micro-latency.js'

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
 *   void, micro: (label: string, ms: number) => void, addMicros: (byLabel: Map<string, any>) => void, close: () =>
 *   Promise<void>, abort: () => void, readonly rows: number, readonly path: string | null }}
 *   JtlWriter
 */

/**
 * The gzip level of a `gz` writer. Measured on 1M JMeter-recorded rows (npm run perf:analyzer, 98.2 bytes a row): level
 * 1, 2, 3, 6 write 9.3, 7.9, 7.5, 6.1 bytes a row for 503, 506, 543, 845 CPU ms per 1M rows (the writer with its
 * histograms; plain JTL 325): 2 costs what 1 does for 15% less disk; above it the load generator pays more than the
 * disk saves.
 */
export const GZIP_LEVEL = 2

/**
 * The file a writer of this format makes for a run's samples.jtl path: the path itself, `<path>.gz`, or none.
 * @param {string} jtlPath
 * @param {string} [format] jtl (default), gz or none
 * @returns {string | null}
 */
export function samplesPathOf (jtlPath, format = 'jtl') {
  return format === 'gz' ? `${jtlPath}.gz` : format === 'none' ? null : jtlPath
}

// A gz writer's members carry their own length in an extra field of the gzip header (subfield "NS", 4 bytes, little
// endian), as BGZF does: readers skip it, recovery walks the members by it without inflating them.
const MEMBER_HEAD = 20
const EXTRA_ID = [0x4e, 0x53]

/** One gzip member as zlib writes it (a 10-byte header without flags), given the length field. */
function withLength (gz) {
  const out = Buffer.allocUnsafe(gz.length + 10)
  gz.copy(out, 0, 0, 10)
  out[3] |= 4
  out.writeUInt16LE(8, 10)
  out[12] = EXTRA_ID[0]
  out[13] = EXTRA_ID[1]
  out.writeUInt16LE(4, 14)
  out.writeUInt32LE(out.length, 16)
  gz.copy(out, MEMBER_HEAD, 10)
  return out
}

const gzipMember = (data, level) => withLength(gzipSync(data, { level }))

/**
 * Opens `<path>.tmp`, writes the header, and returns a writer. Rows are joined into chunks of about `chunkBytes` and
 * written at explicit offsets by the thread pool, so the event loop never waits on the disk. close() flushes, waits
 * for every write and renames the file to `path`; abort() does the same synchronously (for signal and exit handlers):
 * every complete row written so far ends up in a readable file.
 *
 * format `gz`: each chunk is compressed in the thread pool as a gzip member of its own (concatenated members are one
 * .gz file to gunzip, zcat and the analyzer) and the members are written in order; abort() compresses what is left
 * synchronously. `none`: no file. With `histogramPath` every row also goes through the analyzer's JTL scanner into a
 * histogram per label, written there (latency.json) on close or abort: the run's figures whatever the format; and what
 * the driver gives micro() (each row's time to the fraction of a ms its clock has) into µs histograms kept beside them
 * (analyzer/samples/micro-latency.js).
 * @param {string | null} path the samples file (null with format none)
 * @param {{ chunkBytes?: number, format?: string, histogramPath?: string, microsPath?: string, level?: number }} [opts]
 *   microsPath: where the µs histograms alone go (a generator's part, without the run's histograms)
 * @returns {JtlWriter}
 */
export function createJtlWriter (path, { chunkBytes = 1 << 20, format = 'jtl', histogramPath, microsPath, level = GZIP_LEVEL } = {}) {
  const file = format !== 'none' ? new ChunkFile(`${path}.tmp`) : null
  const chunks = file && format === 'gz' ? new GzipMembers(file, level) : file
  const histograms = new RowHistograms(histogramPath, microsPath)
  const micros = histograms.micros
  const batches = new RowBatches(chunkBytes, histograms.feed, chunks)
  return {
    get rows () { return batches.rows },
    path: file ? path : null,
    write (sample) { batches.append(formatJtlRow(sample)) },
    /** A ready CSV line with its newline (formatJtlRow's output, or a faster equivalent built by the caller). */
    writeLine (line) { batches.append(line) },
    /** A row given as its column values in JTL_FIELDS order (already unquoted strings). */
    writeFields (fields) {
      let line = ''
      for (let i = 0; i < fields.length; i++) line += (i ? ',' : '') + quoteCsv(fields[i])
      batches.append(line + '\n')
    },
    /** The time of the row just written, in ms to its clock's fraction (nothing without histograms). */
    micro (label, ms) { if (!batches.done) micros?.record(label, ms) },
    /** Other writers' µs histograms of the rows written here (the generators' parts a merge writes). */
    addMicros (byLabel) { for (const [label, h] of byLabel) micros?.add(label, h) },
    async close () {
      if (batches.done) return
      batches.flush()
      batches.done = true
      if (file) await file.close(path)
      histograms.write()
    },
    abort () {
      if (batches.done) return
      batches.done = true
      batches.encode()
      if (file) {
        chunks.addNow(batches.takeRest())
        file.closeNow(path)
      }
      histograms.write()
    }
  }
}

/**
 * The samples file as it is written, `<path>.tmp`: chunks at explicit offsets by the thread pool, kept until their
 * write is confirmed (abort writes them again), and the writes still to come (chunks being compressed) counted.
 */
class ChunkFile {
  pos = 0
  /** @type {Map<number, Buffer>} chunks handed to the thread pool and not yet confirmed, by offset */
  inflight = new Map()
  /** chunks being made into what is written here (gz: compressed), not handed to add() yet */
  preparing = 0
  /** @type {Error | null} the first write's (or compression's) error */
  failure = null
  /** @type {((value?: unknown) => void) | null} called once nothing is in flight or preparing */
  drained = null

  /** @param {string} tmp */
  constructor (tmp) {
    this.tmp = tmp
    this.fd = openSync(tmp, 'w')
  }

  settle () { if (this.inflight.size === 0 && this.preparing === 0 && this.drained) this.drained() }

  /** Written at the next offset by the thread pool. @param {Buffer} data */
  add (data) {
    const at = this.pos
    this.pos += data.length
    this.inflight.set(at, data)
    write(this.fd, data, 0, data.length, at, (err) => {
      if (err && !this.failure) this.failure = err
      this.inflight.delete(at)
      this.settle()
    })
  }

  /** Written now at the next offset. @param {Buffer} data */
  writeNow (data) {
    writeSync(this.fd, data, 0, data.length, this.pos)
    this.pos += data.length
  }

  /**
   * Abort: chunks still in the thread pool are written again at their offsets: the same bytes, so whichever lands
   * last, the file has no hole even if the process exits right after this; then the chunk not handed out yet.
   * @param {Buffer | null} rest
   */
  addNow (rest) {
    for (const [at, data] of this.inflight) writeSync(this.fd, data, 0, data.length, at)
    if (rest) this.writeNow(rest)
  }

  /** Close: once every write is done, the file closed and renamed to `path` (removed on a write's error, thrown). */
  async close (path) {
    if (this.inflight.size || this.preparing) await new Promise(resolve => { this.drained = resolve })
    await new Promise((resolve) => close(this.fd, () => resolve(undefined)))
    if (this.failure) {
      await new Promise(resolve => rm(this.tmp, { force: true }, () => resolve(undefined)))
      throw this.failure
    }
    renameSync(this.tmp, path)
  }

  /** Abort's end: renamed to `path` now, closed once the thread pool is done with it. */
  closeNow (path) {
    renameSync(this.tmp, path)
    if (this.inflight.size === 0 && this.preparing === 0) closeSync(this.fd)
    else this.drained = () => { this.drained = null; close(this.fd, () => {}) }
  }
}

/**
 * A gz writer's chunks compressed in the thread pool, each a gzip member of its own, written to the file in their
 * order: a member compressed ahead of its turn waits for the ones before it.
 */
class GzipMembers {
  /** @type {Map<number, Buffer>} chunks by their order, kept until their member is written */
  raw = new Map()
  /** @type {Map<number, Buffer>} members compressed ahead of their turn */
  ready = new Map()
  seq = 0
  nextWrite = 0
  /** what the thread pool compresses after an abort is not written (addNow has written it) */
  aborted = false

  /** @param {ChunkFile} file @param {number} level */
  constructor (file, level) {
    this.file = file
    this.level = level
  }

  /** @param {Buffer} data */
  add (data) {
    const n = this.seq++
    this.raw.set(n, data)
    this.file.preparing++
    gzip(data, { level: this.level }, (err, out) => this.compressed(n, err, out))
  }

  /** @param {number} n @param {Error | null} err @param {Buffer} out */
  compressed (n, err, out) {
    const file = this.file
    file.preparing--
    if (this.aborted) return file.settle()
    if (err) file.failure ??= err
    else this.ready.set(n, withLength(out))
    while (this.ready.has(this.nextWrite)) {
      const member = this.ready.get(this.nextWrite)
      this.ready.delete(this.nextWrite)
      this.raw.delete(this.nextWrite++)
      file.add(member)
    }
    file.settle()
  }

  /**
   * Abort: the file's writes in flight again, then the members not written yet, in order: compressed now unless the
   * thread pool has already done it; then the chunk not handed out yet as the last member.
   * @param {Buffer | null} rest
   */
  addNow (rest) {
    this.aborted = true
    this.file.addNow(null)
    for (; this.nextWrite < this.seq; this.nextWrite++) {
      this.file.writeNow(this.ready.get(this.nextWrite) ?? gzipMember(this.raw.get(this.nextWrite), this.level))
    }
    this.raw.clear()
    this.ready.clear()
    if (rest) this.file.writeNow(gzipMember(rest, this.level))
  }
}

/**
 * Rows gather in a short string batch, encoded into a chunk Buffer every ~16 KB: one native call per batch, and row
 * strings die young instead of sitting in a 1 MB rope until the flush (survivors cost the GC far more). A full chunk
 * goes to `out` (none: nothing, the chunk is reused); the histogram feed takes each batch as it is encoded.
 */
class RowBatches {
  batch = ''
  rows = 0
  /** closed or aborted: rows are no longer taken */
  done = false

  /**
   * @param {number} chunkBytes @param {JtlFeed | null} feed
   * @param {{ add: (data: Buffer) => void } | null} out
   */
  constructor (chunkBytes, feed, out) {
    this.chunkBytes = chunkBytes
    this.feed = feed
    this.out = out
    this.chunk = Buffer.allocUnsafe(chunkBytes)
    this.used = this.chunk.write(JTL_HEADER, 0, 'latin1')
    feed?.push(this.chunk.subarray(0, this.used))
  }

  /** @param {string} line */
  append (line) {
    if (this.done) return
    this.rows++
    this.batch += line
    if (this.batch.length >= 16384) this.encode()
  }

  /** The batch into the chunk (a batch never splits across chunks: each chunk ends with a whole row). */
  encode () {
    if (!this.batch.length) return
    if (this.used + this.batch.length * 3 > this.chunk.length) {
      this.flushChunk()
      if (this.batch.length * 3 > this.chunk.length) this.chunk = Buffer.allocUnsafe(this.batch.length * 3)
    }
    const from = this.used
    this.used += this.chunk.write(this.batch, this.used, 'utf8')
    this.batch = ''
    // the histogram takes each batch as it is encoded: small steps on the load generator's loop, whole rows each
    this.feed?.push(this.chunk.subarray(from, this.used))
  }

  flushChunk () {
    if (this.used === 0) return
    if (!this.out) { this.used = 0; return }
    const data = this.chunk.subarray(0, this.used)
    this.chunk = Buffer.allocUnsafe(this.chunkBytes)
    this.used = 0
    this.out.add(data)
  }

  flush () {
    this.encode()
    this.flushChunk()
  }

  /** Abort: the chunk's bytes not handed out (null when none), taken from it. */
  takeRest () {
    const rest = this.used ? this.chunk.subarray(0, this.used) : null
    this.used = 0
    return rest
  }
}

/**
 * The run's latency histograms from the rows (with histogramPath: each batch through the analyzer's JTL scanner) and
 * the µs histograms of what the driver gives micro().
 */
class RowHistograms {
  /** @param {string} [histogramPath] @param {string} [microsPath] */
  constructor (histogramPath, microsPath) {
    this.histogramPath = histogramPath
    this.microsPath = microsPath
    this.sink = histogramPath ? histogramSink() : null
    this.feed = this.sink ? new JtlFeed(this.sink, { file: histogramPath }) : null
    this.micros = this.sink || microsPath ? microRecorder() : null
  }

  /** latency.json (or the µs histograms alone), written synchronously (close and abort alike, after the samples). */
  write () {
    const atomically = (file, data) => {
      writeFileSync(`${file}.tmp`, JSON.stringify(data) + '\n')
      renameSync(`${file}.tmp`, file)
    }
    if (this.microsPath) atomically(this.microsPath, this.micros?.toJSON() ?? null)
    if (this.sink && this.feed && this.histogramPath) atomically(this.histogramPath, latencyFileOf(this.sink, this.feed.end(), this.micros?.toJSON()))
  }
}

/**
 * What a killed writer of a run's samples leaves made readable: its samples file recovered (recoverJtl) and, when it
 * died before writing its latency histograms, those rebuilt from the recovered rows (with samples none nothing is left
 * to rebuild them from). Resolves with the samples file, or null when none was recovered.
 * @param {string} jtlPath the run's samples.jtl, as given to the driver
 * @param {{ samples?: string, histogramPath?: string }} opts
 * @returns {Promise<string | null>}
 */
export async function recoverSamples (jtlPath, { samples, histogramPath }) {
  const path = samplesPathOf(jtlPath, samples)
  if (path === null || !recoverJtl(path)) return null
  if (histogramPath && !existsSync(histogramPath)) {
    const sink = histogramSink()
    const scan = await scanJtl(path, sink)
    await writeJsonAtomic(histogramPath, latencyFileOf(sink, scan))
  }
  return path
}

/**
 * Makes a readable file out of what a killed writer left behind, `<path>.tmp`, and renames it to `path`. A plain JTL
 * is cut after its last complete row; a gzip one after its last whole member (told by the gzip magic bytes): the
 * members are walked by the length in their header, and the last ones, whose writes may still have been in flight,
 * are inflated to check they hold what they say. Returns true when it recovered a file.
 * @param {string} path
 * @returns {boolean}
 */
export function recoverJtl (path) {
  const tmp = `${path}.tmp`
  if (!existsSync(tmp)) return false
  const fd = openSync(tmp, 'r+')
  try {
    const size = fstatSync(fd).size
    const magic = Buffer.alloc(2)
    const isGz = isGzipHead(magic, readSync(fd, magic, 0, 2, 0))
    ftruncateSync(fd, isGz ? wholeMembersEnd(fd, size) : lastRowEnd(fd, size))
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  return true
}

/** Where the last complete row of a plain JTL ends: walking back in blocks to the last newline. */
function lastRowEnd (fd, size) {
  const tail = Buffer.alloc(Math.min(size, 1 << 16))
  let end = size
  for (let at = size; at > 0; at -= tail.length) {
    const from = Math.max(0, at - tail.length)
    const n = readSync(fd, tail, 0, at - from, from)
    const nl = tail.subarray(0, n).lastIndexOf(10)
    if (nl >= 0) { end = from + nl + 1; break }
    end = from
  }
  return end
}

/** Members whose write may not have landed when the writer was killed: the last ones, checked by inflating them. */
const CHECKED_MEMBERS = 64

/** Where the last whole gzip member of a gz writer's file ends. */
function wholeMembersEnd (fd, size) {
  const head = Buffer.alloc(MEMBER_HEAD)
  /** @type {[number, number][]} */
  const members = []
  let at = 0
  while (at + MEMBER_HEAD <= size && readSync(fd, head, 0, MEMBER_HEAD, at) === MEMBER_HEAD) {
    const ours = head[0] === 0x1f && head[1] === 0x8b && (head[3] & 4) && head[12] === EXTRA_ID[0] && head[13] === EXTRA_ID[1]
    const len = ours ? head.readUInt32LE(16) : 0
    if (len < MEMBER_HEAD + 8 || at + len > size) break
    members.push([at, len])
    at += len
  }
  for (const [from, len] of members.slice(-CHECKED_MEMBERS)) {
    const member = Buffer.allocUnsafe(len)
    readSync(fd, member, 0, len, from)
    try {
      gunzipSync(member)
    } catch {
      return from
    }
  }
  return at
}
