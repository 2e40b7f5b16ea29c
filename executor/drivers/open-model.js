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
  return new OpenModel(o, writer).run()
}

/** @typedef {{ conn: any, intended: number, threads: number, done: boolean }} Entry a request sent and not settled */

/**
 * One open-model run: its connections and their idle pool, each request sent, answered or failed and settled, the
 * schedule pumped and audited, the timeout sweep, the end.
 */
class OpenModel {
  /** @type {Set<Entry>} */
  inflight = new Set()
  /** keep-alive connections with no request on them, the last one freed first (a LIFO, as node:http's agent): a
   * few connections carry the load and stay warm, the rest idle until the server closes them */
  idle = []
  sockets = 0
  next = 0
  // the steady window's schedule: sends planned, made, late by the generator's fault; and the worst such lag
  schedule = { planned: 0, sent: 0, late: 0, queued: 0, maxLagMs: 0, answered: 0 }
  // outcomes (answers, failures) by the ms since the steady window's start they came at; summed once the window's end
  // is known (--duration auto may pull it in): sent - answered is how much the queue grew over the window
  /** @type {number[]} */
  resolvedAt = []
  backlog = false
  timer = null
  sweeper = null
  finished = false
  /** @type {(result: import('./load-common.js').LoadResult & { schedule: object }) => void} */
  resolveRun = null
  /** pump() as the timer's callback */
  wake = () => this.pump()

  /** @param {import('./load-common.js').LoadOptions} o @param {import('../jtl-writer.js').JtlWriter} writer */
  constructor (o, writer) {
    this.o = o
    this.url = new URL(o.url)
    this.label = o.label
    this.rate = o.rate
    this.timeoutMs = o.timeoutSec * 1000
    this.bound = o.maxSockets ?? DEFAULT_MAX_SOCKETS
    this.phases = phaseClock(o)
    this.record = outcomeRecorder(this.phases, writer, this.label)
    this.total = Math.ceil((o.warmup + o.duration) * this.rate)
    // connection close: the request says so, and the server's answer ends its connection; the next request opens one
    this.request = requestBytes(this.url, { method: o.method, headers: o.headers, body: o.body, close: o.connection === 'close' })
    this.sentBytes = this.request.length
  }

  /** @returns {Promise<import('./load-common.js').LoadResult>} */
  run () {
    return new Promise((resolve) => {
      this.resolveRun = resolve
      this.phases.start({ onEnd: () => this.endEarly(), signal: this.o.signal, onAbort: () => this.finish(true) })
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS)
      if (!this.phases.ended) this.pump()
    })
  }

  /**
   * The schedule itself ends the run (after the drain); the window's end timer has nothing to do, unless it came early
   * (--duration auto): then nothing is sent from the new end on, and what is in flight drains.
   */
  endEarly () {
    if (!this.phases.reached) return
    this.total = Math.min(this.total, Math.ceil((this.phases.steadyEnd - this.phases.t0) * this.rate / 1000))
    this.pump()
  }

  /** An outcome resolved now, counted by its ms in the steady window. */
  resolved () {
    const ms = Math.floor(clock() - this.phases.steadyStart)
    if (ms >= 0) this.resolvedAt[ms] = (this.resolvedAt[ms] ?? 0) + 1
  }

  /**
   * A failed sample of the request due at `intended`.
   * @param {number} intended @param {import('./http-connection.js').Failure} err @param {string} threadName
   * @param {number} threads
   */
  fail (intended, err, threadName, threads, connect = 0) {
    const elapsed = clock() - intended
    const { label, sentBytes } = this
    this.record(intended, elapsed, false, failure({ start: intended, elapsed, err, label, threadName, url: this.o.url, threads, sentBytes, connect }))
  }

  /** An idle connection, or a new one (numbered: its requests' thread name). */
  connection () {
    const ready = this.idle.pop()
    if (ready) return ready
    const id = ++this.sockets
    const conn = createConnection({
      host: this.url.hostname,
      port: Number(this.url.port || 80),
      request: this.request,
      clock,
      onAnswer: (answer) => this.answered(conn, answer),
      onFail: (why) => this.failedOn(conn, why),
      onIdleClose: () => { const i = this.idle.indexOf(conn); if (i >= 0) this.idle.splice(i, 1) }
    })
    const threadName = `${this.label} ${this.o.group ?? 1}-${id}`
    return Object.assign(conn, { threadName, row: answerRows(this.label, threadName, this.o.url), entry: null })
  }

  /** @param {number} intended */
  send (intended) {
    const conn = this.connection()
    const entry = { conn, intended, threads: this.inflight.size + 1, done: false }
    conn.entry = entry
    this.inflight.add(entry)
    conn.send()
  }

  /** @param {Entry} entry */
  settle (entry) {
    this.resolved()
    entry.done = true
    this.inflight.delete(entry)
    // a freed socket matters to requests waiting for one, and the last answer ends the run; otherwise the timer set
    // for the next intended send stands (re-arming it on every answer costs more than the answer's row)
    if (!this.finished && (this.backlog || this.next >= this.total)) this.pump()
  }

  /** @param {any} conn @param {import('./http-connection.js').Answer} answer */
  answered (conn, answer) {
    const entry = conn.entry
    if (!entry || entry.done) return
    const end = clock()
    const { intended } = entry
    this.record(intended, end - intended, answer.status < 400,
      conn.row(answer, intended, end, answer.firstByteAt, this.sentBytes, entry.threads, conn.connectMs))
    if (conn.open && !this.finished) this.idle.push(conn)
    this.settle(entry)
  }

  /** @param {any} conn @param {import('./http-connection.js').Failure} why */
  failedOn (conn, why) {
    const entry = conn.entry
    if (!entry || entry.done) return
    this.fail(entry.intended, why, conn.threadName, entry.threads, conn.connectMs)
    this.settle(entry)
  }

  /** Sends what is due by now (what waited timeoutSec for a socket fails unsent), then ends the run or waits. */
  pump () {
    if (this.finished) return
    clearTimeout(this.timer)
    const { phases, rate, inflight, bound } = this
    const now = clock()
    const due = Math.min(this.total, Math.floor((now - phases.t0) * rate / 1000) + 1)
    while (this.next < due && inflight.size < bound) {
      const intended = phases.t0 + this.next * 1000 / rate
      this.next++
      if (intended >= phases.steadyStart && intended < phases.steadyEnd) this.audit(now - intended)
      if (now - intended >= this.timeoutMs) {
        this.fail(intended, { code: 'QueueTimeout', message: `waited ${this.o.timeoutSec} s for one of ${bound} connections` },
          `${this.label} ${this.o.group ?? 1}-0`, inflight.size)
        this.resolved()
      } else {
        this.send(intended)
      }
    }
    // due requests left waiting for a socket: the server is slower than the rate, their wait is its latency
    this.backlog = this.next < due
    if (this.next >= this.total && inflight.size === 0) return this.finish(false)
    // while a backlog waits, a finished request calls pump(); otherwise wake at the next intended time
    if (this.next < due) return
    if (this.next < this.total) this.timer = setTimeout(this.wake, Math.max(0, phases.t0 + this.next * 1000 / rate - clock()))
  }

  /** One steady-window send: queued behind busy sockets (the server's doing), or on time, or late (the generator's). */
  audit (lagMs) {
    const schedule = this.schedule
    schedule.sent++
    if (this.backlog) { schedule.queued++; return }
    if (lagMs > LATE_MS) schedule.late++
    schedule.maxLagMs = Math.max(schedule.maxLagMs, Math.round(lagMs))
  }

  /** Every SWEEP_MS: a request past timeoutSec of its intended time loses its connection. */
  sweep () {
    const now = clock()
    for (const entry of this.inflight) {
      if (now - entry.intended >= this.timeoutMs) {
        // its connection goes, and the request fails with why (failedOn)
        entry.conn.destroy({ code: 'SocketTimeout', message: `no answer within ${this.o.timeoutSec} s of the intended send time` })
      }
    }
    this.pump()
  }

  /** The run's end: timers, connections, the schedule's figures and the result. @param {boolean} interrupted */
  finish (interrupted) {
    if (this.finished) return
    this.finished = true
    clearTimeout(this.timer)
    clearInterval(this.sweeper)
    const { phases, schedule } = this
    // the schedule's window is the planned one: its last send is due 1/R before the end, and may be answered before it
    phases.end(interrupted ? undefined : Infinity)
    // requests cut off by an abort are not recorded: they have no outcome
    for (const entry of this.inflight) { entry.done = true; entry.conn.destroy() }
    this.inflight.clear()
    for (const conn of this.idle.splice(0)) conn.destroy()
    schedule.planned = Math.round((phases.steadyEnd - phases.steadyStart) * this.rate / 1000)
    this.resolvedAt.forEach((n, ms) => { if (ms < phases.steadyEnd - phases.steadyStart) schedule.answered += n })
    this.resolveRun({ ...phases.result({ interrupted, version: `nodescale open-model scheduler (raw sockets, node ${process.version})` }), schedule })
  }
}
