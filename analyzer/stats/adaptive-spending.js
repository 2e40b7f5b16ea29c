// The alpha an adaptive experiment may spend at each of its planned looks (Lan–DeMets spending): what makes a
// repeated confidence interval, or a test at every look, keep its error rate whichever look the experiment stops at.
import { badFlag } from '../../lib/errors.js'
import { ALPHA, normalCdf, normalQuantile } from './inference.js'

/** The most looks a plan may hold. */
export const MAX_LOOKS = 100

/** The alpha-spending functions (Lan–DeMets): O'Brien–Fleming-type (the default) and Pocock-type. */
export const SPENDINGS = Object.freeze(['obrien-fleming', 'pocock'])

/**
 * The alpha spent by information fraction t (Lan & DeMets 1983): O'Brien–Fleming-type 2 − 2Φ(z_{1−α/2} / √t),
 * Pocock-type α · ln(1 + (e − 1) t). Both are 0 at t = 0 and alpha at t = 1.
 * @param {number} t in [0, 1]
 * @param {number} alpha
 * @param {'obrien-fleming' | 'pocock'} spending
 */
export function alphaSpentAt (t, alpha, spending) {
  if (t <= 0) return 0
  if (t >= 1) return alpha
  if (spending === 'pocock') return alpha * Math.log(1 + (Math.E - 1) * t)
  return 2 - 2 * normalCdf(normalQuantile(1 - alpha / 2) / Math.sqrt(t))
}

/**
 * The alpha each of K planned looks may spend (information fraction k/K): the increments α(t_k) − α(t_{k−1}), which
 * sum to alpha. A look rejects when its p-value is below its increment.
 * @param {{ maxLooks: number, alpha?: number, spending?: 'obrien-fleming' | 'pocock' }} o
 * @returns {number[]}
 */
export function spendingBoundary ({ maxLooks, alpha = ALPHA, spending = 'obrien-fleming' }) {
  checkPlan({ maxLooks, alpha, spending })
  const spent = Array.from({ length: maxLooks + 1 }, (_, k) => alphaSpentAt(k / maxLooks, alpha, spending))
  return spent.slice(1).map((s, k) => s - spent[k])
}

/**
 * Refuses a plan the spending cannot hold: looks, alpha or spending out of range.
 * @param {{ maxLooks: number, alpha: number, spending: string }} o
 */
export function checkPlan ({ maxLooks, alpha, spending }) {
  if (!Number.isInteger(maxLooks) || maxLooks < 1 || maxLooks > MAX_LOOKS) {
    throw badFlag('question.looks', `the planned looks must be a whole number from 1 to ${MAX_LOOKS}, not ${JSON.stringify(maxLooks)}`,
      { key: 'question' })
  }
  if (!(typeof alpha === 'number' && alpha > 0 && alpha < 0.5)) {
    throw badFlag('question.alpha', `must be in (0, 0.5), not ${JSON.stringify(alpha)}`, { key: 'question' })
  }
  if (!SPENDINGS.includes(spending)) {
    throw badFlag('question.spending', `must be one of ${SPENDINGS.join(', ')}, not ${JSON.stringify(spending)}`, { key: 'question' })
  }
}
