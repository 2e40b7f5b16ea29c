// Open-model load: requests leave on a fixed schedule (t0 + i/R) whatever the server does; latency counts from the
// intended send time.
import http from 'node:http'
import { clock, failure, phaseClock } from './load-common.js'

/** How many sockets the open model may hold open at most, unless the caller says otherwise. */
export const DEFAULT_MAX_SOCKETS = 512
const SWEEP_MS = 100
/** A request sent this much after its intended time, with a socket free for it, was late by the generator's fault. */
export const LATE_MS = 10

/**
 * Sends request i at t0 + i*1000/R over a keep-alive agent (a new connection each with `connection: 'close'`) with at
 * most `maxSockets` requests in flight. When the bound is hit (the server is slower than R * latency allows), due
 * requests wait in order and their wait is part of their latency: `elapsed` = answer end - intended send time,
 * `timeStamp` = the intended send time. This is the coordinated-omission-free measurement autocannon's overallRate does
 * not give (it times from the actual send). A request not answered within timeoutSec of its intended time is a failed
 * row; one that waited that long for a socket is recorded as failed without being sent. Every request scheduled in the
 * window is thus recorded, and the drain after the window lasts at most timeoutSec. The schedule is audited over the
 * steady window (like k6's dropped iterations): how many sends were planned and made, and how many left late with a
 * socket free for them — the generator itself fell behind (a busy event loop), which the server's latency must not be
 * blamed for.
 * @param {import('./load-common.js').LoadOptions} o
 * @param {import('../jtl-writer.js').JtlWriter} writer
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export function runOpen (o, writer) {
  const url = new URL(o.url)
  const label = o.label
  const rate = o.rate
  const timeoutMs = o.timeoutSec * 1000
  const bound = o.maxSockets ?? DEFAULT_MAX_SOCKETS
  const agent = new http.Agent({ keepAlive: true, maxSockets: bound, maxFreeSockets: bound, scheduling: 'fifo' })
  const phases = phaseClock(o)
  let total = Math.ceil((o.warmup + o.duration) * rate)
  const inflight = new Set()
  const socketIds = new WeakMap()
  let sockets = 0
  // connection close: the request's Connection: close makes node:http end its socket after the answer, so the next
  // request opens one of its own (the agent's keepAlive: false would not: with maxSockets bounded it still reuses them)
  const headers = { ...o.headers, ...(o.connection === 'close' && { connection: 'close' }) }
  if (o.body) headers['content-length'] = String(o.body.length)
  const options = { agent, host: url.hostname, port: url.port || 80, path: url.pathname + url.search, method: o.method, headers }
  let sentBytes = 0
  let next = 0
  // the steady window's schedule: sends planned, made, late by the generator's fault; and the worst such lag
  const schedule = { planned: 0, sent: 0, late: 0, queued: 0, maxLagMs: 0, answered: 0 }
  // outcomes (answers, failures) by the ms since the steady window's start they came at; summed once the window's end
  // is known (--duration auto may pull it in): sent - answered is how much the queue grew over the window
  /** @type {number[]} */
  const resolvedAt = []
  const resolved = () => {
    const ms = Math.floor(clock() - phases.steadyStart)
    if (ms >= 0) resolvedAt[ms] = (resolvedAt[ms] ?? 0) + 1
  }
  let backlog = false
  let timer = null
  let sweeper = null
  let finished = false
  let resolveRun

  /** @param {import('../jtl-writer.js').JtlSample} row @param {number} intended @param {number} elapsed unrounded ms */
  function record (row, intended, elapsed) {
    if (intended < phases.steadyStart) { phases.warmupRequests++; return }
    // sent in the moment between an early end (--duration auto) and the timer that saw it
    if (intended >= phases.steadyEnd) return
    phases.count(row.success)
    writer.write(row)
    writer.micro(label, elapsed)
  }

  function fail (intended, err, threadName, threads, connect = 0) {
    const elapsed = clock() - intended
    record(failure({ start: intended, elapsed, err, label, threadName, url: o.url, threads, sentBytes, connect }), intended, elapsed)
  }

  function send (intended) {
    const threads = inflight.size + 1
    const req = http.request(options)
    const entry = { req, intended, done: false, timedOut: false }
    inflight.add(entry)
    let threadName = `${label} ${o.group ?? 1}-0`
    let connect = 0
    let firstByte = 0
    const settle = () => {
      resolved()
      entry.done = true
      inflight.delete(entry)
      if (!finished) pump()
    }
    req.on('socket', (socket) => {
      let id = socketIds.get(socket)
      if (id === undefined) socketIds.set(socket, id = ++sockets)
      threadName = `${label} ${o.group ?? 1}-${id}`
      if (socket.connecting) {
        const t = clock()
        socket.once('connect', () => { connect = Math.round(clock() - t) })
      }
    })
    req.on('response', (res) => {
      firstByte = clock()
      // status line + raw headers + blank line: what JMeter counts as header bytes
      let bytes = 15 + (res.statusMessage?.length ?? 0) + 2
      for (let i = 0; i < res.rawHeaders.length; i += 2) bytes += res.rawHeaders[i].length + res.rawHeaders[i + 1].length + 4
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('error', (err) => {
        if (entry.done) return
        fail(intended, entry.timedOut ? { code: 'SocketTimeout', message: `no answer within ${o.timeoutSec} s of the intended send time` } : err,
          threadName, threads, connect)
        settle()
      })
      res.on('end', () => {
        if (entry.done) return
        const end = clock()
        const code = res.statusCode
        const ok = code < 400
        record({
          timeStamp: Math.floor(intended),
          elapsed: Math.round(end - intended),
          label,
          responseCode: code,
          responseMessage: res.statusMessage ?? '',
          threadName,
          success: ok,
          failureMessage: ok ? '' : `HTTP ${code} ${res.statusMessage ?? ''}`.trim(),
          bytes,
          sentBytes,
          grpThreads: threads,
          allThreads: threads,
          URL: o.url,
          latency: Math.round(firstByte - intended),
          idleTime: 0,
          connect
        }, intended, end - intended)
        settle()
      })
    })
    req.on('error', (err) => {
      if (entry.done) return
      fail(intended, entry.timedOut ? { code: 'SocketTimeout', message: `no answer within ${o.timeoutSec} s of the intended send time` } : err,
        threadName, threads, connect)
      settle()
    })
    req.end(o.body)
    // @ts-ignore the header block Node wrote: its length is the request's size without the body
    if (!sentBytes && req._header) sentBytes = Buffer.byteLength(req._header) + (o.body?.length ?? 0)
  }

  function pump () {
    if (finished) return
    clearTimeout(timer)
    const now = clock()
    const due = Math.min(total, Math.floor((now - phases.t0) * rate / 1000) + 1)
    while (next < due && inflight.size < bound) {
      const intended = phases.t0 + next * 1000 / rate
      next++
      if (intended >= phases.steadyStart && intended < phases.steadyEnd) audit(now - intended)
      if (now - intended >= timeoutMs) {
        fail(intended, { code: 'QueueTimeout', message: `waited ${o.timeoutSec} s for one of ${bound} connections` },
          `${label} ${o.group ?? 1}-0`, inflight.size)
        resolved()
      } else {
        send(intended)
      }
    }
    // due requests left waiting for a socket: the server is slower than the rate, their wait is its latency
    backlog = next < due
    if (next >= total && inflight.size === 0) return finish(false)
    // while a backlog waits, a finished request calls pump(); otherwise wake at the next intended time
    if (next < due) return
    if (next < total) timer = setTimeout(pump, Math.max(0, phases.t0 + next * 1000 / rate - clock()))
  }

  /** One steady-window send: queued behind busy sockets (the server's doing), or on time, or late (the generator's). */
  function audit (lagMs) {
    schedule.sent++
    if (backlog) { schedule.queued++; return }
    if (lagMs > LATE_MS) schedule.late++
    schedule.maxLagMs = Math.max(schedule.maxLagMs, Math.round(lagMs))
  }

  function sweep () {
    const now = clock()
    for (const entry of inflight) {
      if (now - entry.intended >= timeoutMs) {
        entry.timedOut = true
        entry.req.destroy()
      }
    }
    pump()
  }

  function finish (interrupted) {
    if (finished) return
    finished = true
    clearTimeout(timer)
    clearInterval(sweeper)
    // the schedule's window is the planned one: its last send is due 1/R before the end, and may be answered before it
    phases.end(interrupted ? undefined : Infinity)
    // requests cut off by an abort are not recorded: they have no outcome
    for (const entry of inflight) { entry.done = true; entry.req.destroy() }
    inflight.clear()
    agent.destroy()
    schedule.planned = Math.round((phases.steadyEnd - phases.steadyStart) * rate / 1000)
    resolvedAt.forEach((n, ms) => { if (ms < phases.steadyEnd - phases.steadyStart) schedule.answered += n })
    resolveRun({ ...phases.result({ interrupted, version: `nodescale open-model scheduler (node:http, node ${process.version})` }), schedule })
  }

  return new Promise((resolve) => {
    resolveRun = resolve
    // the schedule itself ends the run (after the drain); the window's end timer has nothing to do, unless it came
    // early (--duration auto): then nothing is sent from the new end on, and what is in flight drains
    const endEarly = () => {
      if (!phases.reached) return
      total = Math.min(total, Math.ceil((phases.steadyEnd - phases.t0) * rate / 1000))
      pump()
    }
    phases.start({ onEnd: endEarly, signal: o.signal, onAbort: () => finish(true) })
    sweeper = setInterval(sweep, SWEEP_MS)
    if (!phases.ended) pump()
  })
}
