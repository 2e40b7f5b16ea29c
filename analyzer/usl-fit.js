// Fits USL or Amdahl to throughput points: linearised start, bounded Levenberg-Marquardt, intervals, plain-language
// verdict.
import { levenbergMarquardt } from 'ml-levenberg-marquardt'
import { PolynomialRegression } from 'ml-regression'
import { NsError } from '../lib/errors.js'
import { MODELS, throughputAt, gradientAt } from './usl-model.js'
import { describeFit, bootstrapFit } from './fit-stats.js'

/**
 * @typedef {{ n: number, throughput: number, sd?: number, count?: number }} Point
 * @typedef {{ gamma: number, sigma: number, lambda: number }} Params
 * @typedef {{ ns: number[], xs: number[], w: number[], scale: number, model: 'usl'|'amdahl' }} FitData
 */

const badData = (message) => new NsError('NS_ERR_BAD_DATA', message)

/**
 * Checks points and merges repeated N (mean throughput, pooled spread). Throws NS_ERR_BAD_DATA on anything a fit
 * cannot use.
 * @param {Point[]} points
 * @param {'usl'|'amdahl'} model
 * @returns {Point[]} sorted by n
 */
export function preparePoints (points, model) {
  if (!Array.isArray(points)) throw badData('points must be an array of { n, throughput }')
  const byN = new Map()
  for (const [i, p] of points.entries()) {
    const n = Number(p?.n)
    const x = Number(p?.throughput)
    if (!Number.isFinite(n) || n <= 0) throw badData(`point ${i + 1}: N must be a number > 0 (got ${p?.n})`)
    if (!Number.isFinite(x) || x <= 0) throw badData(`point ${i + 1} (N = ${n}): throughput must be > 0 (got ${p?.throughput}); a run that served nothing cannot be fitted`)
    const list = byN.get(n) ?? []
    list.push({ n, throughput: x, sd: Number.isFinite(p.sd) ? p.sd : undefined, count: Number.isInteger(p.count) && p.count > 0 ? p.count : 1 })
    byN.set(n, list)
  }
  const merged = [...byN.values()].map(list => {
    if (list.length === 1) return list[0]
    const count = list.reduce((a, p) => a + p.count, 0)
    const mean = list.reduce((a, p) => a + p.throughput * p.count, 0) / count
    // pooled: within-point variance plus the spread of the point means
    const ss = list.reduce((a, p) => a + (p.count - 1) * (p.sd ?? 0) ** 2 + p.count * (p.throughput - mean) ** 2, 0)
    return { n: list[0].n, throughput: mean, sd: count > 1 ? Math.sqrt(ss / (count - 1)) : undefined, count }
  }).sort((a, b) => a.n - b.n)
  const k = MODELS[model].length
  if (merged.length < k + 1) {
    throw badData(`${model === 'usl' ? 'USL' : 'Amdahl'} has ${k} parameters and needs at least ${k + 1} distinct N; got ${merged.length}` +
      (merged.length ? ` (N = ${merged.map(p => p.n).join(', ')})` : '') + '. Measure more values of N (instance or node counts)' + (model === 'usl' ? ' or fit --model amdahl' : ''))
  }
  const xs = merged.map(p => p.throughput)
  if (Math.max(...xs) - Math.min(...xs) <= 1e-9 * Math.max(...xs)) {
    throw badData(`throughput is the same (${xs[0]}) at every N: a flat line has no scaling to fit; check that load reached every instance`)
  }
  return merged
}

/** Per-point weights normalised to mean 1: none, inverse variance of each mean ('sd'), or given numbers. */
function weightsFor (points, weights) {
  let w
  if (weights === undefined || weights === 'none' || weights === false) {
    w = points.map(() => 1)
  } else if (weights === 'sd') {
    const vars = points.map(p => (p.sd > 0 && p.count > 1 ? p.sd ** 2 / p.count : NaN))
    const known = vars.filter(Number.isFinite).sort((a, b) => a - b)
    if (!known.length) throw badData('weights "sd" need repeated runs (sd and count per point); none of the points has them')
    // A point without its own spread borrows the median; a tiny spread is floored so one point cannot take over the
    // fit.
    const median = known[Math.floor(known.length / 2)]
    w = vars.map(v => 1 / Math.max(Number.isFinite(v) ? v : median, median * 1e-2))
  } else if (Array.isArray(weights) && weights.length === points.length && weights.every(v => Number.isFinite(v) && v > 0)) {
    w = [...weights]
  } else {
    throw badData(`weights must be "none", "sd" or ${points.length} positive numbers (one per distinct N)`)
  }
  const mean = w.reduce((a, b) => a + b, 0) / w.length
  return w.map(v => v / mean)
}

/** Weighted sum of squared residuals of params over the data (in throughput units). */
export function ssrOf (data, p) {
  let s = 0
  for (let i = 0; i < data.ns.length; i++) s += data.w[i] * (data.xs[i] - throughputAt(data.ns[i], p)) ** 2
  return s
}

/**
 * Gunther's linearisation: N/C(N) - 1 = (sigma + lambda)(N - 1) + lambda (N - 1)^2 with C = X / gamma0, fitted through
 * the origin.
 */
function linearisedStart (data) {
  const { ns, xs, model } = data
  const i0 = ns.indexOf(Math.min(...ns))
  const gamma0 = xs[i0] / ns[i0]
  const x = ns.map(n => n - 1)
  const y = ns.map((n, i) => n * gamma0 / xs[i] - 1)
  let sigma = 0.01
  let lambda = 0
  try {
    const reg = new PolynomialRegression(x, y, model === 'usl' ? [1, 2] : [1])
    const [a, b = 0] = reg.coefficients
    lambda = model === 'usl' ? b : 0
    sigma = a - lambda
  } catch {}
  const clamp = v => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0)
  return { gamma: gamma0, sigma: clamp(sigma), lambda: clamp(lambda) }
}

/**
 * Levenberg-Marquardt (ml-levenberg-marquardt) from one start over the parameters not pinned. Throughput is scaled
 * to ~1 and weights enter as sqrt(w) on both sides, so the library's unweighted least squares minimises the weighted
 * sum. The library has no relative stopping rule: it runs in short passes until a pass stops improving.
 * @param {FitData} data
 * @param {Params} start
 * @param {{ pins?: Partial<Params> }} [opts] parameters held at a value (a bound)
 * @returns {{ params: Params, ssr: number }}
 */
export function solveFrom (data, start, { pins = {} } = {}) {
  const names = MODELS[data.model]
  const free = names.filter(n => pins[n] === undefined)
  const cols = free.map(n => names.indexOf(n))
  const rw = data.w.map(Math.sqrt)
  const idx = data.ns.map((_, i) => i)
  const y = data.xs.map((x, i) => x / data.scale * rw[i])
  // in scaled units: gamma / scale
  const scaled = v => {
    const p = { gamma: 0, sigma: 0, lambda: 0, ...pins }
    free.forEach((n, j) => { p[n] = v[j] })
    return p
  }
  const toParams = v => { const p = scaled(v); return { ...p, gamma: p.gamma * data.scale } }
  const fn = v => { const p = scaled(v); return i => rw[i] * throughputAt(data.ns[i], p) }
  const jac = v => { const p = scaled(v); return i => { const g = gradientAt(data.ns[i], p, 3); return cols.map(c => g[c] * rw[i]) } }
  let v = free.map(n => (n === 'gamma' ? start.gamma / data.scale : start[n]))
  let best = { params: toParams(v), ssr: ssrOf(data, toParams(v)) }
  if (!Number.isFinite(best.ssr)) best.ssr = Infinity
  for (let pass = 0; pass < 100; pass++) {
    const r = levenbergMarquardt({ x: idx, y }, fn, {
      initialValues: v, jacobianFunction: jac, damping: 1e-3, maxIterations: 10, errorTolerance: 1e-30, improvementThreshold: 1e-4
    })
    const params = toParams(r.parameterValues)
    const ssr = ssrOf(data, params)
    if (!(ssr < best.ssr * (1 - 1e-12))) break
    best = { params, ssr }
    v = r.parameterValues
  }
  return best
}

/** Which parameters may sit at which bound: every combination is tried (active-set search; there are at most six). */
const PIN_SETS = {
  usl: [{}, { lambda: 0 }, { sigma: 0 }, { sigma: 0, lambda: 0 }, { sigma: 1 }, { sigma: 1, lambda: 0 }],
  amdahl: [{}, { sigma: 0 }, { sigma: 1 }]
}

/** sigma, lambda in [0, 1] and gamma > 0 (a hair outside 0 is numerical noise and is clipped). */
function feasible (p) {
  for (const name of ['sigma', 'lambda']) {
    if (!(p[name] >= -1e-10 && p[name] <= 1 + 1e-10)) return false
  }
  return p.gamma > 0 && Number.isFinite(p.gamma)
}

function interior (p, model) {
  return p.sigma > 1e-6 && p.sigma < 1 - 1e-6 && (model === 'amdahl' || (p.lambda > 1e-12 && p.lambda < 1 - 1e-6))
}

/**
 * The bounded least-squares answer: the unconstrained optimum in every face of the box (parameters pinned at
 * their bounds), the best feasible one kept. Ties go to the answer with more parameters at a bound, so a
 * coherency term that buys nothing is reported as "lambda = 0", not as 1e-12.
 * `quick` (for bootstrap refits) stops at the unconstrained optimum when it lies well inside the box.
 * @param {FitData} data
 * @param {Params[]} starts
 * @param {{ quick?: boolean }} [opts]
 * @returns {{ params: Params, ssr: number, bounds: string[] }}
 */
export function solve (data, starts, { quick = false } = {}) {
  let best = null
  for (const pins of PIN_SETS[data.model]) {
    if (quick && best && best.pinned === 0 && interior(best.params, data.model)) break
    for (const s of starts) {
      const r = solveFrom(data, s, { pins })
      if (!feasible(r.params)) continue
      const params = { gamma: r.params.gamma, sigma: Math.min(1, Math.max(0, r.params.sigma)), lambda: Math.min(1, Math.max(0, r.params.lambda)) }
      const cand = { params, ssr: ssrOf(data, params), pinned: Object.keys(pins).length }
      if (!best || cand.ssr < best.ssr * (1 - 1e-9) - 1e-300 || (cand.ssr <= best.ssr * (1 + 1e-9) && cand.pinned > best.pinned)) best = cand
    }
  }
  if (!best) throw badData('no USL/Amdahl curve with sigma, lambda in [0, 1] and gamma > 0 fits these points')
  const bounds = []
  for (const name of MODELS[data.model].slice(1)) {
    if (best.params[name] <= 0) bounds.push(`${name}=0`)
    else if (best.params[name] >= 1) bounds.push(`${name}=1`)
  }
  return { params: best.params, ssr: best.ssr, bounds }
}

/**
 * Fits the Universal Scalability Law X(N) = gamma N / (1 + sigma (N-1) + lambda N (N-1)) (or Amdahl: lambda = 0)
 * by bounded nonlinear least squares (sigma, lambda in [0, 1], gamma >= 0), starting from the linearised quadratic
 * fit. Reports R^2, residuals, standard errors and t-based 95% intervals from the Jacobian, an optional seeded
 * residual bootstrap, N* and X(N*) (or the Amdahl ceiling gamma/sigma), efficiency per N and a verdict.
 * @param {Point[]} points
 * @param {{ model?: 'usl'|'amdahl', bootstrap?: number, seed?: number, weights?: 'none'|'sd'|number[], unit?: string }}
 *   [opts]
 * @returns {import('./fit-stats.js').FitResult}
 */
export function fitUsl (points, { model = 'usl', bootstrap = 0, seed = 1, weights, unit } = {}) {
  if (!MODELS[model]) throw new NsError('NS_ERR_BAD_FLAG', `--model: "${model}" is not a model; allowed: usl, amdahl`)
  if (!(Number.isInteger(bootstrap) && bootstrap >= 0 && bootstrap <= 100000)) throw new NsError('NS_ERR_BAD_FLAG', `--bootstrap: "${bootstrap}" must be a whole number from 0 to 100000`)
  const pts = preparePoints(points, model)
  const ns = pts.map(p => p.n)
  const xs = pts.map(p => p.throughput)
  /** @type {FitData} */
  const data = { ns, xs, w: weightsFor(pts, weights), scale: Math.max(...xs), model }
  // Two starts: Gunther's linearisation, and the generic one of R's usl package (max X/N, small sigma and lambda).
  const starts = [linearisedStart(data), { gamma: Math.max(...xs.map((x, i) => x / ns[i])), sigma: 0.01, lambda: model === 'usl' ? 1e-4 : 0 }]
  const solved = solve(data, starts)
  const result = describeFit(data, solved, { unit, weighted: weights !== undefined && weights !== 'none' })
  if (bootstrap > 0) result.bootstrapCi = bootstrapFit(data, solved, { samples: bootstrap, seed, solve })
  return result
}
