// Closed-model load: C clients, each sending its next request as soon as its last one is answered, on a keep-alive
// connection of its own (or a new connection per request); one JTL row per request of the steady window.
import { answerRows, clock, failure, outcomeRecorder, phaseClock } from './load-common.js'
import { createConnection, requestBytes } from './http-connection.js'

/** How often the clients' requests are checked against the timeout. */
const SWEEP_MS = 100

/**
 * Runs C clients against one URL for warmup + duration seconds in this process, each on a raw socket
 * (http-connection.js: autocannon's clients cost about twice as much CPU a request, perf/generator-cost.js).
 * A request belongs to the steady window when it was SENT at or after steadyStart; it is recorded when its
 * answer (or error) arrives before steadyEnd, when every connection is closed. So the JTL differs from what the
 * server saw in [steadyStart, steadyEnd) by at most C requests at each edge (those in flight at the boundaries).
 * A request its connection lost (refused, reset, closed by the server before answering) or that was not answered
 * within the timeout is a failed row, and the client goes on with a new connection.
 * @param {import('./load-common.js').LoadOptions} o
 * @param {import('../jtl-writer.js').JtlWriter} writer
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export function runClosed (o, writer) {
  const url = new URL(o.url)
  const label = o.label
  const timeoutMs = o.timeoutSec * 1000
  const phases = phaseClock(o)
  const request = requestBytes(url, { method: o.method, headers: o.headers, body: o.body, close: o.connection === 'close' })
  const sentBytes = request.length
  const record = outcomeRecorder(phases, writer, label)
  const clients = Array.from({ length: o.concurrency }, (_, i) => client(`${label} ${o.group ?? 1}-${i + 1}`))
  let sweeper = null

  /** @param {string} threadName */
  function client (threadName) {
    const row = answerRows(label, threadName, o.url)
    const c = {
      start: 0,
      conn: createConnection({
        host: url.hostname,
        port: Number(url.port || 80),
        request,
        clock,
        onAnswer (a) {
          const end = clock()
          record(c.start, end - c.start, a.status < 400, row(a, c.start, end, a.firstByteAt, sentBytes, o.concurrency, c.conn.connectMs))
          next()
        },
        onFail (why) {
          const elapsed = clock() - c.start
          const connect = c.conn.connectMs
          const row = failure({ start: c.start, elapsed, err: why, label, threadName, url: o.url, threads: o.concurrency, sentBytes, connect })
          record(c.start, elapsed, false, row)
          next()
        }
      })
    }
    const next = () => {
      if (phases.ended) return
      c.start = clock()
      c.conn.send()
    }
    return Object.assign(c, { next })
  }

  function sweep () {
    const now = clock()
    for (const c of clients) {
      if (c.conn.busy && now - c.start >= timeoutMs) c.conn.destroy({ code: 'SocketTimeout', message: `no answer within ${o.timeoutSec} s` })
    }
  }

  return new Promise((resolve) => {
    const finish = (interrupted) => {
      if (phases.ended) return
      phases.end()
      clearInterval(sweeper)
      for (const c of clients) c.conn.destroy()
      resolve(phases.result({ interrupted, version: `nodescale closed-model clients (raw sockets, node ${process.version})` }))
    }
    phases.start({ onEnd: () => finish(false), signal: o.signal, onAbort: () => finish(true) })
    sweeper = setInterval(sweep, SWEEP_MS)
    if (!phases.ended) for (const c of clients) c.next()
  })
}
