// A knee question (issue 30): where a strategy's throughput peaks, the USL's N* = sqrt((1 − σ) / λ), to ±precision,
// measured at whole N that the rule chooses between declared bounds (the grid's instances or not). Each look fits the
// USL to every deployment's throughput (relative errors, analyzer/fit/fit-log.js) and takes N*'s profile region at the
// level this look may spend (Lan–DeMets over the planned looks, adaptive-spending.js): a repeated interval, valid at
// whichever look the sweep stops. It stops once that interval is within ±precision of N* ("estimated"), or lies wholly
// above the bounds ("beyond": throughput still rises at the most instances allowed). The next block goes where it
// shrinks N*'s variance most per second of measuring (a c-optimal design: the delta method on the fit's information,
// each N's cost measured or estimated). calibration/scenarios/adaptive.js holds its coverage and time.
import { fitShape, logData } from '../fit/fit-log.js'
import { peakRegion } from '../fit/fit-profile.js'
import { ALPHA } from './inference.js'
import { invert, tQuantile } from './stats-math.js'
import { checkPlan, spendingBoundary } from './adaptive-spending.js'
import { KNEE_SPAN } from './adaptive-question.js'
import { blockText, levelText, num, pct } from './adaptive-text.js'

/** Deployments of each of the first block's N (KNEE_SPAN of them, spread over the bounds). */
export const FIRST_DEPLOYMENTS = 2
/** Deployments of a later block, each placed by the design. */
export const KNEE_BLOCK = 2
/** The least alpha an interval is computed at (an early O'Brien–Fleming look of very many can spend 0 in doubles). */
const TINY_ALPHA = 1e-12

/**
 * The cells a knee question may measure: its strategy at every whole N within its bounds.
 * @param {{ a: string, between?: [number, number] }} q checked (checkQuestion)
 */
export function kneeCells ({ a, between: [lo, hi] = [1, 1] }) {
  return Array.from({ length: hi - lo + 1 }, (_, i) => `${a}@${lo + i}`)
}

/**
 * The first block's N: KNEE_SPAN whole numbers spread evenly on the log scale from the least bound to the most,
 * distinct (the USL's three parameters and a residual need four).
 * @param {[number, number]} between
 */
export function firstPoints ([lo, hi]) {
  const ns = []
  for (let k = 0; k < KNEE_SPAN; k++) {
    const want = Math.round(lo * (hi / lo) ** (k / (KNEE_SPAN - 1)))
    ns.push(Math.min(hi - (KNEE_SPAN - 1 - k), Math.max(want, k ? ns[k - 1] + 1 : lo)))
  }
  return ns
}

/**
 * One look of a knee question (decideQuestion's, for a question with knee:): the peak and its repeated interval, the
 * verdict, and the next block.
 * @param {ReturnType<import('./adaptive-question.js').checkQuestion>} q checked
 * @param {Record<string, number[]>} cells every cell of kneeCells(q) → its deployments' values (checked > 0)
 * @param {import('./adaptive.js').DecideOptions} opts
 * @returns {import('./adaptive.js').Decision}
 */
export function decideKnee (q, cells, opts) {
  const o = kneeLook(q, cells, opts)
  const fill = firstFill(o)
  if (!fittable(o.rows)) return untested(o, fill.length ? fill : firstBlock(q, 1), `the first block (${blockText(fill)}) is not measured yet`)
  const k = kneeInterval(o.rows, o.alphaThisLook)
  if (!k) return untested(o, firstBlock(q, 1), 'no value varies')
  const { estimate, peak, fit, dof, d } = k
  const level = estimate.level
  const interval = `${num(estimate.ratio)} (${levelText(level)} repeated interval ${num(estimate.lo)}–${num(estimate.hi)})`
  const at = `at look ${o.look} of ${o.maxLooks}`
  const decided = { ...o.base, estimate, p: null, pEquivalence: null, direction: null, next: [], gain: null, needed: null, stop: true }
  const within = peak !== null && estimate.hi !== null ? Math.max(estimate.hi / peak - 1, 1 - estimate.lo / peak) : Infinity
  if (within <= q.precision) {
    return { ...decided, verdict: 'estimated', why: `${o.name} is ${interval}: within ±${pct(within)}, the ±${pct(q.precision)} asked, ${at}` }
  }
  const [, hi] = q.between
  if (estimate.lo > hi) {
    return {
      ...decided,
      verdict: 'beyond',
      why: `${o.name} is ${interval}: above N=${hi}, the most asked, ${at}: throughput still rises there, so the peak is beyond the bounds`
    }
  }
  const short = within === Infinity ? 'its interval has no upper end' : `±${pct(within)}`
  if (o.look >= o.maxLooks) {
    return {
      ...decided,
      verdict: 'undecided',
      why: `undecided after ${o.look} of ${o.maxLooks} looks: ${o.name} is ${interval}, ${short}, not within ±${pct(q.precision)}; ` +
        `more deployments where the design puts them (near and beyond N=${num(Math.min(hi, peak ?? hi))}) would narrow it`
    }
  }
  const next = designNext(o, fit, dof, d)
  const then = `next: ${blockText(next.block)} narrows the interval by ${pct(next.narrowsBy)}${o.known ? ` for ${num(next.seconds)} s` : ''}`
  return {
    ...decided,
    verdict: 'continue',
    stop: false,
    next: next.block,
    gain: { narrowsBy: next.narrowsBy, seconds: o.known ? next.seconds : null },
    why: `${o.name} is ${interval} ${at}: ${short}, not yet within ±${pct(q.precision)}; ${then}`
  }
}

/**
 * The USL's peak fitted to deployments' throughput (relative errors) with its profile region at level 1 − alpha:
 * `estimate` { ratio: N* (null where the fit has no peak), lo, hi (null: open above), level }; null where no value
 * varies. Two-sided where the region closes, one-sided (its low end) where it is open above.
 * @param {{ n: number, throughput: number }[]} rows
 * @param {number} alpha
 */
export function kneeInterval (rows, alpha) {
  const d = logData(rows)
  const fit = fitShape(d, 'usl')
  const dof = d.rows - 3
  if (!(fit.ssr > 0) || dof < 1) return null
  const a = Math.max(alpha, TINY_ALPHA)
  const region = peakRegion(d, fit, dof, { c95: tQuantile(1 - a / 2, dof) ** 2, c90: tQuantile(1 - a, dof) ** 2 })
  const { sigma = 0, lambda = 0 } = fit.shape
  const peak = lambda > 0 && sigma < 1 ? Math.sqrt((1 - sigma) / lambda) : null
  const estimate = { ratio: peak, lo: /** @type {number} */ (region.lo), hi: region.hi, level: 1 - alpha }
  return { estimate, peak, fit, dof, d }
}

/**
 * What a knee look decides from: the deployments as rows (N, throughput), each candidate N's cost, the alpha this
 * look may spend and has spent, and the fields every decision carries.
 * @param {any} q @param {Record<string, number[]>} cells @param {import('./adaptive.js').DecideOptions} opts
 */
function kneeLook (q, cells, opts) {
  const { look, maxLooks, alpha = ALPHA, spending = 'obrien-fleming', costs = {} } = opts
  checkPlan({ maxLooks, alpha, spending })
  const increments = spendingBoundary({ maxLooks, alpha, spending })
  const keys = kneeCells(q)
  const nOf = (key) => Number(key.split('@')[1])
  const rows = keys.flatMap(key => (cells[key] ?? []).map(throughput => ({ n: nOf(key), throughput })))
  const given = keys.map(k => costs[k]).filter(c => typeof c === 'number' && c > 0)
  const fallback = given.length ? given.reduce((x, y) => x + y, 0) / given.length : 1
  const measured = keys.filter(k => cells[k]?.length)
  return {
    q,
    look,
    maxLooks,
    cells,
    rows,
    candidates: keys.map(key => ({ key, n: nOf(key), cost: costs[key] > 0 ? costs[key] : fallback })),
    known: given.length === keys.length,
    increments,
    alphaThisLook: look > 0 ? increments[look - 1] : 0,
    name: `${q.a}'s peak N*`,
    base: {
      look,
      maxLooks,
      alphaSpent: increments.slice(0, look).reduce((x, y) => x + y, 0),
      alphaThisLook: look > 0 ? increments[look - 1] : 0,
      cells: measured.map(cell => ({ cell, n: cells[cell].length, sdLog: sdLogOf(cells[cell]) }))
    }
  }
}

/** @typedef {ReturnType<typeof kneeLook>} KneeLook */

/** The sd of a cell's log values (null under 2). @param {number[]} xs */
function sdLogOf (xs) {
  if (xs.length < 2) return null
  const ls = xs.map(Math.log)
  const m = ls.reduce((x, y) => x + y, 0) / ls.length
  return Math.sqrt(ls.reduce((s, x) => s + (x - m) ** 2, 0) / (ls.length - 1))
}

/** The first block: each of its N (firstPoints), `deployments` times. @param {any} q @param {number} deployments */
export const firstBlock = (q, deployments) => firstPoints(q.between).map(n => ({ cell: `${q.a}@${n}`, deployments }))

/** What the first block still lacks: each of its N to FIRST_DEPLOYMENTS. @param {KneeLook} o */
function firstFill (o) {
  return firstBlock(o.q, FIRST_DEPLOYMENTS)
    .map(x => ({ ...x, deployments: Math.max(0, x.deployments - (o.cells[x.cell]?.length ?? 0)) }))
    .filter(x => x.deployments > 0)
}

/**
 * Whether the USL can be fitted with a residual to judge it by: 3 distinct N at least and 2 degrees of freedom (a
 * deployment of the first block left out, not valid, does not hold the look back).
 * @param {{ n: number }[]} rows
 */
const fittable = (rows) => new Set(rows.map(r => r.n)).size >= 3 && rows.length - 3 >= 2

/**
 * A look before the peak can be fitted: undecided at the last look, else the block that fills the first design.
 * @param {KneeLook} o @param {{ cell: string, deployments: number }[]} block @param {string} cause
 * @returns {import('./adaptive.js').Decision}
 */
function untested (o, block, cause) {
  const none = { ...o.base, estimate: null, p: null, pEquivalence: null, direction: null, gain: null, needed: null }
  if (o.look >= o.maxLooks) {
    const why = `undecided after ${o.look} of ${o.maxLooks} looks: ${cause} before ${o.name} can be fitted`
    return { ...none, verdict: 'undecided', stop: true, next: [], why }
  }
  const seconds = block.reduce((t, b) => t + b.deployments * o.candidates.find(c => c.key === b.cell).cost, 0)
  const why = `${cause} before ${o.name} can be fitted; next: ${blockText(block)}${o.known ? ` (${num(seconds)} s)` : ''}`
  return { ...none, verdict: 'continue', stop: false, next: block, why }
}

/**
 * The next block, KNEE_BLOCK deployments placed one at a time where each lowers the delta-method variance of log N*
 * most per second of its cost (c-optimal sequential design), at the fit (its lambda floored where the peak would be
 * twice the most instances asked, so that a fit with no peak still plans to find one); and by how much the block is
 * expected to narrow the interval, the next look's level included.
 * @param {KneeLook} o @param {{ shape: { sigma?: number, lambda?: number } }} fit @param {number} dof
 * @param {import('../fit/fit-log.js').LogData} d
 */
function designNext (o, fit, dof, d) {
  const hiN = o.q.between[1]
  const sigma = Math.min(0.99, fit.shape.sigma ?? 0)
  const lambda = Math.max(fit.shape.lambda ?? 0, (1 - sigma) / (2 * hiN) ** 2)
  const grad = (n) => {
    const den = 1 + sigma * (n - 1) + lambda * n * (n - 1)
    return [1, -(n - 1) / den, -n * (n - 1) / den]
  }
  // log N* = (log(1 - sigma) - log lambda) / 2
  const g = [0, -1 / (2 * (1 - sigma)), -1 / (2 * lambda)]
  const info = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
  const add = (m, n, w) => { const j = grad(n); for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) m[r][c] += w * j[r] * j[c] }
  d.ns.forEach((n, i) => add(info, n, d.counts[i]))
  const variance = (m) => {
    const inv = invert(m)
    return inv ? g.reduce((s, gr, r) => s + gr * g.reduce((t, gc, c) => t + inv[r][c] * gc, 0), 0) : Infinity
  }
  const now = variance(info)
  let v = now
  let seconds = 0
  /** @type {Map<string, number>} */
  const chosen = new Map()
  for (let k = 0; k < KNEE_BLOCK; k++) {
    let best = null
    for (const c of o.candidates) {
      const m = info.map(row => [...row])
      add(m, c.n, 1)
      const gain = (v - variance(m)) / c.cost
      if (!best || gain > best.gain) best = { c, gain, m }
    }
    for (let r = 0; r < 3; r++) info[r] = best.m[r]
    v = variance(info)
    seconds += best.c.cost
    chosen.set(best.c.key, (chosen.get(best.c.key) ?? 0) + 1)
  }
  const width = (a, df) => tQuantile(1 - Math.max(a, TINY_ALPHA) / 2, df)
  const ratio = Number.isFinite(now) && now > 0 ? Math.sqrt(v / now) : 1
  const narrowsBy = 1 - ratio * width(o.increments[o.look], dof + KNEE_BLOCK) / width(o.alphaThisLook, dof)
  return { block: [...chosen].map(([cell, deployments]) => ({ cell, deployments })), narrowsBy, seconds }
}
