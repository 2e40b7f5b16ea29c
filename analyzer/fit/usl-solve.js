// Bounded least squares for USL/Amdahl: Levenberg-Marquardt over the parameters of a layout, in every face of the box
// sigma, lambda in [0, 1]. A layout maps each group of rows to its gamma, sigma and lambda: one group for a fit, two
// groups sharing a parameter for a test between groups.
import { levenbergMarquardt } from 'ml-levenberg-marquardt'
import { fail } from '../../lib/messages.js'
import { MODELS, throughputAt, gradientAt } from './usl-model.js'

/**
 * @typedef {{ gamma: number, sigma: number, lambda: number }} Params
 * @typedef {{ gamma: string, sigma: string, lambda: string|null }} Curve names of one group's parameters (lambda null:
 *   Amdahl)
 * @typedef {{ names: string[], curves: Curve[] }} Layout every parameter's name, and each group's curve
 * @typedef {{ ns: number[], xs: number[], w: number[], scale: number, model: 'usl'|'amdahl', group?: number[],
 *   layout?: Layout }} FitData rows (N, throughput, weight); group: each row's group (default 0)
 * @typedef {Record<string, number>} Values a value per parameter name
 */

/** The layout of one curve fitted alone: parameters gamma, sigma (and lambda for USL). */
export function singleLayout (model) {
  return { names: [...MODELS[model]], curves: [{ gamma: 'gamma', sigma: 'sigma', lambda: model === 'usl' ? 'lambda' : null }] }
}

const layoutOf = (/** @type {FitData} */ data) => data.layout ?? singleLayout(data.model)
const kindOf = name => /** @type {'gamma'|'sigma'|'lambda'} */ (name.replace(/[^a-z].*$/, ''))

/**
 * The curve of one group under these values.
 * @param {Curve} c
 * @param {Values} v
 * @returns {Params}
 */
export function curveParams (c, v) {
  return { gamma: v[c.gamma], sigma: v[c.sigma], lambda: c.lambda ? v[c.lambda] : 0 }
}

/**
 * Weighted sum of squared residuals of values over the data (in throughput units).
 * @param {FitData} data
 * @param {Values} v
 */
export function ssrOf (data, v) {
  const curves = layoutOf(data).curves.map(c => curveParams(c, v))
  let s = 0
  for (let i = 0; i < data.ns.length; i++) s += data.w[i] * (data.xs[i] - throughputAt(data.ns[i], curves[data.group?.[i] ?? 0])) ** 2
  return s
}

/**
 * Levenberg-Marquardt (ml-levenberg-marquardt) from one start over the parameters not pinned. Throughput is scaled
 * to ~1 and weights enter as sqrt(w) on both sides, so the library's unweighted least squares minimises the weighted
 * sum. The library has no relative stopping rule: it runs in short passes until a pass stops improving.
 * @param {FitData} data
 * @param {Values} start
 * @param {{ pins?: Values, passes?: number }} [opts] pins: parameters held at a value (a bound); passes: at most so
 *   many passes of 10 iterations (one for a start already near the optimum)
 * @returns {{ params: Values, ssr: number }}
 */
export function solveFrom (data, start, { pins = {}, passes = 100 } = {}) {
  const { names, curves } = layoutOf(data)
  const free = names.filter(n => pins[n] === undefined)
  const rw = data.w.map(Math.sqrt)
  const idx = data.ns.map((_, i) => i)
  const y = data.xs.map((x, i) => x / data.scale * rw[i])
  const groupOf = i => data.group?.[i] ?? 0
  // in scaled units: gamma / scale
  const scaled = v => {
    /** @type {Values} */
    const p = { ...pins }
    free.forEach((n, j) => { p[n] = v[j] })
    return p
  }
  const toParams = v => {
    const p = scaled(v)
    for (const n of names) if (kindOf(n) === 'gamma') p[n] *= data.scale
    return p
  }
  // the Jacobian's column j: d X / d (free parameter j), over the parameters of the row's curve
  const cols = curves.map(c => free.map(n => ['gamma', 'sigma', 'lambda'].filter(k => c[k] === n)))
  const fn = v => { const p = scaled(v); const cs = curves.map(c => curveParams(c, p)); return i => rw[i] * throughputAt(data.ns[i], cs[groupOf(i)]) }
  const jac = v => {
    const p = scaled(v)
    const cs = curves.map(c => curveParams(c, p))
    return i => {
      const g = groupOf(i)
      const d = gradientAt(data.ns[i], cs[g], 3)
      return cols[g].map(kinds => kinds.reduce((a, k) => a + d[['gamma', 'sigma', 'lambda'].indexOf(k)], 0) * rw[i])
    }
  }
  let v = free.map(n => (kindOf(n) === 'gamma' ? start[n] / data.scale : start[n]))
  let best = { params: toParams(v), ssr: ssrOf(data, toParams(v)) }
  if (!Number.isFinite(best.ssr)) best.ssr = Infinity
  for (let pass = 0; pass < passes; pass++) {
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

/**
 * Which parameters may sit at which bound: every combination (sigma at 0 or 1, lambda at 0), the first name's choice
 * outermost, no pin first. One curve has at most six; two curves sharing one parameter at most eighteen.
 * @param {string[]} names
 * @returns {Values[]}
 */
export function pinSets (names) {
  let sets = [{}]
  for (const n of names) {
    const kind = kindOf(n)
    if (kind === 'gamma') continue
    const choices = kind === 'sigma' ? [undefined, 0, 1] : [undefined, 0]
    sets = sets.flatMap(s => choices.map(c => (c === undefined ? s : { ...s, [n]: c })))
  }
  return sets
}

/** sigma, lambda in [0, 1] and gamma > 0 (a hair outside 0 is numerical noise and is clipped). */
function feasible (p, names) {
  return names.every(n => (kindOf(n) === 'gamma' ? p[n] > 0 && Number.isFinite(p[n]) : p[n] >= -1e-10 && p[n] <= 1 + 1e-10))
}

function interior (p, names) {
  return names.every(n => {
    const kind = kindOf(n)
    if (kind === 'sigma') return p[n] > 1e-6 && p[n] < 1 - 1e-6
    return kind !== 'lambda' || (p[n] > 1e-12 && p[n] < 1 - 1e-6)
  })
}

/**
 * A cheaper bounded answer for simulations (thousands of refits) from starts near the optimum: a pass from each
 * start with nothing pinned, every parameter that left the box pinned at the bound it crossed, again, until none
 * leaves it. It can miss the best face when a pinned parameter should come back inside; the F tests on measured
 * data use solve's full search.
 * @param {FitData} data
 * @param {Values[]} starts
 * @param {{ passes?: number }} [opts] passes of 10 iterations per start (1: the start is near the optimum)
 * @returns {{ params: Values, ssr: number }}
 */
export function solveProjected (data, starts, { passes = 1 } = {}) {
  const { names } = layoutOf(data)
  /** @type {Values} */
  let pins = {}
  for (let round = 0; round <= names.length; round++) {
    let best = null
    for (const s of starts) {
      const r = solveFrom(data, s, { pins, passes })
      if (!best || r.ssr < best.ssr) best = r
    }
    if (!names.every(n => kindOf(n) !== 'gamma' || best.params[n] > 0)) break
    const out = {}
    for (const n of names.filter(x => kindOf(x) !== 'gamma')) {
      if (best.params[n] < -1e-10) out[n] = 0
      else if (best.params[n] > 1 + 1e-10) out[n] = kindOf(n) === 'sigma' ? 1 : 0
    }
    if (!Object.keys(out).length) return best
    pins = { ...pins, ...out }
  }
  throw fail('NO_CURVE_FITS')
}

/**
 * The bounded least-squares answer: the unconstrained optimum in every face of the box (parameters pinned at
 * their bounds), the best feasible one kept. Ties go to the answer with more parameters at a bound, so a
 * coherency term that buys nothing is reported as "lambda = 0", not as 1e-12.
 * `quick` (for bootstrap refits and simulations) stops at the unconstrained optimum when it lies well inside the box.
 * @param {FitData} data
 * @param {Values[]} starts
 * @param {{ quick?: boolean }} [opts]
 * @returns {{ params: Values, ssr: number, bounds: string[] }}
 */
export function solve (data, starts, { quick = false } = {}) {
  const { names } = layoutOf(data)
  let best = null
  for (const pins of pinSets(names)) {
    if (quick && best && best.pinned === 0 && interior(best.params, names)) break
    for (const s of starts) {
      const r = solveFrom(data, s, { pins })
      if (!feasible(r.params, names)) continue
      const params = { ...r.params }
      for (const n of names) if (kindOf(n) !== 'gamma') params[n] = Math.min(1, Math.max(0, params[n]))
      const cand = { params, ssr: ssrOf(data, params), pinned: Object.keys(pins).length }
      if (!best || cand.ssr < best.ssr * (1 - 1e-9) - 1e-300 || (cand.ssr <= best.ssr * (1 + 1e-9) && cand.pinned > best.pinned)) best = cand
    }
  }
  if (!best) throw fail('NO_CURVE_FITS')
  const bounds = []
  for (const name of names.filter(n => kindOf(n) !== 'gamma')) {
    if (best.params[name] <= 0) bounds.push(`${name}=0`)
    else if (best.params[name] >= 1) bounds.push(`${name}=1`)
  }
  // one Amdahl curve alone still says its lambda: 0
  const params = layoutOf(data).curves.length === 1 ? { lambda: 0, ...best.params } : best.params
  return { params, ssr: best.ssr, bounds }
}
