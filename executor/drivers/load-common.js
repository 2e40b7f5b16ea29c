// What the in-process load models share: a ms clock, failed-sample rows, and the warm-up/steady window with its
// counters.

/** Milliseconds since the epoch with sub-ms resolution (monotonic within a process). */
export const clock = () => performance.timeOrigin + performance.now()

/**
 * @typedef {{ url: string, method: 'GET'|'POST', headers: Record<string,string>, body?: Buffer, concurrency?: number,
 *   rate?: number, duration: number, warmup: number, label: string, timeoutSec: number, maxSockets?: number,
 *   signal?: AbortSignal, onProgress?: (p: Progress) => void }} LoadOptions
 * @typedef {{ phase: 'warmup'|'steady', elapsed: number, total: number, requests: number, errors: number }} Progress
 * @typedef {{ driver: string, requests: number, errors: number, warmupRequests: number, steadyStart: number,
 *   steadyEnd: number, interrupted: boolean, jtlPath: string, version: string }} LoadResult
 */

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
 * @param {LoadOptions} o
 */
export function phaseClock (o) {
  const timers = []
  const st = {
    t0: 0,
    steadyStart: Infinity,
    steadyEnd: Infinity,
    ended: false,
    requests: 0,
    errors: 0,
    warmupRequests: 0,
    /** @param {boolean} ok */
    count (ok) {
      st.requests++
      if (!ok) st.errors++
    },
    /** @param {{ onEnd: () => void, onAbort: () => void, signal?: AbortSignal, t0?: number }} h */
    start ({ onEnd, onAbort, signal, t0 = Math.ceil(clock()) }) {
      st.t0 = t0
      st.steadyStart = t0 + o.warmup * 1000
      st.steadyEnd = st.steadyStart + o.duration * 1000
      if (signal?.aborted) { queueMicrotask(onAbort); return }
      const abort = () => onAbort()
      signal?.addEventListener('abort', abort, { once: true })
      timers.push({ clear: () => signal?.removeEventListener('abort', abort) })
      const endTimer = setTimeout(onEnd, Math.max(0, st.steadyEnd - clock()))
      timers.push({ clear: () => clearTimeout(endTimer) })
      if (o.onProgress) {
        const tick = setInterval(() => o.onProgress(st.progress()), 1000)
        timers.push({ clear: () => clearInterval(tick) })
      }
    },
    /** @returns {Progress} */
    progress () {
      const now = clock()
      return now < st.steadyStart
        ? { phase: 'warmup', elapsed: (now - st.t0) / 1000, total: o.warmup, requests: st.warmupRequests, errors: 0 }
        : { phase: 'steady', elapsed: Math.min(o.duration, (now - st.steadyStart) / 1000), total: o.duration, requests: st.requests, errors: st.errors }
    },
    /** Stops the timers; an early end (abort) pulls steadyEnd in to now. */
    end () {
      st.ended = true
      for (const t of timers) t.clear()
      st.steadyEnd = Math.min(st.steadyEnd, clock())
      if (st.steadyStart > st.steadyEnd) st.steadyStart = st.steadyEnd
    },
    /** @param {{ interrupted: boolean, version: string }} r */
    result ({ interrupted, version }) {
      return {
        driver: 'autocannon',
        requests: st.requests,
        errors: st.errors,
        warmupRequests: st.warmupRequests,
        steadyStart: Math.floor(st.steadyStart),
        steadyEnd: Math.ceil(st.steadyEnd),
        interrupted,
        jtlPath: '',
        version
      }
    }
  }
  return st
}
