// What a fit means statistically: residuals, R², Jacobian standard errors, t intervals, delta-method and bootstrap
// intervals.
import { MODELS, throughputAt, gradientAt, peakOf, ceilingOf } from './usl-model.js'
import { tQuantile, invert, quantileSorted } from '../stats/stats-math.js'
import { seededRandom } from '../../lib/random.js'
import { verdictOf, limitOf } from './fit-verdict.js'

/**
 * @typedef {[number, number] | null} Interval
 * @typedef {{ model: 'usl'|'amdahl', sigma: number, lambda: number, gamma: number, r2: number, adjustedR2: number|null,
 *   ssr: number, aicc: number|null, points: number, observations: number, dof: number, weighted: boolean, range: { min:
 *   number, max: number }, residuals: { n: number, throughput: number, fitted: number, residual: number }[], se: {
 *   sigma: number|null, lambda: number|null, gamma: number|null }, ci95: { sigma: Interval, lambda: Interval, gamma:
 *   Interval, nStar: Interval, xStar: Interval, ceiling: Interval }, bootstrapCi?: any, bounds: string[], nStar:
 *   number|null, xStar: number|null, ceiling: number|null, limitedBy: string, efficiency: { n: number, efficiency:
 *   number, model: number }[], verdict: string, unit: string, weighting?: 'relative'|'none'|'sd', identified?: {
 *   sigma: boolean, lambda: boolean|null }, bound95?: { sigma: number|null, lambda: number|null }, identify?: { sigma:
 *   string|null, lambda: string|null }, identifyAt?: { sigma: number|null, lambda: number|null }, choice?: { model:
 *   'usl'|'amdahl'|'ceiling', aicc: Record<string, number|null>, line: string, fits: Record<string, any> },
 *   ceilingFit?: any, fell?: any }} FitResult points: distinct N;
 *   observations: rows. The relative-error fit (analyzer/fit/fit-relative.js) adds: weighting; identified, bound95,
 *   identify and identifyAt (ci95.sigma, ci95.lambda null where not identifiable: the one-sided bound, the sentence
 *   and the largest N that would identify a term that large instead);
 *   choice (the model by AICc), ceilingFit (linear up to a ceiling: gamma, ceiling, changePoint, ci95) and fell (a
 *   significant fall, or null); ssr and r2 are then on the log scale
 */

const finiteOrNull = v => (Number.isFinite(v) ? v : null)

/**
 * The mean throughput of the rows at each distinct N, sorted by N, with how many rows each mean has.
 * @param {{ n: number, throughput: number }[]} rows
 * @returns {{ n: number, throughput: number, rows: number }[]}
 */
export function meansByN (rows) {
  const byN = new Map()
  for (const r of rows) byN.set(r.n, [...(byN.get(r.n) ?? []), r.throughput])
  return [...byN].sort((a, b) => a[0] - b[0]).map(([n, xs]) => ({ n, throughput: xs.reduce((a, b) => a + b, 0) / xs.length, rows: xs.length }))
}

/**
 * Covariance of the parameters, s² (JᵀWJ)⁻¹, inverted in correlation form because the columns differ by
 * many orders of magnitude (d/dlambda is N² times d/dsigma). Null when the matrix is singular.
 */
function covariance (data, params, k, s2) {
  const a = Array.from({ length: k }, () => new Array(k).fill(0))
  data.ns.forEach((n, i) => {
    const g = gradientAt(n, params, k)
    for (let r = 0; r < k; r++) for (let c = 0; c < k; c++) a[r][c] += data.w[i] * g[r] * g[c]
  })
  const d = a.map((row, i) => Math.sqrt(row[i]))
  if (d.some(v => !(v > 0))) return null
  const inv = invert(a.map((row, r) => row.map((v, c) => v / (d[r] * d[c]))))
  if (!inv) return null
  const cov = inv.map((row, r) => row.map((v, c) => s2 * v / (d[r] * d[c])))
  return cov.every((row, i) => row[i] >= 0) ? cov : null
}

/** Var(f(params)) ≈ gᵀ Σ g for a derived figure with gradient g over (gamma, sigma[, lambda]). */
function deltaInterval (value, grad, cov, t, lower = 0) {
  if (value === null || !cov) return null
  let v = 0
  for (let r = 0; r < grad.length; r++) for (let c = 0; c < grad.length; c++) v += grad[r] * cov[r][c] * grad[c]
  if (!(v >= 0)) return null
  const half = t * Math.sqrt(v)
  return [Math.max(lower, value - half), value + half]
}

/** Numerical gradient of a derived figure over the fitted parameters (central differences). */
function numericGradient (f, params, names) {
  return names.map(name => {
    const h = Math.max(Math.abs(params[name]) * 1e-6, 1e-12)
    const up = f({ ...params, [name]: params[name] + h })
    const down = f({ ...params, [name]: Math.max(0, params[name] - h) })
    return (up - down) / (params[name] + h - Math.max(0, params[name] - h))
  })
}

/**
 * Everything reported about one solved fit: residuals per row, efficiency per distinct N (of the mean there), points
 * (distinct N) and observations (rows; dof = observations - parameters).
 * @param {import('./usl-fit.js').FitData} data
 * @param {{ params: import('./usl-fit.js').Params, ssr: number, bounds: string[] }} solved
 * @param {{ unit?: string, weighted?: boolean }} [opts]
 * @returns {FitResult}
 */
export function describeFit (data, solved, { unit, weighted = false } = {}) {
  const { ns, xs, w, model } = data
  const names = MODELS[model]
  const k = names.length
  const n = ns.length
  const dof = n - k
  const p = solved.params
  const fitted = ns.map(x => throughputAt(x, p))
  const means = meansByN(ns.map((x, i) => ({ n: x, throughput: xs[i] })))
  const sumW = w.reduce((a, b) => a + b, 0)
  const meanX = xs.reduce((a, x, i) => a + w[i] * x, 0) / sumW
  const sst = xs.reduce((a, x, i) => a + w[i] * (x - meanX) ** 2, 0)
  const r2 = 1 - solved.ssr / sst
  const s2 = solved.ssr / dof
  const cov = covariance(data, p, k, s2)
  const t = tQuantile(0.975, dof)
  const se = Object.fromEntries(['gamma', 'sigma', 'lambda'].map(name => {
    const j = names.indexOf(name)
    return [name, j >= 0 && cov ? Math.sqrt(cov[j][j]) : null]
  }))
  const interval = (name, hi) => {
    if (se[name] === null) return null
    return /** @type {Interval} */ ([Math.max(0, p[name] - t * se[name]), Math.min(hi, p[name] + t * se[name])])
  }
  const peak = model === 'usl' ? peakOf(p) : null
  const ceiling = peak ? null : ceilingOf(p)
  const nStarGrad = peak ? [0, -1 / (2 * p.lambda * peak.nStar), -peak.nStar / (2 * p.lambda)] : null
  const aic = solved.ssr > 0 ? n * Math.log(solved.ssr / n) + 2 * (k + 1) : null
  const result = /** @type {FitResult} */ ({
    model,
    sigma: p.sigma,
    lambda: p.lambda,
    gamma: p.gamma,
    r2: finiteOrNull(r2),
    ssr: solved.ssr,
    adjustedR2: dof > 0 ? finiteOrNull(1 - (1 - r2) * (n - 1) / dof) : null,
    aicc: aic !== null && n - k - 2 > 0 ? finiteOrNull(aic + 2 * (k + 1) * (k + 2) / (n - k - 2)) : null,
    points: means.length,
    observations: n,
    dof,
    weighted,
    range: { min: Math.min(...ns), max: Math.max(...ns) },
    residuals: ns.map((x, i) => ({ n: x, throughput: xs[i], fitted: fitted[i], residual: xs[i] - fitted[i] })),
    se: { sigma: finiteOrNull(se.sigma), lambda: finiteOrNull(se.lambda), gamma: finiteOrNull(se.gamma) },
    ci95: {
      gamma: interval('gamma', Infinity),
      sigma: interval('sigma', 1),
      lambda: model === 'usl' ? interval('lambda', 1) : null,
      nStar: peak ? deltaInterval(peak.nStar, nStarGrad, cov, t) : null,
      xStar: peak ? deltaInterval(peak.xStar, numericGradient(q => peakOf(q)?.xStar ?? NaN, p, names), cov, t) : null,
      ceiling: ceiling !== null ? deltaInterval(ceiling, [1 / p.sigma, -p.gamma / (p.sigma * p.sigma), 0].slice(0, k), cov, t) : null
    },
    bounds: solved.bounds,
    nStar: peak ? peak.nStar : null,
    xStar: peak ? peak.xStar : null,
    ceiling,
    limitedBy: '',
    efficiency: means.map(m => ({ n: m.n, efficiency: m.throughput / (p.gamma * m.n), model: throughputAt(m.n, p) / (p.gamma * m.n) })),
    verdict: '',
    unit: unit ?? 'N'
  })
  result.limitedBy = limitOf(result)
  result.verdict = verdictOf(result)
  return result
}

/**
 * Where each bootstrap resample's rows come from. With repeats (some N measured more than once) the runs are resampled
 * within each N (stratified case resampling: every N keeps its number of runs, so the design stays the same);
 * without, the (weight-standardised, dof-inflated) residuals are resampled onto the fitted curve.
 * @param {import('./usl-solve.js').FitData} data
 * @param {import('./usl-solve.js').Params} p
 * @param {() => number} rnd
 * @returns {{ method: 'cases'|'residual', draw: () => import('./usl-solve.js').FitData }}
 */
function resampler (data, p, rnd) {
  const n = data.ns.length
  const strata = new Map()
  data.ns.forEach((x, i) => strata.set(x, [...(strata.get(x) ?? []), i]))
  if ([...strata.values()].some(rows => rows.length > 1)) {
    const pick = () => [...strata.values()].flatMap(rows => rows.map(() => rows[Math.floor(rnd() * rows.length)]))
    return {
      method: 'cases',
      draw: () => {
        const ix = pick()
        const xs = ix.map(i => data.xs[i])
        return { ...data, ns: ix.map(i => data.ns[i]), xs, w: ix.map(i => data.w[i]), scale: Math.max(...xs) }
      }
    }
  }
  const k = MODELS[data.model].length
  const fitted = data.ns.map(x => throughputAt(x, p))
  const rw = data.w.map(Math.sqrt)
  const inflate = Math.sqrt(n / (n - k))
  const e = data.xs.map((x, i) => (x - fitted[i]) * rw[i] * inflate)
  return {
    method: 'residual',
    draw: () => {
      // A resampled value may dip below 0 where residuals are large; it stays in (dropping it would bias the draws).
      const xs = fitted.map((f, i) => f + e[Math.floor(rnd() * n)] / rw[i])
      return { ...data, xs, scale: Math.max(...xs.map(Math.abs)) }
    }
  }
}

/**
 * A seeded bootstrap of the fit: resample (repeats within each N, else residuals: see resampler), refit, and take the
 * 2.5% and 97.5% quantiles of each figure. Same seed, same intervals.
 * @param {import('./usl-solve.js').FitData} data
 * @param {{ params: import('./usl-solve.js').Params }} solved
 * @param {{ samples: number, seed: number, solve: Function }} opts
 */
export function bootstrapFit (data, solved, { samples, seed, solve }) {
  const p = solved.params
  const { method, draw } = resampler(data, p, seededRandom(seed))
  const draws = { gamma: [], sigma: [], lambda: [], nStar: [], xStar: [], ceiling: [] }
  let failed = 0
  let unbounded = 0
  for (let b = 0; b < samples; b++) {
    let r
    try {
      r = solve(draw(), [p], { quick: true })
    } catch {
      failed++
      continue
    }
    const q = r.params
    draws.gamma.push(q.gamma)
    draws.sigma.push(q.sigma)
    draws.lambda.push(q.lambda)
    const peak = data.model === 'usl' ? peakOf(q) : null
    if (peak) { draws.nStar.push(peak.nStar); draws.xStar.push(peak.xStar) } else unbounded++
    const c = ceilingOf(q)
    if (c !== null) draws.ceiling.push(c)
  }
  const ok = samples - failed
  const ci = (list, name) => {
    if (list.length < Math.max(20, ok * 0.5)) return null
    const s = [...list].sort((a, b) => a - b)
    // resamples without a peak (lambda = 0) put N* and X(N*) at infinity: the upper end is then open
    const openTop = (name === 'nStar' || name === 'xStar') && unbounded > 0.025 * ok
    return [quantileSorted(s, 0.025), openTop ? null : quantileSorted(s, 0.975)]
  }
  return {
    method,
    samples,
    failed,
    seed,
    gamma: ci(draws.gamma, 'gamma'),
    sigma: ci(draws.sigma, 'sigma'),
    lambda: data.model === 'usl' ? ci(draws.lambda, 'lambda') : null,
    nStar: data.model === 'usl' ? ci(draws.nStar, 'nStar') : null,
    xStar: data.model === 'usl' ? ci(draws.xStar, 'xStar') : null,
    ceiling: ci(draws.ceiling, 'ceiling'),
    withoutPeak: data.model === 'usl' ? unbounded : undefined
  }
}
