// The calibration's synthetic throughput per tenth of a second (calibration/synth.js tenthSeries): its per-second sums
// have the variation and lag-1 autocorrelation asked for, and its counts the Poisson noise, so the validity figures
// (calibration/scenarios/validity.js) are measured against the truth they say.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomSource, tenthSeries, tenthProcess } from '../calibration/synth.js'

const seconds = (xs) => Array.from({ length: xs.length / 10 }, (_, i) => xs.slice(i * 10, i * 10 + 10).reduce((a, b) => a + b, 0))
const moments = (xs) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  const v = xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length
  let c = 0
  for (let i = 1; i < xs.length; i++) c += (xs[i] - m) * (xs[i - 1] - m)
  return { m, cv: Math.sqrt(v) / m, rho: c / xs.length / v }
}

test('per-second sums: mean, cv and lag-1 autocorrelation as asked (no counting noise)', () => {
  for (const [cv, rho] of [[0.05, 0], [0.05, 0.25], [0.1, 0.5]]) {
    const s = moments(seconds(tenthSeries(randomSource(21), { seconds: 40000, rate: 1000, cv, rho, poisson: false })))
    assert.ok(Math.abs(s.m - 1000) < 2, `mean ${s.m}`)
    assert.ok(Math.abs(s.cv - cv) < 0.003, `cv ${s.cv} for ${cv}`)
    assert.ok(Math.abs(s.rho - rho) < 0.03, `rho ${s.rho} for ${rho}`)
  }
  assert.equal(tenthProcess(0.05, 0).phi, 0)
})

test('Poisson counts per tenth add their variance: per-second variance = (cv·rate)² + rate', () => {
  const s = moments(seconds(tenthSeries(randomSource(22), { seconds: 40000, rate: 1000, cv: 0.02 })))
  const expected = Math.sqrt(20 ** 2 + 1000) / 1000
  assert.ok(Math.abs(s.cv - expected) < 0.002, `cv ${s.cv} vs ${expected}`)
})

test('a drift and a warm-up are where they are asked to be', () => {
  const d = tenthSeries(randomSource(23), { seconds: 20, rate: 1000, cv: 0, drift: 0.1, poisson: false })
  assert.ok(Math.abs(d[0] - 100) < 1e-9 && Math.abs(d[199] - 110) < 1e-9, `${d[0]} .. ${d[199]}`)
  const w = tenthSeries(randomSource(24), { seconds: 10, rate: 1000, cv: 0, warmup: 2, warmupDepth: 0.5, poisson: false })
  assert.ok(Math.abs(w[0] - 50) < 1e-9 && Math.abs(w[10] - 75) < 1e-9 && w[20] === 100, `${w[0]} ${w[10]} ${w[20]}`)
})
