// The steady-state estimators (analyzer/samples/steady-state.js) on fixtures whose answer is known in closed form, and
// the
// judgement they make of a run's completions per tenth of a second.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  autocorrelations, batchSizeFor, overlappingBatchMeans, mser, theilSen, batchMeans, steadyStateOf, autoDurationReached, STEADY_STATE,
  ar1Correction, whiteNoiseOf, splitP, longRunVariance
} from '../analyzer/samples/steady-state.js'
import { ar1Series, randomSource, dispersedTenthSeries } from '../calibration/synth.js'
import { tCdf } from '../analyzer/stats/stats-math.js'
import { LatencyHistogram } from '../analyzer/samples/latency-histogram.js'

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`)

test('autocorrelations: by hand for 1, 2, 3, 4 (r1 = 1.25 / 5, r2 = -1.5 / 5)', () => {
  const r = autocorrelations([1, 2, 3, 4], 2)
  assert.equal(r[0], 1)
  close(r[1], 0.25, 1e-12, 'r1')
  close(r[2], -0.3, 1e-12, 'r2')
})

test('overlapping batch means: 1..6 in batches of 2 (windows 1.5..5.5, σ² = 6·2/(5·4)·10 = 6); b = 1 is the sample variance', () => {
  const o = overlappingBatchMeans([1, 2, 3, 4, 5, 6], 2)
  assert.equal(o.mean, 3.5)
  close(o.longRun, 6, 1e-12, 'long-run variance')
  close(o.variance, 1, 1e-12, 'variance of the mean')
  assert.equal(o.df, 3)
  const one = overlappingBatchMeans([2, 4, 4, 4, 5, 5, 7, 9], 1)
  close(one.longRun, 32 / 7, 1e-12, 'sample variance')
  assert.equal(one.df, 7)
})

test('batch size from the autocorrelation: AR(1) φ = 0.5 asks for ⌈(φ / (1 − φ²)) / 0.05⌉ = 14; white noise for 1 or 2', () => {
  const ar = ar1Series(randomSource(11), { length: 200000, mean: 100, cv: 0.1, rho: 0.5 })
  const b = batchSizeFor(ar).size
  assert.ok(b >= 12 && b <= 16, `AR(1) 0.5: ${b}`)
  const white = ar1Series(randomSource(12), { length: 200000, mean: 100, cv: 0.1 })
  assert.ok(batchSizeFor(white).size <= 2, `white: ${batchSizeFor(white).size}`)
  // an alternating series is negatively correlated: no batching needed
  assert.equal(batchSizeFor(Array.from({ length: 200 }, (_, i) => i % 2)).size, 1)
})

test('MSER-5: a step after the first batch is cut there; a series rising through its first half has not settled', () => {
  const step = [...Array(5).fill(0), ...Array(25).fill(10)]
  assert.deepEqual(mser(step), { cut: 5, settled: true })
  assert.deepEqual(mser(Array.from({ length: 30 }, (_, i) => i)), { cut: 15, settled: false })
  assert.deepEqual(mser(Array(30).fill(7)), { cut: 0, settled: true })
})

test('Theil–Sen: the median of the pairwise slopes, robust to a wild value; batch means', () => {
  assert.equal(theilSen([1, 3, 5, 7, 100]), 2)
  assert.equal(theilSen([5, 4, 3, 2]), -1)
  assert.deepEqual(batchMeans([1, 2, 3, 4, 5, 6, 7], 3), [2, 5])
})

const tenths = (seconds, f) => Array.from({ length: seconds * 10 }, (_, i) => f(i))

test('a constant throughput: judged, its mean exact, no drift, no warm-up cut', () => {
  const s = steadyStateOf(tenths(11, () => 100))
  assert.equal(s.judged, true)
  assert.equal(s.mean, 1000)
  assert.equal(s.halfWidth, 0)
  assert.equal(s.seconds, 10)
  assert.equal(s.drift, 0)
  assert.equal(s.driftSignificant, false)
  assert.equal(s.warmup.cut, 0)
})

test('a throughput climbing 1 per tenth: Theil–Sen gives the exact relative drift over the judged window', () => {
  // judged tenths 10..109 (the first second left out), values 110..209: slope 1, mean 159.5, drift 100 / 159.5
  const s = steadyStateOf(tenths(11, i => 100 + i))
  assert.equal(s.judged, true)
  close(s.drift, 100 / 159.5, 0.001, 'drift')
  assert.equal(s.driftSignificant, true)
})

test('a warm-up: the first 3 s at half speed are cut, the mean is the steady one, the whole window is 7.5% below it', () => {
  const rng = randomSource(5)
  const s = steadyStateOf(tenths(21, i => (i < 40 ? 50 : 100) + Math.round(rng.normal())))
  assert.equal(s.judged, true)
  assert.equal(s.warmup.cut, 3)
  assert.equal(s.warmup.significant, true)
  close(s.mean, 1000, 5, 'mean after the cut')
  close(s.warmup.bias, -0.075, 0.002, 'bias')
})

test('too short to judge: under 3 s after the first, or batches the autocorrelation asks for that do not fit 10 times', () => {
  const short = steadyStateOf(tenths(3, () => 100))
  assert.equal(short.judged, false)
  assert.match(short.why, /2\.0 s judged \(the first second left out\): the rule needs 3 s at least/)
  assert.equal(short.relHalfWidth, null)
  // a level that changes once a second: tenths correlated over a second, 5 s judged
  const rng = randomSource(9)
  let level = 100
  const blocky = tenths(6, i => { if (i % 10 === 0) level = 100 + 20 * rng.normal(); return level })
  const s = steadyStateOf(blocky)
  assert.equal(s.judged, false)
  assert.match(s.why, /its autocorrelation asks for batches of \d+(\.\d)? s, and 10 of them need/)
  assert.ok(s.needed > 5, String(s.needed))
})

test('the AR(1) correction: k · Var(mean) / E[s²] and the s² degrees of freedom match 40,000 simulated series', () => {
  assert.deepEqual(ar1Correction(0, 9), { factor: 1, df: 8 })
  const rng = randomSource(11)
  for (const [rho, k] of [[0.5, 9], [0.5, 29], [0.25, 9]]) {
    const { factor, df } = ar1Correction(rho, k)
    const means = []
    const s2s = []
    for (let i = 0; i < 40000; i++) {
      const xs = ar1Series(rng, { length: k, mean: 1000, cv: 0.05, rho })
      const m = xs.reduce((a, x) => a + x, 0) / k
      means.push(m)
      s2s.push(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (k - 1))
    }
    const avg = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length
    const varOf = (xs) => { const m = avg(xs); return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) }
    // the factor within 4% (the simulation's error is about 1%; the uncorrected (1 + ρ) / (1 − ρ) is 6% off at k = 9);
    // the degrees of freedom, 2 E[s²]² / Var(s²): Bartlett's approximation errs on the wide side, by under 20%
    close(factor, k * varOf(means) / avg(s2s), 0.04 * factor, `factor at ρ ${rho}, k ${k}`)
    const simulated = 2 * avg(s2s) ** 2 / varOf(s2s)
    assert.ok(df <= simulated * 1.02 && df >= simulated * 0.8, `df at ρ ${rho}, k ${k}: ${df} vs ${simulated}`)
  }
})

test('--duration auto\'s decision: a constant series is known once 10 s are judged, not before; a noisy one is not', () => {
  assert.equal(autoDurationReached(tenths(11, () => 100), 0.02).reached, true)
  assert.equal(autoDurationReached(tenths(10, () => 100), 0.02).reached, false)
  const rng = randomSource(3)
  const noisy = tenths(12, () => 100 + 30 * rng.normal())
  const d = autoDurationReached(noisy, 0.02)
  assert.equal(d.reached, false)
  assert.ok(d.state.relHalfWidth > 0.02, JSON.stringify(d.state))
  assert.equal(STEADY_STATE.minBatches, 10)
})

test('LatencyHistogram.perTenth: completions by the tenth they ended in, over a window of whole tenths', () => {
  const h = new LatencyHistogram()
  // ends at 1000 ms + 5, 150, 160, 250 and 1390: tenths 10, 11, 11, 12, 13
  for (const [start, elapsed] of [[1000, 5], [1100, 50], [1150, 10], [1200, 50], [1300, 90]]) h.add(start, elapsed, true, 0, 0)
  assert.deepEqual(h.perTenth({ from: 1000, to: 1400 }), [1, 2, 1, 1])
  assert.deepEqual(h.perTenth({ from: 1000, to: 1399 }), [1, 2, 1], 'the last partial tenth is left out')
  assert.deepEqual(h.perTenth({ from: 900, to: 1100 }), [0, 1], 'a tenth before the first completion counts 0')
  // ten tenths are the per-second count
  assert.deepEqual(h.perSecond({ from: 1000, to: 2000 }), [5])
})

test('white noise of the tenths: γ0 − γ1 by hand, γ0 + 2γ1 where they alternate; a smooth part leaves it, any dispersion', () => {
  // 1, 3, 1, 3: mean 2, γ0 = 1, γ1 = −3/4 (alternating): γ0 + 2γ1 = −1/2, held at 0 (no white noise left over a second)
  assert.equal(whiteNoiseOf([1, 3, 1, 3]).variance, 0)
  // 1, 2, 3, 4: γ0 = 5/4, γ1 = 5/16 (from autocorrelations' r1 = 1/4): γ0 − γ1 = 15/16
  close(whiteNoiseOf([1, 2, 3, 4]).variance, 15 / 16, 1e-12, 'ramp')
  assert.equal(whiteNoiseOf(Array(30).fill(0)).df, 20)
  // a per-second variation of 5% (ρ 0.5, an AR(1) at the tenth) counted with 0.25, 1 and 3 times Poisson's variance at
  // 100 per tenth: the white part is what was added (25, 100, 300, and rounding's 1/12), the smooth part leaves its
  // γ0 (1 − φ) = 35.19 · (1 − 0.8921) = 3.80 (calibration/synth.js tenthProcess), 1.5% of the seconds' 2,500 / 10
  for (const dispersion of [0, 0.25, 1, 3]) {
    const xs = dispersedTenthSeries(randomSource(21), { seconds: 4000, rate: 1000, cv: 0.05, rho: 0.5, dispersion })
    const w = whiteNoiseOf(xs).variance - 3.80 - 1 / 12
    close(w, 100 * dispersion, 0.5 + 100 * dispersion * 0.04, `dispersion ${dispersion}`)
  }
})

test('splitP: Student\'s t where all is coloured, the normal where all is white, and the worst between', () => {
  const { factor, df } = ar1Correction(0.5, 20)
  // all coloured: the floor is F · s2, s2 ~ χ²_ν / ν: the tail of Student's t with ν (here at least it, the largest)
  const t = 2.5
  const student = 2 * (1 - tCdf(t, df))
  const p = splitP(t, { factor, df, whiteDf: 1e9 })
  assert.ok(p >= student - 0.002, `${p} vs Student ${student}`)
  // the worst is between (the 5% point is 2.50, not Student's 2.20): at Student's 5% point the split's p is 7.4%
  close(splitP(2.2, { factor, df, whiteDf: 1e9 }), 0.0744, 0.002, 'p at 2.2')
  close(splitP(2.504, { factor, df, whiteDf: 1e9 }), 0.05, 0.002, 'p at 2.504')
  assert.equal(splitP(0, { factor, df, whiteDf: 100 }), 1)
})

test('splitP holds its level: 20,000 simulated slopes against the split floor, white to coloured', () => {
  // the statistic splitP models, simulated: W = 1, s2 / 10 = (1 + u) X, the truth 1 + F u; rejections at p < 5%
  const { factor, df } = ar1Correction(0.5, 20)
  const rng = randomSource(31)
  for (const u of [0, 1, 10]) {
    let hits = 0
    for (let i = 0; i < 20000; i++) {
      let chi = 0
      for (let j = 0; j < Math.round(df); j++) chi += rng.normal() ** 2
      const x = chi / Math.round(df)
      const floor = 1 + factor * Math.max(0, (1 + u) * x - 1)
      const slope = rng.normal() * Math.sqrt(1 + factor * u)
      if (splitP(Math.abs(slope) / Math.sqrt(floor), { factor, df: Math.round(df), whiteDf: 1e9 }) < 0.05) hits++
    }
    assert.ok(hits / 20000 <= 0.055, `u ${u}: ${hits / 20000}`)
  }
})

test('the drift test\'s floor: the white part of the seconds\' variance gets no AR(1) allowance', () => {
  // white tenths: the floor is about the seconds' variance / 10 (not ~3 times it), with a model for splitP
  const rng = randomSource(41)
  const xs = Array.from({ length: 200 }, () => 100 + 10 * rng.normal())
  const split = longRunVariance(xs, { white: true })
  const whole = longRunVariance(xs)
  assert.ok(split.floor.model && split.floor.longRun < 1.5 * 100 && whole.floor.longRun > 2.5 * 100 * 0.7,
    `${split.floor.longRun} vs ${whole.floor.longRun}`)
})
