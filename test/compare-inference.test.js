// The contrasts the tests between groups stand on (analyzer/stats/inference.js logContrast, contrastPower) against
// closed
// forms: the two-sample case is compareRatio's test, the one-sample case Student's t, the four-cell speedup its
// Welch–Satterthwaite sum, and the power ratioPower's where their set-ups agree.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { logContrast, contrastPower, compareRatio, ratioPower } from '../analyzer/stats/inference.js'

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`)

test('two samples with coefficients [1, -1]: the ratio test of compareRatio, TOST included', () => {
  const a = [100, 104, 98, 101]
  const b = [110, 108, 112, 109]
  const c = logContrast([a, b], [1, -1], { margin: 0.05 })
  const r = compareRatio(a, b, { margin: 0.05 })
  for (const k of ['ratio', 'p', 'pEquivalence']) close(c[k], r[k], 1e-12, k)
  close(c.ci95[0], r.ci95[0], 1e-9, 'ci low')
  close(c.ci95[1], r.ci95[1], 1e-9, 'ci high')
})

test('one sample: Student\'s t on the logs (R: t.test(c(0.1, 0.2, 0.3)) gives t = 3.4641, df = 2, p = 0.07418)', () => {
  const c = logContrast([[0.1, 0.2, 0.3].map(Math.exp)], [1])
  close(Math.log(c.ratio), 0.2, 1e-12, 'mean log')
  close(c.se, 0.1 / Math.sqrt(3), 1e-12, 'se')
  assert.equal(c.df, 2)
  close(c.p, 0.07418, 5e-5, 'p')
})

test('a four-cell speedup contrast: its se is the root of the cells\' variances, its df Welch–Satterthwaite', () => {
  const cells = [[0.0, 0.2], [0.1, 0.1, 0.4], [0.3, 0.5, 0.1, 0.2], [0.0, 0.6]]
  const coefs = [1, -1, -1, 1]
  const c = logContrast(cells.map(x => x.map(Math.exp)), coefs)
  const mean = x => x.reduce((s, v) => s + v, 0) / x.length
  const v = x => x.reduce((s, y) => s + (y - mean(x)) ** 2, 0) / (x.length - 1) / x.length
  const vs = cells.map(v)
  close(Math.log(c.ratio), cells.reduce((s, x, i) => s + coefs[i] * mean(x), 0), 1e-12, 'estimate')
  close(c.se, Math.sqrt(vs.reduce((s, x) => s + x, 0)), 1e-12, 'se')
  close(c.df, vs.reduce((s, x) => s + x, 0) ** 2 / vs.reduce((s, x, i) => s + x ** 2 / (cells[i].length - 1), 0), 1e-9, 'df')
  // a cell of one value cannot give its own spread: no test
  assert.equal(logContrast([[1, 2], [3]], [1, -1]).p, null)
  // a coefficient of 0 leaves its sample out
  assert.equal(logContrast([[1, 2], [3]], [1, 0]).df, 1)
})

test('the power of a contrast is ratioPower\'s where they describe the same test, and grows with the effect', () => {
  for (const [units, cv, effect] of [[3, 0.05, 0.1], [5, 0.03, 0.05], [10, 0.1, 0.2]]) {
    close(contrastPower({ effect, se: cv * Math.sqrt(2 / units), df: 2 * units - 2 }), ratioPower({ effect, units, cv }), 1e-9, `${units} ${cv} ${effect}`)
  }
  const at = e => contrastPower({ effect: e, se: 0.05, df: 6, alpha: 0.01 })
  assert.ok(at(0.05) < at(0.1) && at(0.1) < at(0.2))
  assert.equal(contrastPower({ effect: 0.1, se: 0, df: 6 }), 0)
})
