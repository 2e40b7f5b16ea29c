// An adaptive experiment's question, checked once: the rules that make it one a sweep can answer (two cells compared,
// or one estimated to a precision), for a library caller's object and an experiment file's `question:` key alike. Each
// refusal names the key at fault through the caller's `bad`: a coded error naming `question.<key>` by default, the
// file's line in an experiment (executor/sweep/experiment.js).
import { badFlag } from '../../lib/errors.js'
import { INSTANCES, STRATEGIES } from '../../lib/strategies.js'
import { sideOf } from './adaptive-text.js'

/** The quantities a question may compare. */
export const QUANTITIES = Object.freeze(['throughput', 'speedup'])
/** The fewest instance counts a knee question's bounds span: its first block measures 4 of them (adaptive-knee.js). */
export const KNEE_SPAN = 4

/**
 * How a refusal is made: `key` is the key named in the message, `at` the path under `question` that holds the fault
 * (an experiment file's line; [] where the key is missing).
 * @typedef {(key: string, reason: string, at?: (string|number)[]) => Error} BadQuestion
 */

/** @type {BadQuestion} */
const badKey = (key, reason) => badFlag(`question.${key}`, reason, { key: 'question' })

/**
 * A question checked and completed (quantity: throughput, a speedup from: 1, margin: 0.05 of a comparison). A
 * throughput question's side may carry an N of its own ("cm@2" against "up@1"); `at` is then needed only for a side
 * without one. Margins and precisions are fractions here (an experiment file's "5%" is typed before).
 * @param {any} question
 * @param {{ bad?: BadQuestion }} [opts]
 * @returns {{ a: string, b?: string, aAt?: number, bAt?: number, quantity: 'throughput'|'speedup', at?: number,
 *   from?: number, margin: number | null, precision: number | null, estimate?: true, knee?: true,
 *   between?: [number, number] }}
 */
export function checkQuestion (question, { bad = badKey } = {}) {
  if (!question || typeof question !== 'object' || Array.isArray(question)) {
    throw bad('compare', 'a question compares two cells (compare: [cm, up], at: 4) or estimates one (estimate: cm@4, precision: 5%)', [])
  }
  const precision = fraction(question, 'precision', bad)
  const margin = fraction(question, 'margin', bad)
  if (precision !== null && margin !== null) {
    throw bad('precision', 'a question asks for a precision (an estimate) or a margin (a test), not both; drop one')
  }
  if (question.knee !== undefined) return checkKnee(question, precision, bad)
  if (question.estimate !== undefined) return checkEstimate(question, precision, bad)
  /** @type {'throughput'|'speedup'} */
  const quantity = question.quantity ?? 'throughput'
  if (!QUANTITIES.includes(quantity)) throw bad('quantity', `${JSON.stringify(quantity)} is not allowed; one of: ${QUANTITIES.join(', ')}`)
  const [a, b] = sidesOf(question, quantity, bad)
  if (`${a.strategy}@${a.at}` === `${b.strategy}@${b.at}`) {
    throw bad('compare', `${a.strategy}@${a.at} twice; give two different cells, e.g. [cm, up] or [cm@2, up@1]`)
  }
  const { at, from } = question
  if (quantity !== 'speedup' && from !== undefined) throw bad('from', 'only a speedup has a base N; drop from, or write quantity: speedup')
  const base = quantity === 'speedup' ? whole('from', from ?? 1, bad) : undefined
  if (base !== undefined && base >= /** @type {number} */ (at)) {
    throw bad('from', `${base} is not below at (${at}); a speedup is from a smaller N to a larger one`)
  }
  return { a: a.strategy, b: b.strategy, aAt: a.at, bAt: b.at, quantity, at, from: base, margin: margin ?? 0.05, precision }
}

/** `estimate: cm@4` (or `estimate: cm` with at): one cell's throughput, to ±precision. */
function checkEstimate (question, precision, bad) {
  const { estimate, at } = question
  for (const key of ['compare', 'quantity', 'from']) {
    if (question[key] !== undefined) throw bad(key, `an estimate (estimate: cm@4) is of one cell's throughput; drop ${key}`)
  }
  const side = typeof estimate === 'string' ? sideOf(estimate, at) : null
  if (!side || !STRATEGIES.includes(side.strategy) || (side.own && side.at < 1)) {
    throw bad('estimate', `${JSON.stringify(estimate)} is not a cell; give strategy@N (cm@4), or a strategy and at`)
  }
  if (side.own && at !== undefined) throw bad('at', `${estimate} gives its own N; drop at`)
  if (precision === null) throw bad('precision', 'missing; an estimate is measured to a precision, e.g. precision: 5%', [])
  const aAt = side.own ? side.at : whole('at', at, bad)
  return { a: side.strategy, aAt, quantity: /** @type {'throughput'} */ ('throughput'), estimate: /** @type {true} */ (true), precision, margin: null }
}

/**
 * `knee: cm, between: [1, 16]`: where the strategy's throughput peaks (the USL's N*), to ±precision, measured at any
 * whole N within the bounds (the grid's instances or not).
 */
function checkKnee (question, precision, bad) {
  const { knee, between } = question
  for (const key of ['compare', 'estimate', 'quantity', 'at', 'from']) {
    if (question[key] !== undefined) throw bad(key, `a knee question (knee: cm, between: [1, 16]) is of one strategy's peak; drop ${key}`)
  }
  if (!STRATEGIES.includes(knee)) throw bad('knee', `${JSON.stringify(knee)} is not a strategy; allowed: ${STRATEGIES.join(', ')}`)
  const [lo, hi] = Array.isArray(between) && between.length === 2 ? between : []
  const whole = (n) => Number.isInteger(n) && n >= INSTANCES.min && n <= INSTANCES.max
  if (!whole(lo) || !whole(hi) || hi - lo + 1 < KNEE_SPAN) {
    throw bad('between', `${between === undefined ? 'missing' : JSON.stringify(between)}; give the least and the most instances to ` +
      `measure, [lo, hi], whole numbers from ${INSTANCES.min} to ${INSTANCES.max} spanning ${KNEE_SPAN} N at least (between: [1, 16])`,
    between === undefined ? [] : ['between'])
  }
  if (precision === null) throw bad('precision', 'missing; a knee is estimated to a precision, e.g. precision: 20%', [])
  /** @type {[number, number]} */
  const bounds = [lo, hi]
  return { a: knee, quantity: /** @type {'throughput'} */ ('throughput'), knee: /** @type {true} */ (true), between: bounds, precision, margin: null }
}

/**
 * The question's two sides: strategies (at the question's N), or, in a throughput question, `strategy@N`, a side at
 * an N of its own (cm with 2 workers against raw Node's one process: [cm@2, up@1]).
 */
function sidesOf ({ compare, at }, quantity, bad) {
  if (!Array.isArray(compare) || compare.length !== 2) {
    throw bad('compare', `${compare === undefined ? 'missing' : JSON.stringify(compare)}; give two strategies, e.g. compare: [cm, up]`,
      compare === undefined ? [] : ['compare'])
  }
  const sides = compare.map((entry, i) => {
    const side = typeof entry === 'string' ? sideOf(entry) : null
    if (!side || !STRATEGIES.includes(side.strategy) || (side.own && side.at < 1)) {
      throw bad('compare', `${JSON.stringify(entry)} is not a strategy; allowed: ${STRATEGIES.join(', ')}` +
        `${quantity === 'speedup' ? '' : ', each with @N for an N of its own (cm@2)'}`, ['compare', i])
    }
    if (side.own && quantity === 'speedup') {
      throw bad('compare', `${entry}: a speedup's sides are strategies, from N = from to N = at; drop @${side.at}`, ['compare', i])
    }
    return side
  })
  if (sides.every(side => side.own)) {
    if (at !== undefined) throw bad('at', `both sides give their own N (${compare.join(', ')}); drop at`)
    return sides
  }
  const n = whole('at', at, bad)
  return sides.map(side => (side.own ? side : { ...side, at: n }))
}

/** A count of instances, a whole number >= 1. */
function whole (key, v, bad) {
  if (Number.isInteger(v) && v >= 1) return v
  throw bad(key, `${v === undefined ? 'missing' : JSON.stringify(v)}; give an instance count, a whole number >= 1`, v === undefined ? [] : [key])
}

/** A margin or precision: a fraction in (0, 1), or null where the question has none. */
function fraction (question, key, bad) {
  const v = question[key]
  if (v === undefined || v === null) return null
  if (typeof v === 'number' && v > 0 && v < 1) return v
  throw bad(key, `${JSON.stringify(v)} is not allowed; a fraction above 0 and below 1 (0.05)`)
}
