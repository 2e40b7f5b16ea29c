// CFS throttling between readings: how many enforcement periods passed, in how many the server's groups were held back
// by their CPU quota, and for how long; summed over groups, and over a run's steady window.
import { readThrottling } from './cgroup.js'

/** @typedef {{ periods: number, throttled: number, throttledMs: number }} Throttle */

/** @type {Throttle} */
const ZERO = Object.freeze({ periods: 0, throttled: 0, throttledMs: 0 })
const round3 = (x) => Math.round(x * 1000) / 1000

/**
 * Reads the throttling of some groups every time it is asked, and answers what grew since the last time, summed over
 * the groups (the first reading of a group only sets its baseline). A group that cannot be read (gone, no cpu.stat)
 * counts nothing in that reading.
 * @param {() => string[]} dirs the groups' folders (quota groups, containers' cpu cgroups)
 * @returns {{ read: () => Throttle | null }} null when there are no groups
 */
export function createThrottleMeter (dirs) {
  const prev = new Map()
  return {
    read () {
      const list = dirs()
      if (!list.length) return null
      /** @type {Throttle} */
      let sum = { ...ZERO }
      for (const dir of list) {
        let cur
        try { cur = readThrottling(dir) } catch { continue }
        const before = prev.get(dir)
        prev.set(dir, cur)
        if (before) {
          sum = addThrottle(sum, {
            periods: cur.periods - before.periods,
            throttled: cur.throttled - before.throttled,
            throttledMs: cur.throttledMs - before.throttledMs
          })
        }
      }
      return { periods: sum.periods, throttled: sum.throttled, throttledMs: round3(sum.throttledMs) }
    }
  }
}

/**
 * @param {Throttle} a
 * @param {Throttle} b
 * @returns {Throttle}
 */
export function addThrottle (a, b) {
  return {
    periods: a.periods + Math.max(0, b.periods),
    throttled: a.throttled + Math.max(0, b.throttled),
    throttledMs: a.throttledMs + Math.max(0, b.throttledMs)
  }
}

/**
 * The throttling of a window of samples (each with its interval's `throttle`, or none): the share of periods in which a
 * group was throttled, and the time throttled per second of the window; null when no sample measured any.
 * @param {{ throttle?: Throttle | null }[]} samples
 * @param {number} seconds the window's length
 */
export function summarizeThrottle (samples, seconds) {
  const measured = samples.map(s => s.throttle).filter(Boolean)
  if (!measured.length) return null
  const sum = measured.reduce(addThrottle, { ...ZERO })
  return {
    periods: sum.periods,
    throttledPeriods: sum.throttled,
    share: sum.periods ? round3(sum.throttled / sum.periods) : 0,
    throttledMs: round3(sum.throttledMs),
    msPerSecond: seconds > 0 ? round3(sum.throttledMs / seconds) : 0
  }
}
