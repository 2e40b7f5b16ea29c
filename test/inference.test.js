// The two-sample primitives against R 4.2 (values printed by the Rscript lines quoted above each case).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { welch, compareRatio, holm, ratioPower, unitsForPower } from '../analyzer/stats/inference.js'

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`)

test("Welch's test matches R's t.test", () => {
  // t.test(c(1,2,3,4), c(2,3,4,5,6)): t -1.5666989036, df 6.9807692308, p 0.1612858563,
  //   95% CI -3.7652202818 0.7652202818
  const r = welch([1, 2, 3, 4], [2, 3, 4, 5, 6])
  close(r.t, -1.5666989036, 1e-9, 't')
  close(r.df, 6.9807692308, 1e-9, 'df')
  close(r.p, 0.1612858563, 1e-8, 'p')
  close(r.ci95[0], -3.7652202818, 1e-8, 'ci low')
  close(r.ci95[1], 0.7652202818, 1e-8, 'ci high')
})

test('tied values carry no information about the noise: no p-value, not p = 0', () => {
  const r = welch([293, 293], [289, 289])
  assert.equal(r.diff, 4)
  assert.equal(r.p, null)
  assert.equal(compareRatio([293, 293], [289, 289]).outcome, 'untestable')
  assert.equal(welch([1], [2, 3]).p, null)
})

test('the ratio of means and TOST match R on the logs', () => {
  // a <- log(c(100,102,98,101)); b <- log(c(100,99,101,100))
  // t.test(a, b): p 0.8106607330, exp(CI) 0.9770928935 1.0283943259
  // max(t.test(a, b, mu=-log(1.05), alternative="greater")$p.value,
  //     t.test(a, b, mu=log(1.05), alternative="less")$p.value): 0.0033435904
  const r = compareRatio([100, 102, 98, 101], [100, 99, 101, 100], { margin: 0.05 })
  close(r.p, 0.8106607330, 1e-8, 'p')
  close(r.ci95[0], 0.9770928935, 1e-8, 'ci low')
  close(r.ci95[1], 1.0283943259, 1e-8, 'ci high')
  close(r.pEquivalence, 0.0033435904, 1e-8, 'TOST p')
  assert.equal(r.outcome, 'equivalent')
  // the same data cannot show equivalence within 0.5%: inconclusive, not equivalent
  assert.equal(compareRatio([100, 102, 98, 101], [100, 99, 101, 100], { margin: 0.005 }).outcome, 'inconclusive')
  assert.equal(compareRatio([120, 122, 118, 121], [100, 99, 101, 100]).outcome, 'different')
})

test("Holm's adjustment matches R's p.adjust", () => {
  // p.adjust(c(0.01,0.04,0.03,0.005), "holm"): 0.03 0.06 0.06 0.02; an untestable comparison stays out of the family
  assert.deepEqual(holm([0.01, 0.04, 0.03, null, 0.005]).map(p => (p === null ? null : +p.toFixed(6))), [0.03, 0.06, 0.06, null, 0.02])
  assert.deepEqual(holm([]), [])
})

test("the ratio test's power is R's power.t.test (the noncentral t)", () => {
  // power.t.test(n=5, delta=log(1.1), sd=0.05)$power 0.751850; power.t.test(n=3, delta=log(1.2), sd=0.1)$power 0.400442
  close(ratioPower({ effect: 0.1, units: 5, cv: 0.05 }), 0.751850, 0.001, 'n 5')
  close(ratioPower({ effect: 0.2, units: 3, cv: 0.1 }), 0.400442, 0.001, 'n 3')
  close(ratioPower({ effect: 0, units: 3, cv: 0.1 }), 0.05, 0.001, 'no effect: alpha')
  assert.equal(ratioPower({ effect: 0.1, units: 1, cv: 0.05 }), 0)
  assert.equal(unitsForPower({ effect: 0.1, cv: 0.05 }), 6)
  assert.equal(unitsForPower({ effect: 0.001, cv: 0.5, max: 10 }), null)
})
