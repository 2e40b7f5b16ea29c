// Relative-error fits on log throughput (the noise of a run is multiplicative): USL, Amdahl and linear up to a
// ceiling, min(gamma N, C). On the log scale gamma is a shift, so it is solved in closed form for any shape and only
// sigma, lambda (or the change point c = C / gamma) are searched, on a grid refined by golden sections.

/**
 * @typedef {'usl'|'amdahl'|'ceiling'} ShapeModel
 * @typedef {{ ns: number[], logN: number[], counts: number[], means: number[], pure: number, rows: number, scratch?:
 *   Float64Array, lastA?: number }} LogData
 *   per distinct N: counts (runs) and the mean of their log throughput; pure: the sum of squares of the runs around
 *   their N's mean (log scale); rows: runs in all
 * @typedef {{ sigma?: number, lambda?: number, c?: number }} Shape sigma, lambda (USL, Amdahl) or the change point c
 * @typedef {{ shape: Shape, a: number, ssr: number }} LogFit a: log gamma
 */

/** Parameters per model, gamma included (the ceiling model: gamma and C; its change point is C / gamma). */
export const PARAMETERS = Object.freeze({ usl: 3, amdahl: 2, ceiling: 2 })

/**
 * Runs (or means of `count` runs with their sd) as log data. A mean's sd enters the pure error as its relative sd
 * (the delta method: the sd of log X is about sd / X).
 * @param {{ n: number, throughput: number, sd?: number, count?: number }[]} rows
 * @returns {LogData}
 */
export function logData (rows) {
  /** @type {Map<number, { w: number, s: number, ss: number, inner: number }>} */
  const byN = new Map()
  for (const r of rows) {
    const c = r.count ?? 1
    const y = Math.log(r.throughput)
    const e = byN.get(r.n) ?? { w: 0, s: 0, ss: 0, inner: 0 }
    e.w += c
    e.s += c * y
    e.ss += c * y * y
    if (c > 1 && r.sd > 0) e.inner += (c - 1) * (r.sd / r.throughput) ** 2
    byN.set(r.n, e)
  }
  const ns = [...byN.keys()].sort((a, b) => a - b)
  let pure = 0
  const means = ns.map(n => {
    const e = byN.get(n)
    const m = e.s / e.w
    pure += Math.max(0, e.ss - e.w * m * m) + e.inner
    return m
  })
  const counts = ns.map(n => byN.get(n).w)
  return { ns, logN: ns.map(Math.log), counts, means, pure, rows: counts.reduce((a, b) => a + b, 0) }
}

/**
 * The sum of squares of a shape with its best log gamma (or with log gamma held at `a`).
 * @param {LogData} d
 * @param {ShapeModel} model
 * @param {Shape} s
 * @param {number} [a]
 * @returns {{ a: number, ssr: number }}
 */
export function ssrOfShape (d, model, s, a) {
  const ssr = ssrOf(d, model, s.sigma ?? 0, s.lambda ?? 0, s.c ?? 0, a)
  return { a: d.lastA, ssr }
}

/**
 * ssrOfShape without objects (it runs hundreds of thousands of times in a calibration): the SSR, its log gamma left
 * in d.lastA.
 * @param {LogData & { lastA?: number }} d
 * @param {ShapeModel} model
 * @param {number} sigma
 * @param {number} lambda
 * @param {number} c
 * @param {number} [a]
 */
function ssrOf (d, model, sigma, lambda, c, a) {
  const k = d.means.length
  const g = d.scratch ?? (d.scratch = new Float64Array(k))
  for (let j = 0; j < k; j++) {
    const n = d.ns[j]
    g[j] = model === 'ceiling' ? Math.log(Math.min(n, c)) : d.logN[j] - Math.log(1 + sigma * (n - 1) + (model === 'usl' ? lambda * n * (n - 1) : 0))
  }
  if (a === undefined) {
    let num = 0
    for (let j = 0; j < k; j++) num += d.counts[j] * (d.means[j] - g[j])
    a = num / d.rows
  }
  let ssr = d.pure
  for (let j = 0; j < k; j++) ssr += d.counts[j] * (d.means[j] - g[j] - a) ** 2
  d.lastA = a
  return Number.isFinite(ssr) ? ssr : Infinity
}

const GOLDEN = (Math.sqrt(5) - 1) / 2

/**
 * The least of f over a sorted grid, refined by golden sections between the best point's neighbours.
 * @param {(x: number) => number} f
 * @param {number[]} grid
 * @param {number} [steps] golden-section steps
 * @returns {{ x: number, v: number }}
 */
export function minimize1 (f, grid, steps = 18) {
  let bi = 0
  const vs = grid.map(f)
  for (let i = 1; i < vs.length; i++) if (vs[i] < vs[bi]) bi = i
  let best = { x: grid[bi], v: vs[bi] }
  let lo = grid[Math.max(0, bi - 1)]
  let hi = grid[Math.min(grid.length - 1, bi + 1)]
  if (!(hi > lo)) return best
  let x1 = hi - GOLDEN * (hi - lo)
  let x2 = lo + GOLDEN * (hi - lo)
  let f1 = f(x1)
  let f2 = f(x2)
  for (let i = 0; i < steps; i++) {
    if (f1 < f2) {
      hi = x2; x2 = x1; f2 = f1; x1 = hi - GOLDEN * (hi - lo); f1 = f(x1)
    } else {
      lo = x1; x1 = x2; f1 = f2; x2 = lo + GOLDEN * (hi - lo); f2 = f(x2)
    }
  }
  if (f1 < best.v) best = { x: x1, v: f1 }
  if (f2 < best.v) best = { x: x2, v: f2 }
  return best
}

/** sigma's search grid over [0, 1]. */
export const SIGMA_GRID = Object.freeze([0, 1e-4, 1e-3, 0.004, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.55, 0.7, 0.85, 0.95, 1])

/** lambda's search grid over [0, 1]: 0 and a geometric ladder scaled to the largest N measured. */
export function lambdaGrid (nMax) {
  const out = [0]
  for (let v = 1e-4 / (nMax * nMax); v < 1; v *= 2.5) out.push(v)
  out.push(1)
  return out
}

/** The change point's search grid: the measured N and points between them (log-spaced). */
export function changeGrid (d) {
  const out = []
  for (let j = 0; j < d.ns.length; j++) {
    out.push(d.ns[j])
    if (j + 1 < d.ns.length) for (const f of [0.25, 0.5, 0.75]) out.push(Math.exp(d.logN[j] + f * (d.logN[j + 1] - d.logN[j])))
  }
  return out
}

/**
 * The best shape of a model with some parameters held (a profile), and its log gamma and SSR.
 * @param {LogData} d
 * @param {ShapeModel} model
 * @param {{ sigma?: number, lambda?: number, c?: number, a?: number, tie?: (sigma: number) => number }} [held] tie:
 *   lambda as a function of sigma (the profile of N*)
 * @param {number} [steps] golden-section steps of each search (fewer for profiles, whose SSR is flat at its least)
 * @returns {LogFit}
 */
export function fitShape (d, model, held = {}, steps = 18) {
  const { a } = held
  const grid = lambdaGrid(d.ns.at(-1))
  if (model === 'ceiling') {
    if (held.c !== undefined) return { shape: { c: held.c }, ...ssrOfShape(d, model, { c: held.c }, a) }
    const r = minimize1(c => ssrOf(d, model, 0, 0, c, a), changeGrid(d), steps)
    return { shape: { c: r.x }, ...ssrOfShape(d, model, { c: r.x }, a) }
  }
  // a term that buys nothing (exact data: SSR differences at rounding level) is reported at its bound, 0
  const tie = 1e-9 * d.means.reduce((s, m, j) => s + d.counts[j] * (m - d.means[0]) ** 2, 0) + 1e-14 * d.rows
  const lambdaOf = sigma => (model === 'amdahl' ? 0 : held.tie ? held.tie(sigma) : held.lambda)
  const inner = sigma => {
    const lam = lambdaOf(sigma)
    if (lam !== undefined) return { lambda: lam, v: ssrOf(d, model, sigma, lam, 0, a) }
    const r = minimize1(lambda => ssrOf(d, model, sigma, lambda, 0, a), grid, steps)
    const zero = ssrOf(d, model, sigma, 0, 0, a)
    return zero <= r.v + tie ? { lambda: 0, v: zero } : { lambda: r.x, v: r.v }
  }
  let sigma = held.sigma
  if (sigma === undefined) {
    sigma = minimize1(s => inner(s).v, [...SIGMA_GRID], steps).x
    if (inner(0).v <= inner(sigma).v + tie) sigma = 0
  }
  const lambda = inner(sigma).lambda
  const shape = { sigma, lambda }
  return { shape, ...ssrOfShape(d, model, shape, a) }
}

/**
 * AICc of a fit on the log scale (Gaussian errors): n log(SSR/n) + 2(k+1) + 2(k+1)(k+2)/(n-k-2); null where
 * n - k - 2 < 1 (too few runs for the correction). The SSR is floored at a 1e-6 relative sd so exact data compare.
 * @param {number} ssr
 * @param {number} n runs
 * @param {number} k parameters
 */
export function aiccOf (ssr, n, k) {
  if (n - k - 2 < 1) return null
  const s = Math.max(ssr, n * 1e-12)
  return n * Math.log(s / n) + 2 * (k + 1) + 2 * (k + 1) * (k + 2) / (n - k - 2)
}
