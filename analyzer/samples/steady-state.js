// Whether a run's throughput was steady, and how well its mean is known, from its completions per tenth of a second:
// the batch size chosen from the series' own autocorrelation, the variance of the mean by overlapping batch means, the
// warm-up left in the window found by MSER-5, and a drift measured by a robust slope (Theil–Sen) and tested against the
// slope's autocorrelation-robust standard error (the batch means' long-run variance). docs/statistics/validity.md says
// what each figure means and how it was calibrated.
import { lnGamma, tCdf, tQuantile } from '../stats/stats-math.js'
import { normalCdf } from '../stats/inference.js'

/** The rule's constants, one place. */
export const STEADY_STATE = Object.freeze({
  /** tenths of a second in a second: the series is completions per tenth */
  perSecond: 10,
  /** the first second of the steady window is left out: requests sent in the warm-up still finish in it */
  skip: 10,
  /** fewer batches than this: too short to judge */
  minBatches: 10,
  /** fewer whole seconds than this after the warm-up: too short to judge */
  minSeconds: 3,
  /** the per-second lag-1 autocorrelation the interval allows for where the run is too short to rule it out */
  assumedRho: 0.5,
  /** MSER-5: the warm-up is searched in batches of 5 tenths, in the first half of the window at most */
  mserBatch: 5,
  /** the batch size makes adjacent batch means correlate by about this much at most */
  batchCorrelation: 0.05,
  /** the autocorrelations read up to this lag (tenths) */
  maxLag: 100,
  /** Theil–Sen runs on the means of at most this many batches (it is O(k²)) */
  maxSlopePoints: 50,
  /** two-sided level of the interval (95%) */
  alpha: 0.05,
  /** two-sided level of the warm-up test */
  testAlpha: 0.01,
  /** two-sided level of the drift test (a drift flags a run only where it is over 5% too: executor/validity.js) */
  driftAlpha: 0.05
})

/** @param {ArrayLike<number>} xs */
const meanOf = (xs) => {
  let s = 0
  for (let i = 0; i < xs.length; i++) s += xs[i]
  return xs.length ? s / xs.length : NaN
}

const tCache = new Map()
/** Student's t quantile, cached (the calibration calls it for the same few df many times). */
export function tq (p, df) {
  const key = `${p}:${Math.round(df * 1000)}`
  let v = tCache.get(key)
  if (v === undefined) { v = tQuantile(p, df); tCache.set(key, v) }
  return v
}

/**
 * Sample autocorrelations r_0..r_maxLag (r_j = c_j / c_0, c_j = Σ (x_t − x̄)(x_{t+j} − x̄) / n); a constant series has
 * r_j = 0 for j ≥ 1.
 * @param {ArrayLike<number>} xs
 * @param {number} maxLag
 */
export function autocorrelations (xs, maxLag) {
  const n = xs.length
  const m = meanOf(xs)
  const d = Float64Array.from(xs, x => x - m)
  let c0 = 0
  for (let i = 0; i < n; i++) c0 += d[i] * d[i]
  const r = [1]
  for (let j = 1; j <= Math.min(maxLag, n - 1); j++) {
    let c = 0
    for (let i = 0; i + j < n; i++) c += d[i] * d[i + j]
    r.push(c0 > 0 ? c / c0 : 0)
  }
  return r
}

/**
 * The batch size (observations per batch) whose adjacent batch means correlate by `STEADY_STATE.batchCorrelation` at
 * most, from the series' autocorrelations: summed to Geyer's initial positive sequence (pairs r_2m + r_2m+1 while
 * positive), τ = 1 + 2 Σ r_j (the integrated autocorrelation time) and A = Σ j r_j; for batches much longer than the
 * correlation, adjacent batch means correlate by about A / (b τ), so b = ⌈A / (c τ)⌉ (at least 1).
 * @param {ArrayLike<number>} xs
 * @returns {{ size: number, tau: number, lags: number }} lags: how many autocorrelations were summed
 */
export function batchSizeFor (xs) {
  const r = autocorrelations(xs, Math.min(STEADY_STATE.maxLag, Math.floor(xs.length / 2)))
  let sum = 0
  let moment = 0
  let lags = 0
  for (let m = 0; 2 * m + 1 < r.length; m++) {
    const pair = r[2 * m] + r[2 * m + 1]
    if (pair <= 0) break
    // r_0 is not a lag: it counts once in τ's 1 + 2 Σ and not in A
    if (m > 0) { sum += r[2 * m]; moment += 2 * m * r[2 * m] }
    sum += r[2 * m + 1]
    moment += (2 * m + 1) * r[2 * m + 1]
    lags = 2 * m + 1
  }
  const tau = 1 + 2 * sum
  const size = moment > 0 && tau > 0 ? Math.max(1, Math.ceil(moment / (STEADY_STATE.batchCorrelation * tau))) : 1
  return { size, tau, lags }
}

/**
 * Overlapping batch means (Meketon & Schmeiser 1984): the variance of the series' mean from the means of all n − b + 1
 * windows of b observations, σ² = n b / ((n − b + 1)(n − b)) Σ (Ȳ_j − Ȳ)², Var(Ȳ) = σ² / n, with about
 * 1.5 (n / b − 1) degrees of freedom (at most n − 1).
 * @param {ArrayLike<number>} xs
 * @param {number} b batch size, 1 ≤ b < n
 */
export function overlappingBatchMeans (xs, b) {
  const n = xs.length
  const mean = meanOf(xs)
  let window = 0
  for (let i = 0; i < b; i++) window += xs[i]
  let ss = 0
  for (let j = 0; j + b <= n; j++) {
    if (j > 0) window += xs[j + b - 1] - xs[j - 1]
    ss += (window / b - mean) ** 2
  }
  const longRun = n * b / ((n - b + 1) * (n - b)) * ss
  return { mean, longRun, variance: longRun / n, df: Math.min(n - 1, 1.5 * (n / b - 1)) }
}

/**
 * MSER-5 (White 1997; Franklin & White 2008): the series in batches of 5, the truncation d (in batches, at most half
 * of them) that minimises the kept batches' Σ (Z_i − Z̄_d)² / (k − d)²; its cut in observations. `settled` is false
 * when the minimum falls on the last place allowed (the series had not settled within its first half).
 * @param {ArrayLike<number>} xs
 * @param {number} [m] batch size
 * @returns {{ cut: number, settled: boolean }}
 */
export function mser (xs, m = STEADY_STATE.mserBatch) {
  const k = Math.floor(xs.length / m)
  if (k < 2) return { cut: 0, settled: true }
  const z = Array.from({ length: k }, (_, i) => meanOf(Array.prototype.slice.call(xs, i * m, i * m + m)))
  // suffix sums of z and z²: the statistic for every d in O(k)
  let s = 0
  let s2 = 0
  const stat = new Array(k).fill(Infinity)
  for (let i = k - 1; i >= 0; i--) {
    s += z[i]
    s2 += z[i] * z[i]
    const left = k - i
    stat[i] = Math.max(0, s2 - s * s / left) / left ** 2
  }
  const last = Math.floor(k / 2)
  let best = 0
  for (let d = 1; d <= last; d++) if (stat[d] < stat[best] - 1e-12 * Math.abs(stat[best])) best = d
  return { cut: best * m, settled: best < last || last === 0 }
}

/**
 * Theil–Sen: the median of the slopes between every pair of points (Sen 1968), robust to a few wild values.
 * @param {ArrayLike<number>} ys at x = 0, 1, 2, ...
 */
export function theilSen (ys) {
  const slopes = []
  for (let i = 0; i < ys.length; i++) for (let j = i + 1; j < ys.length; j++) slopes.push((ys[j] - ys[i]) / (j - i))
  if (!slopes.length) return 0
  slopes.sort((a, b) => a - b)
  const h = slopes.length >> 1
  return slopes.length % 2 ? slopes[h] : (slopes[h - 1] + slopes[h]) / 2
}

/** The means of consecutive batches of b observations (a remainder at the end left out). */
export function batchMeans (xs, b) {
  return Array.from({ length: Math.floor(xs.length / b) }, (_, i) => meanOf(Array.prototype.slice.call(xs, i * b, i * b + b)))
}

/**
 * @typedef {{ judged: boolean, why: string | null, seconds: number, mean: number | null, halfWidth: number | null,
 *   relHalfWidth: number | null, se: number | null, df: number | null, batch: number | null, batches: number | null,
 *   needed: number | null,
 *   warmup: { cut: number, settled: boolean, bias: number | null, significant: boolean | null },
 *   drift: number | null, driftP: number | null, driftSignificant: boolean | null }} SteadyState
 *   seconds: the seconds judged (after the first, and after the warm-up cut); mean: completions per second over them;
 *   halfWidth: the 95% interval's half-width (req/s), relHalfWidth: relative to the mean; batch: tenths per batch;
 *   warmup.cut: seconds cut at the start by MSER-5, bias: what the cut part changes the whole window's mean by
 *   (relative), significant: whether that is more than the kept part's noise explains (1%); drift: the Theil–Sen
 *   change over the whole judged window, relative to the mean (signed), driftP: the slope test's two-sided p
 */

/** The series less its line (slope per observation, through the series' mean at its middle). */
function detrended (xs, slope) {
  const mid = (xs.length - 1) / 2
  return Array.from(xs, (x, i) => x - slope * (i - mid))
}

/** Theil–Sen's slope per observation of a long series, from the means of at most maxSlopePoints batches. */
function slopeOf (xs) {
  const b = Math.max(1, Math.ceil(xs.length / STEADY_STATE.maxSlopePoints))
  return theilSen(batchMeans(xs, b)) / b
}

/**
 * The variance per tenth of the part of a series of tenths that is white (its counting noise, of whatever dispersion),
 * read from the tenths themselves: their lag-0 less their lag-1 autocovariance, γ0 − γ1 (a part that changes little
 * over a tenth, the coloured one, cancels out of it; the white part's γ1 is 0); where γ1 is negative (the tenths
 * alternate, as a short-range anticorrelated noise makes them), γ0 + 2 γ1, that noise's long-run variance if its memory
 * is one tenth. About 2n/3 degrees of freedom (white Gaussian tenths: Var(γ̂0 − γ̂1) ≈ 3 ω⁴ / n).
 * @param {ArrayLike<number>} xs
 */
export function whiteNoiseOf (xs) {
  const n = xs.length
  const m = meanOf(xs)
  let c0 = 0
  let c1 = 0
  for (let i = 0; i < n; i++) {
    c0 += (xs[i] - m) ** 2
    if (i + 1 < n) c1 += (xs[i] - m) * (xs[i + 1] - m)
  }
  c0 /= n
  c1 /= n
  return { variance: Math.max(0, c1 >= 0 ? c0 - c1 : c0 + 2 * c1), df: 2 * n / 3 }
}

/**
 * The long-run variance of a series of tenths (Var of its mean = longRun / n) and its degrees of freedom: overlapping
 * batch means with batches of n / minBatches tenths (the longest that make minBatches: the least biased variance,
 * Schmeiser 1982); `needed`, the batch size its autocorrelation asks for (batchSizeFor, on the series less its trend).
 * Where the run is too short to rule out a per-second autocorrelation up to STEADY_STATE.assumedRho, the variance is
 * at least the per-second sums' variance times the AR(1) factor for the largest ρ the data allow (their lag-1
 * autocorrelation + 2 / √seconds, at most assumedRho), with that variance's degrees of freedom (ar1Correction).
 * `white`: that allowance is made for the seconds' coloured part only: the per-second variance less ten tenths' white
 * noise (whiteNoiseOf), which cannot correlate from one second to the next; the coloured part's ρ is the seconds'
 * bound scaled up by the share of their variance it is (white adds to the variance, not to the covariance).
 * @param {number[]} xs
 * @param {{ white?: boolean }} [opts]
 */
export function longRunVariance (xs, { white = false } = {}) {
  const T = STEADY_STATE
  const n = xs.length
  const size = Math.floor(n / T.minBatches)
  const needed = batchSizeFor(detrended(xs, slopeOf(xs))).size
  const obm = overlappingBatchMeans(xs, Math.max(1, size))
  const seconds = batchMeans(xs, T.perSecond).map(x => x * T.perSecond)
  const k = seconds.length
  const m = meanOf(seconds)
  const s2 = seconds.reduce((a, x) => a + (x - m) ** 2, 0) / (k - 1)
  const r1 = k > 2 ? autocorrelations(seconds, 1)[1] : 0
  // r1 of a few values is biased low by about (1 + 4ρ) / k (Kendall 1954): corrected, then 2 standard errors above
  const corrected = Math.max(0, r1) + (1 + 4 * Math.max(0, r1)) / k
  const bound = corrected + 2 / Math.sqrt(k)
  const floor = white ? splitFloor(xs, s2, bound, k) : wholeFloor(s2, bound, k)
  // the batch means' own degrees of freedom assume batches long enough for the correlation, which a run too short to
  // rule out assumedRho cannot show: no more than the floor's
  return obm.longRun >= floor.longRun
    ? { longRun: obm.longRun, df: Math.min(obm.df, floor.df), size, needed, floor }
    : { longRun: floor.longRun, df: floor.df, size, needed, floor }
}

/** The floor on the whole per-second variance s2 (per tenth): s2 / 10 times the AR(1) factor for ρ ≤ bound. */
function wholeFloor (s2, bound, k) {
  const ar1 = ar1Correction(Math.min(STEADY_STATE.assumedRho, bound), k)
  return { longRun: s2 / STEADY_STATE.perSecond * ar1.factor, df: ar1.df }
}

/**
 * The floor with the AR(1) allowance on the coloured part only, per tenth: W + F · coloured, coloured = max(0, s2 / 10
 * − κ W), W the tenths' white noise (whiteNoiseOf), κ = (k − 2) / (k − 1) the share of it that the seconds' s2 keeps
 * (the series comes less its line), F the AR(1) factor for the coloured part's ρ_c = min(assumedRho, bound · s2 / (10
 * · coloured)) (assumedRho where nothing is left for it). Its `model` is what splitP needs: F, the degrees of freedom
 * ν of s2 (Bartlett's at ρ_c), W's own, and κ.
 */
function splitFloor (xs, s2, bound, k) {
  const T = STEADY_STATE
  const whole = s2 / T.perSecond
  const white = whiteNoiseOf(xs)
  // the seconds of a series less its line keep (k − 2) / (k − 1) of their white variance in s2
  const kept = (k - 2) / (k - 1)
  const coloured = Math.max(0, whole - kept * white.variance)
  const ar1 = ar1Correction(coloured > 0 ? Math.min(T.assumedRho, bound * whole / coloured) : T.assumedRho, k)
  return {
    longRun: white.variance + coloured * ar1.factor,
    df: ar1.df,
    model: { factor: ar1.factor, df: ar1.df, whiteDf: white.df, kept }
  }
}

/** The ratios u of coloured to white variance over which splitP takes its largest tail (u = 1000: all coloured). */
const SPLIT_U = [0, 0.03, 0.1, 0.2, 0.35, 0.5, 0.6, 0.75, 0.9, 1, 1.25, 1.5, 2, 3, 5, 10, 30, 1000]

/**
 * The two-sided p of a statistic t = |estimate| / √(its variance by splitFloor), the largest over how much of the
 * seconds' variance is coloured (SPLIT_U), for a coloured part as correlated as the floor allows. With a white
 * variance W (its own ν_W degrees of freedom) and a coloured one u · W, s2 / 10 = (κ + u) W X with X ~ χ²_ν / ν (κ:
 * the share of W that s2 keeps, splitFloor), the floor is W (1 + F ((κ + u) X − κ)₊) against a true W (1 + F u):
 * P(|T| > t) = E_X[P(|t_νW| > t √(floor / true))]
 * (the Student tail by its normal approximation z = t (1 − 1 / (4 ν_W)) / √(1 + t² / (2 ν_W)), Abramowitz & Stegun
 * 26.7.8), integrated over X. At u = 0 it is about the white test's; as u grows, Student's t with ν. Between, the
 * floor is more variable than s2 alone (F amplifies s2's noise where W is taken out of it), which this holds to α.
 * @param {number} t @param {{ factor: number, df: number, whiteDf: number, kept?: number }} model
 */
export function splitP (t, { factor: F, df: nu, whiteDf, kept = 1 }) {
  if (!(t > 0)) return 1
  if (t === Infinity) return 0
  const tail = (x) => {
    const z = x * (1 - 1 / (4 * whiteDf)) / Math.sqrt(1 + x * x / (2 * whiteDf))
    return 2 * (1 - normalCdf(z))
  }
  // X's χ²_ν / ν density on a grid in w = X^(ν/2) below ν = 2 (the density is infinite at 0 there), in X above
  const top = Math.max(8, 1 + 12 * Math.sqrt(2 / nu))
  const steps = 240
  const small = nu < 2
  const end = small ? top ** (nu / 2) : top
  const logNorm = (nu / 2) * Math.log(nu / 2) - lnGamma(nu / 2)
  const xs = []
  const ws = []
  for (let i = 0; i < steps; i++) {
    const g = (i + 0.5) * end / steps
    const x = small ? g ** (2 / nu) : g
    // density in X, times dX/dw = (2 / ν) X^(1 − ν/2) where the grid is in w
    const logDensity = logNorm + (nu / 2 - 1) * Math.log(x) - nu * x / 2
    xs.push(x)
    ws.push(Math.exp(small ? logDensity + Math.log(2 / nu) + (1 - nu / 2) * Math.log(x) : logDensity) * end / steps)
  }
  let worst = 0
  for (const u of SPLIT_U) {
    let p = 0
    for (let i = 0; i < steps; i++) p += ws[i] * tail(t * Math.sqrt((1 + F * Math.max(0, (kept + u) * xs[i] - kept)) / (1 + F * u)))
    worst = Math.max(worst, p)
  }
  return Math.min(1, worst)
}

/**
 * k values of an AR(1) series with lag-1 autocorrelation ρ: `factor`, k times the variance of their mean over the
 * expected sample variance of the values (Var(mean) = γ0 / k · (1 + 2 Σ (1 − j/k) ρ^j), and E[s²] = γ0 · (1 − 2 /
 * (k (k − 1)) Σ (k − j) ρ^j): a few correlated values understate their own variance); `df`, the degrees of freedom
 * of that sample variance, (k − 1)(1 − ρ²) / (1 + ρ²) (correlated values vary their s² more: Bartlett 1946).
 * @param {number} rho @param {number} k
 */
export function ar1Correction (rho, k) {
  let ofMean = 0
  let ofS2 = 0
  for (let j = 1; j < k; j++) {
    ofMean += (1 - j / k) * rho ** j
    ofS2 += (k - j) * rho ** j
  }
  return { factor: (1 + 2 * ofMean) / (1 - 2 * ofS2 / (k * (k - 1))), df: (k - 1) * (1 - rho * rho) / (1 + rho * rho) }
}

/** MSER-5's cut: does the part cut differ from the rest by more than the rest's noise explains (at testAlpha)? */
function warmupTest (xs, cut) {
  const rest = xs.slice(cut)
  if (rest.length < STEADY_STATE.minSeconds * STEADY_STATE.perSecond) return { significant: false }
  const v = longRunVariance(rest)
  const t = Math.abs(meanOf(xs.slice(0, cut)) - meanOf(rest)) / Math.sqrt(v.longRun * (1 / cut + 1 / rest.length))
  return { significant: t > tq(1 - STEADY_STATE.testAlpha / 2, v.df) }
}

/**
 * The drift over the whole judged window (a warm-up not over is a drift too): Theil–Sen's slope against the slope's
 * standard error with the residuals' long-run variance (longRunVariance with `white`, so a per-second autocorrelation
 * up to assumedRho is allowed for in the seconds' coloured part where the run cannot measure it, and not in their
 * white counting noise), Var = σ²_lr · 12 / (N (N² − 1)) (least squares' on an even grid) over Theil–Sen's efficiency
 * 0.955 at normal errors (Sen 1968); drift is the slope over the window relative to its mean, its p splitP's (the
 * largest over the coloured share), significant at STEADY_STATE.driftAlpha (two-sided).
 * @param {number[]} xs
 */
export function driftOf (xs) {
  const r = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d
  const all = xs.length
  const slope = slopeOf(xs)
  const residual = longRunVariance(detrended(xs, slope), { white: true })
  const slopeSe = Math.sqrt(residual.longRun * 12 / (all * (all * all - 1)) / 0.955)
  const t = slopeSe > 0 ? Math.abs(slope) / slopeSe : (slope === 0 ? 0 : Infinity)
  // no more degrees of freedom than whole seconds less one: a few seconds cannot tell their own correlation
  const tP = 2 * (1 - tCdf(t, Math.min(residual.df, Math.floor(all / STEADY_STATE.perSecond) - 1)))
  // where the floor is the larger variance its split's p; where the batch means' is, no less than their own t test's
  const splitModel = residual.floor.model
  const p = splitModel ? (residual.longRun > residual.floor.longRun ? Math.max(tP, splitP(t, splitModel)) : splitP(t, splitModel)) : tP
  return { drift: r(slope * all / meanOf(xs)), driftP: r(p, 4), driftSignificant: p < STEADY_STATE.driftAlpha }
}

/**
 * Judges a steady window's throughput from its completions per tenth of a second (its first second left out).
 * Too short to judge (judged false, with why) when the tenths after the warm-up cut are fewer than minSeconds or hold
 * fewer than minBatches batches of the size the autocorrelation asks for; the drift is still tested then.
 * @param {ArrayLike<number>} perTenth completions in each tenth of the steady window, in order
 * @param {{ drift?: boolean }} [opts] drift: false skips the drift test (the --duration auto decision, once a second)
 * @returns {SteadyState}
 */
export function steadyStateOf (perTenth, { drift = true } = {}) {
  const T = STEADY_STATE
  const r = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d
  const judgedAll = Array.prototype.slice.call(perTenth, T.skip)
  // MSER-5's cut is kept only where the part it cuts differs from the rest by more than the noise explains (below):
  // cutting a stationary window would only pick its quietest end and narrow the interval falsely
  const found = mser(judgedAll)
  const warmTest = found.cut ? warmupTest(judgedAll, found.cut) : null
  const warm = warmTest?.significant ? found : { cut: 0, settled: found.settled }
  const kept = judgedAll.slice(warm.cut)
  const n = kept.length
  const mean = n ? meanOf(kept) : null
  const base = {
    judged: false,
    seconds: r(n / T.perSecond, 1),
    mean: mean === null ? null : r(mean * T.perSecond),
    halfWidth: null,
    relHalfWidth: null,
    se: null,
    df: null,
    batch: null,
    batches: null,
    needed: null,
    warmup: { cut: r(warm.cut / T.perSecond, 1), settled: warm.settled, bias: null, significant: null },
    drift: null,
    driftP: null,
    driftSignificant: null
  }
  const whole = (judgedAll.length / T.perSecond).toFixed(1)
  if (n < T.minSeconds * T.perSecond || !(mean > 0)) {
    const why = !(mean > 0) && n
      ? 'no completions in the steady window'
      : `${whole} s judged (the first second left out): the rule needs ${T.minSeconds} s at least`
    return { ...base, why }
  }
  const v = longRunVariance(kept)
  if (v.needed > v.size) {
    const cut = warm.cut ? `, ${base.warmup.cut} s of warm-up cut` : ''
    // the interval is not judged; a drift still is, against a variance that allows for the correlation (below)
    return {
      ...base,
      ...(drift ? driftOf(judgedAll) : {}),
      needed: v.needed,
      why: `${whole} s judged (the first second left out${cut}): its autocorrelation asks for batches of ${r(v.needed / T.perSecond, 1)} s, ` +
        `and ${T.minBatches} of them need ${r(T.minBatches * v.needed / T.perSecond, 1)} s`
    }
  }
  const se = Math.sqrt(v.longRun / n)
  const halfWidth = tq(1 - T.alpha / 2, v.df) * se
  const out = {
    ...base,
    judged: true,
    why: null,
    halfWidth: r(halfWidth * T.perSecond),
    relHalfWidth: r(halfWidth / mean),
    se: r(se * T.perSecond),
    df: r(v.df, 1),
    batch: v.size,
    batches: Math.floor(n / v.size),
    needed: v.needed
  }
  out.warmup = warm.cut
    ? { ...out.warmup, bias: r((meanOf(judgedAll) - mean) / mean), significant: true }
    : { ...out.warmup, bias: 0, significant: false }
  return drift ? { ...out, ...driftOf(judgedAll) } : out
}

/**
 * --duration auto's decision, after each whole second: the mean is known to ±target at 95% once the window is judged,
 * has STOP_RULE.minSeconds and room for STOP_RULE.minBatches batches of the size its autocorrelation asks for, and
 * the interval at the stricter STOP_RULE.level is within the target. The stricter level pays for the optimism of
 * stopping at the first look whose variance happened to be small (the calibration holds the share of stopped runs
 * whose true error exceeds the target to 5%).
 * @param {ArrayLike<number>} perTenth the steady window's completions per tenth so far
 * @param {number} target relative half-width, e.g. 0.02
 * @returns {{ reached: boolean, state: SteadyState }}
 */
export function autoDurationReached (perTenth, target) {
  const state = steadyStateOf(perTenth, { drift: false })
  if (!state.judged || state.seconds < STOP_RULE.minSeconds || state.needed * STOP_RULE.minBatches > state.seconds * STEADY_STATE.perSecond) {
    return { reached: false, state }
  }
  const strict = tq(1 - (1 - STOP_RULE.level) / 2, state.df) * state.se / state.mean
  return { reached: strict <= target, state }
}

/**
 * --duration auto's stopping rule: at least minSeconds judged and room for minBatches batches of the size the
 * autocorrelation asks for, and the interval at this level within the target.
 */
export const STOP_RULE = Object.freeze({ minSeconds: 10, minBatches: 20, level: 0.99 })
