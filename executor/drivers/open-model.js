// Open-model load: requests leave on a fixed schedule (t0 + i/R) whatever the server does; latency counts from the
// intended send time.
import { answerRows, clock, failure, outcomeRecorder, phaseClock } from './load-common.js'
import { createConnection, requestBytes } from './http-connection.js'

/** How many sockets the open model may hold open at most, unless the caller says otherwise. */
export const DEFAULT_MAX_SOCKETS = 512
const SWEEP_MS = 100
/** A request sent this much after its intended time, with a socket free for it, was late by the generator's fault. */
export const LATE_MS = 10

/**
 * Sends request i at t0 + i*1000/R over keep-alive connections (a new connection each with `connection: 'close'`),
 * each on a raw socket (http-connection.js: node:http's client cost ~4x more CPU a request), with at most `maxSockets`
 * requests in flight. When the bound is hit (the server is slower than R * latency allows), due
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
  const phases = phaseClock(o)
  const record = outcomeRecorder(phases, writer, label)
  let total = Math.ceil((o.warmup + o.duration) * rate)
  /** @type {Set<{ conn: any, intended: number, threads: number, done: boolean }>} */
  const inflight = new Set()
  // connection close: the request says so, and the server's answer ends its connection; the next request opens one
  const request = requestBytes(url, { method: o.method, headers: o.headers, body: o.body, close: o.connection === 'close' })
  const sentBytes = request.length
  /** keep-alive connections with no request on them, the longest idle first (a FIFO, as node:http's agent) */
  const idle = []
  let sockets = 0
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

  function fail (intended, err, threadName, threads, connect = 0) {
    const elapsed = clock() - intended
    record(intended, elapsed, false, failure({ start: intended, elapsed, err, label, threadName, url: o.url, threads, sentBytes, connect }))
  }

  /** An idle connection, or a new one (numbered: its requests' thread name). */
  function connection () {
    const ready = idle.shift()
    if (ready) return ready
    const id = ++sockets
    const conn = createConnection({
      host: url.hostname,
      port: Number(url.port || 80),
      request,
      clock,
      onAnswer: (answer) => answered(conn, answer),
      onFail: (why) => failedOn(conn, why),
      onIdleClose: () => { const i = idle.indexOf(conn); if (i >= 0) idle.splice(i, 1) }
    })
    const threadName = `${label} ${o.group ?? 1}-${id}`
    return Object.assign(conn, { threadName, row: answerRows(label, threadName, o.url), entry: null })
  }

  function send (intended) {
    const conn = connection()
    const entry = { conn, intended, threads: inflight.size + 1, done: false }
    conn.entry = entry
    inflight.add(entry)
    conn.send()
  }

  function settle (entry) {
    resolved()
    entry.done = true
    inflight.delete(entry)
    // a freed socket matters to requests waiting for one, and the last answer ends the run; otherwise the timer set
    // for the next intended send stands (re-arming it on every answer costs more than the answer's row)
    if (!finished && (backlog || next >= total)) pump()
  }

  /** @param {any} conn @param {import('./http-connection.js').Answer} answer */
  function answered (conn, answer) {
    const entry = conn.entry
    if (!entry || entry.done) return
    const end = clock()
    const { intended } = entry
    record(intended, end - intended, answer.status < 400, conn.row(answer, intended, end, answer.firstByteAt, sentBytes, entry.threads, conn.connectMs))
    if (conn.open && !finished) idle.push(conn)
    settle(entry)
  }

  /** @param {any} conn @param {import('./http-connection.js').Failure} why */
  function failedOn (conn, why) {
    const entry = conn.entry
    if (!entry || entry.done) return
    fail(entry.intended, why, conn.threadName, entry.threads, conn.connectMs)
    settle(entry)
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
        // its connection goes, and the request fails with why (failedOn)
        entry.conn.destroy({ code: 'SocketTimeout', message: `no answer within ${o.timeoutSec} s of the intended send time` })
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
    for (const entry of inflight) { entry.done = true; entry.conn.destroy() }
    inflight.clear()
    for (const conn of idle.splice(0)) conn.destroy()
    schedule.planned = Math.round((phases.steadyEnd - phases.steadyStart) * rate / 1000)
    resolvedAt.forEach((n, ms) => { if (ms < phases.steadyEnd - phases.steadyStart) schedule.answered += n })
    resolveRun({ ...phases.result({ interrupted, version: `nodescale open-model scheduler (raw sockets, node ${process.version})` }), schedule })
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
