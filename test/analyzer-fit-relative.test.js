// The relative-error fit (analyzer/fit/fit-relative.js): a flat curve named a ceiling, exact USL data recovered, the
// ceiling model against its closed form, identifiability said instead of an interval, retrograde only when shown.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fitUsl } from '../analyzer/fit/usl-fit.js'
import { throughputAt } from '../analyzer/fit/usl-model.js'
import { logData, fitShape, aiccOf } from '../analyzer/fit/fit-log.js'
import { fellOf } from '../analyzer/fit/fit-relative.js'
import { regionOf } from '../analyzer/fit/fit-profile.js'
import { seededRandom } from '../lib/random.js'
import { normalDraw } from '../analyzer/stats/stats-math.js'
import { whyCurvesBend } from '../analyzer/diagnosis/why-bends.js'
import { readFileSync } from 'node:fs'

const pts = (pairs) => pairs.map(([n, throughput]) => ({ n, throughput }))
const near = (a, b, rel, what) => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${what}: ${a} not within ${rel * 100}% of ${b}`)

test('one Node thread given more cores (200, 209, 209, 211, 210 req/s at N = 1..12) is a ceiling from N = 1, not retrograde', () => {
  const r = /** @type {any} */ (fitUsl(pts([[1, 200], [2, 209], [4, 209], [8, 211], [12, 210]]), { unit: 'cores' }))
  assert.equal(r.weighting, 'relative')
  assert.equal(r.choice.model, 'ceiling')
  assert.equal(r.limitedBy, 'ceiling')
  assert.match(r.verdict, /ceiling: about one core's worth from N = 1: 2\d\d\/s \[2\d\d, 2\d\d\], reached by N = 2/)
  assert.doesNotMatch(r.verdict, /retrograde|falls|contention-limited/)
  assert.equal(r.fell, null)
  // the ceiling holds the flat part's geometric mean
  near(r.ceilingFit.ceiling, Math.exp((Math.log(209) * 2 + Math.log(211) + Math.log(210)) / 4), 1e-4, 'C')
  const [lo, hi] = r.ceilingFit.ci95.ceiling
  assert.ok(lo < r.ceilingFit.ceiling && r.ceilingFit.ceiling < hi && hi - lo < 10, `${lo}..${hi}`)
})

test('the relative-error fit recovers exact USL data, and reports a term that buys nothing at its bound', () => {
  const truth = { gamma: 1234.5, sigma: 0.031, lambda: 0.0042 }
  const r = fitUsl([1, 2, 3, 4, 6, 8, 12, 16, 24, 32].map(n => ({ n, throughput: throughputAt(n, truth) })))
  for (const k of ['gamma', 'sigma', 'lambda']) near(r[k], truth[k], 1e-3, k)
  near(r.nStar, Math.sqrt((1 - truth.sigma) / truth.lambda), 1e-3, 'N*')
  assert.equal(/** @type {any} */ (r).choice.model, 'usl')
  const amdahl = fitUsl([1, 2, 4, 8, 16].map(n => ({ n, throughput: throughputAt(n, { gamma: 500, sigma: 0.08, lambda: 0 }) })))
  assert.equal(amdahl.lambda, 0)
  assert.ok(amdahl.bounds.includes('lambda=0'))
  near(amdahl.sigma, 0.08, 1e-3, 'sigma')
})

test('linear up to a ceiling: the closed form (geometric means of the two parts) on data with a change between N = 2 and 4', () => {
  const rows = pts([[1, 100], [2, 210], [4, 290], [8, 310], [16, 300]])
  const d = logData(rows)
  const f = fitShape(d, 'ceiling')
  // left part {1, 2}: log gamma = mean(log x - log N); right {4, 8, 16}: log C = mean(log x); c = C / gamma in (2, 4)
  const la = (Math.log(100) + Math.log(105)) / 2
  const lc = (Math.log(290) + Math.log(310) + Math.log(300)) / 3
  const ssr = (Math.log(100) - la) ** 2 + (Math.log(105) - la) ** 2 + [290, 310, 300].reduce((a, x) => a + (Math.log(x) - lc) ** 2, 0)
  near(Math.exp(f.a), Math.exp(la), 1e-5, 'gamma')
  near(f.shape.c, Math.exp(lc - la), 1e-4, 'change point')
  near(f.ssr, ssr, 1e-6, 'SSR')
  const r = /** @type {any} */ (fitUsl(rows))
  near(r.ceilingFit.ceiling, Math.exp(lc), 1e-4, 'C through fitUsl')
  const [lo, hi] = r.ceilingFit.ci95.changePoint
  assert.ok(lo < r.ceilingFit.changePoint && r.ceilingFit.changePoint < hi, `change point interval ${lo}..${hi}`)
})

test('a profile region: bisected to the cutoff on a known quadratic statistic; at a bound the one-sided cutoff', () => {
  // stat(x) = ((x - 1) / 0.1)^2: the region at cutoff 4 is [0.8, 1.2]
  const r = regionOf(x => ((x - 1) / 0.1) ** 2, 1, { up: [1.1, 1.5, 2], down: [0.9, 0.5, 0], c95: 4, c90: 2.7 })
  near(r.lo, 0.8, 2e-3, 'lo')
  near(r.hi, 1.2, 2e-3, 'hi')
  // estimate near the bound 0: stat(0) = 2.25 <= 2.7 keeps 0 in, the region reaching its bound
  const b = regionOf(x => ((x - 0.15) / 0.1) ** 2, 0.15, { up: [0.2, 0.5], down: [0.1, 0], c95: 4, c90: 2.7, bound: 'lo' })
  assert.equal(b.lo, 0)
  assert.equal(b.atBound, true)
  near(b.hi, 0.35, 5e-3, 'hi near the bound')
})

test('λ not identifiable from N = 1..4: said with its bound and the N that would identify it, no interval', () => {
  const rnd = seededRandom(3)
  const truth = { gamma: 100, sigma: 0.1, lambda: 0 }
  const rows = [1, 2, 3, 4].flatMap(n => [0, 1, 2].map(() => ({ n, throughput: throughputAt(n, truth) * Math.exp(0.02 * normalDraw(rnd)) })))
  const r = /** @type {any} */ (fitUsl(rows))
  assert.equal(r.ci95.lambda, null)
  assert.equal(r.identified.lambda, false)
  assert.ok(r.bound95.lambda > 0)
  assert.match(r.identify.lambda, new RegExp(/^λ is not identifiable from N = 1\.\.4: it cannot be told from 0 \(λ ≤ [\d.]+ at 95%\); /.source +
    /a λ as large as [\d.]+ would be told from 0 with N measured up to \d+$/.source))
  const m = Number(r.identify.lambda.match(/up to (\d+)$/)[1])
  assert.ok(m >= 8, `the N that identifies λ lies beyond the design: ${m}`)
})

test('retrograde is said when a measured point lies significantly below an earlier one, and only then', () => {
  const truth = { gamma: 100, sigma: 0.03, lambda: 0.01 }
  const ns = [1, 2, 4, 6, 8, 12, 16, 24]
  const rnd = seededRandom(9)
  const rows = ns.flatMap(n => [0, 1, 2].map(() => ({ n, throughput: throughputAt(n, truth) * Math.exp(0.02 * normalDraw(rnd)) })))
  const r = /** @type {any} */ (fitUsl(rows, { unit: 'workers' }))
  assert.ok(r.fell, 'a 30% fall from N = 8 to 24 at 2% noise is significant')
  assert.match(r.verdict, /coherency-limited, peak [\d,.]+\/s at [\d.]+ workers \[[\d.]+, [\d.]+\]; throughput falls \(retrograde\): N = \d+ measured/)
  // the same curve measured only up to its peak: no fall claimed
  const rising = /** @type {any} */ (fitUsl(rows.filter(x => x.n <= 8), { unit: 'workers' }))
  assert.equal(rising.fell, null)
  assert.doesNotMatch(rising.verdict, /retrograde/)
})

test('why the curve bends: a ceiling fit is named a ceiling; a term the fit cannot identify is not quoted', () => {
  const fit = fitUsl(pts([[1, 200], [2, 209], [4, 209], [8, 211], [12, 210]]), { unit: 'cores' })
  const runs = [1, 2, 4, 8, 12].map(n => ({ dir: `/s/${n}`, diagnosis: { bottleneck: { kind: 'event-loop', line: `instance r1 ELU 0.99 at ${n}` } } }))
  const group = { name: 'up/cpu', unit: 'cores', fits: { usl: fit }, observations: [1, 2, 4, 8, 12].map(n => ({ n, run: `/s/${n}` })) }
  const [bend] = whyCurvesBend([group], runs)
  assert.match(bend.sentence, /— the fit shows it as a ceiling \(linear up to a ceiling fits best by AICc\)$/)
  const unidentified = { ...fit, limitedBy: 'contention', sigma: 0.01, lambda: 0.02, ci95: { ...fit.ci95, lambda: null } }
  const [quiet] = whyCurvesBend([{ ...group, fits: { usl: unidentified } }], runs)
  assert.doesNotMatch(quiet.sentence, /λ =|σ =/)
})

test('the relative-error fit and its profile intervals agree with R\'s nls on log throughput and MASS\'s profile confint', () => {
  const f = JSON.parse(readFileSync(new URL('./fixtures/usl/r-nls-log-profile.json', import.meta.url), 'utf8'))
  const r = fitUsl(f.points)
  const d = f.documented
  near(r.sigma, d.sigma, 1e-3, 'sigma')
  near(r.lambda, d.lambda, 1e-3, 'lambda')
  assert.ok(Math.abs(Math.log(r.gamma) - d.logGamma) < 1e-5, `log gamma ${Math.log(r.gamma)}`)
  for (const k of ['sigma', 'lambda']) for (const i of [0, 1]) near(r.ci95[k][i], d.ci[k][i], 1e-3, `${k} interval end ${i}`)
  // gamma's interval is a t interval on log gamma, R's a profile: the same to 1e-4 on the log scale here
  for (const i of [0, 1]) assert.ok(Math.abs(Math.log(r.ci95.gamma[i]) - d.ci.logGamma[i]) < 1e-4, `log gamma end ${i}`)
})

test('AICc and the fall test by their formulas', () => {
  // AICc = n log(SSR/n) + 2(k+1) + 2(k+1)(k+2)/(n-k-2); undefined below n - k - 2 = 1
  assert.ok(Math.abs(aiccOf(0.02, 10, 3) - (10 * Math.log(0.002) + 8 + 40 / 5)) < 1e-12)
  assert.equal(aiccOf(0.02, 5, 3), null)
  // two N, 2 runs each, residual variance 0.001 on 10 dof: t = drop / sqrt(0.001 (1/2 + 1/2)) vs t(0.95, 10) = 1.812
  const d = { ns: [1, 2], logN: [0, Math.log(2)], counts: [2, 2], means: [0, -0.1], pure: 0, rows: 4 }
  const fell = fellOf(d, 0.001, 10)
  assert.ok(fell && Math.abs(fell.t - 0.1 / Math.sqrt(0.001)) < 1e-12 && Math.abs(fell.critical - 1.8125) < 1e-3, JSON.stringify(fell))
  near(fell.drop, 1 - Math.exp(-0.1), 1e-12, 'drop')
  assert.equal(fellOf({ ...d, means: [0, -0.05] }, 0.001, 10), null, 't = 1.58 < 1.81')
  // three N: three pairs, the critical value is t(1 - 0.05/3, 10) = 2.466
  assert.ok(Math.abs(fellOf({
    ns: [1, 2, 3], logN: [0, 0.69, 1.1], counts: [2, 2, 2], means: [0, 0, -0.1], pure: 0, rows: 6
  }, 0.001, 10).critical - 2.466) < 2e-3)
})
