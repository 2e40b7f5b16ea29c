// The power beside each test between groups: how often a stated relative difference (10% by default) in that quantity
// would be called different with the deployments measured, and how many deployments a side would give 80%. The spread
// of a deployment's mean (on logs) is pooled over every cell of the comparison; the power is at α divided by the
// family's size (Bonferroni, which Holm's correction never rejects less often than), so it is a floor.
import { contrastPower } from './inference.js'
import { human } from '../fit/fit-verdict.js'

/** The power asked of a design, and the most deployments a side considered. */
export const POWER = Object.freeze({ target: 0.8, maxUnits: 50 })

/**
 * @typedef {{ effect: number, value: number|null, units: [number, number], unitsFor80: number|null, cv: number|null,
 *   df: number, text: string }} Power value: the power now (null where the spread is unknown); unitsFor80: deployments
 *   a side (in every cell the test reads) for 80%, null beyond POWER.maxUnits or where the spread is unknown; cv: the
 *   pooled spread of a deployment's mean (sd of logs) and df its degrees of freedom
 */

/**
 * The spread of a deployment's mean: the sample variances of the log units, pooled over every cell with two or more.
 * @param {{ units: number[] }[]} cells
 * @returns {{ cv: number, df: number } | null}
 */
export function pooledSpread (cells) {
  let ss = 0
  let df = 0
  for (const c of cells) {
    if (c.units.length < 2) continue
    const ls = c.units.map(Math.log)
    const m = ls.reduce((a, b) => a + b, 0) / ls.length
    ss += ls.reduce((a, x) => a + (x - m) ** 2, 0)
    df += ls.length - 1
  }
  return df > 0 && ss > 0 ? { cv: Math.sqrt(ss / df), df } : null
}

/**
 * The standard error of a test's log ratio and its degrees of freedom, at a spread cv and `k` deployments in every
 * cell (or the cells' own counts when k is omitted).
 * @param {{ quantity: string, cells: { units: number[] }[][] }} t cells: [a, b] per N it reads (speedup: [N, N0];
 *   overall: every common N)
 * @param {number} cv
 * @param {number} [k]
 */
function seOf (t, cv, k) {
  const count = c => k ?? c.units.length
  const varOf = pair => pair.reduce((s, c) => s + cv ** 2 / count(c), 0)
  // Welch's df at equal spreads is the sum of the cells' (k - 1); it varies from sample to sample and is smaller on
  // average, which costs power where the critical value is steep (few units, α over a family): one less per spread
  // estimated beyond the first keeps the power printed a floor (calibration/scenarios/compare.js)
  const dfOf = pairs => Math.max(1, pairs.flat().reduce((s, c) => s + count(c) - 1, 0) - (pairs.flat().length - 1))
  if (t.quantity === 'overall') {
    const v = t.cells.reduce((s, pair) => s + varOf(pair), 0) / t.cells.length ** 2
    return { se: Math.sqrt(v), df: t.cells.length - 1 }
  }
  return { se: Math.sqrt(t.cells.reduce((s, pair) => s + varOf(pair), 0)), df: dfOf(t.cells) }
}

/**
 * The power of one test for the stated effect now, at α / family; null where the spread is unknown.
 * @param {{ units: [number, number], quantity: string, cells: { units: number[] }[][] }} t
 * @param {{ spread: { cv: number, df: number } | null, effect: number, alpha: number, family: number,
 *   memo?: Map<string, number> }} o memo: powers already computed at this spread (one comparison's tests share most)
 */
export function powerNow (t, { spread, effect, alpha, family, memo = new Map() }) {
  if (!spread) return null
  return Math.min(...t.units) >= 2 ? powerAt(t, { spread, effect, alpha, m: family, memo }) : 0
}

/** The power at k deployments in every cell (the cells' own counts when k is undefined), at α / m, memoised. */
function powerAt (t, { spread, effect, alpha, m, memo }, k = undefined) {
  const { se, df } = seOf(t, spread.cv, k)
  const key = `${se} ${df} ${m}`
  if (!memo.has(key)) memo.set(key, contrastPower({ effect, se, df, alpha: alpha / m }))
  return memo.get(key)
}

/**
 * The power of one test for the stated effect and the deployments a side that would give 80% (at α over the family
 * as planned, every test of it made), in words.
 * @param {{ quantity: string, label: string, units: [number, number], cells: { units: number[] }[][] }} t
 * @param {{ spread: { cv: number, df: number } | null, effect: number, alpha: number, family: number,
 *   planned: number, memo?: Map<string, number> }} o family: the tests made; planned: the tests of the family
 * @returns {Power}
 */
export function powerOf (t, { spread, effect, alpha, family, planned, memo = new Map() }) {
  const what = `a ${human(effect * 100)}% difference in ${t.label.replace(/ \(.*\)$/, '')}`
  const each = (k) => `${k} deployment${k === 1 ? '' : 's'} each`
  if (!spread) {
    return {
      effect,
      value: null,
      units: t.units,
      unitsFor80: null,
      cv: null,
      df: 0,
      text: `power for ${what} unknown: no cell has 2 deployments to show how deployments vary`
    }
  }
  const value = powerNow(t, { spread, effect, alpha, family, memo })
  // the power grows with k: the smallest k that reaches the target, by bisection
  const o = { spread, effect, alpha, m: Math.max(family, planned), memo }
  let unitsFor80 = null
  if (powerAt(t, o, POWER.maxUnits) >= POWER.target) {
    let lo = 1
    let hi = Number(POWER.maxUnits)
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1
      if (powerAt(t, o, mid) >= POWER.target) hi = mid
      else lo = mid
    }
    unitsFor80 = hi
  }
  const need = unitsFor80 === null ? `more than ${POWER.maxUnits} each would be needed for 80%` : `${each(unitsFor80)} would give 80%`
  const text = Math.min(...t.units) >= 2
    ? `${what} is detected at least ${Math.round(value * 100)}% of the time with ` +
      `${t.units[0] === t.units[1] ? each(t.units[0]) : `${t.units.join(' and ')} deployments`}` +
      (value >= POWER.target ? '' : `; ${need}`)
    : `too few units to detect ${what} (${t.units.join(' and ')} deployment${Math.max(...t.units) === 1 ? '' : 's'}); ${need}`
  return { effect, value, units: t.units, unitsFor80, cv: spread.cv, df: spread.df, text }
}
