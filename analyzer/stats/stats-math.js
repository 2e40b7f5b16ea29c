// Small numeric tools the fits need and the installed libraries lack: Student t quantiles, a matrix inverse.

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; ~15 significant digits). */
export function lnGamma (x) {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7]
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x)
  x -= 1
  let a = c[0]
  const t = x + 7.5
  for (let i = 1; i < 9; i++) a += c[i] / (x + i)
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction (x, a, b) {
  const tiny = 1e-300
  let c = 1
  let d = 1 - (a + b) * x / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    let aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-15) break
  }
  return h
}

/** The regularized incomplete beta function I_x(a, b). */
export function incompleteBeta (x, a, b) {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  return x < (a + 1) / (a + b + 2)
    ? front * betaContinuedFraction(x, a, b) / a
    : 1 - front * betaContinuedFraction(1 - x, b, a) / b
}

/**
 * P(T <= t) for Student's t with df degrees of freedom.
 * @param {number} t
 * @param {number} df
 */
export function tCdf (t, df) {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5)
  return t >= 0 ? 1 - tail : tail
}

/**
 * The p-quantile of Student's t with df degrees of freedom (bisection on the CDF; |error| < 1e-12).
 * @param {number} p in (0, 1)
 * @param {number} df > 0
 */
export function tQuantile (p, df) {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`tQuantile(${p}, ${df}): p must be in (0, 1) and df > 0`)
  if (p === 0.5) return 0
  if (p < 0.5) return -tQuantile(1 - p, df)
  let lo = 0
  let hi = 1
  while (tCdf(hi, df) < p) hi *= 2
  for (let i = 0; i < 200 && hi - lo > 1e-13 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2
    if (tCdf(mid, df) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/**
 * Inverse of a small square matrix (Gauss-Jordan with partial pivoting); null when it is singular.
 * @param {number[][]} m
 * @returns {number[][] | null}
 */
export function invert (m) {
  const n = m.length
  const a = m.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))])
  const scale = Math.max(...m.map(r => Math.max(...r.map(Math.abs))), Number.MIN_VALUE)
  for (let col = 0; col < n; col++) {
    let pivot = col
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) pivot = r
    if (Math.abs(a[pivot][col]) < 1e-14 * scale) return null
    ;[a[col], a[pivot]] = [a[pivot], a[col]]
    const p = a[col][col]
    for (let j = 0; j < 2 * n; j++) a[col][j] /= p
    for (let r = 0; r < n; r++) {
      if (r === col) continue
      const f = a[r][col]
      if (f !== 0) for (let j = 0; j < 2 * n; j++) a[r][j] -= f * a[col][j]
    }
  }
  return a.map(row => row.slice(n))
}

/**
 * The q-quantile of values by linear interpolation between order statistics (R type 7), for bootstrap intervals.
 * @param {number[]} sorted ascending
 * @param {number} q in [0, 1]
 */
export function quantileSorted (sorted, q) {
  const h = (sorted.length - 1) * q
  const lo = Math.floor(h)
  return sorted[lo] + (h - lo) * ((sorted[lo + 1] ?? sorted[lo]) - sorted[lo])
}

/**
 * The extra-sum-of-squares F test of nested least-squares models that differ by one parameter: F = (SSR_restricted -
 * SSR_full) / (SSR_full / dfFull) against F(1, dfFull), whose upper tail is that of t(dfFull) on both sides at √F.
 * A full model that fits exactly gives F = Infinity (p 0) when the restricted one does not, else F = 0 (p 1).
 * @param {number} ssrRestricted
 * @param {number} ssrFull
 * @param {number} dfFull observations - parameters of the full model (>= 1)
 * @returns {{ f: number, p: number }}
 */
export function fTest1 (ssrRestricted, ssrFull, dfFull) {
  const extra = Math.max(0, ssrRestricted - ssrFull)
  const f = ssrFull > 0 ? extra / (ssrFull / dfFull) : (extra > 0 ? Infinity : 0)
  const p = Number.isFinite(f) ? Math.min(1, 2 * (1 - tCdf(Math.sqrt(f), dfFull))) : 0
  return { f, p }
}

/**
 * A standard normal draw from a uniform source (Box-Muller), for seeded simulations.
 * @param {() => number} rnd uniform in [0, 1)
 */
export function normalDraw (rnd) {
  return Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd())
}
