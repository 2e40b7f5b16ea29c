// The rules a replication compares by: a measured value with its interval, and a published direction checked for
// direction and significance (Welch's t-test over the runs), each ending in one of three verdicts.
import { mean, sampleStandardDeviation } from 'simple-statistics'
import { tCdf, tQuantile } from '../stats-math.js'
import { ALPHA } from '../group-tests.js'

/**
 * A finished run a replication left out as not valid: what it ran, and the flags that made it invalid.
 * @typedef {{ strategy: string, benchmark?: string, instances?: number, level: string | null, flags: string[] }}
 *   LeftOut
 */

/** What a replication row can say. */
export const VERDICTS = Object.freeze(['reproduced', 'not-reproduced', 'not-comparable'])

const round1 = (x) => Math.round(x * 10) / 10

/**
 * The mean of some runs' values and its 95% confidence interval (Student's t; no interval from one run).
 * @param {number[]} values
 * @param {{ digits?: number }} [opts] decimals kept (1: percent and req/s; 3: cores)
 * @returns {{ mean: number, lo: number | null, hi: number | null, n: number } | null}
 */
export function meanCi (values, { digits = 1 } = {}) {
  const xs = values.filter(Number.isFinite)
  if (!xs.length) return null
  const r = (x) => Math.round(x * 10 ** digits) / 10 ** digits
  const m = mean(xs)
  if (xs.length < 2) return { mean: r(m), lo: null, hi: null, n: 1 }
  const half = tQuantile(0.975, xs.length - 1) * sampleStandardDeviation(xs) / Math.sqrt(xs.length)
  return { mean: r(m), lo: r(m - half), hi: r(m + half), n: xs.length }
}

/**
 * Welch's t-test of a's mean against b's, two-sided: the difference, t and p (null when a side has fewer than two
 * values, or neither varies).
 * @param {number[]} a
 * @param {number[]} b
 * @returns {{ diff: number, p: number | null }}
 */
export function welch (a, b) {
  const diff = mean(a) - mean(b)
  if (a.length < 2 || b.length < 2) return { diff, p: null }
  const va = sampleStandardDeviation(a) ** 2 / a.length
  const vb = sampleStandardDeviation(b) ** 2 / b.length
  if (va + vb === 0) return { diff, p: diff === 0 ? 1 : 0 }
  const t = diff / Math.sqrt(va + vb)
  const df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1))
  return { diff, p: 2 * (1 - tCdf(Math.abs(t), df)) }
}

/**
 * A published direction (a's value above b's) checked on the runs: reproduced when ours goes the same way and Welch's
 * test says so at α = 0.05; not-reproduced when it goes the other way or the test cannot tell (with why);
 * not-comparable with fewer than two runs a side.
 * @param {{ a: number[], b: number[], aName: string, bName: string, what: string }} sides
 * @returns {{ verdict: string, why: string, p: number | null, diff: number | null }}
 */
export function directionVerdict ({ a, b, aName, bName, what }) {
  const xa = a.filter(Number.isFinite)
  const xb = b.filter(Number.isFinite)
  if (xa.length < 2 || xb.length < 2) {
    return { verdict: 'not-comparable', why: `${what}: ${xa.length} and ${xb.length} runs; a test needs two or more a side (more repeats)`, p: null, diff: xa.length && xb.length ? round1(mean(xa) - mean(xb)) : null }
  }
  const { diff, p } = welch(xa, xb)
  const shown = `${aName} ${round1(mean(xa))} vs ${bName} ${round1(mean(xb))}, p = ${p === null ? '-' : p.toPrecision(2)}`
  if (diff > 0 && p !== null && p < ALPHA) return { verdict: 'reproduced', why: `${what}: ${shown}`, p, diff: round1(diff) }
  if (diff <= 0) return { verdict: 'not-reproduced', why: `${what}: the other way here (${shown})`, p, diff: round1(diff) }
  return { verdict: 'not-reproduced', why: `${what}: the same way, but the runs cannot tell it from chance (${shown}); more repeats`, p, diff: round1(diff) }
}

/**
 * Finished runs left out as not valid, counted by flag and by strategy and level: "host-saturated 6 (cm
 * exhausted*cores 3, pm2 exhausted*cores 3), unstable 2 (up relaxed 2)".
 * @param {LeftOut[]} runs
 */
export function leftOutCounts (runs) {
  const byFlag = new Map()
  for (const r of runs) {
    for (const flag of r.flags.length ? r.flags : ['no flag named']) {
      const where = `${r.strategy}${r.level ? ` ${r.level}` : ''}`
      const counts = byFlag.get(flag) ?? new Map()
      counts.set(where, (counts.get(where) ?? 0) + 1)
      byFlag.set(flag, counts)
    }
  }
  return [...byFlag].map(([flag, counts]) => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    return `${flag} ${total} (${[...counts].map(([where, n]) => `${where} ${n}`).join(', ')})`
  }).join(', ')
}

/**
 * Why a row has no valid runs though some finished: "3 finished and left out, host-saturated 3 (cm exhausted*cores 3)
 * (--include-invalid takes them)".
 * @param {LeftOut[]} runs
 */
export const leftOutWhy = (runs) => `${runs.length} finished and left out, ${leftOutCounts(runs)} (--include-invalid takes them)`
