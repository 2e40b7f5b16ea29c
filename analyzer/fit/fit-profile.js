// Profile-likelihood intervals of the relative-error fits (analyzer/fit/fit-log.js): a value is in the 95% interval
// when
// refitting with it held raises the SSR by no more than F(1, dof) times the residual variance (the profile t of Bates
// & Watts); at a parameter's bound (sigma or lambda = 0, no peak, no ceiling) the one-sided 90% cutoff applies, the
// 95% quantile of the boundary's half-chi-square mixture (Self & Liang). Identifiability and which N would identify.
import { tQuantile, invert } from '../stats/stats-math.js'
import { fitShape, minimize1, ssrOfShape, changeGrid, lambdaGrid, SIGMA_GRID } from './fit-log.js'

/**
 * @typedef {import('./fit-log.js').LogData} LogData
 * @typedef {import('./fit-log.js').ShapeModel} ShapeModel
 * @typedef {{ lo: number | null, hi: number | null, atBound: boolean, boundStat?: number | null }} Region lo/hi null:
 *   open (the region runs to the end of the parameter's range, e.g. no upper end for N*); atBound: the bound value (0,
 *   or no peak/ceiling) is in; boundStat: the profile statistic there (null when the estimate is at the bound)
 */

/** The cutoffs of the profile statistic at 95%: c95 inside the range, c90 at a bound. */
export function cutoffs (dof) {
  if (!CUTOFFS.has(dof)) {
    const t95 = tQuantile(0.975, dof)
    const t90 = tQuantile(0.95, dof)
    CUTOFFS.set(dof, { c95: t95 * t95, c90: t90 * t90 })
  }
  return CUTOFFS.get(dof)
}

/** @type {Map<number, { c95: number, c90: number }>} */
const CUTOFFS = new Map()

/**
 * The region {θ : stat(θ) <= c95} around the estimate, found by probing outward and bisecting.
 * @param {(x: number) => number} stat
 * @param {number} est
 * @param {{ up: number[], down: number[], c95: number, c90: number, bound?: 'lo'|'hi', openLo?: boolean, openHi?:
 *   boolean }} o probes above and below the estimate, outward; bound: which end is the parameter's bound (the c90
 *   rule); openLo/openHi: reaching the last probe on that side leaves the end open (null) instead of at that probe
 * @returns {Region}
 */
export function regionOf (stat, est, { up, down, c95, c90, bound, openLo = false, openHi = false }) {
  let boundStat = null
  const side = (probes, isBound, open) => {
    let inside = est
    for (let i = 0; i < probes.length; i++) {
      const x = probes[i]
      const last = i === probes.length - 1
      const v = stat(x)
      if (last && isBound) boundStat = v
      const cut = last && isBound ? c90 : c95
      if (v > cut) {
        // at the bound, past the 95% cutoff inside: the end is the crossing of c95 if there is one, else of c90
        let target = c95
        if (last && isBound && v <= c95) target = c90
        let a = inside
        let b = x
        for (let k = 0; k < 11; k++) {
          const m = (a + b) / 2
          if (stat(m) > target) b = m; else a = m
        }
        return { end: (a + b) / 2, reached: false }
      }
      inside = x
    }
    return { end: open ? null : inside, reached: true }
  }
  const hi = side(up, bound === 'hi', openHi)
  const lo = side(down, bound === 'lo', openLo)
  return { lo: lo.end, hi: hi.end, atBound: bound === 'lo' ? lo.reached : bound === 'hi' ? hi.reached : false, boundStat }
}

/**
 * The finite end of a one-sided statement ("σ ≤ hi", "N* ≥ lo"): where the other end is open or at its bound, the
 * printed bound is one-sided, so its end is the crossing of the one-sided cutoff c90 (a 95% bound, not 97.5%).
 * @param {(x: number) => number} stat
 * @param {number} est
 * @param {number[]} probes outward on the finite side
 * @param {number} c90
 * @param {boolean} open reaching the last probe leaves the end open (null)
 */
function oneSidedEnd (stat, est, probes, c90, open = false) {
  return regionOf(stat, est, { up: probes, down: [], c95: c90, c90, openHi: open }).hi
}

/** Golden-section steps inside a profile's refit: its SSR is flat near the least, so a coarser search is as exact. */
const PROFILE_STEPS = 12

const outward = (est, list, dir) => list.filter(x => (dir > 0 ? x > est * (1 + 1e-9) + 1e-15 : x < est * (1 - 1e-9) - 1e-15))

/**
 * The profile statistic of a fit: (SSR with some values held - SSR at the optimum) / s².
 * @param {LogData} d
 * @param {ShapeModel} model
 * @param {number} ssrMin
 * @param {number} s2
 */
function statistic (d, model, ssrMin, s2) {
  return held => Math.max(0, (fitShape(d, model, held, PROFILE_STEPS).ssr - ssrMin) / s2)
}

/**
 * Whether a term is identified — its region clear of 0 at the two-sided cutoff (a 2.5% test, so that few terms are
 * claimed that are not there), and sigma's clear of 1. When not, the region's top is printed as a bound ("≤ hi"): at
 * the two-sided cutoff, a conservative one-sided bound (97.5% where the profile is regular; at one-sided 95% it
 * covered 91% in the small designs of calibration/scenarios/fit.js).
 * @param {Region} r
 * @param {number} dof
 * @param {boolean} unit the parameter's range ends at 1 (sigma)
 * @returns {Region & { identified: boolean }}
 */
function identify (r, dof, unit) {
  const atOne = unit && r.hi >= 1 - 1e-9
  return { ...r, identified: !r.atBound && r.lo > 0 && (r.boundStat === null || r.boundStat > cutoffs(dof).c95) && !atOne }
}

/**
 * 95% profile regions of sigma and lambda (USL), sigma (Amdahl), and N* (USL).
 * @param {LogData} d
 * @param {ShapeModel} model
 * @param {{ shape: { sigma?: number, lambda?: number }, ssr: number }} fit
 * @param {number} dof
 * @typedef {Region & { identified: boolean }} TermRegion
 * @returns {{ sigma: TermRegion, lambda: TermRegion | null, nStar: Region | null }}
 */
export function curveRegions (d, model, fit, dof) {
  const s2 = fit.ssr / dof
  const { c95, c90 } = cutoffs(dof)
  const stat = statistic(d, model, fit.ssr, s2)
  const sigma = fit.shape.sigma
  const sigmaUp = [0.01, 0.03, 0.07, 0.15, 0.3, 0.5, 0.75, 1].map(f => sigma + (1 - sigma) * f)
  const sigmaDown = [0.85, 0.6, 0.35, 0.15, 0.05, 0].map(f => sigma * f)
  const rs = identify(regionOf(x => stat({ sigma: x }), sigma, {
    up: outward(sigma, sigmaUp, 1),
    down: outward(sigma, sigmaDown, -1),
    c95,
    c90,
    bound: 'lo'
  }), dof, true)
  if (model !== 'usl') return { sigma: rs, lambda: null, nStar: null }
  const lambda = fit.shape.lambda
  const grid = lambdaGrid(d.ns.at(-1))
  const up = lambda > 0 ? [lambda * 1.3, ...grid.filter(g => g > lambda * 1.3)] : grid.slice(1)
  const down = lambda > 0 ? [lambda * 0.75, ...grid.filter(g => g > 0 && g < lambda * 0.75).reverse(), 0] : []
  const rl = identify(regionOf(x => stat({ lambda: x }), lambda, { up, down, c95, c90, bound: 'lo' }), dof, false)
  const rn = lambda > 0 && sigma < 1 ? peakRegion(d, fit, dof, { c95, c90 }) : null
  return { sigma: rs, lambda: rl, nStar: rn }
}

/**
 * The profile region of the USL's peak N* = sqrt((1 - sigma) / lambda) (held at m, lambda follows sigma) at the
 * cutoffs given (95%: cutoffs(dof); an adaptive look's level: its own). An open top: the peak may lie beyond any N,
 * and then the region also holds "no peak" when lambda = 0 is in; its low end is then a one-sided bound. A fit with no
 * peak (lambda = 0) has only that low end: the least N* the data allow.
 * @param {LogData} d
 * @param {{ shape: { sigma?: number, lambda?: number }, ssr: number }} fit a USL fit
 * @param {number} dof
 * @param {{ c95: number, c90: number }} cut
 * @returns {Region}
 */
export function peakRegion (d, fit, dof, { c95, c90 }) {
  const stat = statistic(d, 'usl', fit.ssr, fit.ssr / dof)
  const { sigma = 0, lambda = 0 } = fit.shape
  const atM = m => stat({ tie: s => (1 - s) / (m * m) })
  const down = [0.95, 0.85, 0.7, 0.5, 0.3, 0.15]
  if (!(lambda > 0 && sigma < 1)) {
    // from far beyond the largest N (where the curve is the no-peak fit's) down to below the smallest
    const far = d.ns.at(-1) * 1e4
    const lo = oneSidedEnd(atM, far, [1e3, 100, 30, 10, 5, 3, 2, 1.5, 1.2, 1, 0.8, 0.6, 0.4, 0.25, 0.1, 0.03].map(f => d.ns.at(-1) * f), c90)
    return { lo, hi: null, atBound: true, boundStat: null }
  }
  const nStar = Math.sqrt((1 - sigma) / lambda)
  const noPeak = stat({ lambda: 0 })
  const rn = regionOf(atM, nStar, {
    up: [1.05, 1.15, 1.3, 1.6, 2, 3, 5, 10, 30, 100].map(f => nStar * f),
    down: down.map(f => nStar * f),
    c95,
    c90,
    openHi: true
  })
  if (rn.hi === null || noPeak <= c95) {
    rn.hi = null
    rn.atBound = noPeak <= c95
    rn.lo = oneSidedEnd(atM, nStar, down.map(f => nStar * f), c90)
  }
  return rn
}

/**
 * 95% profile region of the Amdahl asymptote gamma / sigma (open at the top when sigma = 0 is in).
 * @param {LogData} d
 * @param {{ shape: { sigma?: number }, a: number, ssr: number }} fit
 * @param {number} dof
 * @returns {Region | null}
 */
export function asymptoteRegion (d, fit, dof) {
  const sigma = fit.shape.sigma
  if (!(sigma > 0)) return null
  const est = Math.exp(fit.a) / sigma
  const { c95, c90 } = cutoffs(dof)
  const s2 = fit.ssr / dof
  // held at C: gamma = C sigma, so log gamma follows sigma
  const stat = C => Math.max(0, (minimize1(s => (s > 0 ? ssrOfShape(d, 'amdahl', { sigma: s, lambda: 0 }, Math.log(C * s)).ssr : Infinity),
    SIGMA_GRID.filter(s => s > 0)).v - fit.ssr) / s2)
  const r = regionOf(stat, est, {
    up: [1.01, 1.03, 1.07, 1.15, 1.3, 1.6, 2.2, 3.5, 6, 12, 30].map(f => est * f),
    down: [0.99, 0.97, 0.93, 0.85, 0.7, 0.5, 0.3].map(f => est * f),
    c95,
    c90,
    openHi: true
  })
  const noLimit = Math.max(0, (fitShape(d, 'amdahl', { sigma: 0 }).ssr - fit.ssr) / s2)
  if (noLimit <= c95) r.hi = null
  if (r.hi === null) r.lo = oneSidedEnd(stat, est, [0.99, 0.97, 0.93, 0.85, 0.7, 0.5, 0.3].map(f => est * f), c90)
  r.atBound = noLimit <= c95
  return r
}

/**
 * 95% profile regions of the ceiling model's change point c and ceiling C = gamma c. c's region is open below when
 * the ceiling may already hold at the first N, open above (and C's with it) when the curve may be linear throughout.
 * @param {LogData} d
 * @param {{ shape: { c?: number }, a: number, ssr: number }} fit
 * @param {number} dof
 * @returns {{ changePoint: Region, ceiling: Region }}
 */
export function ceilingRegions (d, fit, dof) {
  const { c95, c90 } = cutoffs(dof)
  const s2 = fit.ssr / dof
  const stat = statistic(d, 'ceiling', fit.ssr, s2)
  const c = fit.shape.c
  const grid = changeGrid(d)
  const first = d.ns[0]
  const last = d.ns.at(-1)
  const rc = regionOf(x => stat({ c: x }), c, { up: outward(c, grid, 1), down: outward(c, grid, -1).reverse(), c95, c90, openLo: true, openHi: true })
  // c at or beyond the last N is a straight line: "no ceiling", kept in at the two-sided cutoff (claimed when clear)
  const linear = stat({ c: last })
  if (linear <= c95) rc.hi = null
  else if (rc.hi === null) rc.hi = last
  rc.atBound = linear <= c95
  if (rc.lo === null && stat({ c: first }) > c95) rc.lo = first
  // one end open: the other is a one-sided bound
  if (rc.lo === null && rc.hi !== null) rc.hi = oneSidedEnd(x => stat({ c: x }), c, outward(c, grid, 1), c90) ?? last
  else if (rc.hi === null && rc.lo !== null) rc.lo = oneSidedEnd(x => stat({ c: x }), c, outward(c, grid, -1).reverse(), c90) ?? first
  const C = Math.exp(fit.a) * c
  const statC = v => Math.max(0, (minimize1(x => ssrOfShape(d, 'ceiling', { c: x }, Math.log(v / x)).ssr, grid).v - fit.ssr) / s2)
  const rC = regionOf(statC, C, {
    up: [1.005, 1.01, 1.02, 1.04, 1.08, 1.15, 1.3, 1.6, 2.2, 4].map(f => C * f),
    down: [0.995, 0.99, 0.98, 0.96, 0.92, 0.85, 0.7, 0.5].map(f => C * f),
    c95,
    c90,
    openHi: true
  })
  if (linear <= c95) rC.hi = null
  if (rC.hi === null) rC.lo = oneSidedEnd(statC, C, [0.995, 0.99, 0.98, 0.96, 0.92, 0.85, 0.7, 0.5].map(f => C * f), c90)
  return { changePoint: rc, ceiling: rC }
}

/**
 * The smallest largest-N (doubling from the largest measured) at which a USL term of the given size would be told
 * from 0 about 80% of the time (its value at least 2.8 = 1.96 + 0.84 expected standard errors, from the expected
 * information on the log scale) with the same runs per N and the same noise; null when not within 64 times the
 * largest N.
 * @param {LogData} d
 * @param {{ sigma: number, lambda: number }} shape the curve, with the term at the size to detect
 * @param {'sigma'|'lambda'} term
 * @param {number} s2 the residual variance of log throughput
 */
export function identifyingN (d, shape, term, s2) {
  const runs = [...d.counts].sort((a, b) => a - b)[Math.floor(d.counts.length / 2)]
  const j = term === 'sigma' ? 1 : 2
  const nMax = d.ns.at(-1)
  const ns = [...d.ns]
  const counts = [...d.counts]
  for (let m = nMax * 2; m <= nMax * 64; m *= 2) {
    ns.push(m)
    counts.push(runs)
    const info = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
    ns.forEach((n, i) => {
      const den = 1 + shape.sigma * (n - 1) + shape.lambda * n * (n - 1)
      const g = [1, -(n - 1) / den, -n * (n - 1) / den]
      for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) info[r][c] += counts[i] * g[r] * g[c] / s2
    })
    const inv = invert(info)
    if (inv && inv[j][j] > 0 && shape[term] >= 2.8 * Math.sqrt(inv[j][j])) return m
  }
  return null
}
