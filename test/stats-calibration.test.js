// The short form of the calibration harness (npm run stats:calibrate -- --quick): every interval, flag, test and
// verdict nodescale prints, held against its target on synthetic data with a known truth (docs/STATISTICS.md).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { calibrate, loadScenarios, meets, targetText } from '../calibration/harness.js'
import { ar1Series, randomSource } from '../calibration/synth.js'

test('the synthetic AR(1) series has the mean, variation and autocorrelation asked for', () => {
  const xs = ar1Series(randomSource(7), { length: 200000, mean: 1000, cv: 0.05, rho: 0.5 })
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))
  let c = 0
  for (let i = 1; i < xs.length; i++) c += (xs[i] - m) * (xs[i - 1] - m)
  assert.ok(Math.abs(m - 1000) < 1, `mean ${m}`)
  assert.ok(Math.abs(sd / m - 0.05) < 0.001, `cv ${sd / m}`)
  assert.ok(Math.abs(c / (xs.length - 1) / sd ** 2 - 0.5) < 0.01, 'rho')
})

test('targets: a bound is met on its side only', () => {
  assert.ok(meets({ max: 0.05 }, 0.05) && !meets({ max: 0.05 }, 0.051) && !meets({ max: 0.05 }, NaN))
  assert.ok(meets({ min: 0.8 }, 0.8) && !meets({ min: 0.8 }, 0.79))
  assert.ok(meets({ between: [0.93, 0.97] }, 0.95) && !meets({ between: [0.93, 0.97] }, 0.92))
  assert.equal(targetText({ between: [0.93, 0.97] }), '93%–97%')
})

const scenarios = await loadScenarios()

test('every scenario states its figure, grid, target and trials', () => {
  const ids = new Set()
  for (const s of scenarios) {
    assert.ok(!ids.has(s.id), `${s.id} is unique`)
    ids.add(s.id)
    assert.ok(s.figure && s.grid && s.area, s.id)
    assert.ok(s.trials.quick > 0 && s.trials.full >= s.trials.quick, s.id)
  }
})

test('docs/STATISTICS.md holds a row for every scenario (npm run stats:calibrate -- --write-docs remakes it)', () => {
  const doc = readFileSync(new URL('../docs/STATISTICS.md', import.meta.url), 'utf8')
  for (const s of scenarios) assert.ok(doc.includes(`| \`${s.id}\` |`), `${s.id} is in the table`)
})

for (const s of scenarios) {
  test(`calibrated: ${s.id} (${s.figure}) ${targetText(s.target)}`, async () => {
    const [r] = await calibrate({ mode: 'quick', scenarios: [s] })
    assert.ok(r.ok, `${s.id}: achieved ${r.value} (worst: ${r.worst ?? '-'}), target ${targetText(s.target)}`)
  })
}
