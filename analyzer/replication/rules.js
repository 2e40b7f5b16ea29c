// The rules a replication compares by: a measured value with its interval; a published direction checked for
// significance in the direction the study claims (one-sided Welch over the runs); a published "no rise" checked by
// showing any rise smaller than a stated margin (the upper one-sided test of TOST, on the ratio); a measured share
// checked against a stated margin. Each ends in one of four verdicts (VERDICT_MEANS), the measured effect beside it.
import { mean, sampleStandardDeviation } from 'simple-statistics'
import { tQuantile } from '../stats/stats-math.js'
import { ALPHA, welchOneSided, ratioOneSided, oneSampleT } from '../stats/inference.js'

/**
 * A finished run a replication left out as not valid: what it ran, and the flags that made it invalid.
 * @typedef {{ strategy: string, benchmark?: string, instances?: number, level: string | null, flags: string[] }}
 *   LeftOut
 * @typedef {{ verdict: string, why: string, p: number | null, diff: number | null, effect: string | null }} Judged
 */

/** What a replication row can say: evidence for, evidence against, neither, or no comparison possible. */
export const VERDICTS = Object.freeze(['reproduced', 'not-reproduced', 'inconclusive', 'not-comparable'])

/** What each verdict means, in the words the CLI's text, its --help and the report print. */
export const VERDICT_MEANS = Object.freeze({
  reproduced: 'positive evidence for the finding: its direction significant the way the study claims it (one-sided, ' +
    'α = 0.05), a "no rise" shown to be under its stated margin, or a yes/no answered the same way',
  'not-reproduced': 'evidence against it: significant the other way (for a "no rise": a significant rise), or a yes/no ' +
    'answered the other way',
  inconclusive: 'the runs can be compared but do not decide: neither way significant, or no spread to test with ' +
    '(tied values); more repeats may decide',
  'not-comparable': 'the runs cannot be compared at all: none for it, fewer than two a side, or a set-up that forces ' +
    'the answer (the why says which)'
})

/** A "no rise" finding holds when any rise is shown to be under this share (one-sided 95%: TOST's upper test). */
export const NO_RISE_MARGIN = 0.1

const round1 = (x) => Math.round(x * 10) / 10
const pValue = (p) => (p === null ? '-' : p.toPrecision(2))
/** A relative change as a signed percentage: 0.123 -> "+12.3%". */
export const signedPct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%` : '-')

/**
 * The mean of some runs' values and its 95% confidence interval (Student's t; no interval from one run).
 * @param {number[]} values
 * @param {{ digits?: number }} [opts] decimals kept (1: percent and req/s; 3: cores)
 * @returns {{ mean: number, lo: number | null, hi: number | null, n: number } | null}
 */
export function meanCi (values, { digits = 1 } = {}) {
  const xs = values.filter(Number.isFinite)
  if (!xs.length) return null
  const r = (x) => Math.round(x * 10 ** digits) / 10 ** digits
  const m = mean(xs)
  if (xs.length < 2) return { mean: r(m), lo: null, hi: null, n: 1 }
  const half = tQuantile(0.975, xs.length - 1) * sampleStandardDeviation(xs) / Math.sqrt(xs.length)
  return { mean: r(m), lo: r(m - half), hi: r(m + half), n: xs.length }
}

/** Fewer than two runs a side: no test can be made, the runs cannot be compared. */
const tooFew = (what, na, nb) => `${what}: ${na} and ${nb} runs; a test needs two or more a side (more repeats)`
const TIED = 'every run gave the same value on each side, so the runs say nothing of their noise and no test can be made (more repeats)'

/**
 * A published direction (a's value above b's) checked on the runs by Welch's one-sided test at α = 0.05 in the
 * direction the study claims: reproduced when significant that way; not-reproduced when significant the other way;
 * inconclusive when neither (or the runs tie: no spread to test with); not-comparable with fewer than two runs a side.
 * The effect is a's mean over b's as a change, with the difference's 95% interval.
 * @param {{ a: number[], b: number[], aName: string, bName: string, what: string }} sides
 * @returns {Judged}
 */
export function directionVerdict ({ a, b, aName, bName, what }) {
  const xa = a.filter(Number.isFinite)
  const xb = b.filter(Number.isFinite)
  const diff = xa.length && xb.length ? round1(mean(xa) - mean(xb)) : null
  if (xa.length < 2 || xb.length < 2) return { verdict: 'not-comparable', why: tooFew(what, xa.length, xb.length), p: null, diff, effect: null }
  const t = welchOneSided(xa, xb)
  const effect = `${signedPct(mean(xa) / mean(xb) - 1)} (${aName} − ${bName} = ${round1(t.diff)}` +
    `${t.ci95 ? ` [${round1(t.ci95[0])}, ${round1(t.ci95[1])}]` : ''})`
  const shown = (p) => `${aName} ${round1(mean(xa))} vs ${bName} ${round1(mean(xb))}, one-sided p = ${pValue(p)}`
  const judged = (verdict, why) => ({ verdict, why: `${what}: ${why}`, p: t.pAbove, diff, effect })
  if (t.pAbove === null) return judged('inconclusive', `${shown(null)}; ${TIED}`)
  if (t.pAbove < ALPHA) return judged('reproduced', shown(t.pAbove))
  if (/** @type {number} */ (t.pBelow) < ALPHA) return judged('not-reproduced', `the other way here, significantly (${shown(t.pBelow)} that way)`)
  return judged('inconclusive', `${t.diff > 0 ? 'the same way' : 'the other way'}, but the runs cannot tell it from chance (${shown(t.pAbove)}); more repeats`)
}

/**
 * A published "does not rise" (hi's throughput not above lo's) checked on the runs, on the ratio hi/lo (logs, Welch):
 * reproduced when a rise of `margin` or more is rejected at α = 0.05 (the ratio's upper one-sided 95% bound under
 * 1 + margin: TOST's upper test; a fall agrees with the finding); not-reproduced when the rise is significant and not
 * shown to be under the margin; inconclusive otherwise; not-comparable with fewer than two runs a side. The effect is
 * the change hi/lo - 1 with its 90% interval (whose upper end is the bound held against the margin).
 * @param {{ hi: number[], lo: number[], what: string, margin?: number }} sides
 * @returns {Judged}
 */
export function noRiseVerdict ({ hi, lo, what, margin = NO_RISE_MARGIN }) {
  const xh = hi.filter(x => Number.isFinite(x) && x > 0)
  const xl = lo.filter(x => Number.isFinite(x) && x > 0)
  if (xh.length < 2 || xl.length < 2) return { verdict: 'not-comparable', why: tooFew(what, xh.length, xl.length), p: null, diff: null, effect: null }
  const under = ratioOneSided(xh, xl, 1 + margin)
  const rise = ratioOneSided(xh, xl, 1)
  // the 90% interval: its upper end is the one-sided 95% bound the margin is tested against
  const effect = `${signedPct(under.ratio - 1)}${under.ci90 ? ` [${signedPct(under.ci90[0] - 1)}, ${signedPct(under.ci90[1] - 1)}] (90%)` : ''}`
  const shown = `${round1(mean(xh))} vs ${round1(mean(xl))} req/s, ${effect}`
  const judged = (verdict, why, p) => ({ verdict, why: `${what}: ${why}`, p, diff: round1(mean(xh) - mean(xl)), effect })
  const bound = `a rise of ${margin * 100}% or more`
  if (under.pBelow === null) return judged('inconclusive', `${shown}; ${TIED}`, null)
  if (under.pBelow < ALPHA) return judged('reproduced', `${bound} is ruled out (p = ${pValue(under.pBelow)}; ${shown})`, under.pBelow)
  if (/** @type {number} */ (rise.pAbove) < ALPHA) return judged('not-reproduced', `it still rises here (p = ${pValue(rise.pAbove)}; ${shown})`, rise.pAbove)
  return judged('inconclusive', `the runs show neither a significant rise nor one under ${margin * 100}% (p = ` +
    `${pValue(under.pBelow)} against ${bound}; ${shown}); more repeats`, under.pBelow)
}

/**
 * A measured share claimed to be spent (above zero) checked against a stated margin by a one-sample one-sided t test
 * over the runs at α = 0.05: reproduced when the mean share is significantly above the margin; not-reproduced when
 * significantly below it (what is spent is negligible); inconclusive otherwise (or tied values); not-comparable with
 * fewer than two runs.
 * @param {{ shares: number[], margin: number, what: string }} o shares as fractions (0.02: 2%)
 * @returns {Judged}
 */
export function aboveMarginVerdict ({ shares, margin, what }) {
  const xs = shares.filter(Number.isFinite)
  if (xs.length < 2) {
    return {
      verdict: 'not-comparable',
      why: `${what}: ${xs.length} run${xs.length === 1 ? '' : 's'}; a test needs two or more (more repeats)`,
      p: null,
      diff: null,
      effect: null
    }
  }
  const t = oneSampleT(xs, margin)
  const pct = (x) => `${(100 * x).toPrecision(2)}%`
  const effect = `${pct(t.mean)}${t.ci95 ? ` [${pct(t.ci95[0])}, ${pct(t.ci95[1])}]` : ''}`
  const judged = (verdict, why, p) => ({
    verdict,
    why: `${what}: ${effect} over ${xs.length} runs against a margin of ${pct(margin)}, ${why}`,
    p,
    diff: null,
    effect
  })
  if (t.pAbove === null) return judged('inconclusive', TIED, null)
  if (t.pAbove < ALPHA) return judged('reproduced', `above it (one-sided p = ${pValue(t.pAbove)})`, t.pAbove)
  if (/** @type {number} */ (t.pBelow) < ALPHA) return judged('not-reproduced', `below it (one-sided p = ${pValue(t.pBelow)}): negligible`, t.pBelow)
  return judged('inconclusive', `neither significantly above nor below it (one-sided p = ${pValue(t.pAbove)}); more repeats`, t.pAbove)
}

/**
 * Finished runs left out as not valid, counted by flag and by strategy and level: "host-saturated 6 (cm
 * exhausted*cores 3, pm2 exhausted*cores 3), unstable 2 (up relaxed 2)".
 * @param {LeftOut[]} runs
 */
export function leftOutCounts (runs) {
  const byFlag = new Map()
  for (const r of runs) {
    for (const flag of r.flags.length ? r.flags : ['no flag named']) {
      const where = `${r.strategy}${r.level ? ` ${r.level}` : ''}`
      const counts = byFlag.get(flag) ?? new Map()
      counts.set(where, (counts.get(where) ?? 0) + 1)
      byFlag.set(flag, counts)
    }
  }
  return [...byFlag].map(([flag, counts]) => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    return `${flag} ${total} (${[...counts].map(([where, n]) => `${where} ${n}`).join(', ')})`
  }).join(', ')
}

/**
 * Why a row has no valid runs though some finished: "3 finished and left out, host-saturated 3 (cm exhausted*cores 3)
 * (--include-invalid takes them)".
 * @param {LeftOut[]} runs
 */
export const leftOutWhy = (runs) => `${runs.length} finished and left out, ${leftOutCounts(runs)} (--include-invalid takes them)`
