// Closed-model load with autocannon (C keep-alive connections, pipelining 1; or C clients opening a connection per
// request): one JTL row per request of the steady window.
import { createRequire } from 'node:module'
import { STATUS_CODES } from 'node:http'
import autocannon from 'autocannon'
import { clock, failure, phaseClock } from './load-common.js'
import { quoteCsv } from '../jtl-writer.js'

const require = createRequire(import.meta.url)
export const AUTOCANNON_VERSION = require('autocannon/package.json').version
const noop = () => {}

/**
 * Makes an autocannon client open a new connection for each request, as a client without keep-alive does: its request
 * says Connection: close (autocannon writes keep-alive into every request it builds), and once an answer is recorded
 * the next request goes out on a fresh connection. (autocannon's own `reconnectRate` reconnects before it reports the
 * answer, which is then lost.)
 * @param {any} client
 */
function reconnectPerRequest (client) {
  const request = Buffer.from(client.getRequestBuffer().toString('latin1').replace(/\r\nConnection: keep-alive\r\n/i, '\r\nConnection: close\r\n'), 'latin1')
  client.getRequestBuffer = () => request
  const doRequest = client._doRequest
  let answered = false
  client.on('response', () => { answered = true })
  client._doRequest = function () {
    if (!answered || this.destroyed) return doRequest.call(this)
    answered = false
    this._resetConnection()
  }
}

/**
 * Runs C connections against one URL for warmup + duration seconds in this process.
 * A request belongs to the steady window when it was SENT at or after steadyStart; it is recorded when its
 * answer (or error) arrives before steadyEnd, when every connection is closed. So the JTL differs from what the
 * server saw in [steadyStart, steadyEnd) by at most C requests at each edge (those in flight at the boundaries).
 * @param {import('./load-common.js').LoadOptions} o
 * @param {import('../jtl-writer.js').JtlWriter} writer
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export function runClosed (o, writer) {
  const url = new URL(o.url)
  const label = o.label
  const timeoutMs = o.timeoutSec * 1000
  const phases = phaseClock(o)
  const clients = []
  let sentBytes = 0
  let finish

  /** @param {import('../jtl-writer.js').JtlSample} row @param {number} start @param {number} elapsed ms, unrounded */
  function record (row, start, elapsed) {
    if (start < phases.steadyStart) { phases.warmupRequests++; return }
    if (start >= phases.steadyEnd) return
    phases.count(row.success)
    writer.write(row)
    writer.micro(label, elapsed)
  }

  function failed (start, elapsed, err, threadName, connectMs) {
    record(failure({ start, elapsed, err, label, threadName, url: o.url, threads: o.concurrency, sentBytes, connect: connectMs }), start, elapsed)
  }

  function setupClient (client) {
    const index = clients.push(client)
    const threadName = `${label} ${o.group ?? 1}-${index}`
    if (o.connection === 'close') reconnectPerRequest(client)
    if (!sentBytes) sentBytes = client.getRequestBuffer().length
    let headersAt = 0
    let connectMs = 0
    let lastError = null
    const connect = client._connect
    // Requests pending on a connection that is being replaced (refused, reset, closed by the server) never got
    // an answer: autocannon drops them silently, the JTL records each as a failed sample.
    client._connect = function () {
      const pending = this.pipelinedRequests.toArray()
      if (pending.length && !this.destroyed) {
        const now = clock()
        for (const p of pending) {
          const [s, ns] = process.hrtime(p.startTime)
          const elapsed = s * 1e3 + ns / 1e6
          failed(now - elapsed, elapsed, lastError ?? { code: 'NoHttpResponse', message: 'the server closed the connection before answering' },
            threadName, connectMs)
        }
        this.pipelinedRequests.clear()
      }
      lastError = null
      const started = clock()
      connect.call(this)
      this.conn.once('connect', () => { connectMs = Math.round(clock() - started) })
    }
    client.on('connError', (err) => { lastError = err })
    client.on('timeout', () => {
      failed(clock() - timeoutMs, timeoutMs, { code: 'SocketTimeout', message: `no answer within ${o.timeoutSec} s` }, threadName, 0)
    })
    client.on('headers', () => { headersAt = clock() })
    // Everything but the times, sizes and connect time is the same on every row of this connection and status:
    // build that text once (per status code) and concatenate numbers around it on the hot path.
    const middle = `,${sentBytes},${o.concurrency},${o.concurrency},${quoteCsv(o.url)},`
    const prefixes = new Map()
    const prefixOf = (code) => {
      let p = prefixes.get(code)
      if (p === undefined) {
        const ok = code < 400
        const text = STATUS_CODES[code] ?? ''
        p = [quoteCsv(label), code, quoteCsv(text), quoteCsv(threadName), 'text', ok, ok ? '' : quoteCsv(`HTTP ${code} ${text}`.trim())].join(',') + ','
        prefixes.set(code, p)
      }
      return p
    }
    client.on('response', (statusCode, bytes, duration) => {
      const start = clock() - duration
      if (start < phases.steadyStart) { phases.warmupRequests++; connectMs = 0; return }
      if (start >= phases.steadyEnd) return
      phases.count(statusCode < 400)
      const latency = headersAt >= start ? Math.round(headersAt - start) : Math.round(duration)
      writer.writeLine(Math.floor(start) + ',' + Math.round(duration) + ',' + prefixOf(statusCode) + bytes + middle + latency + ',0,' + connectMs + '\n')
      writer.micro(label, duration)
      connectMs = 0
    })
    // autocannon keeps each body as a string and re-clones an empty context per request for features unused here
    // (verifyBody, onResponse, setupRequest): skip that work, it is a few % of a core at 80k req/s
    client.pipelinedRequests.addBody = noop
    client.requestIterator.resetContext = noop
  }

  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: url.href,
      method: o.method,
      headers: o.headers,
      body: o.body,
      connections: o.concurrency,
      pipelining: 1,
      timeout: o.timeoutSec,
      // a backstop only: the run is ended below, on our own clock
      duration: o.warmup + o.duration + 30,
      sampleInt: 100,
      skipAggregateResult: true,
      setupClient
    }, (err) => { if (err) reject(err) })
    instance.on('error', reject)

    finish = (interrupted) => {
      if (phases.ended) return
      phases.end()
      for (const c of clients) c.destroy()
      instance.stop()
      resolve(phases.result({ interrupted, version: `autocannon ${AUTOCANNON_VERSION}` }))
    }
    phases.start({ onEnd: () => finish(false), signal: o.signal, onAbort: () => finish(true) })
  })
}
