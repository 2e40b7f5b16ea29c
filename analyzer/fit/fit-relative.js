// The relative-error fit (fitUsl's default): USL or Amdahl on log throughput with profile-likelihood intervals, what
// the N measured cannot identify, the linear-to-ceiling model beside them, the model AICc prefers, and whether a
// measured point lies significantly below an earlier one.
import { tQuantile, invert } from '../stats/stats-math.js'
import { logData, fitShape, aiccOf, PARAMETERS } from './fit-log.js'
import { curveRegions, asymptoteRegion, ceilingRegions, identifyingN } from './fit-profile.js'
import { meansByN } from './fit-stats.js'
import { human } from './fit-verdict.js'

/**
 * @typedef {import('./fit-log.js').LogData} LogData
 * @typedef {import('./fit-profile.js').Region} Region
 * @typedef {{ model: 'usl'|'amdahl'|'ceiling', aicc: Record<string, number|null>, fits: Record<string, any>, line:
 *   string }} Choice
 * @typedef {{ from: number, to: number, drop: number, t: number, critical: number }} Fell
 */

const NAMES = Object.freeze({ usl: 'USL', amdahl: 'Amdahl', ceiling: 'linear up to a ceiling' })
const range = d => (d.ns.length > 1 ? `${human(d.ns[0])}..${human(d.ns.at(-1))}` : human(d.ns[0]))
const pair = (lo, hi) => /** @type {[number, number|null]} */ ([lo, hi])

/**
 * Every model fitted on the log scale, with its AICc, and the one with the least AICc (ties: fewer parameters, then
 * USL before linear-to-ceiling: a ceiling is said only when it fits better).
 * @param {LogData} d
 * @returns {Choice}
 */
export function chooseModel (d) {
  /** @type {Record<string, any>} */
  const fits = {}
  /** @type {Record<string, number|null>} */
  const aicc = {}
  for (const m of /** @type {const} */ (['amdahl', 'usl', 'ceiling'])) {
    if (d.ns.length < PARAMETERS[m]) continue
    const f = fitShape(d, m)
    fits[m] = { ...f, gamma: Math.exp(f.a) }
    aicc[m] = aiccOf(f.ssr, d.rows, PARAMETERS[m])
  }
  const ranked = Object.keys(aicc).filter(m => aicc[m] !== null).sort((a, b) => aicc[a] - aicc[b] || PARAMETERS[a] - PARAMETERS[b])
  // without AICc for any model (too few runs), the plainest model that fits
  const model = /** @type {'usl'|'amdahl'|'ceiling'} */ (ranked[0] ?? 'amdahl')
  const shown = ranked.map(m => `${NAMES[m]} ${aicc[m].toFixed(1)}`).join(', ')
  const left = Object.keys(fits).filter(m => aicc[m] === null).map(m => NAMES[m])
  const line = ranked.length
    ? `${NAMES[model]} fits best by AICc (${shown}${left.length ? `; ${left.join(', ')}: too few runs for AICc` : ''})`
    : `too few runs to choose a model by AICc (${d.rows} runs); Amdahl is read`
  return { model, aicc, fits, line }
}

/**
 * Did throughput fall? The largest drop of a later N's mean below an earlier N's (log scale), one-sided t against the
 * residual variance, Bonferroni over every pair of N. Null when no drop is significant at 5% across the pairs.
 * @param {LogData} d
 * @param {number} s2 residual variance of log throughput
 * @param {number} dof
 * @returns {Fell | null}
 */
export function fellOf (d, s2, dof) {
  const k = d.ns.length
  if (!(dof >= 1) || !(s2 > 0) || k < 2) return null
  const critical = tQuantile(1 - 0.05 / (k * (k - 1) / 2), dof)
  let best = null
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k; j++) {
      const t = (d.means[i] - d.means[j]) / Math.sqrt(s2 * (1 / d.counts[i] + 1 / d.counts[j]))
      if (t > critical && (!best || t > best.t)) best = { from: d.ns[i], to: d.ns[j], drop: 1 - Math.exp(d.means[j] - d.means[i]), t, critical }
    }
  }
  return best
}

/**
 * What the fit of one curve says beyond its parameters: the model AICc prefers, the ceiling model with its intervals,
 * and whether throughput fell. Read on the log scale whatever the weights of the requested fit.
 * @param {{ n: number, throughput: number, sd?: number, count?: number }[]} rows
 */
export function readingOf (rows) {
  const d = logData(rows)
  const choice = chooseModel(d)
  const cf = choice.fits.ceiling
  let ceilingFit = null
  if (cf) {
    const dof = d.rows - PARAMETERS.ceiling
    const regions = dof >= 1 && cf.ssr > 0 ? ceilingRegions(d, cf, dof) : null
    ceilingFit = {
      gamma: cf.gamma,
      ceiling: cf.gamma * cf.shape.c,
      changePoint: cf.shape.c,
      ssr: cf.ssr,
      aicc: choice.aicc.ceiling,
      dof,
      ci95: regions ? { changePoint: pair(regions.changePoint.lo, regions.changePoint.hi), ceiling: pair(regions.ceiling.lo, regions.ceiling.hi) } : null,
      linearInside: regions ? regions.changePoint.atBound : null
    }
  }
  if (choice.model === 'ceiling' && !(ceilingFit?.ci95?.changePoint[1] > 0)) {
    // a change point that may lie beyond the largest N is no ceiling shown: the next model by AICc is read
    const next = Object.keys(choice.aicc).filter(m => m !== 'ceiling' && choice.aicc[m] !== null).sort((a, b) => choice.aicc[a] - choice.aicc[b])[0]
    choice.model = /** @type {'usl'|'amdahl'} */ (next ?? 'amdahl')
    choice.line += `; its change point may lie beyond N = ${human(d.ns.at(-1))} (no ceiling shown), so ${NAMES[choice.model]} is read`
  }
  const chosen = choice.fits[choice.model]
  const dof = d.rows - PARAMETERS[choice.model]
  const fell = chosen ? fellOf(d, chosen.ssr / dof, dof) : null
  return { d, choice, ceilingFit, fell }
}

/**
 * Linearised standard errors on the log scale (log gamma, sigma, lambda): s² (JᵀJ)⁻¹ at the fit over the parameters
 * not at a bound (one held at its bound is no source of variance; keeping it made gamma's interval cover 99–100% on
 * linear truths). For gamma's interval (log gamma is nearly linear) and as a guide; sigma's and lambda's intervals are
 * profiles. Entries of parameters at a bound are null.
 * @returns {(number|null)[] | null} the variance of log gamma, sigma, lambda
 */
function logVariances (d, shape, model, s2) {
  const free = [true, shape.sigma > 0 && shape.sigma < 1, model === 'usl' && shape.lambda > 0]
  const cols = [0, 1, 2].filter(j => free[j])
  const a = cols.map(() => new Array(cols.length).fill(0))
  d.ns.forEach((n, j) => {
    const den = 1 + shape.sigma * (n - 1) + (shape.lambda ?? 0) * n * (n - 1)
    const all = [1, -(n - 1) / den, -n * (n - 1) / den]
    const g = cols.map(c => all[c])
    for (let r = 0; r < g.length; r++) for (let c = 0; c < g.length; c++) a[r][c] += d.counts[j] * g[r] * g[c]
  })
  const inv = invert(a)
  if (!inv) return null
  return [0, 1, 2].map(j => (cols.includes(j) && inv[cols.indexOf(j)][cols.indexOf(j)] >= 0 ? inv[cols.indexOf(j)][cols.indexOf(j)] * s2 : null))
}

/**
 * A term's interval, or why there is none: identified when its 95% region stays clear of 0 (and sigma clear of 1).
 * @param {LogData} d
 * @param {Region & { identified: boolean }} r
 * @param {'sigma'|'lambda'} term
 * @param {{ sigma: number, lambda: number }} shape
 * @param {number} s2
 */
function termOf (d, r, term, shape, s2) {
  const symbol = term === 'sigma' ? 'σ' : 'λ'
  if (r.identified) return { ci: pair(r.lo, r.hi), identified: true, bound: null, text: null }
  if (term === 'sigma' && r.hi >= 1 - 1e-9) {
    return {
      ci: null,
      identified: false,
      bound: null,
      text: `${symbol} is not identifiable from N = ${range(d)}: the data do not bound it below 1 (no scaling to measure)`
    }
  }
  const size = Math.max(shape[term], r.hi)
  const m = size > 0 ? identifyingN(d, { ...shape, [term]: size }, term, s2) : null
  const how = m === null
    ? 'no N up to 64 times the largest measured would tell it from 0 at this noise; repeat runs'
    : `a ${symbol} as large as ${human(size, 2)} would be told from 0 with N measured up to ${human(m)}`
  return {
    ci: null,
    identified: false,
    bound: r.hi,
    at: m,
    text: `${symbol} is not identifiable from N = ${range(d)}: it cannot be told from 0 (${symbol} ≤ ${human(r.hi, 2)} at 95%); ${how}`
  }
}

/**
 * What the reading needs of a model AICc chose other than the one asked for: which terms it identifies, their
 * intervals, its N* or asymptote interval (the same profiles as the fit's own).
 * @param {LogData} d
 * @param {'usl'|'amdahl'} model
 * @param {{ shape: { sigma?: number, lambda?: number }, a: number, ssr: number }} f
 */
function intervalsOf (d, model, f) {
  const dof = d.rows - PARAMETERS[model]
  if (!(dof >= 1 && f.ssr > 0)) return null
  const r = curveRegions(d, model, f, dof)
  const asym = model === 'amdahl' ? asymptoteRegion(d, f, dof) : null
  const term = x => (x?.identified ? pair(x.lo, x.hi) : null)
  return {
    identified: { sigma: r.sigma.identified, lambda: r.lambda ? r.lambda.identified : null },
    ci95: { sigma: term(r.sigma), lambda: term(r.lambda), nStar: r.nStar ? pair(r.nStar.lo, r.nStar.hi) : null, ceiling: asym ? pair(asym.lo, asym.hi) : null },
    bound95: { sigma: r.sigma.identified ? null : r.sigma.hi, lambda: r.lambda && !r.lambda.identified ? r.lambda.hi : null }
  }
}

/**
 * The fitted curve itself: sigma, lambda (0 for Amdahl), gamma, X(N), its peak N* (USL with lambda > 0 and sigma < 1)
 * and, where it has no peak, its asymptote gamma / sigma.
 * @param {'usl'|'amdahl'} model
 * @param {import('./fit-log.js').LogFit} f
 */
function curveOf (model, f) {
  const shape = { sigma: f.shape.sigma, lambda: model === 'usl' ? f.shape.lambda : 0 }
  const gamma = Math.exp(f.a)
  const peak = model === 'usl' && shape.lambda > 0 && shape.sigma < 1 ? Math.sqrt((1 - shape.sigma) / shape.lambda) : null
  /** @param {number} n */
  const xAt = n => gamma * n / (1 + shape.sigma * (n - 1) + shape.lambda * n * (n - 1))
  const asymptote = peak === null && shape.sigma > 0 ? gamma / shape.sigma : null
  return { shape, gamma, peak, xAt, asymptote }
}

/**
 * Linearised standard errors (logVariances) and gamma's t interval on the log scale: the degrees of freedom and the
 * variance over the parameters not held at a bound.
 * @param {LogData} d
 * @param {'usl'|'amdahl'} model
 * @param {number} ssr
 * @param {{ shape: { sigma: number, lambda: number }, gamma: number }} curve
 */
function spreadOf (d, model, ssr, { shape, gamma }) {
  const free = 1 + (shape.sigma > 0 && shape.sigma < 1 ? 1 : 0) + (model === 'usl' && shape.lambda > 0 ? 1 : 0)
  const dofGamma = d.rows - free
  const t = dofGamma >= 1 ? tQuantile(0.975, dofGamma) : NaN
  const variances = dofGamma >= 1 && ssr > 0 ? logVariances(d, shape, model, ssr / dofGamma) : null
  /** @param {number} j */
  const se = j => (variances && variances[j] !== null ? Math.sqrt(variances[j]) : null)
  const seA = se(0)
  return {
    se: { gamma: seA === null ? null : gamma * seA, sigma: se(1), lambda: model === 'usl' ? se(2) : null },
    gammaCi: seA === null ? null : pair(gamma * Math.exp(-t * seA), gamma * Math.exp(t * seA))
  }
}

/**
 * What is said of sigma and of lambda (USL only): termOf where there are profile regions, else that the runs leave
 * no degrees of freedom for an interval.
 * @param {LogData} d
 * @param {'usl'|'amdahl'} model
 * @param {{ sigma: number, lambda: number }} shape
 * @param {ReturnType<typeof curveRegions> | null} regions
 * @param {number} s2
 * @param {number} dof
 */
function termsOf (d, model, shape, regions, s2, dof) {
  const noDof = `no interval: ${d.rows} runs leave ${Math.max(0, dof)} degrees of freedom for ${PARAMETERS[model]} parameters`
  const sigma = regions ? termOf(d, regions.sigma, 'sigma', shape, s2) : { ci: null, identified: false, bound: null, text: `σ: ${noDof}` }
  const lambda = model !== 'usl'
    ? null
    : regions ? termOf(d, regions.lambda, 'lambda', shape, s2) : { ci: null, identified: false, bound: null, text: `λ: ${noDof}` }
  return { sigma, lambda }
}

/**
 * The terms' fields of the result, in its order: identified, bound95, identify, identifyAt.
 * @param {ReturnType<typeof termsOf>} terms
 */
function termFields ({ sigma, lambda }) {
  return {
    identified: { sigma: sigma.identified, lambda: lambda ? lambda.identified : null },
    bound95: { sigma: sigma.bound, lambda: lambda?.bound ?? null },
    identify: { sigma: sigma.text, lambda: lambda?.text ?? null },
    identifyAt: { sigma: sigma.at ?? null, lambda: lambda?.at ?? null }
  }
}

/**
 * R² on the log scale (the pure error included in the total), and adjusted for the degrees of freedom.
 * @param {LogData} d
 * @param {number} ssr
 * @param {number} dof
 */
function goodnessOf (d, ssr, dof) {
  const yMean = d.means.reduce((a, m, j) => a + d.counts[j] * m, 0) / d.rows
  const sst = d.pure + d.means.reduce((a, m, j) => a + d.counts[j] * (m - yMean) ** 2, 0)
  const r2 = sst > 0 ? 1 - ssr / sst : null
  return { r2, adjustedR2: r2 !== null && dof > 0 ? 1 - (1 - r2) * (d.rows - 1) / dof : null }
}

/**
 * The parameters held at a bound: sigma at 0 or 1, lambda (USL) at 0.
 * @param {'usl'|'amdahl'} model
 * @param {{ sigma: number, lambda: number }} shape
 */
function boundsOf (model, shape) {
  const bounds = []
  if (shape.sigma <= 0) bounds.push('sigma=0')
  else if (shape.sigma >= 1) bounds.push('sigma=1')
  if (model === 'usl' && shape.lambda <= 0) bounds.push('lambda=0')
  return bounds
}

/**
 * The model choice as the result shows it: every model's fit, and the intervals of the one AICc chose where it is
 * neither the model asked for nor the ceiling (intervalsOf).
 * @param {LogData} d
 * @param {Choice} choice
 * @param {'usl'|'amdahl'} model
 */
function choiceShown (d, choice, model) {
  return {
    model: choice.model,
    aicc: choice.aicc,
    line: choice.line,
    fits: Object.fromEntries(Object.entries(choice.fits).map(([m, x]) => [m, { gamma: x.gamma, ...x.shape, ssr: x.ssr }])),
    read: choice.model === model || choice.model === 'ceiling' ? null : intervalsOf(d, /** @type {'usl'|'amdahl'} */ (choice.model), choice.fits[choice.model])
  }
}

/**
 * USL or Amdahl fitted to runs with relative-error weighting (least squares on log throughput), with 95% profile
 * intervals. The result keeps fit-stats.js's FitResult fields (ssr and r2 on the log scale; ci95.sigma and
 * ci95.lambda null where not identifiable, said in `identify`) and adds the reading (readingOf).
 * @param {{ n: number, throughput: number, sd?: number, count?: number }[]} rows checked and sorted (preparePoints)
 * @param {{ model: 'usl'|'amdahl', unit?: string }} opts
 * @returns {any}
 */
export function fitRelative (rows, { model, unit }) {
  const { d, choice, ceilingFit, fell } = readingOf(rows)
  const f = choice.fits[model] ?? fitShape(d, model)
  const dof = d.rows - PARAMETERS[model]
  const s2 = dof > 0 ? f.ssr / dof : NaN
  const usable = dof >= 1 && s2 > 0
  const regions = usable ? curveRegions(d, model, f, dof) : null
  const curve = curveOf(model, f)
  const { shape, gamma, peak, xAt } = curve
  const spread = spreadOf(d, model, f.ssr, curve)
  const terms = termsOf(d, model, shape, regions, s2, dof)
  const asym = model === 'amdahl' && usable && curve.asymptote !== null ? asymptoteRegion(d, f, dof) : null
  const fitted = rows.map(r => xAt(r.n))
  return {
    model,
    weighting: 'relative',
    weighted: true,
    sigma: shape.sigma,
    lambda: shape.lambda,
    gamma,
    ...goodnessOf(d, f.ssr, dof),
    ssr: f.ssr,
    aicc: choice.aicc[model] ?? null,
    points: d.ns.length,
    observations: d.rows,
    dof,
    range: { min: d.ns[0], max: d.ns.at(-1) },
    residuals: rows.map((r, i) => ({ n: r.n, throughput: r.throughput, fitted: fitted[i], residual: r.throughput - fitted[i] })),
    se: spread.se,
    ci95: {
      gamma: spread.gammaCi,
      sigma: terms.sigma.ci,
      lambda: terms.lambda?.ci ?? null,
      nStar: peak !== null && regions?.nStar ? pair(regions.nStar.lo, regions.nStar.hi) : null,
      xStar: null,
      ceiling: asym ? pair(asym.lo, asym.hi) : null
    },
    ...termFields(terms),
    bounds: boundsOf(model, shape),
    nStar: peak,
    xStar: peak === null ? null : xAt(peak),
    ceiling: curve.asymptote,
    limitedBy: '',
    efficiency: meansByN(rows).map(m => ({ n: m.n, efficiency: m.throughput / (gamma * m.n), model: xAt(m.n) / (gamma * m.n) })),
    verdict: '',
    unit: unit ?? 'N',
    choice: choiceShown(d, choice, model),
    ceilingFit,
    fell
  }
}
