// Fits USL or Amdahl to throughput rows (one per run, or one mean per N): linearised start, bounded
// Levenberg-Marquardt, intervals, plain-language verdict.
import { PolynomialRegression } from 'ml-regression'
import { fail } from '../../lib/messages.js'
import { MODELS } from './usl-model.js'
import { solve } from './usl-solve.js'
import { describeFit, bootstrapFit, meansByN } from './fit-stats.js'
import { fitRelative, readingOf } from './fit-relative.js'
import { limitOf, verdictOf } from './fit-verdict.js'

/**
 * @typedef {{ n: number, throughput: number, sd?: number, count?: number }} Point a run, or a mean of `count` runs with
 *   their sd
 * @typedef {import('./usl-solve.js').Params} Params
 * @typedef {import('./usl-solve.js').FitData} FitData
 */

/**
 * Checks rows (one per run, or one mean per N) and sorts them by N; repeated N stay separate rows, each an
 * observation. Throws NS_ERR_BAD_DATA on anything a fit cannot use.
 * @param {Point[]} points
 * @param {'usl'|'amdahl'} model
 * @returns {Point[]} sorted by n
 */
export function preparePoints (points, model) {
  if (!Array.isArray(points)) throw fail('POINTS_NOT_AN_ARRAY')
  const rows = points.map((p, i) => {
    const n = Number(p?.n)
    const x = Number(p?.throughput)
    if (!Number.isFinite(n) || n <= 0) throw fail('POINT_N_INVALID', { point: i + 1, n: p?.n })
    if (!Number.isFinite(x) || x <= 0) {
      throw fail('POINT_THROUGHPUT_NOT_POSITIVE', { point: i + 1, n, throughput: p?.throughput })
    }
    return { n, throughput: x, sd: Number.isFinite(p.sd) ? p.sd : undefined, count: Number.isInteger(p.count) && p.count > 0 ? p.count : 1 }
  }).sort((a, b) => a.n - b.n)
  const means = meansByN(rows)
  const k = MODELS[model].length
  if (means.length < k + 1) {
    throw fail('TOO_FEW_N', { model, k, needs: k + 1, got: means.length, ns: means.map(p => p.n) })
  }
  const xs = means.map(p => p.throughput)
  if (Math.max(...xs) - Math.min(...xs) <= 1e-9 * Math.max(...xs)) {
    throw fail('THROUGHPUT_FLAT', { throughput: xs[0] })
  }
  return rows
}

/** The sample variance of a list (NaN under two values). */
const varianceOf = xs => {
  if (!(xs?.length > 1)) return NaN
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)
}

/**
 * Weights per row normalised to mean 1: none; 'sd', the inverse variance of each row (a mean's sd² / count, or the
 * spread of the single runs at its N); or given numbers, one per distinct N.
 * @param {Point[]} rows
 * @param {'none'|'sd'|number[]|false} [weights]
 * @returns {number[]}
 */
function rowWeights (rows, weights) {
  let w
  if (weights === undefined || weights === 'none' || weights === false) {
    w = rows.map(() => 1)
  } else if (weights === 'sd') {
    const singles = new Map()
    for (const r of rows) if (!(r.count > 1)) singles.set(r.n, [...(singles.get(r.n) ?? []), r.throughput])
    const vars = rows.map(r => (r.count > 1 ? (r.sd > 0 ? r.sd ** 2 / r.count : NaN) : varianceOf(singles.get(r.n))))
    const known = vars.filter(v => v > 0).sort((a, b) => a - b)
    if (!known.length) throw fail('SD_WEIGHTS_WITHOUT_REPEATS')
    // A row without its own spread borrows the median; a tiny spread is floored so one point cannot take over the
    // fit.
    const median = known[Math.floor(known.length / 2)]
    w = vars.map(v => 1 / Math.max(v > 0 ? v : median, median * 1e-2))
  } else {
    const ns = meansByN(rows).map(p => p.n)
    if (!(Array.isArray(weights) && weights.length === ns.length && weights.every(v => Number.isFinite(v) && v > 0))) {
      throw fail('WEIGHTS_INVALID', { count: ns.length })
    }
    w = rows.map(r => weights[ns.indexOf(r.n)])
  }
  const mean = w.reduce((a, b) => a + b, 0) / w.length
  return w.map(v => v / mean)
}

/**
 * Gunther's linearisation over the mean at each N: N/C(N) - 1 = (sigma + lambda)(N - 1) + lambda (N - 1)^2 with
 * C = X / gamma0, fitted through the origin.
 * @param {FitData} data
 * @returns {Params}
 */
function linearisedStart (data) {
  const means = meansByN(data.ns.map((n, i) => ({ n, throughput: data.xs[i] })))
  const gamma0 = means[0].throughput / means[0].n
  const x = means.map(p => p.n - 1)
  const y = means.map(p => p.n * gamma0 / p.throughput - 1)
  let sigma = 0.01
  let lambda = 0
  try {
    const reg = new PolynomialRegression(x, y, data.model === 'usl' ? [1, 2] : [1])
    const [a, b = 0] = reg.coefficients
    lambda = data.model === 'usl' ? b : 0
    sigma = a - lambda
  } catch {}
  const clamp = v => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0)
  return { gamma: gamma0, sigma: clamp(sigma), lambda: clamp(lambda) }
}

/**
 * Where a fit of one curve starts: Gunther's linearisation, and the generic start of R's usl package (max X/N, small
 * sigma and lambda).
 * @param {FitData} data
 * @returns {Params[]}
 */
export function startsOf (data) {
  return [linearisedStart(data), { gamma: Math.max(...data.xs.map((x, i) => x / data.ns[i])), sigma: 0.01, lambda: data.model === 'usl' ? 1e-4 : 0 }]
}

/**
 * Fits the Universal Scalability Law X(N) = gamma N / (1 + sigma (N-1) + lambda N (N-1)) (or Amdahl: lambda = 0)
 * over every row (each repeat its own observation). By default (weights 'relative') the fit is least squares on log
 * throughput, the noise of a run being multiplicative, with 95% profile-likelihood intervals that say when sigma or
 * lambda is not identifiable from the N measured (analyzer/fit/fit-relative.js). Weights 'none', 'sd' or numbers:
 * bounded
 * nonlinear least squares in throughput units with Jacobian t intervals (the older fit, kept for comparison with
 * published unweighted fits). Either way the result carries the reading on the log scale: the model AICc prefers
 * among USL, Amdahl and linear up to a ceiling, that ceiling fit, and whether a measured point fell significantly.
 * `bootstrap` adds a seeded bootstrap (repeats resampled within each N, else residuals; relative weights as 1/fitted²).
 * @param {Point[]} points
 * @param {{ model?: 'usl'|'amdahl', bootstrap?: number, seed?: number, weights?: 'relative'|'none'|'sd'|number[],
 *   unit?: string }} [opts]
 * @returns {import('./fit-stats.js').FitResult}
 */
export function fitUsl (points, { model = 'usl', bootstrap = 0, seed = 1, weights = 'relative', unit } = {}) {
  if (!MODELS[model]) throw fail('MODEL_UNKNOWN', { model })
  if (!(Number.isInteger(bootstrap) && bootstrap >= 0 && bootstrap <= 100000)) {
    throw fail('BOOTSTRAP_NOT_WHOLE', { bootstrap })
  }
  const rows = preparePoints(points, model)
  const xs = rows.map(p => p.throughput)
  if (weights === 'relative') {
    const result = fitRelative(rows, { model, unit })
    result.limitedBy = limitOf(result)
    result.verdict = verdictOf(result)
    if (bootstrap > 0) {
      const w = result.residuals.map(r => 1 / r.fitted ** 2)
      const mean = w.reduce((a, b) => a + b, 0) / w.length
      /** @type {FitData} */
      const data = { ns: rows.map(p => p.n), xs, w: w.map(v => v / mean), scale: Math.max(...xs), model }
      result.bootstrapCi = bootstrapFit(data, { params: { gamma: result.gamma, sigma: result.sigma, lambda: result.lambda } },
        { samples: bootstrap, seed, solve })
    }
    return result
  }
  /** @type {FitData} */
  const data = { ns: rows.map(p => p.n), xs, w: rowWeights(rows, weights), scale: Math.max(...xs), model }
  // one curve: the values are its gamma, sigma and lambda
  const solved = /** @type {{ params: Params, ssr: number, bounds: string[] }} */ (solve(data, startsOf(data)))
  const result = /** @type {any} */ (describeFit(data, solved, { unit, weighted: weights !== 'none' }))
  result.weighting = weights === 'none' ? 'none' : 'sd'
  const { choice, ceilingFit, fell } = readingOf(rows)
  Object.assign(result, {
    choice: {
      model: choice.model,
      aicc: choice.aicc,
      line: choice.line,
      fits: Object.fromEntries(Object.entries(choice.fits).map(([m, x]) => [m, { gamma: x.gamma, ...x.shape, ssr: x.ssr }]))
    },
    ceilingFit,
    fell
  })
  result.limitedBy = limitOf(result)
  result.verdict = verdictOf(result)
  if (bootstrap > 0) result.bootstrapCi = bootstrapFit(data, solved, { samples: bootstrap, seed, solve })
  return result
}
