// The capacity search's policy, apart from any probe: which rate to probe next, when to stop, what to report and how
// sure. A probe is whatever says 'meets', 'misses' or 'inconclusive' of a rate: a run (executor/capacity/capacity.js)
// or a simulated server (calibration/scenarios/capacity.js, test/capacity-search.test.js).
//
// The search steps from a start rate by a factor until one rate meets and one misses (the bracket), then places its
// repeated probes near the boundary by a stochastic approximation (Robbins & Monro 1951, with Kesten's 1958 rule: the
// step shrinks at each change of direction) on the log of the rate, aimed at the rate a probe meets the objective
// with probability 0.5: after a probe at x, x += a * (met - 0.5). What it reports is read from every probe at once
// (capacityPosterior): the rate met with probability 0.5 and its credible interval under a probit curve.
import { errorFunction } from 'simple-statistics'

export const SEARCH_DEFAULTS = Object.freeze({
  /** the probability of meeting the objective the capacity is the rate of (the approximation's aim) */
  target: 0.5,
  /** probes near the boundary (the stochastic approximation's), after the bracket */
  boundary: 12,
  /** the factor between bracket probes (from an estimate); a guessed start rate steps by 2 */
  step: 1.25,
  /** the credibility of the interval */
  level: 0.95
})

/** A rate to probe: four significant digits (at most 0.05% from the search's own; rates do not tie by rounding). */
export const tidyRate = (rate) => Number(rate.toPrecision(4))

/** Inconclusive probes near the boundary after which a search gives up (the load side, not the server, limits it). */
export const INCONCLUSIVE_AT_BOUNDARY = 3

/**
 * @typedef {'meets'|'misses'|'inconclusive'} Verdict
 * @typedef {{ rate: number, phase: 'bracket'|'boundary', verdict: Verdict }} Observation
 * @typedef {{ stop: 'found'|'load-side'|'no-capacity'|null, aim: number|null, bracket: { lo: number, hi: number }
 *   | null, step: number|null, observations: Observation[] }} SearchState
 *   stop: why it ended (null: it has not); aim: the rate the approximation would probe next (its own estimate);
 *   bracket: the rates the boundary phase started from; step: its last relative step
 */

/**
 * One search's policy. `next()` is the rate to probe and its phase, or null when the search is over; `observe(verdict)`
 * records what the probe of that rate said. Starts at `start` (bracket phase), or inside `bracket` (boundary phase).
 * @param {{ start?: number, bracket?: { lo: number, hi: number }, step?: number, boundary?: number }} o
 */
export function createSearch (o) {
  return new Search(o)
}

class Search {
  /** @param {Parameters<typeof createSearch>[0]} o */
  constructor (o) {
    const { step, boundary, target } = { ...SEARCH_DEFAULTS, ...stripUndefined(o), target: SEARCH_DEFAULTS.target }
    /** the bracket's factor, the boundary's probes, the share of meets the boundary aims at */
    this.step = step
    this.boundary = boundary
    this.target = target
    /** @type {Observation[]} */
    this.observations = []
    /** @type {SearchState['stop']} */
    this.stop = null
    /** @type {number | null} */
    this.lo = o.bracket?.lo ?? null
    /** @type {number | null} */
    this.hi = o.bracket?.hi ?? null
    /** @type {{ lo: number, hi: number } | null} */
    this.bracket = null
    // the boundary phase: the log rate, the first step, the changes of direction, the last direction, the probes
    this.x = 0
    this.a0 = 0
    this.reversals = 0
    this.lastSign = 0
    this.n = 0
    this.rate = 0
    this.inconclusive = 0
    if (this.lo !== null && this.hi !== null) this.enterBoundary()
    else this.rate = tidyRate(o.start ?? 1)
  }

  /** Between lo and hi on the log scale; the first move is a quarter of the bracket (a bisection's). */
  enterBoundary () {
    const lo = /** @type {number} */ (this.lo)
    const hi = /** @type {number} */ (this.hi)
    this.bracket = { lo, hi }
    this.x = (Math.log(lo) + Math.log(hi)) / 2
    this.a0 = Math.log(hi / lo) / (4 * Math.max(this.target, 1 - this.target))
    this.rate = tidyRate(Math.exp(this.x))
  }

  /** Each change of direction shrinks the step. */
  stepNow () { return this.a0 / (1 + this.reversals) }

  /** @returns {{ rate: number, phase: 'bracket'|'boundary' } | null} */
  next () { return this.stop ? null : { rate: this.rate, phase: this.bracket ? 'boundary' : 'bracket' } }

  /** @param {Verdict} verdict */
  observe (verdict) {
    if (this.stop) throw new Error('the search is over')
    this.observations.push({ rate: this.rate, phase: this.bracket ? 'boundary' : 'bracket', verdict })
    if (verdict === 'inconclusive') {
      // the load side could not drive the rate: in the bracket the capacity is beyond what it can measure; near the
      // boundary the probe says nothing either way and is left out, the same rate probed again, up to a limit
      if (!this.bracket || ++this.inconclusive >= INCONCLUSIVE_AT_BOUNDARY) this.stop = 'load-side'
      return
    }
    if (this.bracket) this.boundaryStep(verdict === 'meets')
    else this.bracketStep(verdict === 'meets')
  }

  /** The bracket phase: up by `step` until a miss, down until a meet; both seen, the boundary phase starts between. */
  bracketStep (met) {
    if (met) this.lo = Math.max(this.lo ?? 0, this.rate)
    else this.hi = Math.min(this.hi ?? Infinity, this.rate)
    if (this.hi === null) this.rate = tidyRate(this.rate * this.step)
    else if (this.lo === null) {
      if (this.rate <= 1) this.stop = 'no-capacity'
      else this.rate = tidyRate(Math.max(1, this.rate / this.step))
    } else this.enterBoundary()
  }

  /** The boundary phase: a step on the log rate toward the target quantile of meets; `boundary` probes in all. */
  boundaryStep (met) {
    const s = (met ? 1 : 0) - this.target
    const sign = Math.sign(s)
    if (this.lastSign && sign !== this.lastSign) this.reversals++
    this.lastSign = sign
    this.x += this.stepNow() * s
    this.n++
    if (this.n >= this.boundary) this.stop = 'found'
    else this.rate = tidyRate(Math.exp(this.x))
  }

  /** @returns {SearchState} */
  state () {
    return {
      stop: this.stop,
      aim: this.bracket ? Math.exp(this.x) : null,
      bracket: this.bracket,
      step: this.bracket ? Math.expm1(this.stepNow() * Math.max(this.target, 1 - this.target)) : null,
      observations: [...this.observations]
    }
  }
}

/**
 * Runs a search to its end with `probe(rate, phase)` (a run, or a simulated server) saying each verdict, or null to
 * stop it there (a budget spent: the state's stop is then null).
 * @param {(rate: number, phase: 'bracket'|'boundary') => Verdict | null | Promise<Verdict | null>} probe
 * @param {Parameters<typeof createSearch>[0]} o
 * @returns {Promise<SearchState>}
 */
export async function runSearch (probe, o) {
  const search = createSearch(o)
  for (let q = search.next(); q; q = search.next()) {
    const verdict = await probe(q.rate, q.phase)
    if (verdict === null) break
    search.observe(verdict)
  }
  return search.state()
}

/** The standard normal distribution function. */
export const normalCdf = (z) => 0.5 * (1 + errorFunction(z / Math.SQRT2))

/** ln Φ(z) on a table of step 0.01 over [-8, 8] (linear between), the normal tail's asymptote below, 0 above. */
const LOG_PHI = Float64Array.from({ length: 1601 }, (_, i) => Math.log(normalCdf(-8 + i / 100)))
function logPhi (z) {
  if (z >= 8) return 0
  if (z <= -8) return -0.5 * z * z - Math.log(-z) - 0.5 * Math.log(2 * Math.PI)
  const h = (z + 8) * 100
  const i = Math.floor(h)
  return LOG_PHI[i] + (h - i) * (LOG_PHI[i + 1] - LOG_PHI[i])
}

/** What the capacity's posterior assumes of the probe-to-probe noise: its scale, log-uniform between these. */
export const NOISE_PRIOR = Object.freeze({ min: 0.002, max: 0.15 })

/**
 * The capacity and its interval from every probe of a search: a probit curve P(meet | rate) = Φ((μ - ln rate) / s),
 * μ the log of the rate met with probability 0.5 (flat prior) and s the probes' noise (log-uniform prior over
 * NOISE_PRIOR), its posterior on a grid; the capacity is μ's posterior median, the interval its central `level`
 * credible interval. The likelihood does not depend on how the search chose its rates (each choice depends on earlier
 * verdicts only), so the adaptive design needs no correction; its frequentist coverage is what the calibration checks
 * (docs/statistics/capacity.md). Null without a met and a missed probe.
 * @param {{ rate: number, verdict: Verdict }[]} observations inconclusive ones are left out
 * @param {{ level?: number }} [o]
 * @returns {{ capacity: number, lo: number, hi: number, level: number, noise: number } | null} noise: the posterior
 *   median of s (the relative spread of the rate where a probe stops meeting)
 */
export function capacityPosterior (observations, { level = SEARCH_DEFAULTS.level } = {}) {
  const data = observations.filter(p => p.verdict !== 'inconclusive').map(p => ({ x: Math.log(p.rate), y: p.verdict === 'meets' }))
  if (!data.some(d => d.y) || !data.some(d => !d.y)) return null
  const xs = data.map(d => d.x)
  const from = Math.min(...xs) - 0.1
  const to = Math.max(...xs) + 0.1
  const M = 400
  const S = 25
  const mu = (i) => from + (to - from) * i / (M - 1)
  const sOf = (j) => NOISE_PRIOR.min * (NOISE_PRIOR.max / NOISE_PRIOR.min) ** (j / (S - 1))
  const logs = new Float64Array(M * S)
  let top = -Infinity
  for (let j = 0; j < S; j++) {
    const s = sOf(j)
    for (let i = 0; i < M; i++) {
      let l = 0
      for (const d of data) l += logPhi(d.y ? (mu(i) - d.x) / s : (d.x - mu(i)) / s)
      logs[j * M + i] = l
      if (l > top) top = l
    }
  }
  const byMu = new Float64Array(M)
  const byS = new Float64Array(S)
  for (let j = 0; j < S; j++) {
    for (let i = 0; i < M; i++) {
      const w = Math.exp(logs[j * M + i] - top)
      byMu[i] += w
      byS[j] += w
    }
  }
  const quantile = (weights, at, q) => {
    const total = weights.reduce((a, b) => a + b, 0)
    let c = 0
    for (let i = 0; i < weights.length; i++) {
      const next = c + weights[i] / total
      // linear within a grid cell: the cell's mass spread evenly over it
      if (next >= q) return at(i - 0.5 + (q - c) / (next - c || 1))
      c = next
    }
    return at(weights.length - 1)
  }
  const tail = (1 - level) / 2
  return {
    capacity: Math.exp(quantile(byMu, mu, 0.5)),
    lo: Math.exp(quantile(byMu, mu, tail)),
    hi: Math.exp(quantile(byMu, mu, 1 - tail)),
    level,
    noise: quantile(byS, (j) => sOf(Math.min(S - 1, Math.max(0, j))), 0.5)
  }
}

/**
 * The highest rate met at or below the capacity and the lowest rate missed at or above it (null where none was).
 * @param {{ rate: number, verdict: Verdict }[]} observations
 * @param {number} capacity
 */
export function gapAround (observations, capacity) {
  const met = observations.filter(p => p.verdict === 'meets' && p.rate <= capacity).map(p => p.rate)
  const missed = observations.filter(p => p.verdict === 'misses' && p.rate >= capacity).map(p => p.rate)
  return { lo: met.length ? Math.max(...met) : null, hi: missed.length ? Math.min(...missed) : null }
}

const stripUndefined = (o) => Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined))
