// Adaptive experiments (issue 30): a question about two strategies (or one cell's value, to a precision) answered by
// looks at a growing set of independent deployments, stopped as soon as the answer is known, with its error rates kept
// over every look. A question with a precision is an estimate, not a test: it stops once the repeated interval is
// within ±precision of its value (calibration/scenarios/adaptive.js holds the chance of a false "estimated").
// Group-sequential with Lan–DeMets alpha spending over K planned looks (information fraction k/K): look k's Welch
// test of the log contrast (logContrast in analyzer/stats/inference.js) is held to the alpha spent at that look, its
// increment α(t_k) − α(t_{k−1}). By the union bound the chance of a false "different" over all looks is at most the
// sum of the increments, alpha, whenever the experiment stops; the same holds for a false "equivalent" (two one-sided
// tests at each increment).
// The interval printed at look k is at level 1 − that increment, so the intervals of every look cover together with
// probability ≥ 1 − alpha: a repeated confidence interval, valid at whatever look the experiment stops.
// The next block goes where it narrows the deciding interval most per second of measuring (Neyman allocation: each
// cell's log-scale variance, shrunk toward the cells' pooled one, over its cost), above one deployment of every cell.
// Pure functions: the executor measures, this decides. calibration/scenarios/adaptive.js holds its error rates,
// coverage, power and time saved.
import { internalError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { ALPHA, contrastPower, logContrast, normalQuantile } from './inference.js'
import { incompleteBeta, tCdf, tQuantile } from './stats-math.js'
import { blockText, levelText, pct, ratioName } from './adaptive-text.js'
import { checkQuestion } from './adaptive-question.js'
import { checkPlan, spendingBoundary } from './adaptive-spending.js'
import { decideKnee, kneeCells } from './adaptive-knee.js'

export { QUANTITIES, checkQuestion } from './adaptive-question.js'
export { SPENDINGS, alphaSpentAt, spendingBoundary } from './adaptive-spending.js'

/** The power the "what more would be needed" of an undecided verdict is sized for. */
export const NEEDED_POWER = 0.8
/** Pseudo degrees of freedom of the pooled log variance each cell's own is shrunk toward (choosing the next block). */
const SHRINK_DF = 4
/** The most deployments the next block gives one cell for each one it gives the cell it favours least. */
const MAX_SHARE = 4
/** The least alpha an interval is computed at (an early O'Brien–Fleming look of very many can spend 0 in doubles). */
const TINY_ALPHA = 1e-12
/** The F test's level at which the cells' spreads are taken to differ (planningVariances). */
const HETEROGENEITY_P = 0.1

/**
 * @typedef {{ compare?: [string, string], quantity?: 'throughput' | 'speedup', at?: number, from?: number,
 *   margin?: number, precision?: number, estimate?: string }} Question  compare: strategies, or (throughput)
 *   `strategy@N` for a side at an N of its own; precision: the ratio (or, with estimate: `strategy@N`, one cell's
 *   value) estimated to ±precision instead of tested
 * @typedef {Map<string, number[]> | Record<string, number[]>} Cells  `${strategy}@${N}` → one value per deployment
 * @typedef {{ look: number, maxLooks: number, alpha?: number, spending?: 'obrien-fleming' | 'pocock',
 *   costs?: Record<string, number> }} DecideOptions
 * @typedef {{ cell: string, deployments: number }} Block
 * @typedef {{ verdict: 'different' | 'equivalent' | 'estimated' | 'beyond' | 'continue' | 'undecided', stop: boolean,
 *   estimate: { ratio: number, lo: number, hi: number, level: number } | null, p: number | null,
 *   pEquivalence: number | null, alphaSpent: number, alphaThisLook: number, direction: 'a>b' | 'a<b' | null,
 *   next: Block[], gain: { narrowsBy: number, seconds: number | null } | null, needed: { deployments: number,
 *   effect?: number, precision?: number } | null, look: number, maxLooks: number, cells: { cell: string, n: number,
 *   sdLog: number | null }[], why: string }} Decision
 *   estimate: the ratio (an estimate's: the cell's geometric mean) and its repeated confidence interval at level
 *   1 − alphaThisLook; pEquivalence: TOST's p within ±margin; needed (undecided only): deployments a cell for a fixed
 *   experiment to detect `effect` with 80% power, or (an estimate) to make its 95% interval ±precision
 */

/**
 * The cells a question needs and each one's coefficient in the log contrast: throughput a@N − b@N (each side at its
 * own N where it has one); speedup (a@at − a@from) − (b@at − b@from).
 * @param {Question} question
 * @returns {{ cell: string, coef: number }[]}
 */
export function contrastOf (question) {
  return contrastOfChecked(checkQuestion(question))
}

/** contrastOf for a question already checked (checkQuestion). @param {ReturnType<typeof checkQuestion>} q */
function contrastOfChecked (q) {
  if (q.estimate) return [{ cell: `${q.a}@${q.aAt}`, coef: 1 }]
  if (q.quantity === 'throughput') return [{ cell: `${q.a}@${q.aAt}`, coef: 1 }, { cell: `${q.b}@${q.bAt}`, coef: -1 }]
  return [{ cell: `${q.a}@${q.at}`, coef: 1 }, { cell: `${q.a}@${q.from}`, coef: -1 }, { cell: `${q.b}@${q.at}`, coef: -1 },
    { cell: `${q.b}@${q.from}`, coef: 1 }]
}

/**
 * The cell keys (`${strategy}@${N}`) a question needs measured.
 * @param {Question} question
 */
export function cellsNeeded (question) {
  const q = checkQuestion(question)
  return q.knee ? kneeCells(q) : contrastOfChecked(q).map(x => x.cell)
}

/** @param {Cells} cells @param {string} key @returns {number[]} */
function valuesOf (cells, key) {
  const xs = (cells instanceof Map ? cells.get(key) : cells?.[key]) ?? []
  if (!Array.isArray(xs)) throw internalError(`the values of cell ${key} are not an array`)
  const badValue = xs.find(x => !(typeof x === 'number' && Number.isFinite(x) && x > 0))
  if (badValue !== undefined) throw fail('DEPLOYMENT_VALUE_NOT_POSITIVE', { cell: key, value: badValue })
  return xs
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
const logVariance = (xs) => {
  const ls = xs.map(Math.log)
  const m = mean(ls)
  return ls.reduce((a, x) => a + (x - m) ** 2, 0) / (ls.length - 1)
}

/**
 * Each cell's log variance for planning the next block. The cells' spreads count only where they differ beyond chance:
 * when the largest of the cells' log variances over the smallest is significant at HETEROGENEITY_P (the F test,
 * Bonferroni over the ordered pairs), each cell's own (n ≥ 2), shrunk toward the pooled one (SHRINK_DF pseudo degrees
 * of freedom); otherwise the pooled one for every cell, and the block follows coefficients and costs alone. (Chasing
 * chance differences of spread at a few deployments a cell starves the cells whose spread was underestimated, which
 * makes Welch's test liberal: 5.1% size in place of 3.5% in calibration/scenarios/adaptive.js's simulations.)
 * @param {number[][]} samples
 */
function planningVariances (samples) {
  const own = samples.map(xs => (xs.length >= 2 ? logVariance(xs) : null))
  let ss = 0
  let df = 0
  own.forEach((v, i) => { if (v !== null) { ss += v * (samples[i].length - 1); df += samples[i].length - 1 } })
  const pooled = df > 0 && ss > 0 ? ss / df : 1
  const measured = own.map((v, i) => ({ v, df: samples[i].length - 1 })).filter(x => x.v !== null)
  if (measured.length < 2) return own.map(() => pooled)
  const hi = measured.reduce((a, b) => (b.v > a.v ? b : a))
  const lo = measured.reduce((a, b) => (b.v < a.v ? b : a))
  const pairs = measured.length * (measured.length - 1)
  const p = lo.v > 0 ? pairs * incompleteBeta(lo.df / (lo.df + hi.df * hi.v / lo.v), lo.df / 2, hi.df / 2) : 0
  if (!(p < HETEROGENEITY_P)) return own.map(() => pooled)
  return own.map((v, i) => (v === null ? pooled : ((samples[i].length - 1) * v + SHRINK_DF * pooled) / (samples[i].length - 1 + SHRINK_DF)))
}

/**
 * The standard error and Welch–Satterthwaite degrees of freedom of a contrast whose cells have variances vs, counts ns.
 * @param {number[]} coefs @param {number[]} vs @param {number[]} ns
 */
function contrastSe (coefs, vs, ns) {
  const parts = coefs.map((c, i) => c * c * vs[i] / ns[i])
  const v = parts.reduce((a, b) => a + b, 0)
  const df = v ** 2 / parts.reduce((a, p, i) => a + p ** 2 / Math.max(1, ns[i] - 1), 0)
  return { se: Math.sqrt(v), df }
}

/**
 * The next block: first every cell to 2 deployments; after that Neyman's allocation, n_i ∝ |c_i| · sd_i / √cost_i
 * (the split of a block's seconds that narrows the contrast most), rounded so that the cell it favours least gets one
 * deployment (every block renews every cell's spread: a cell starved on a low estimate of its spread would make the
 * test liberal) and none more than MAX_SHARE. Equal spreads and costs give one deployment of every cell.
 * @param {number[]} coefs @param {number[]} vs planning variances @param {number[]} ns @param {number[]} costs
 */
function allocate (coefs, vs, ns, costs) {
  const fill = ns.map(n => Math.max(0, 2 - n))
  if (fill.some(x => x > 0)) return fill
  const weights = coefs.map((c, i) => Math.abs(c) * Math.sqrt(vs[i] / costs[i]))
  const least = Math.min(...weights)
  return weights.map(w => Math.min(MAX_SHARE, Math.max(1, Math.round(w / least))))
}

/**
 * Deployments a cell for a fixed experiment (every cell alike) to detect a relative difference `effect` in the
 * question's ratio with `target` power at alpha, the cells' log values varying by `cv` (or by `variances`, one per
 * cell); null when even `max` does not. For a throughput question with one cv this is unitsForPower's answer
 * (analyzer/stats/inference.js).
 * @param {{ question: Question, effect: number, cv?: number, variances?: number[], target?: number, alpha?: number,
 *   max?: number }} o
 */
export function deploymentsForPower ({ question, effect, cv, variances, target = NEEDED_POWER, alpha = ALPHA, max = 1000 }) {
  const coefs = contrastOf(question).map(x => x.coef)
  const vs = variances ?? coefs.map(() => cv * cv)
  const exact = new Map()
  const powerAt = (n) => {
    if (!exact.has(n)) {
      const { se, df } = contrastSe(coefs, vs, coefs.map(() => n))
      exact.set(n, contrastPower({ effect, se, df, alpha }))
    }
    return exact.get(n)
  }
  // a start from the normal approximation, corrected by the shifted central t (P(T_df > t_crit − ncp), cheap), then
  // the exact power (the noncentral t of contrastPower) from there: usually one exact evaluation (the one below is
  // tried when the cheap one is within 0.003 of the target: they differ by ~0.001)
  const approx = (n) => {
    const { se, df } = contrastSe(coefs, vs, coefs.map(() => n))
    return 1 - tCdf(tQuantile(1 - alpha / 2, df) - Math.log(1 + effect) / se, df)
  }
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(target)
  const perUnit = coefs.reduce((a, c, i) => a + c * c * vs[i], 0)
  let n = Math.min(max, Math.max(2, Math.ceil(perUnit * (z / Math.log(1 + effect)) ** 2)))
  while (n < max && approx(n) < target) n++
  while (n > 2 && approx(n - 1) >= target) n--
  while (n < max && powerAt(n) < target) n++
  if (powerAt(n) < target) return null
  while (n > 2 && approx(n - 1) >= target - 0.003 && powerAt(n - 1) >= target) n--
  return n
}

const num = (x) => (x >= 100 ? x.toFixed(0) : x.toPrecision(3))
const pText = (p) => (p < 1e-4 ? p.toExponential(1) : p.toPrecision(2))

/**
 * One look of an adaptive experiment: whether the question is answered at the alpha spent so far, the ratio with its
 * repeated confidence interval, and what to measure next.
 * @param {Question} question
 * @param {Cells} cells `${strategy}@${N}` → one value per independent deployment (> 0)
 * @param {DecideOptions} opts look: completed looks (0: nothing measured yet, the first block is returned)
 * @returns {Decision}
 */
export function decideQuestion (question, cells, opts) {
  const checked = checkQuestion(question)
  if (checked.knee) return decideKnee(checked, Object.fromEntries(kneeCells(checked).map(k => [k, valuesOf(cells, k)])), opts)
  const look = lookOf(question, cells, opts)
  const { q, keys, coefs, samples, ns, alphaThisLook } = look
  const short = keys.filter((_, i) => ns[i] < 2)
  const test = short.length ? null : logContrast(samples, coefs, { margin: q.margin, alpha: Math.max(alphaThisLook, TINY_ALPHA) })
  if (!test?.se) return untested(look, short)
  const level = 1 - alphaThisLook
  const estimate = { ratio: test.ratio, lo: test.ci95[0], hi: test.ci95[1], level }
  const said = {
    interval: `${num(test.ratio)}${q.estimate ? '' : '×'} (${levelText(level)} repeated interval ${num(estimate.lo)}–${num(estimate.hi)})`,
    at: `at look ${look.look} of ${look.maxLooks}`
  }
  const decided = { ...look.base, estimate, p: test.p, pEquivalence: test.pEquivalence, next: [], gain: null, needed: null, stop: true }
  return q.precision !== null ? estimateVerdict(look, decided, said) : testVerdict(look, test, decided, said)
}

/**
 * What a look decides from: the question checked, its cells' values, costs and planning variances, the alpha this
 * look may spend and has spent, the ratio's name, and the fields every decision carries.
 * @param {Question} question @param {Cells} cells @param {DecideOptions} opts
 */
function lookOf (question, cells, opts) {
  const q = checkQuestion(question)
  const contrast = contrastOfChecked(q)
  const { look, maxLooks, alpha = ALPHA, spending = 'obrien-fleming', costs = {} } = opts ?? /** @type {any} */ ({})
  checkPlan({ maxLooks, alpha, spending })
  if (!Number.isInteger(look) || look < 0 || look > maxLooks) throw internalError(`look ${look} is not a whole number from 0 to maxLooks (${maxLooks})`)
  const keys = contrast.map(x => x.cell)
  const samples = keys.map(k => valuesOf(cells, k))
  const ns = samples.map(xs => xs.length)
  const costOf = keys.map(k => costs[k])
  const known = costOf.every(c => typeof c === 'number' && c > 0)
  const increments = spendingBoundary({ maxLooks, alpha, spending })
  const alphaThisLook = look > 0 ? increments[look - 1] : 0
  const alphaSpent = increments.slice(0, look).reduce((a, b) => a + b, 0)
  // the ratio as the sweep's lines name it (ratioName), and of what
  const name = `${ratioName({ ...question, from: q.from })}${q.quantity === 'speedup' ? '' : ' throughput'}`
  const base = {
    look,
    maxLooks,
    alphaSpent,
    alphaThisLook,
    cells: keys.map((cell, i) => ({ cell, n: ns[i], sdLog: ns[i] >= 2 ? Math.sqrt(logVariance(samples[i])) : null }))
  }
  return {
    question,
    q,
    look,
    maxLooks,
    alpha,
    keys,
    coefs: contrast.map(x => x.coef),
    samples,
    ns,
    vs: planningVariances(samples),
    known,
    unitCosts: known ? costOf : keys.map(() => 1),
    increments,
    alphaThisLook,
    name,
    base
  }
}

/** @typedef {ReturnType<typeof lookOf>} Look */

/**
 * The next block (allocate) and its seconds where the cells' costs are known.
 * @param {Look} o
 */
function nextBlock ({ coefs, vs, ns, unitCosts, keys, known }) {
  const add = allocate(coefs, vs, ns, unitCosts)
  const next = keys.map((cell, i) => ({ cell, deployments: add[i] })).filter(x => x.deployments > 0)
  const seconds = known ? add.reduce((a, m, i) => a + m * unitCosts[i], 0) : null
  return { next, add, seconds }
}

/**
 * A look before anything can be tested (a cell short of 2 deployments, or no value varying): undecided at the last
 * look, else the block that fills the cells.
 * @param {Look} o @param {string[]} short
 * @returns {Decision}
 */
function untested (o, short) {
  const { look, maxLooks, name } = o
  const cause = short.length
    ? `${short.join(', ')} need${short.length === 1 ? 's' : ''} 2 deployments`
    : 'no value varies (identical values carry no noise estimate)'
  const none = { ...o.base, estimate: null, p: null, pEquivalence: null, direction: null, gain: null, needed: null }
  if (look >= maxLooks) {
    return { ...none, verdict: 'undecided', stop: true, next: [], why: `undecided after ${look} of ${maxLooks} looks: ${cause} before ${name} can be tested` }
  }
  const { next, seconds } = nextBlock(o)
  return {
    ...none,
    verdict: 'continue',
    stop: false,
    next,
    why: `${cause} before ${name} can be tested; next: ${blockText(next)}${seconds === null ? '' : ` (${num(seconds)} s)`}`
  }
}

/**
 * A look that goes on: the next block and how much it narrows the repeated interval (the next look's alpha included),
 * with `then`, the words for it.
 * @param {Look} o @param {any} decided
 */
function goingOn (o, decided) {
  const { next, add, seconds } = nextBlock(o)
  const now = contrastSe(o.coefs, o.vs, o.ns)
  const later = contrastSe(o.coefs, o.vs, o.ns.map((n, i) => n + add[i]))
  const width = (s, a) => tQuantile(1 - Math.max(a, TINY_ALPHA) / 2, s.df) * s.se
  const narrowsBy = 1 - width(later, o.increments[o.look]) / width(now, o.alphaThisLook)
  const then = `next: ${blockText(next)} narrows the interval by ${pct(narrowsBy)}${seconds === null ? '' : ` for ${num(seconds)} s`}`
  return { ...decided, verdict: /** @type {const} */ ('continue'), stop: false, direction: null, next, gain: { narrowsBy, seconds }, then }
}

/**
 * A question with a precision: no test, the interval alone; "estimated" once the repeated interval is within
 * ±precision of the value.
 * @param {Look} o @param {any} decided @param {{ interval: string, at: string }} said
 * @returns {Decision}
 */
function estimateVerdict (o, decided, { interval, at }) {
  const { q, name, look, maxLooks, ns } = o
  const { ratio, lo, hi } = decided.estimate
  const within = Math.max(hi / ratio - 1, 1 - lo / ratio)
  const p = { p: null, pEquivalence: null, direction: null }
  if (within <= q.precision) {
    return { ...decided, ...p, verdict: 'estimated', why: `${name} is ${interval}: within ±${pct(within)}, the ±${pct(q.precision)} asked, ${at}` }
  }
  if (look >= maxLooks) {
    const deployments = deploymentsForPrecision({ coefs: o.coefs, variances: o.samples.map(logVariance), precision: q.precision, alpha: o.alpha })
    const more = deployments === null
      ? `even 1000 deployments a cell would not make its 95% interval ±${pct(q.precision)}`
      : `a fixed experiment of ${deployments} deployments a cell (now ${Math.min(...ns)}–${Math.max(...ns)}) would make its 95% interval ±${pct(q.precision)}`
    return {
      ...decided,
      ...p,
      verdict: 'undecided',
      needed: deployments === null ? null : { deployments, precision: q.precision },
      why: `undecided after ${look} of ${maxLooks} looks: ${name} is ${interval}, ±${pct(within)}, not within ±${pct(q.precision)}; ${more}`
    }
  }
  const { then, ...rest } = goingOn(o, decided)
  return { ...rest, ...p, why: `${name} is ${interval} ${at}: ±${pct(within)}, not yet within ±${pct(q.precision)}; ${then}` }
}

/**
 * A test question: different (Welch's p under the alpha this look spends), equivalent (TOST within ±margin), else
 * undecided at the last look with what a fixed experiment would need, or the next block.
 * @param {Look} o @param {ReturnType<typeof logContrast>} test @param {any} decided
 * @param {{ interval: string, at: string }} said
 * @returns {Decision}
 */
function testVerdict (o, test, decided, { interval, at }) {
  const { q, name, look, maxLooks, ns, alphaThisLook } = o
  if (test.p < alphaThisLook) {
    const direction = test.ratio > 1 ? 'a>b' : 'a<b'
    const why = `${name} is ${interval}: different ${at} (p = ${pText(test.p)} < ${pText(alphaThisLook)} spent at this look)`
    return { ...decided, verdict: 'different', direction, why }
  }
  if (test.pEquivalence < alphaThisLook) {
    const why = `${name} is ${interval}: equivalent within ±${pct(q.margin)} ${at} (both one-sided tests p = ${pText(test.pEquivalence)} < ` +
      `${pText(alphaThisLook)} spent at this look)`
    return { ...decided, verdict: 'equivalent', direction: null, why }
  }
  if (look >= maxLooks) {
    const effect = Math.exp(Math.max(Math.abs(Math.log(test.ratio)), Math.log(1 + q.margin))) - 1
    const deployments = deploymentsForPower({ question: o.question, effect, variances: o.samples.map(logVariance), alpha: o.alpha })
    const more = deployments === null
      ? `even 1000 deployments a cell would not detect a ${pct(effect)} difference with ${pct(NEEDED_POWER)} power`
      : `a fixed experiment of ${deployments} deployments a cell (now ${Math.min(...ns)}–${Math.max(...ns)}) would detect a ${pct(effect)} ` +
        `difference with ${pct(NEEDED_POWER)} power`
    return {
      ...decided,
      verdict: 'undecided',
      direction: null,
      needed: deployments === null ? null : { deployments, effect },
      why: `undecided after ${look} of ${maxLooks} looks: ${name} is ${interval}, neither different nor within ±${pct(q.margin)}; ${more}`
    }
  }
  const { then, ...rest } = goingOn(o, decided)
  return { ...rest, why: `${name} is ${interval} ${at}: not yet different nor within ±${pct(q.margin)}; ${then}` }
}

/**
 * Deployments a cell for a fixed experiment (every cell alike) whose 1 − alpha interval of the question's value (or
 * ratio) is within ±precision, the cells' log values varying by `variances`; null when even `max` does not.
 * @param {{ coefs: number[], variances: number[], precision: number, alpha?: number, max?: number }} o
 */
export function deploymentsForPrecision ({ coefs, variances, precision, alpha = ALPHA, max = 1000 }) {
  const target = Math.log(1 + precision)
  for (let n = 2; n <= max; n++) {
    const { se, df } = contrastSe(coefs, variances, coefs.map(() => n))
    if (tQuantile(1 - alpha / 2, df) * se <= target) return n
  }
  return null
}
