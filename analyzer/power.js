// What would reach a verdict when a test between groups finds no difference: how many repeats per N, or how many more
// N values, would detect the difference the two separate fits show, at α = 0.05 with 80% power. A seeded simulation
// answers (data from the two separate fits plus Gaussian noise at the pooled residual sd, refitted, detections
// counted); the noncentral F's normal-theory power only says where to simulate first.
import { seededRandom } from '../lib/random.js'
import { throughputAt } from './usl-model.js'
import { tCdf, tQuantile, normalDraw, fTest1 } from './stats-math.js'
import { fitSeparate, fitShared, ALPHA } from './group-tests.js'
import { human } from './fit-verdict.js'

/** The power asked of a design, the most repeats per N and more N values considered, simulations per design. */
export const POWER = Object.freeze({ target: 0.8, maxRepeats: 20, maxMoreN: 8, simulations: 60 })

/**
 * @typedef {import('./group-tests.js').Joint} Joint
 * @typedef {import('./usl-solve.js').Params} Params
 * @typedef {{ n: number, w: number, count: number }} Stratum one N of one group: its weight per run, how many runs
 * @typedef {{ repeatsPerN: number|null, moreN: number|null, nowRepeatsPerN: number, extraN: number[], power: { repeats:
 *   number|null, moreN: number|null }, simulations: number, seed: number, text: string }} Advice power: the simulated
 *   power of the design advised (where none reaches 80%: of the largest design, simulated, or its normal-theory
 *   power when that is far below); null where no design was tried
 */

/** Each group's N values with their mean weight and number of rows. */
function strataOf (joint) {
  return [0, 1].map(g => {
    const byN = new Map()
    joint.data.ns.forEach((n, i) => {
      if (joint.data.group[i] !== g) return
      const s = byN.get(n) ?? { n, w: 0, count: 0 }
      s.w += joint.data.w[i]
      s.count++
      byN.set(n, s)
    })
    return [...byN.values()].map(s => ({ ...s, w: s.w / s.count })).sort((a, b) => a.n - b.n)
  })
}

/**
 * A design (each group's N values, how many runs at each) as the means of its runs on the true curves: a mean of
 * `count` runs weighs `count` times a run. For Gaussian noise the F test of every run equals that of the means plus
 * the spread within each N (pure error, s² χ² with `pureDf` degrees), so a simulation costs the same at 2 repeats
 * as at 20.
 */
function designData (strata, truth, models) {
  const ns = []
  const w = []
  const group = []
  let runs = 0
  strata.forEach((list, g) => list.forEach(s => { ns.push(s.n); w.push(s.w * s.count); group.push(g); runs += s.count }))
  const xs = ns.map((n, i) => throughputAt(n, truth[group[i]]))
  return { data: { ns, xs, w, group, scale: Math.max(...xs), model: /** @type {'usl'} */ ('usl') }, models, runs, pureDf: runs - ns.length }
}

/**
 * The next N values after the measured ones, spread like them: doubling when they double (1, 2, 4, 8: 16, 32), else
 * the last step again (1, 2, 3, 4: 5, 6, ...; 1, 2, 4, 6, 8: 10, 12, ...); at most 4 times the largest N measured.
 * @param {number[]} ns distinct, ascending
 * @param {number} count
 */
export function nextNs (ns, count) {
  const ratios = ns.slice(1).map((n, i) => n / ns[i])
  const geometric = ns.length >= 3 && ratios.every(r => r > 1.2 && Math.abs(r / ratios[0] - 1) < 0.01)
  const step = ns.length > 1 ? ns.at(-1) - ns.at(-2) : 1
  const whole = ns.every(Number.isInteger)
  const out = []
  let last = ns.at(-1)
  while (out.length < count) {
    const next = geometric ? last * ratios[0] : last + step
    const n = whole ? Math.round(next) : next
    if (n > 4 * ns.at(-1) || n <= last) break
    out.push(n)
    last = n
  }
  return out
}

/**
 * The normal-theory power of the F(1, df) test when the restricted model misses by `extra` (noiseless SSR) at noise
 * variance s2: a noncentral t with noncentrality sqrt(extra / s2).
 */
function approximatePower (extra, s2, df) {
  if (!(df >= 1)) return 0
  const shift = Math.sqrt(extra / s2)
  const tc = tQuantile(1 - ALPHA / 2, df)
  return 1 - tCdf(tc - shift, df) + tCdf(-tc - shift, df)
}

/**
 * Advice for a test that found no difference: the fewest repeats per N (now: the median over both groups' N), and
 * the fewest more N values at today's repeats, that would detect the difference of the separate fits with 80%
 * power. Seeded: same seed, same advice. Bounded: at most about a dozen designs of 60 simulations each.
 * @param {Joint} joint the measured rows
 * @param {'sigma'|'lambda'} kind
 * @param {{ full: ReturnType<typeof fitSeparate>, seed?: number }} opts
 * @returns {Advice}
 */
export function adviseTest (joint, kind, { full, seed = 1 }) {
  const rnd = seededRandom(seed)
  const strata = strataOf(joint)
  const counts = strata.flat().map(s => s.count).sort((a, b) => a - b)
  const now = counts[Math.floor(counts.length / 2)]
  const truth = full.params
  const s2 = full.ssr / full.df
  const k = joint.data.ns.length - full.df
  let simulations = 0
  // the restricted model on noiseless data of a design: its miss is the noncentrality's numerator, its values where
  // the simulations' restricted fits start
  const noiseless = design => fitShared(design, kind, truth, { fast: true, passes: 100 })
  const missOf = design => noiseless(design).ssr
  const simulate = (design) => {
    const start = noiseless(design).values
    const df = design.runs - k
    let hits = 0
    let done = 0
    for (let i = 0; i < POWER.simulations; i++) {
      const xs = design.data.xs.map((x, j) => x + Math.sqrt(s2 / design.data.w[j]) * normalDraw(rnd))
      let pure = 0
      for (let j = 0; j < design.pureDf; j++) pure += normalDraw(rnd) ** 2
      const sim = { ...design, data: { ...design.data, xs, scale: Math.max(...xs) } }
      try {
        const f = fitSeparate(sim, { fast: true, starts: truth })
        const r = fitShared(sim, kind, f.params, { fast: true, start })
        if (fTest1(r.ssr + s2 * pure, f.ssr + s2 * pure, df).p < ALPHA) hits++
        done++
      } catch {}
    }
    simulations += POWER.simulations
    return done ? hits / done : 0
  }
  const designs = {
    repeats: Array.from({ length: Math.max(0, POWER.maxRepeats - now) }, (_, i) => now + 1 + i),
    moreN: nextNs([...new Set(joint.data.ns)].sort((a, b) => a - b), POWER.maxMoreN)
  }
  let repeats = { index: -1, power: null }
  if (s2 > 0 && designs.repeats.length) {
    const withRepeats = m => designData(strata.map(list => list.map(s => ({ ...s, count: m }))), truth, joint.models)
    // balanced repeats: the restricted model misses m times what it misses with one run per N
    const one = missOf(withRepeats(1))
    const size = strata.flat().length
    repeats = smallestDetecting(designs.repeats.length,
      i => approximatePower(designs.repeats[i] * one, s2, designs.repeats[i] * size - k),
      i => simulate(withRepeats(designs.repeats[i])))
  }
  let more = { index: -1, power: null }
  if (s2 > 0 && designs.moreN.length) {
    const extended = i => designData(strata.map(list => [...list, ...designs.moreN.slice(0, i + 1).map(n => ({ n, w: list.at(-1).w, count: now }))]), truth, joint.models)
    const ext = designs.moreN.map((_, i) => extended(i))
    more = smallestDetecting(ext.length, i => approximatePower(missOf(ext[i]), s2, ext[i].runs - k), i => simulate(ext[i]))
  }
  const repeatsPerN = repeats.index >= 0 ? designs.repeats[repeats.index] : null
  const extraN = more.index >= 0 ? designs.moreN.slice(0, more.index + 1) : []
  return {
    repeatsPerN,
    moreN: extraN.length || null,
    nowRepeatsPerN: now,
    extraN,
    power: { repeats: repeats.power, moreN: more.power },
    simulations,
    seed,
    text: adviceText({ repeatsPerN, extraN, now, maxMore: designs.moreN.length })
  }
}

/**
 * The first design (of `count`, in ascending size) whose simulated power reaches the target: the normal-theory
 * power picks where to start, simulations step down (or up) from there, at most a few steps.
 * @param {number} count
 * @param {(i: number) => number} approximate
 * @param {(i: number) => number} simulate
 * @returns {{ index: number, power: number|null }}
 */
function smallestDetecting (count, approximate, simulate) {
  let i = 0
  while (i < count && approximate(i) < POWER.target) i++
  if (i === count) {
    // not even the largest design reaches it in theory: when it comes close, one simulation there says whether the
    // theory is too gloomy; far below, no simulation would reach the target
    const theory = approximate(count - 1)
    if (theory < POWER.target / 2) return { index: -1, power: theory }
    const power = simulate(count - 1)
    return power >= POWER.target ? { index: count - 1, power } : { index: -1, power }
  }
  let power = simulate(i)
  if (power >= POWER.target) {
    for (let step = 0; step < 2 && i > 0; step++) {
      const lower = simulate(i - 1)
      if (lower < POWER.target) break
      i--
      power = lower
    }
    return { index: i, power }
  }
  for (let step = 0; step < 3 && i < count - 1; step++) {
    i++
    power = simulate(i)
    if (power >= POWER.target) return { index: i, power }
  }
  return power >= POWER.target ? { index: i, power } : { index: -1, power }
}

/** The advice in words. */
function adviceText ({ repeatsPerN, extraN, now, maxMore }) {
  const each = `${now} run${now === 1 ? '' : 's'} each`
  const more = extraN.length
    ? `${extraN.length} more N value${extraN.length === 1 ? '' : 's'} (${extraN.map(n => human(n)).join(', ')}; ${each}, if the curves hold there)`
    : null
  if (repeatsPerN !== null) return `about ${repeatsPerN} repeats per N (now ${now})${more ? `, or ${more},` : ''} would detect this difference`
  if (more) return `not detectable with up to ${POWER.maxRepeats} repeats per N; ${more} would detect it`
  const beyond = maxMore ? ` or ${maxMore} more N values` : ''
  return `not detectable with up to ${POWER.maxRepeats} repeats per N${beyond}: the groups behave alike`
}
