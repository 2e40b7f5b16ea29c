// The statistics of adaptive experiments (analyzer/stats/adaptive.js): the spending of alpha over looks, the stopping
// rule,
// the next block's choice, what an undecided question would need, and the questions refused. Their error rates over
// whole simulated experiments are calibration/scenarios/adaptive.js's.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NsError } from '../lib/errors.js'
import { cellsNeeded, decideQuestion, deploymentsForPower, deploymentsForPrecision, spendingBoundary } from '../analyzer/stats/adaptive.js'
import { compareRatio, contrastPower, unitsForPower, welchParts } from '../analyzer/stats/inference.js'
import { tQuantile } from '../analyzer/stats/stats-math.js'
import { firstPoints } from '../analyzer/stats/adaptive-knee.js'
import { throughputAt } from '../analyzer/fit/usl-model.js'

/** Values whose logs have mean log(center) and standard deviation exactly sd (symmetric, evenly spaced). */
function spreadValues (center, sd, n) {
  const zs = Array.from({ length: n }, (_, i) => i - (n - 1) / 2)
  const scale = sd / Math.sqrt(zs.reduce((a, z) => a + z * z, 0) / (n - 1))
  return zs.map(z => center * Math.exp(scale * z))
}

const speedup = { compare: /** @type {[string, string]} */ (['cm', 'up']), quantity: /** @type {const} */ ('speedup'), at: 4 }
const throughput = { ...speedup, quantity: /** @type {const} */ ('throughput') }

test('the cells a question needs: two for a throughput ratio, four for a ratio of speedups', () => {
  assert.deepEqual(cellsNeeded(throughput), ['cm@4', 'up@4'])
  assert.deepEqual(cellsNeeded({ ...speedup, from: 2 }), ['cm@4', 'cm@2', 'up@4', 'up@2'])
  // a throughput side at an N of its own: cm's 2 workers against raw Node's one process; a side without one takes at
  assert.deepEqual(cellsNeeded({ ...throughput, compare: ['cm@2', 'up@1'], at: undefined }), ['cm@2', 'up@1'])
  assert.deepEqual(cellsNeeded({ ...throughput, compare: ['cm@2', 'up'] }), ['cm@2', 'up@4'])
})

test('a question on cells at different N decides on their ratio and names both cells', () => {
  const q = { compare: /** @type {[string, string]} */ (['cm@2', 'up@1']), quantity: /** @type {const} */ ('throughput') }
  const cells = { 'cm@2': spreadValues(2000, 0.03, 4), 'up@1': spreadValues(1000, 0.03, 4) }
  const d = decideQuestion(q, cells, { look: 4, maxLooks: 4 })
  assert.equal(d.verdict, 'different')
  assert.ok(Math.abs(d.estimate.ratio - 2) < 1e-9, String(d.estimate.ratio))
  assert.match(d.why, /^cm@2\/up@1 throughput is /)
  assert.deepEqual(d.cells.map(c => c.cell), ['cm@2', 'up@1'])
})

test('alpha spending: the increments sum to alpha, O\'Brien–Fleming-type saves it for the end, Pocock-type spreads it', () => {
  for (const spending of /** @type {const} */ (['obrien-fleming', 'pocock'])) {
    for (const maxLooks of [1, 2, 3, 5, 10]) {
      const inc = spendingBoundary({ maxLooks, alpha: 0.05, spending })
      assert.equal(inc.length, maxLooks)
      assert.ok(Math.abs(inc.reduce((a, b) => a + b, 0) - 0.05) < 1e-12, `${spending} K = ${maxLooks}`)
      assert.ok(inc.every(x => x > 0))
    }
  }
  // Lan–DeMets at t = 1/2, alpha 0.05: 2 − 2Φ(1.95996 · √2) = 0.00557; 0.05 · ln(1 + (e − 1) / 2) = 0.03101
  assert.ok(Math.abs(spendingBoundary({ maxLooks: 2 })[0] - 0.00557) < 2e-5)
  assert.ok(Math.abs(spendingBoundary({ maxLooks: 2, spending: 'pocock' })[0] - 0.03101) < 2e-5)
  const obf = spendingBoundary({ maxLooks: 4 })
  assert.ok(obf.every((x, i) => i === 0 || x > obf[i - 1]), 'increasing')
  const pocock = spendingBoundary({ maxLooks: 4, spending: 'pocock' })
  assert.ok(pocock[0] > obf[0] * 100 && pocock[3] < obf[3])
})

test('no decision before every cell has 2 deployments, whatever the effect; the block asked for fills them', () => {
  const first = decideQuestion(speedup, new Map(), { look: 0, maxLooks: 4 })
  assert.equal(first.verdict, 'continue')
  assert.deepEqual(first.next, cellsNeeded(speedup).map(cell => ({ cell, deployments: 2 })))
  // a 100× effect with one value a cell: nothing can be tested
  const cells = { 'cm@4': [100000], 'cm@1': [1000], 'up@4': [1000], 'up@1': [1000, 1010] }
  const d = decideQuestion(speedup, cells, { look: 1, maxLooks: 4 })
  assert.equal(d.verdict, 'continue')
  assert.equal(d.stop, false)
  assert.equal(d.estimate, null)
  assert.deepEqual(d.next, [{ cell: 'cm@4', deployments: 1 }, { cell: 'cm@1', deployments: 1 }, { cell: 'up@4', deployments: 1 }])
  assert.match(d.why, /cm@4, cm@1, up@4 need 2 deployments/)
  // the last look without them: undecided, and it says why
  const last = decideQuestion(speedup, cells, { look: 4, maxLooks: 4 })
  assert.equal(last.verdict, 'undecided')
  assert.ok(last.stop)
  assert.match(last.why, /need 2 deployments/)
})

test('a huge effect stops "different" at look 2, the first look with 2 deployments a cell, with its interval', () => {
  const cells = { 'cm@4': [4000], 'cm@1': [1000], 'up@4': [1000], 'up@1': [1000] }
  const opts = { maxLooks: 4, costs: { 'cm@4': 120, 'cm@1': 80, 'up@4': 120, 'up@1': 80 } }
  let d = decideQuestion(speedup, cells, { ...opts, look: 1 })
  assert.equal(d.verdict, 'continue')
  for (const { cell, deployments } of d.next) for (let i = 0; i < deployments; i++) cells[cell].push(cells[cell][0] * 1.01)
  d = decideQuestion(speedup, cells, { ...opts, look: 2 })
  assert.equal(d.verdict, 'different')
  assert.ok(d.stop)
  assert.equal(d.direction, 'a>b')
  assert.ok(d.p < d.alphaThisLook)
  const inc = spendingBoundary({ maxLooks: 4 })
  assert.equal(d.alphaThisLook, inc[1])
  assert.ok(Math.abs(d.alphaSpent - inc[0] - inc[1]) < 1e-15)
  assert.equal(d.estimate.level, 1 - inc[1])
  assert.ok(d.estimate.lo < 4 && d.estimate.hi > 4 && d.estimate.lo > 1, JSON.stringify(d.estimate))
  assert.deepEqual(d.next, [])
  assert.match(d.why, /different at look 2 of 4/)
})

test('the ratio and p are Welch\'s on logs (compareRatio\'s), the interval at the level the look spends', () => {
  const a = [2100, 1980, 2050]
  const b = [1000, 1030, 990, 1010]
  const d = decideQuestion(throughput, { 'cm@4': a, 'up@4': b }, { look: 3, maxLooks: 3, spending: 'pocock' })
  const alpha = spendingBoundary({ maxLooks: 3, spending: 'pocock' })[2]
  const ref = compareRatio(a, b)
  assert.ok(Math.abs(d.estimate.ratio - ref.ratio) < 1e-12)
  assert.ok(Math.abs(d.p - ref.p) < 1e-12)
  const w = welchParts(a.map(Math.log), b.map(Math.log))
  const half = tQuantile(1 - alpha / 2, w.df) * w.se
  assert.ok(Math.abs(d.estimate.lo - Math.exp(w.diff - half)) < 1e-9 && Math.abs(d.estimate.hi - Math.exp(w.diff + half)) < 1e-9)
  assert.equal(d.estimate.level, 1 - alpha)
})

test('equivalent within the margin when both one-sided tests reject at the alpha of the look', () => {
  const cells = { 'cm@4': spreadValues(1000, 0.005, 8), 'up@4': spreadValues(1002, 0.005, 8) }
  const d = decideQuestion(throughput, cells, { look: 3, maxLooks: 4 })
  assert.equal(d.verdict, 'equivalent')
  assert.ok(d.stop && d.pEquivalence < d.alphaThisLook)
  assert.match(d.why, /equivalent within ±5%/)
})

test('undecided at the last look says how many deployments a cell would detect the difference seen', () => {
  const cells = { 'cm@4': spreadValues(1060, 0.08, 3), 'up@4': spreadValues(1000, 0.08, 3) }
  const d = decideQuestion(throughput, cells, { look: 3, maxLooks: 3 })
  assert.equal(d.verdict, 'undecided')
  assert.ok(d.stop)
  const n = d.needed.deployments
  assert.ok(Math.abs(d.needed.effect - 0.06) < 1e-9)
  assert.match(d.why, new RegExp(`fixed experiment of ${n} deployments a cell \\(now 3–3\\) would detect a 6(\\.0)?% difference with 80% power`))
  // n is the fewest for 80% power at alpha 0.05 with these spreads (the noncentral t of contrastPower)
  const power = (k) => contrastPower({ effect: 0.06, se: 0.08 * Math.sqrt(2 / k), df: 2 * k - 2 })
  assert.ok(power(n) >= 0.8 && power(n - 1) < 0.8, `n = ${n}: ${power(n)}, ${power(n - 1)}`)
})

test('a fixed design for a throughput ratio is unitsForPower\'s; a speedup needs more (its contrast has 4 cells)', () => {
  for (const [effect, cv] of [[0.25, 0.08], [0.1, 0.05], [0.05, 0.03]]) {
    assert.equal(deploymentsForPower({ question: throughput, effect, cv, target: 0.9 }), unitsForPower({ effect, cv, target: 0.9 }))
    assert.ok(deploymentsForPower({ question: speedup, effect, cv, target: 0.9 }) > unitsForPower({ effect, cv, target: 0.9 }))
  }
})

test('the next block gives the most deployments to the cell whose spread is 3× the others\' (known best)', () => {
  for (const noisy of cellsNeeded(speedup)) {
    const cells = Object.fromEntries(cellsNeeded(speedup).map(k => [k, spreadValues(1000, k === noisy ? 0.09 : 0.03, 8)]))
    const d = decideQuestion(speedup, cells, { look: 2, maxLooks: 6 })
    assert.equal(d.verdict, 'continue')
    const got = Object.fromEntries(d.next.map(x => [x.cell, x.deployments]))
    // Neyman: n ∝ sd, each cell's shrunk toward the pooled one (7 df of its own, 4 pooled: 0.078 against 0.039, so
    // 2 to 1); the others one deployment each (every cell's spread renewed)
    for (const k of cellsNeeded(speedup)) assert.equal(got[k], k === noisy ? 2 : 1, `${noisy}: ${JSON.stringify(got)}`)
    assert.ok(d.gain.narrowsBy > 0 && d.gain.narrowsBy < 1)
    assert.equal(d.gain.seconds, null)
  }
  // spreads that differ by chance only (F test) do not steer the block: one of each
  const alike = { 'cm@4': spreadValues(1000, 0.05, 3), 'up@4': spreadValues(1000, 0.07, 3) }
  assert.deepEqual(decideQuestion(throughput, alike, { look: 1, maxLooks: 4 }).next, [{ cell: 'cm@4', deployments: 1 }, { cell: 'up@4', deployments: 1 }])
})

test('the next block follows costs: a cell 4× as costly gets half the deployments; the gain names its seconds', () => {
  const cells = { 'cm@4': spreadValues(1100, 0.05, 4), 'up@4': spreadValues(1000, 0.05, 4) }
  const d = decideQuestion(throughput, cells, { look: 1, maxLooks: 4, costs: { 'cm@4': 100, 'up@4': 400 } })
  assert.deepEqual(d.next, [{ cell: 'cm@4', deployments: 2 }, { cell: 'up@4', deployments: 1 }])
  assert.equal(d.gain.seconds, 600)
  assert.match(d.why, /narrows the interval by \d+% for 600 s/)
})

test('a question with a precision estimates, never tests: "estimated" once the repeated interval is within it, else the next ' +
  'block, and at the last look the deployments a fixed experiment would need', () => {
  const q = { estimate: 'cm@4', precision: 0.05 }
  const tight = decideQuestion(q, { 'cm@4': spreadValues(2000, 0.001, 4) }, { look: 2, maxLooks: 4 })
  assert.equal(tight.verdict, 'estimated')
  assert.ok(Math.abs(tight.estimate.ratio - 2000) < 1e-6, String(tight.estimate.ratio))
  assert.ok(tight.estimate.hi / tight.estimate.ratio - 1 <= 0.05)
  assert.equal(tight.p, null)
  assert.match(tight.why, /^cm@4 throughput is 2000 \(.*: within ±[\d.]+%, the ±5% asked, at look 2 of 4/)
  const loose = decideQuestion(q, { 'cm@4': spreadValues(2000, 0.2, 4) }, { look: 2, maxLooks: 4 })
  assert.equal(loose.verdict, 'continue')
  assert.deepEqual(loose.next, [{ cell: 'cm@4', deployments: 1 }])
  assert.ok(loose.estimate.hi / loose.estimate.ratio - 1 > 0.05)
  const last = decideQuestion(q, { 'cm@4': spreadValues(2000, 0.2, 4) }, { look: 4, maxLooks: 4 })
  assert.equal(last.verdict, 'undecided')
  // ±5% at 95% with a log spread of 0.2: n ≥ (t · 0.2 / ln 1.05)², 64.5 at the normal's 1.96, a little more at t's
  const n = deploymentsForPrecision({ coefs: [1], variances: [0.04], precision: 0.05 })
  assert.ok(n >= 65 && n <= 70, String(n))
  assert.equal(tQuantile(0.975, n - 1) * 0.2 / Math.sqrt(n) <= Math.log(1.05), true)
  assert.equal(tQuantile(0.975, n - 2) * 0.2 / Math.sqrt(n - 1) > Math.log(1.05), true)
  assert.deepEqual(last.needed, { deployments: n, precision: 0.05 })
  // a ratio to a precision: cm twice up, measured tightly
  const ratio = decideQuestion({ ...throughput, precision: 0.1 }, { 'cm@4': spreadValues(2000, 0.01, 4), 'up@4': spreadValues(1000, 0.01, 4) },
    { look: 3, maxLooks: 3 })
  assert.equal(ratio.verdict, 'estimated')
  assert.ok(Math.abs(ratio.estimate.ratio - 2) < 1e-9)
})

test('bad questions and plans are refused with a coded error naming the key', () => {
  const refused = (q, re, opts = { look: 1, maxLooks: 3 }) => assert.throws(() => decideQuestion(q, {}, opts), (err) => {
    assert.ok(err instanceof NsError)
    assert.equal(err.exitCode, 2)
    assert.match(err.message, re)
    return true
  })
  // the rules an experiment file's question: key is held to too (analyzer/stats/adaptive-question.js)
  refused({ ...throughput, quantity: 'latency' }, /^question\.quantity: "latency" is not allowed; one of: throughput, speedup/)
  refused({ ...throughput, compare: ['cm'] }, /^question\.compare: \["cm"\]; give two strategies, e\.g\. compare: \[cm, up\]/)
  refused({ ...throughput, compare: ['cm', 'nginx'] }, /^question\.compare: "nginx" is not a strategy; allowed: up, cm, pm2, hs/)
  refused({ ...throughput, compare: ['cm', 'cm'] }, /^question\.compare: cm@4 twice; give two different cells/)
  refused({ ...throughput, compare: ['cm@4', 'cm'] }, /^question\.compare: cm@4 twice/)
  refused({ ...throughput, compare: ['cm@2', 'up'], at: undefined }, /^question\.at: missing; give an instance count, a whole number >= 1/)
  refused({ ...throughput, compare: ['cm@2', 'up@1'] }, /^question\.at: both sides give their own N \(cm@2, up@1\); drop at/)
  refused({ ...speedup, compare: ['cm@2', 'up'] }, /^question\.compare: cm@2: a speedup's sides are strategies, .*; drop @2/)
  refused({ ...throughput, at: 0 }, /^question\.at: 0; give an instance count, a whole number >= 1/)
  refused({ ...speedup, from: 4 }, /^question\.from: 4 is not below at \(4\)/)
  refused({ ...throughput, from: 2 }, /^question\.from: only a speedup has a base N/)
  refused({ ...throughput, margin: 5 }, /^question\.margin: 5 is not allowed; a fraction above 0 and below 1/)
  refused({ estimate: 'cm@4' }, /^question\.precision: missing; an estimate is measured to a precision/)
  refused({ estimate: 'cm@4', precision: 5 }, /^question\.precision: 5 is not allowed; a fraction/)
  refused({ ...throughput, margin: 0.05, precision: 0.05 }, /^question\.precision: a question asks for a precision .* or a margin .*, not both/)
  refused({ ...throughput, estimate: 'cm@4', precision: 0.05 }, /^question\.compare: an estimate \(estimate: cm@4\) is of one cell's throughput; drop compare/)
  refused({ estimate: 'cm', precision: 0.05 }, /^question\.at: missing; give an instance count/)
  refused({ estimate: 'cm@4', at: 4, precision: 0.05 }, /^question\.at: cm@4 gives its own N; drop at/)
  refused({ estimate: 'k8s@4', precision: 0.05 }, /^question\.estimate: "k8s@4" is not a cell; give strategy@N/)
  refused(throughput, /^question\.spending: must be one of obrien-fleming, pocock/, { look: 1, maxLooks: 3, spending: 'haybittle' })
  refused(throughput, /^question\.looks: the planned looks/, { look: 1, maxLooks: 0 })
  assert.throws(() => decideQuestion(throughput, { 'cm@4': [1, -2] }, { look: 1, maxLooks: 3 }),
    { code: 'NS_ERR_BAD_DATA', message: /cell cm@4: .*positive number, not -2/ })
  assert.throws(() => decideQuestion(throughput, {}, { look: 4, maxLooks: 3 }), { code: 'NS_ERR_INTERNAL' })
})

/** Deployments of a USL curve (gamma 100) at each N, `deployments` each, its log values spread by exactly sd. */
function uslCells (shape, ns, deployments, sd) {
  return Object.fromEntries(ns.map(n => [`cm@${n}`, spreadValues(throughputAt(n, { gamma: 100, ...shape }), sd, deployments)]))
}
const knee = (between, precision = 0.2) => ({ knee: 'cm', between: /** @type {[number, number]} */ (between), precision })

test('a knee question may measure every N within its bounds; its first block is 4 of them spread on the log scale, twice each', () => {
  assert.deepEqual(cellsNeeded(knee([2, 5])), ['cm@2', 'cm@3', 'cm@4', 'cm@5'])
  assert.deepEqual(firstPoints([1, 16]), [1, 3, 6, 16])
  assert.deepEqual(firstPoints([1, 4]), [1, 2, 3, 4])
  assert.deepEqual(firstPoints([10, 12 + 1]), [10, 11, 12, 13])
  const d = decideQuestion(knee([1, 16]), {}, { look: 0, maxLooks: 6 })
  assert.equal(d.verdict, 'continue')
  assert.deepEqual(d.next, [1, 3, 6, 16].map(n => ({ cell: `cm@${n}`, deployments: 2 })))
})

test('a knee\'s next block goes where the peak is decided (known best): above the N measured when they all lie below it, ' +
  'and below the costly N when those cost 50× as much', () => {
  // a peak at N* = 9.9 (sigma 0.02, lambda 0.01), measured only at N = 1..4: the curve there barely bends
  const shape = { sigma: 0.02, lambda: 0.01 }
  const cells = uslCells(shape, [1, 2, 3, 4], 3, 0.03)
  const d = decideQuestion(knee([1, 16]), cells, { look: 2, maxLooks: 8 })
  assert.equal(d.verdict, 'continue', d.why)
  assert.ok(d.next.every(x => Number(x.cell.split('@')[1]) >= 8), JSON.stringify(d.next))
  assert.ok(d.gain.narrowsBy > 0, JSON.stringify(d.gain))
  // the same, N above 6 costing 50× a deployment: the block stays where it is cheap, and says for how long
  const costs = Object.fromEntries(cellsNeeded(knee([1, 16])).map(k => [k, Number(k.split('@')[1]) > 6 ? 5000 : 100]))
  const cheap = decideQuestion(knee([1, 16]), cells, { look: 2, maxLooks: 8, costs })
  assert.ok(cheap.next.every(x => Number(x.cell.split('@')[1]) <= 6), JSON.stringify(cheap.next))
  assert.match(cheap.why, /next: cm@\d+ ×\d.* narrows the interval by \d+(\.\d+)?% for \d+ s/)
})

test('a knee is "estimated" once its repeated interval is within ±precision (the truth inside); "beyond" when the ' +
  'interval lies above the bounds; undecided at the last look otherwise', () => {
  const shape = { sigma: 0.02, lambda: 0.01 }
  const truth = Math.sqrt(0.98 / 0.01)
  const ns = [1, 3, 6, 8, 10, 12, 16]
  const d = decideQuestion(knee([1, 16]), uslCells(shape, ns, 3, 0.01), { look: 3, maxLooks: 6 })
  assert.equal(d.verdict, 'estimated', d.why)
  assert.ok(d.estimate.lo <= truth && truth <= d.estimate.hi, JSON.stringify(d.estimate))
  assert.ok(d.estimate.hi / d.estimate.ratio - 1 <= 0.2 && 1 - d.estimate.lo / d.estimate.ratio <= 0.2)
  assert.match(d.why, /^cm's peak N\* is [\d.]+ \([\d.]+% repeated interval [\d.]+–[\d.]+\): within ±[\d.]+%, the ±20% asked, at look 3 of 6$/)
  // linear throughput up to 8: no peak, and none below the bounds' top
  const linear = decideQuestion(knee([1, 8]), uslCells({ sigma: 0, lambda: 0 }, [1, 2, 4, 8], 2, 0.01), { look: 1, maxLooks: 4 })
  assert.equal(linear.verdict, 'beyond', linear.why)
  assert.equal(linear.estimate.hi, null)
  assert.ok(linear.estimate.lo > 8)
  // noisy and at the last look: undecided, with where more deployments would go
  const noisy = decideQuestion(knee([1, 16], 0.05), uslCells(shape, [1, 3, 6, 16], 2, 0.08), { look: 2, maxLooks: 2 })
  assert.equal(noisy.verdict, 'undecided', noisy.why)
  assert.match(noisy.why, /^undecided after 2 of 2 looks: cm's peak N\* is .* not within ±5%; more deployments where the design puts them/)
})

test('bad knee questions are refused naming the key', () => {
  const refuse = (q, re) => assert.throws(() => cellsNeeded(q), (e) => e instanceof NsError && re.test(e.message), JSON.stringify(q))
  refuse({ knee: 'cm', between: [1, 3], precision: 0.2 }, /question\.between: \[1,3\]; give the least and the most instances .* spanning 4 N at least/)
  refuse({ knee: 'cm', between: [1, 65], precision: 0.2 }, /question\.between/)
  refuse({ knee: 'cm', between: [1, 16] }, /question\.precision: missing; a knee is estimated to a precision/)
  refuse({ knee: 'xx', between: [1, 16], precision: 0.2 }, /question\.knee: "xx" is not a strategy/)
  refuse({ knee: 'cm', between: [1, 16], precision: 0.2, at: 4 }, /question\.at: a knee question .* drop at/)
})
