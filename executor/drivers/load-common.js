// What the in-process load models share: a ms clock, answer and failed-sample rows, and the warm-up/steady window with
// its counters (and, for --duration auto, the rule that ends it once the mean throughput is known well enough).
import { STATUS_CODES } from 'node:http'
import { autoDurationReached } from '../../analyzer/samples/steady-state.js'
import { quoteCsv } from '../jtl-writer.js'

/** Milliseconds since the epoch with sub-ms resolution (monotonic within a process). */
export const clock = () => performance.timeOrigin + performance.now()

/**
 * @typedef {{ url: string, method: 'GET'|'POST', headers: Record<string,string>, body?: Buffer, concurrency?: number,
 *   rate?: number, connection?: 'keep-alive'|'close', duration: number, warmup: number, label: string, timeoutSec:
 *   number, maxSockets?: number, signal?: AbortSignal, onProgress?: (p: Progress) => void, until?: Until, samples:
 *   string, histogramPath?: string, microsPath?: string, startAt?: number, group?: number }} LoadOptions samples: the
 *   samples file's format (jtl, gz, none); histogramPath: where the latency histograms go; microsPath: where the µs
 *   histograms alone go (a generator's part); startAt: the load's t0 (ms epoch) shared by the
 *   generators of one run, which wait for it; group: this generator's number among them, the first number of its
 *   thread names (`label 2-7`); connection: close opens a connection per request (default keep-alive)
 * @typedef {{ minSeconds: number, relHalfWidth: number }} Until --duration auto: the steady window ends at the first
 *   whole second from minSeconds on where the mean throughput is known to ±relHalfWidth at 95% by the sequential rule
 *   (analyzer/samples/steady-state.js autoDurationReached; duration is then the longest it may last)
 * @typedef {{ phase: 'warmup'|'steady', elapsed: number, total: number, requests: number, errors: number }} Progress
 * @typedef {{ driver: string, requests: number, errors: number, warmupRequests: number, steadyStart: number,
 *   steadyEnd: number, interrupted: boolean, jtlPath: string | null, version: string, until?: { reached: boolean },
 *   startSkewMs?: number }} LoadResult jtlPath: the samples file written (null with samples none); startSkewMs: with
 *   a shared start, how late the load began after it
 */

/**
 * An answer's row, written on the hot path: what is the same on every row of one thread and status (its label, code,
 * reason, thread, success and failure text) is built once and kept; the numbers are joined around it. The row is a
 * JTL row as formatJtlRow writes one (jtl-writer.js).
 * @param {string} label @param {string} threadName @param {string} url
 * @returns {(a: { status: number, message: string, bytes: number }, start: number, end: number, firstByteAt: number,
 *   sentBytes: number, threads: number, connect: number) => string}
 */
export function answerRows (label, threadName, url) {
  const prefixes = new Map()
  const quotedUrl = quoteCsv(url)
  const prefixOf = (code, message) => {
    let p = prefixes.get(code)
    if (p === undefined) {
      const ok = code < 400
      const text = message || STATUS_CODES[code] || ''
      p = [quoteCsv(label), code, quoteCsv(text), quoteCsv(threadName), 'text', ok, ok ? '' : quoteCsv(`HTTP ${code} ${text}`.trim())].join(',') + ','
      prefixes.set(code, p)
    }
    return p
  }
  return (a, start, end, firstByteAt, sentBytes, threads, connect) => Math.floor(start) + ',' + Math.round(end - start) + ',' +
    prefixOf(a.status, a.message) + a.bytes + ',' + sentBytes + ',' + threads + ',' + threads + ',' + quotedUrl + ',' +
    Math.round(firstByteAt - start) + ',0,' + connect + '\n'
}

/**
 * How a load model records a request's outcome: its row (an answer's line, or a failed sample) is written when the
 * request was sent (closed model) or due (open model) in the steady window; one before it counts as warm-up, one at or
 * after its end (sent in the moment an early end, --duration auto, was being seen) is left out.
 * @param {ReturnType<typeof phaseClock>} phases @param {import('../jtl-writer.js').JtlWriter} writer
 * @param {string} label
 * @returns {(start: number, elapsed: number, ok: boolean, row: string | import('../jtl-writer.js').JtlSample) => void}
 */
export function outcomeRecorder (phases, writer, label) {
  return (start, elapsed, ok, row) => {
    if (start < phases.steadyStart) { phases.warmupRequests++; return }
    if (start >= phases.steadyEnd) return
    phases.count(ok)
    if (typeof row === 'string') writer.writeLine(row)
    else writer.write(row)
    writer.micro(label, elapsed)
  }
}

/**
 * A failed sample (no HTTP answer) in JMeter's style: "Non HTTP response code: <cause>".
 * @param {{ start: number, elapsed: number, err: { code?: string, name?: string, message: string }, label: string,
 *   threadName: string, url: string, threads: number, sentBytes?: number, connect?: number }} f
 * @returns {import('../jtl-writer.js').JtlSample}
 */
export function failure ({ start, elapsed, err, label, threadName, url, threads, sentBytes = 0, connect = 0 }) {
  const cause = err.code ?? err.name ?? 'Error'
  return {
    timeStamp: Math.floor(start),
    elapsed: Math.round(elapsed),
    label,
    responseCode: `Non HTTP response code: ${cause}`,
    responseMessage: `Non HTTP response message: ${err.message}`,
    threadName,
    success: false,
    failureMessage: `${cause}: ${err.message}`,
    bytes: 0,
    sentBytes,
    grpThreads: threads,
    allThreads: threads,
    URL: url,
    latency: 0,
    idleTime: 0,
    connect
  }
}

/**
 * The run's clock: warm-up from t0, steady window [t0 + warmup, t0 + warmup + duration), progress once a second,
 * abort through the signal. Boundaries are planned times, not timer callbacks, so a late timer cannot shift them.
 * With `until`, the responses of the steady window are counted per tenth of a second of their arrival, and at each
 * whole second from the minimum on the window ends there once their mean is known to the precision asked (the
 * analyzer's autoDurationReached, on the tenths the summary judges: the first second left out).
 * @param {LoadOptions} o
 */
export function phaseClock (o) {
  return new PhaseClock(o)
}

class PhaseClock {
  t0 = 0
  steadyStart = Infinity
  steadyEnd = Infinity
  ended = false
  requests = 0
  errors = 0
  warmupRequests = 0
  /** responses per tenth of a second of the steady window, by arrival (only counted with `until`) @type {number[]} */
  perTenth = []
  reached = false
  /** @type {{ clear: () => void }[]} */
  #timers = []
  #o

  /** @param {LoadOptions} o */
  constructor (o) {
    this.#o = o
  }

  /** @param {boolean} ok */
  count (ok) {
    this.requests++
    if (!ok) this.errors++
    if (this.#o.until) {
      const i = Math.floor((clock() - this.steadyStart) / 100)
      if (i >= 0) this.perTenth[i] = (this.perTenth[i] ?? 0) + 1
    }
  }

  /**
   * Sets the phases from t0 and the timers that end them. --duration auto puts t0 on a tenth of a second: the
   * summary counts completions per tenth (analyzer/samples/latency-histogram.js), so the seconds judged here are
   * those it judges.
   * @param {{ onEnd: () => void, onAbort: () => void, signal?: AbortSignal, t0?: number }} h
   */
  start ({ onEnd, onAbort, signal, t0 = this.#defaultT0() }) {
    const o = this.#o
    this.t0 = t0
    this.steadyStart = t0 + o.warmup * 1000
    this.steadyEnd = this.steadyStart + o.duration * 1000
    if (signal?.aborted) { queueMicrotask(onAbort); return }
    const abort = () => onAbort()
    signal?.addEventListener('abort', abort, { once: true })
    this.#timers.push({ clear: () => signal?.removeEventListener('abort', abort) })
    const endTimer = setTimeout(onEnd, Math.max(0, this.steadyEnd - clock()))
    this.#timers.push({ clear: () => clearTimeout(endTimer) })
    if (o.onProgress) {
      const tick = setInterval(() => o.onProgress(this.progress()), 1000)
      this.#timers.push({ clear: () => clearInterval(tick) })
    }
    if (o.until) this.checkAt(Math.ceil(o.until.minSeconds), onEnd)
  }

  #defaultT0 () {
    const o = this.#o
    return o.startAt ?? (o.until ? Math.ceil(clock() / 100) * 100 : Math.ceil(clock()))
  }

  /**
   * --duration auto: at the end of the steady window's k-th second, end it there if its throughput is known well.
   * @param {number} k @param {() => void} onEnd
   */
  checkAt (k, onEnd) {
    const o = this.#o
    if (k >= o.duration) return
    const timer = setTimeout(() => {
      if (this.ended) return
      const tenths = Array.from({ length: 10 * k }, (_, i) => this.perTenth[i] ?? 0)
      if (autoDurationReached(tenths, o.until.relHalfWidth).reached) {
        this.reached = true
        this.steadyEnd = this.steadyStart + k * 1000
        onEnd()
      } else this.checkAt(k + 1, onEnd)
    }, Math.max(0, this.steadyStart + k * 1000 - clock()))
    this.#timers.push({ clear: () => clearTimeout(timer) })
  }

  /** @returns {Progress} */
  progress () {
    const o = this.#o
    const now = clock()
    return now < this.steadyStart
      ? { phase: 'warmup', elapsed: (now - this.t0) / 1000, total: o.warmup, requests: this.warmupRequests, errors: 0 }
      : { phase: 'steady', elapsed: Math.min(o.duration, (now - this.steadyStart) / 1000), total: o.duration, requests: this.requests, errors: this.errors }
  }

  /**
   * Stops the timers; an early end (abort) pulls steadyEnd in to `at` (now). The open model ends on its schedule,
   * whose last send is due before the window's end: it passes Infinity when nothing was cut short.
   */
  end (at = clock()) {
    this.ended = true
    for (const t of this.#timers) t.clear()
    this.steadyEnd = Math.min(this.steadyEnd, at)
    if (this.steadyStart > this.steadyEnd) this.steadyStart = this.steadyEnd
  }

  /** @param {{ interrupted: boolean, version: string }} r */
  result ({ interrupted, version }) {
    return {
      driver: 'autocannon',
      requests: this.requests,
      errors: this.errors,
      warmupRequests: this.warmupRequests,
      steadyStart: Math.floor(this.steadyStart),
      steadyEnd: Math.ceil(this.steadyEnd),
      interrupted,
      jtlPath: '',
      version,
      ...(this.#o.until ? { until: { reached: this.reached } } : {})
    }
  }
}
