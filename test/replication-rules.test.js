// The replication rules (analyzer/replication/rules.js) on values whose answer is known: tied runs give no test
// (inconclusive, never p = 0), a direction is reproduced only when significant the way the study claims, a "no rise"
// only when a rise over its margin is ruled out (a true 20% rise is not called reproduced), a share only when shown
// above its margin; the one-sided tests they stand on (analyzer/stats/inference.js) against closed-form values.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as rules from '../analyzer/replication/rules.js'
import { welch, welchOneSided, ratioOneSided, oneSampleT } from '../analyzer/stats/inference.js'
import { randomSource } from '../calibration/synth.js'

const { directionVerdict, noRiseVerdict, aboveMarginVerdict, VERDICTS, VERDICT_MEANS, NO_RISE_MARGIN } = rules
const side = { aName: 'a', bName: 'b', what: 'w' }

test('tied values: Welch gives no p (not 0), and a direction of tied runs is inconclusive, not reproduced', () => {
  assert.equal(welch([293, 293], [289, 289]).p, null)
  assert.deepEqual([welchOneSided([293, 293], [289, 289]).pAbove, ratioOneSided([293, 293], [289, 289]).pBelow], [null, null])
  assert.equal(oneSampleT([0.02, 0.02, 0.02], 0.01).pAbove, null)
  const d = directionVerdict({ a: [293, 293], b: [289, 289], ...side })
  assert.equal(d.verdict, 'inconclusive')
  assert.match(d.why, /every run gave the same value on each side/)
  assert.equal(noRiseVerdict({ hi: [289, 289], lo: [293, 293], what: 'w' }).verdict, 'inconclusive')
  assert.equal(aboveMarginVerdict({ shares: [0.05, 0.05], margin: 0.01, what: 'w' }).verdict, 'inconclusive')
  assert.equal('welch' in rules, false, 'rules.js uses inference.js\'s Welch, not a copy of its own')
})

test('one-sided tests: the closed-form t values (t = 1.5 on 4 df, pooled equal spreads; one sample t = 3 on 2 df)', () => {
  // a = [2, 3, 4], b = [1, 2, 3]: diff 1, se sqrt(1/3 + 1/3), t = 1.2247, df 4; P(T4 > 1.2247) = 0.14393
  const w = welchOneSided([2, 3, 4], [1, 2, 3])
  assert.ok(Math.abs(w.pAbove - 0.143932) < 1e-5, String(w.pAbove))
  assert.ok(Math.abs(w.pAbove + w.pBelow - 1) < 1e-12)
  // shift 1: t = 0, p 0.5 either way
  assert.ok(Math.abs(welchOneSided([2, 3, 4], [1, 2, 3], 1).pAbove - 0.5) < 1e-12)
  // [1, 2, 3] against 0: mean 2, se 1/sqrt(3), t = 3.4641 on 2 df; P(T2 > t) = (1 - t / sqrt(t² + 2)) / 2 = 0.037090
  const o = oneSampleT([1, 2, 3], 0)
  assert.ok(Math.abs(o.pAbove - (1 - 3.4641016 / Math.sqrt(3.4641016 ** 2 + 2)) / 2) < 1e-6, String(o.pAbove))
  // a ratio is a difference of logs: [e², e³, e⁴] over [e, e², e³] is the first test on logs
  const r = ratioOneSided([2, 3, 4].map(Math.exp), [1, 2, 3].map(Math.exp), Math.E)
  assert.ok(Math.abs(r.ratio - Math.E) < 1e-9 && Math.abs(r.pAbove - 0.5) < 1e-9)
  assert.ok(r.ci90[0] > r.ci95[0] && r.ci90[1] < r.ci95[1], 'the 90% interval inside the 95%')
})

test('a direction: reproduced only when significant the way the study claims; the other way significantly: not reproduced', () => {
  assert.equal(directionVerdict({ a: [300, 302, 301], b: [280, 281, 279], ...side }).verdict, 'reproduced')
  const against = directionVerdict({ a: [280, 281, 279], b: [300, 302, 301], ...side })
  assert.equal(against.verdict, 'not-reproduced')
  assert.match(against.why, /the other way here, significantly/)
  const weak = directionVerdict({ a: [300, 310], b: [280, 290], ...side })
  assert.equal(weak.verdict, 'inconclusive', 'the same way but not significant is no evidence either way')
  assert.match(weak.why, /the same way, but the runs cannot tell it from chance \(a 305 vs b 285, one-sided p = 0\.053\)/)
  assert.equal(weak.effect, '+7.0% (a − b = 20 [-10.4, 50.4])')
  assert.equal(directionVerdict({ a: [300], b: [280, 290], ...side }).verdict, 'not-comparable')
})

test('"no rise": reproduced only when a rise over the margin is ruled out; a significant rise is evidence against', () => {
  assert.equal(NO_RISE_MARGIN, 0.1)
  const flat = noRiseVerdict({ hi: [99, 100, 101], lo: [100, 101, 99], what: 'w' })
  assert.equal(flat.verdict, 'reproduced')
  assert.match(flat.why, /a rise of 10% or more is ruled out/)
  assert.equal(noRiseVerdict({ hi: [150, 152], lo: [99, 101], what: 'w' }).verdict, 'not-reproduced')
  // the case the old rule called reproduced ("no significant rise"): two noisy runs a side, nothing ruled out
  const noisy = noRiseVerdict({ hi: [95, 125], lo: [90, 110], what: 'w' })
  assert.equal(noisy.verdict, 'inconclusive')
  assert.equal(noisy.effect, '+9.5% [-35.5%, +85.9%] (90%)', 'the ratio of geometric means, with its 90% interval')
  // a fall agrees with "the same or worse"
  assert.equal(noRiseVerdict({ hi: [80, 81], lo: [100, 101], what: 'w' }).verdict, 'reproduced')
})

test('"no rise" on a true 20% rise with 2 runs a side (the old rule said reproduced 74% of the time): at most 5%', () => {
  const rng = randomSource(25)
  const draw = (m, cv) => [0, 1].map(() => m * Math.exp(cv * rng.normal()))
  for (const cv of [0.02, 0.05, 0.1]) {
    let reproduced = 0
    for (let i = 0; i < 400; i++) if (noRiseVerdict({ hi: draw(1200, cv), lo: draw(1000, cv), what: 'w' }).verdict === 'reproduced') reproduced++
    assert.ok(reproduced / 400 <= 0.05, `cv ${cv}: ${reproduced} of 400`)
  }
})

test('a share above a margin: shown above it, shown below it (negligible), or neither', () => {
  assert.equal(aboveMarginVerdict({ shares: [0.025, 0.026, 0.027], margin: 0.01, what: 'w' }).verdict, 'reproduced')
  assert.equal(aboveMarginVerdict({ shares: [0.0004, 0.0006, 0.0005], margin: 0.01, what: 'w' }).verdict, 'not-reproduced')
  assert.equal(aboveMarginVerdict({ shares: [0.002, 0.02], margin: 0.01, what: 'w' }).verdict, 'inconclusive')
  assert.equal(aboveMarginVerdict({ shares: [0.02], margin: 0.01, what: 'w' }).verdict, 'not-comparable')
})

test('four verdicts, each with its meaning', () => {
  assert.deepEqual(VERDICTS, ['reproduced', 'not-reproduced', 'inconclusive', 'not-comparable'])
  for (const v of VERDICTS) assert.ok(VERDICT_MEANS[v].length > 40, v)
  assert.match(VERDICT_MEANS['not-comparable'], /cannot be compared at all/)
})
