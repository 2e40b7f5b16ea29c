// Two-sample inference on independent units (a unit is a deployment's mean, never a repeat on one deployment): Welch's
// test, equivalence by two one-sided tests (TOST) on the ratio of means, Holm's correction across a family of tests,
// and the power of the test for a stated effect. Throughput's noise is multiplicative, so ratios are tested on logs.
import { lnGamma, tCdf, tQuantile } from './stats-math.js'

/** The significance level of every test nodescale prints. */
export const ALPHA = 0.05

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
const variance = (xs) => {
  const m = mean(xs)
  return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)
}

/**
 * Welch's t statistic's parts for mean(a) - mean(b): the difference, its standard error and the Welch–Satterthwaite
 * degrees of freedom. Null when a side has fewer than two values or neither side varies (no test can be made).
 * @param {number[]} a
 * @param {number[]} b
 * @returns {{ diff: number, se: number, df: number } | null}
 */
export function welchParts (a, b) {
  if (a.length < 2 || b.length < 2) return null
  const va = variance(a) / a.length
  const vb = variance(b) / b.length
  if (!(va + vb > 0)) return null
  const df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1))
  return { diff: mean(a) - mean(b), se: Math.sqrt(va + vb), df }
}

/**
 * Welch's two-sided test of mean(a) = mean(b): p is null (not 0) when it cannot be made — fewer than two units a side,
 * or no spread on either side (tied values carry no information about the noise).
 * @param {number[]} a
 * @param {number[]} b
 * @returns {{ diff: number, t: number | null, df: number | null, p: number | null, ci95: [number, number] | null }}
 */
export function welch (a, b) {
  const diff = a.length && b.length ? mean(a) - mean(b) : NaN
  const w = welchParts(a, b)
  if (!w) return { diff, t: null, df: null, p: null, ci95: null }
  const t = w.diff / w.se
  const half = tQuantile(0.975, w.df) * w.se
  return { diff, t, df: w.df, p: 2 * (1 - tCdf(Math.abs(t), w.df)), ci95: [w.diff - half, w.diff + half] }
}

const logs = (xs) => xs.filter(x => x > 0).map(Math.log)

/**
 * The ratio of means a/b (on logs: the ratio of geometric means) with Welch's test and a 95% interval, and whether the
 * two are equivalent within ±margin (TOST at alpha: both one-sided tests reject; the 90% interval inside the margin).
 * @param {number[]} a positive values, one per unit
 * @param {number[]} b
 * @param {{ margin?: number, alpha?: number }} [opts] margin: relative (0.05: within ±5%)
 * @returns {{ ratio: number, ci95: [number, number] | null, p: number | null, pEquivalence: number | null,
 *   outcome: 'different' | 'equivalent' | 'inconclusive' | 'untestable' }}
 */
export function compareRatio (a, b, { margin = 0.05, alpha = ALPHA } = {}) {
  const la = logs(a)
  const lb = logs(b)
  const ratio = la.length && lb.length ? Math.exp(mean(la) - mean(lb)) : NaN
  const w = welchParts(la, lb)
  if (!w) return { ratio, ci95: null, p: null, pEquivalence: null, outcome: 'untestable' }
  const t = w.diff / w.se
  const p = 2 * (1 - tCdf(Math.abs(t), w.df))
  const half = tQuantile(0.975, w.df) * w.se
  const bound = Math.log(1 + margin)
  const pLow = 1 - tCdf((w.diff + bound) / w.se, w.df)
  const pHigh = tCdf((w.diff - bound) / w.se, w.df)
  const pEquivalence = Math.max(pLow, pHigh)
  const outcome = p < alpha ? 'different' : pEquivalence < alpha ? 'equivalent' : 'inconclusive'
  return { ratio, ci95: [Math.exp(w.diff - half), Math.exp(w.diff + half)], p, pEquivalence, outcome }
}

/**
 * Holm's step-down adjustment: each p-value of a family adjusted so that rejecting where adjusted p < alpha keeps the
 * family-wise error rate at alpha. Nulls (untestable) stay null and do not count in the family.
 * @param {(number | null)[]} ps
 * @returns {(number | null)[]}
 */
export function holm (ps) {
  const order = ps.map((p, i) => ({ p, i })).filter(x => x.p !== null && Number.isFinite(x.p)).sort((x, y) => x.p - y.p)
  const m = order.length
  const out = ps.map(() => /** @type {number | null} */ (null))
  let running = 0
  order.forEach(({ p, i }, k) => {
    running = Math.max(running, Math.min(1, (m - k) * p))
    out[i] = running
  })
  return out
}

/**
 * The standard normal CDF Φ(x), from the complementary error function's Chebyshev fit (fractional error < 1.2e-7).
 * @param {number} x
 */
export function normalCdf (x) {
  const z = Math.abs(x) / Math.SQRT2
  const t = 1 / (1 + 0.5 * z)
  const poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
  const erfc = t * Math.exp(poly)
  return x >= 0 ? 1 - erfc / 2 : erfc / 2
}

/**
 * The standard normal p-quantile: normalCdf inverted by bisection (|error| < 1e-9 in x; normalCdf's own error is
 * 1.2e-7 relative).
 * @param {number} p in (0, 1)
 */
export function normalQuantile (p) {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile(${p}): p must be in (0, 1)`)
  let lo = -40
  let hi = 40
  while (hi - lo > 1e-9) {
    const mid = (lo + hi) / 2
    if (normalCdf(mid) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/**
 * P(|T| > crit) for a noncentral t with df degrees of freedom and noncentrality ncp: T = (Z + ncp) / sqrt(V / df),
 * integrated over V's chi-square density (Simpson's rule, 4,000 steps; |error| < 1e-5 for df >= 2).
 */
function noncentralTwoSided (crit, df, ncp) {
  const top = df + 30 * Math.sqrt(2 * df) + 30
  const steps = 4000
  const h = top / steps
  const logNorm = -(df / 2) * Math.LN2 - lnGamma(df / 2)
  const f = (v) => {
    if (v <= 0) return 0
    const density = Math.exp(logNorm + (df / 2 - 1) * Math.log(v) - v / 2)
    const s = Math.sqrt(v / df)
    return density * (1 - normalCdf(crit * s - ncp) + normalCdf(-crit * s - ncp))
  }
  let sum = f(0) + f(top)
  for (let i = 1; i < steps; i++) sum += (i % 2 ? 4 : 2) * f(i * h)
  // chi-square with 2 degrees of freedom has its density's mass at 0: Simpson over it is exact enough at this step
  return Math.min(1, Math.max(0, sum * h / 3))
}

/**
 * The power of the two-sided test of a ratio (compareRatio) to detect a true relative difference `effect` with `units`
 * independent units a side whose values vary by `cv` (the standard deviation of their logs), at alpha: the probability
 * that a difference that large is called different (the pooled two-sample t test's exact power, as R's power.t.test;
 * Welch's test, which compareRatio makes, has a little less with unequal spreads).
 * @param {{ effect: number, units: number, cv: number, alpha?: number }} o
 */
export function ratioPower ({ effect, units, cv, alpha = ALPHA }) {
  if (units < 2 || !(cv > 0)) return 0
  const df = 2 * units - 2
  const ncp = Math.abs(Math.log(1 + effect)) / (cv * Math.sqrt(2 / units))
  return noncentralTwoSided(tQuantile(1 - alpha / 2, df), df, ncp)
}

/**
 * The fewest units a side that give `target` power for the effect (up to `max`); null when even `max` does not.
 * @param {{ effect: number, cv: number, target?: number, max?: number, alpha?: number }} o
 */
export function unitsForPower ({ effect, cv, target = 0.8, max = 100, alpha = ALPHA }) {
  for (let units = 2; units <= max; units++) if (ratioPower({ effect, units, cv, alpha }) >= target) return units
  return null
}

/**
 * One-sided Welch tests of mean(a) - mean(b) against `shift` (0: the plain difference): pAbove is the p-value of
 * "a's mean exceeds b's by more than shift" (the null: by shift or less), pBelow of "by less than shift". The p's are
 * null when the test cannot be made (welchParts: fewer than two units a side, or no spread on either side).
 * @param {number[]} a
 * @param {number[]} b
 * @param {number} [shift]
 * @returns {{ diff: number, pAbove: number | null, pBelow: number | null, ci90: [number, number] | null,
 *   ci95: [number, number] | null }} ci90: between the two one-sided 95% bounds (TOST's interval)
 */
export function welchOneSided (a, b, shift = 0) {
  const diff = a.length && b.length ? mean(a) - mean(b) : NaN
  const w = welchParts(a, b)
  if (!w) return { diff, pAbove: null, pBelow: null, ci90: null, ci95: null }
  const t = (w.diff - shift) / w.se
  const half = tQuantile(0.975, w.df) * w.se
  const half90 = tQuantile(0.95, w.df) * w.se
  return { diff, pAbove: 1 - tCdf(t, w.df), pBelow: tCdf(t, w.df), ci90: [w.diff - half90, w.diff + half90], ci95: [w.diff - half, w.diff + half] }
}

/**
 * One-sided tests of the ratio of means a/b (on logs, as compareRatio) against `bound`: pAbove the p-value of "the
 * ratio is above bound", pBelow of "below bound" (bound 1: a direction; 1 + margin: a rise smaller than the margin).
 * @param {number[]} a positive values, one per unit
 * @param {number[]} b
 * @param {number} [bound]
 * @returns {{ ratio: number, pAbove: number | null, pBelow: number | null, ci90: [number, number] | null,
 *   ci95: [number, number] | null }}
 */
export function ratioOneSided (a, b, bound = 1) {
  const r = welchOneSided(logs(a), logs(b), Math.log(bound))
  /** @param {[number, number] | null} ci @returns {[number, number] | null} */
  const exp = (ci) => ci && [Math.exp(ci[0]), Math.exp(ci[1])]
  return { ratio: Math.exp(r.diff), pAbove: r.pAbove, pBelow: r.pBelow, ci90: exp(r.ci90), ci95: exp(r.ci95) }
}

/**
 * One-sample t tests of mean(xs) against `mu`: pAbove the p-value of "the mean is above mu", pBelow of "below mu";
 * null when fewer than two values or none differs from the others.
 * @param {number[]} xs
 * @param {number} mu
 * @returns {{ mean: number, pAbove: number | null, pBelow: number | null, ci95: [number, number] | null }}
 */
export function oneSampleT (xs, mu) {
  const m = xs.length ? mean(xs) : NaN
  const se = xs.length > 1 ? Math.sqrt(variance(xs) / xs.length) : 0
  if (!(se > 0)) return { mean: m, pAbove: null, pBelow: null, ci95: null }
  const df = xs.length - 1
  const t = (m - mu) / se
  const half = tQuantile(0.975, df) * se
  return { mean: m, pAbove: 1 - tCdf(t, df), pBelow: tCdf(t, df), ci95: [m - half, m + half] }
}

/**
 * A contrast of log means, Σ c_i · mean(log x_i), as a ratio: the speedup of one group over another (x(N)/x(1) of a
 * against that of b: coefs [1, -1, -1, 1]), or the mean of per-N ratios (one sample, coef [1]). Its standard error
 * from each sample's own spread and the Welch–Satterthwaite degrees of freedom; the two-sided test of ratio 1, a 95%
 * interval, and TOST's p for equivalence within ±margin. Untestable (nulls) when a sample with a nonzero coefficient
 * has fewer than two values, or none varies.
 * @param {number[][]} samples positive values, one per unit
 * @param {number[]} coefs one per sample
 * @param {{ margin?: number, alpha?: number }} [opts]
 * @returns {{ ratio: number, ci95: [number, number] | null, p: number | null, pEquivalence: number | null,
 *   se: number | null, df: number | null }}
 */
export function logContrast (samples, coefs, { margin = 0.05, alpha = ALPHA } = {}) {
  const parts = samples.map((s, i) => ({ ls: logs(s), c: coefs[i] })).filter(x => x.c !== 0)
  const estimate = parts.every(x => x.ls.length) ? parts.reduce((a, x) => a + x.c * mean(x.ls), 0) : NaN
  const none = { ratio: Math.exp(estimate), ci95: null, p: null, pEquivalence: null, se: null, df: null }
  if (parts.some(x => x.ls.length < 2)) return none
  const vs = parts.map(x => x.c ** 2 * variance(x.ls) / x.ls.length)
  const v = vs.reduce((a, b) => a + b, 0)
  if (!(v > 0)) return none
  const df = v ** 2 / vs.reduce((a, vi, i) => a + (vi > 0 ? vi ** 2 / (parts[i].ls.length - 1) : 0), 0)
  const se = Math.sqrt(v)
  const p = 2 * (1 - tCdf(Math.abs(estimate / se), df))
  const half = tQuantile(1 - alpha / 2, df) * se
  const bound = Math.log(1 + margin)
  const pEquivalence = Math.max(1 - tCdf((estimate + bound) / se, df), tCdf((estimate - bound) / se, df))
  return { ratio: Math.exp(estimate), ci95: [Math.exp(estimate - half), Math.exp(estimate + half)], p, pEquivalence, se, df }
}

/**
 * The power of a two-sided t test at alpha to detect a true relative difference `effect` in a ratio whose log has
 * standard error `se` with `df` degrees of freedom (the noncentral t, as ratioPower): ratioPower's case is se =
 * cv · sqrt(2 / units), df = 2 · units - 2.
 * @param {{ effect: number, se: number, df: number, alpha?: number }} o
 */
export function contrastPower ({ effect, se, df, alpha = ALPHA }) {
  if (!(df >= 1) || !(se > 0)) return 0
  return noncentralTwoSided(tQuantile(1 - alpha / 2, df), df, Math.abs(Math.log(1 + effect)) / se)
}
