// One HTTP/1.1 connection of a load generator on a raw socket: it sends a request built once and reads each answer
// with no more parsing than a JTL row needs (the status, the sizes, when its first byte came), at a fraction of
// node:http's cost per request (perf/generator-cost.js). One request at a time (no pipelining); keep-alive unless the
// request or the server says close.
import net from 'node:net'

const CRLF2 = Buffer.from('\r\n\r\n')
/**
 * Where every connection's reads land (net's `onread`): the socket hands each read to `read` in this buffer, without a
 * Buffer made per read or the stream's 'data' machinery; what a read leaves unfinished is copied out before the next.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)

/**
 * The request's bytes, built once: its line, Host, the caller's headers, Content-Length for a body, Connection.
 * @param {URL} url @param {{ method?: string, headers?: Record<string, string>, body?: Buffer, close?: boolean }} o
 */
export function requestBytes (url, { method = 'GET', headers = {}, body, close = false }) {
  const given = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), [k, v]]))
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`]
  if (!given.host) lines.push(`Host: ${url.host}`)
  for (const [k, v] of Object.values(given)) if (k.toLowerCase() !== 'connection' && k.toLowerCase() !== 'content-length') lines.push(`${k}: ${v}`)
  if (body?.length || given['content-length']) lines.push(`Content-Length: ${body?.length ?? given['content-length'][1]}`)
  lines.push(`Connection: ${close || /^close$/i.test(given.connection?.[1] ?? '') ? 'close' : 'keep-alive'}`)
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1')
  return body?.length ? Buffer.concat([head, body]) : head
}

/**
 * @typedef {{ status: number, message: string, bytes: number, firstByteAt: number }} Answer bytes: the answer's, its
 *   status line and headers included (as JMeter counts them); firstByteAt: on `clock`
 * @typedef {{ code: string, message: string }} Failure
 */

/**
 * A connection to `port` at `host` that sends `request` on send() and calls onAnswer or onFail once per send. A send on
 * a connection not yet open opens it (connectMs: how long that took; 0 on a reused one). A connection the server
 * closed, or that a close answer ended, is opened again by the next send; `open` says whether it is now.
 * @param {ConnectionOptions} o
 */
export const createConnection = (o) => new Connection(o)

/**
 * @typedef {{ host: string, port: number, request: Buffer, clock: () => number, onAnswer: (a: Answer) => void, onFail:
 *   (f: Failure) => void, onIdleClose?: () => void }} ConnectionOptions onIdleClose: the server closed it while no
 *   request was on it
 */

/**
 * One connection's state: its socket, the answer being read (its bytes so far, its head once it has all come, when
 * its first byte came). Public fields are plain, not getters: a getter per connection gave every connection a map of
 * its own, and the models' reads of hundreds of them (the open model's pool) went megamorphic; the models add fields of
 * their own, so the state they must not touch is private.
 */
class Connection {
  connectMs = 0
  open = false
  busy = false
  /** @type {net.Socket | null} */
  #socket = null
  /** @type {Buffer | null} */
  #buf = null
  #firstByteAt = 0
  /** @type {ReturnType<typeof parseHead> | null} the answer's head, once it has all come */
  #head = null
  #openedAt = 0
  /** @type {ConnectionOptions} */
  #o

  /** @param {ConnectionOptions} o */
  constructor (o) {
    this.#o = o
  }

  /** @param {net.Socket | null} s */
  #use (s) { this.#socket = s; this.open = s !== null }

  send () {
    this.busy = true
    this.#buf = null
    this.#head = null
    this.#firstByteAt = 0
    this.connectMs = 0
    if (this.#socket) this.#socket.write(this.#o.request)
    else this.#connect()
  }

  /** Opens the socket and sends the request once it is connected; its reads go to read(), its end to drop(). */
  #connect () {
    const o = this.#o
    this.#openedAt = o.clock()
    const s = net.connect({
      host: o.host,
      port: o.port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: (n) => { this.#read(READ_BUFFER.subarray(0, n)); return true } }
    })
    this.#use(s)
    s.once('connect', () => { this.connectMs = Math.round(o.clock() - this.#openedAt); s.write(o.request) })
    s.on('error', (err) => this.#drop(s, { code: /** @type {any} */ (err).code ?? 'Error', message: err.message }))
    s.on('close', () => {
      // an answer with neither a length nor chunks ends where the server closes the connection
      const head = this.#head
      if (s === this.#socket && this.busy && head && head.length < 0 && !head.chunked) {
        head.close = true
        this.#answer(this.#buf?.length ?? 0)
        return
      }
      this.#drop(s, { code: 'NoHttpResponse', message: 'the server closed the connection before answering' })
    })
  }

  /** The socket is gone: a request on it failed with `why`; the next send opens another. */
  #drop (s, why) {
    if (s !== this.#socket) return
    this.#use(null)
    s.destroy()
    if (this.busy) { this.busy = false; this.#o.onFail(why) } else this.#o.onIdleClose?.()
  }

  /** @param {Buffer} chunk a view of READ_BUFFER, valid until this returns */
  #read (chunk) {
    if (!this.busy) return
    if (!this.#firstByteAt) this.#firstByteAt = this.#o.clock()
    let buf = this.#buf ? Buffer.concat([this.#buf, chunk]) : chunk
    this.#buf = buf
    for (;;) {
      if (!this.#head) {
        const end = buf.indexOf(CRLF2)
        if (end < 0) return this.#keep()
        this.#head = parseHead(buf, end)
        // an interim answer (100 Continue): the real one follows
        if (this.#head.status >= 100 && this.#head.status < 200 && this.#head.status !== 101) {
          buf = this.#buf = buf.subarray(this.#head.bodyAt)
          this.#head = null
          continue
        }
      }
      const head = this.#head
      const size = head.chunked ? chunkedSize(buf, head.bodyAt) : head.length >= 0 ? head.bodyAt + head.length : -1
      if (size < 0 || buf.length < size) return this.#keep()
      this.#answer(size)
      return
    }
  }

  /** An answer not finished in this read: its bytes so far copied out of READ_BUFFER, which the next read reuses. */
  #keep () {
    if (this.#buf && this.#buf.buffer === READ_BUFFER.buffer) this.#buf = Buffer.from(this.#buf)
  }

  #answer (size) {
    const h = /** @type {NonNullable<ReturnType<typeof parseHead>>} */ (this.#head)
    this.busy = false
    const a = { status: h.status, message: h.message, bytes: size, firstByteAt: this.#firstByteAt }
    this.#buf = null
    this.#head = null
    if (h.close && this.#socket) { const s = this.#socket; this.#use(null); s.destroy() }
    this.#o.onAnswer(a)
  }

  /** Closes it; a request on it fails with `why` (when given). @param {Failure} [why] */
  destroy (why) {
    const s = this.#socket
    this.#use(null)
    s?.destroy()
    if (this.busy) { this.busy = false; if (why) this.#o.onFail(why) }
  }
}

/** The headers an answer's head is read for, by their names' length. */
const HEADS_READ = new Map(['content-length', 'transfer-encoding', 'connection'].map(name => [name.length, name]))

/**
 * The head of an answer that ends at `end` (its blank line): the status, its text, where the body starts, and how the
 * body's end is known (a length, chunks, or the connection's close: length -1, not chunked).
 * @param {Buffer} buf @param {number} end
 */
function parseHead (buf, end) {
  const text = buf.toString('latin1', 0, end)
  const lineEnd = text.indexOf('\r\n')
  const statusLine = lineEnd < 0 ? text : text.slice(0, lineEnd)
  const status = Number(statusLine.slice(9, 12))
  const message = statusLine.slice(13)
  let length = -1
  let chunked = false
  let close = statusLine.startsWith('HTTP/1.0')
  for (let at = lineEnd; at >= 0 && at < text.length;) {
    const from = at + 2
    const next = text.indexOf('\r\n', from)
    const to = next < 0 ? text.length : next
    const colon = text.indexOf(':', from)
    // only three names matter: a header of another length is passed over without being read (most of them)
    const named = colon > 0 && colon < to ? HEADS_READ.get(colon - from) : undefined
    if (named && text.slice(from, colon).toLowerCase() === named) {
      const value = text.slice(colon + 1, to)
      if (named === 'content-length') length = Number(value.trim())
      else if (named === 'transfer-encoding') chunked = /chunked/i.test(value)
      else close = /close/i.test(value) || (close && !/keep-alive/i.test(value))
    }
    at = next
  }
  // no body: 204 and 304 (the drivers send GET and POST only, never HEAD)
  if (status === 204 || status === 304) { length = 0; chunked = false }
  return { status, message, bodyAt: end + 4, length: chunked ? -1 : length, chunked, close }
}

/** Where a chunked body that starts at `at` ends (its last chunk and trailers read); -1 while it has not all come. */
function chunkedSize (buf, at) {
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at, 'latin1')
    if (lineEnd < 0) return -1
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16)
    if (!(size > 0)) {
      // the last chunk: trailers (usually none) up to a blank line
      if (buf.length >= lineEnd + 4 && buf[lineEnd + 2] === 13 && buf[lineEnd + 3] === 10) return lineEnd + 4
      const end = buf.indexOf(CRLF2, lineEnd)
      return end < 0 ? -1 : end + 4
    }
    at = lineEnd + 2 + size + 2
    if (buf.length < at) return -1
  }
}
