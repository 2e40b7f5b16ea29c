// Tests between groups (the deployment as unit, Holm, different / equivalent / inconclusive, the power), which runs
// share a deployment, fits of every repeat against the R usl package's answers, and invalid runs left out.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compare, fitSources } from '../analyzer/compare.js'
import { loadPoints, deploymentsOf } from '../analyzer/points.js'
import { fitUsl } from '../analyzer/fit/usl-fit.js'
import { throughputAt } from '../analyzer/fit/usl-model.js'
import { testGroups, cellsOf, ALPHA } from '../analyzer/stats/group-tests.js'
import { holm } from '../analyzer/stats/inference.js'
import { designRows, randomSource } from '../calibration/synth.js'
import { normalDraw } from '../analyzer/stats/stats-math.js'
import { formatCompare, formatFit } from '../analyzer/text-format.js'
import { seededRandom } from '../lib/random.js'
import { writeRun } from './fixtures/usl/sweep.js'
import { runCli } from './helpers/cli.js'

const fixture = name => JSON.parse(readFileSync(new URL(`./fixtures/usl/${name}`, import.meta.url), 'utf8'))
const signif = (v, d) => Number(v.toPrecision(d))
const NS = [1, 2, 3, 4, 6, 8]

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-tests-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs of each strategy at every N, `repeats` each, throughput on its curve times (1 + cv · a normal draw). */
function writeStrategies (out, truths, { repeats = 2, cv = 0.02, seed = 1, ns = NS } = {}) {
  const rnd = seededRandom(seed)
  let i = 0
  for (const [strategy, p] of Object.entries(truths)) {
    for (const n of ns) {
      for (let r = 0; r < repeats; r++) writeRun(out, i++, { strategy, instances: n, concurrency: 50 }, throughputAt(n, p) * (1 + cv * normalDraw(rnd)))
    }
  }
  return i
}

/** Rows of one group: `repeats` runs per N around its curve, Gaussian noise of cv times the level. */
const noisyRows = (p, rnd, { repeats = 2, cv = 0.03, ns = NS } = {}) =>
  ns.flatMap(n => Array.from({ length: repeats }, () => ({ n, throughput: throughputAt(n, p) * (1 + cv * normalDraw(rnd)) })))

/**
 * A group of synthetic runs: `deployments` per N, `repeats` each, sharing an effect (ICC of cv²), keyed by name;
 * pooled: every run without its deployment (each its own unit).
 * @param {string} name
 * @param {ReturnType<typeof randomSource>} rng
 * @param {{ deployments: number, repeats: number, icc?: number, cv?: number, truth?: { gamma: number },
 *   pooled?: boolean }} o
 */
const synthGroup = (name, rng, { truth, pooled, ...o }) => ({
  name,
  key: { strategy: name, benchmark: 'page' },
  observations: designRows(rng, { truth: { kind: 'usl', gamma: 1000, sigma: 0.05, lambda: 0.002, ...truth }, ns: NS.slice(0, 4), cv: 0.05, ...o })
    .map(r => ({ n: r.n, throughput: r.throughput, deployment: pooled ? null : `${name}:${r.deployment}` }))
})

test('a known difference is found on what the design identifies: throughput at each N, speedup, ceiling; Holm over them', async (t) => {
  const out = tmp(t)
  writeStrategies(out, { cm: { gamma: 3000, sigma: 0.02, lambda: 0.002 }, up: { gamma: 3000, sigma: 0.3, lambda: 0.002 } }, { repeats: 3 })
  const r = await compare([out])
  assert.equal(r.pairs.length, 1)
  const p = r.pairs[0]
  assert.deepEqual([p.benchmark, p.a, p.b], ['page', 'cm/page', 'up/page'])
  // six N, the speedup from N = 1 to 8, the ceiling, the ratio over N: one family of 9 for Holm
  assert.deepEqual(p.tests.map(x => x.quantity), [...NS.map(() => 'throughput'), 'speedup', 'ceiling', 'overall'])
  assert.equal(p.family, 9)
  // every run of a plain executor run is a deployment of its own: 3 units a side
  assert.ok(p.tests.every(x => x.units[0] === 3 && x.units[1] === 3))
  const at = n => p.tests.find(x => x.quantity === 'throughput' && x.n === n)
  assert.equal(at(8).outcome, 'different')
  assert.ok(at(8).ratio > 1.5 && at(8).pHolm < ALPHA && at(8).pHolm >= at(8).p)
  assert.match(at(8).line,
    /^throughput at N = 8: different: cm\/page is higher \(cm\/page \/ up\/page = [\d.]+ \[[\d.]+, [\d.]+\]; p (< 0\.001|= [\d.]+), Holm over 9 tests\)$/)
  assert.notEqual(at(1).outcome, 'different', 'the same gamma at N = 1')
  const speedup = p.tests.find(x => x.quantity === 'speedup')
  assert.deepEqual([speedup.n, speedup.outcome], [[1, 8], 'different'])
  assert.ok(p.tests.every(x => x.power && x.power.effect === 0.1 && typeof x.power.text === 'string'))
  assert.deepEqual(r.settings, { margin: 0.05, effect: 0.1, alpha: 0.05 })
  const text = formatCompare(r)
  assert.match(text, /^tests between groups: Each pair of groups/m)
  assert.match(text, /^ {2}cm\/page vs up\/page \(page\):$/m)
  assert.match(text, /^ {4}throughput at N = 8: different: cm\/page is higher/m)
  assert.match(text, new RegExp(/^ {4}throughput at N = 1: (inconclusive|equivalent within ±5%)[^\n]*\n {6}power: /.source +
    /a 10% difference in throughput at N = 1 is detected at least \d+% of the time with 3 deployments each/.source, 'm'))
  // --margin and --effect (percent) reach the tests and their words
  const wide = (await compare([out], { margin: 20, effect: 25 })).pairs[0]
  assert.match(wide.tests[0].line, /within ±20%/)
  assert.match(wide.tests[0].power.text, /^a 25% difference in throughput at N = 1/)
})

test('repeats on one deployment are one unit: each N cannot be tested with one a side, the ratio over N still can', async (t) => {
  const out = tmp(t)
  const truths = { cm: { gamma: 3000, sigma: 0.02, lambda: 0.002 }, up: { gamma: 3000, sigma: 0.3, lambda: 0.002 } }
  const rnd = seededRandom(8)
  let i = 0
  // order: shapes: every repeat of a shape on the deployment its placement (the replica's process) names
  for (const [strategy, p] of Object.entries(truths)) {
    for (const n of NS) {
      const placement = [{ instance: 'r1', node: 'host', pid: 1000 + i, port: 4000 }]
      for (let r = 0; r < 3; r++) {
        writeRun(out, i++, { strategy, instances: n, concurrency: 50 }, throughputAt(n, p) * (1 + 0.02 * normalDraw(rnd)), 'done', { placement })
      }
    }
  }
  const { groups } = await loadPoints(out)
  assert.equal(new Set(groups[0].observations.map(o => o.deployment)).size, NS.length, 'one deployment per N')
  const p = (await compare([out])).pairs[0]
  const at8 = p.tests.find(x => x.quantity === 'throughput' && x.n === 8)
  assert.equal(at8.outcome, 'untestable')
  assert.deepEqual(at8.units, [1, 1])
  assert.match(at8.line,
    /^throughput at N = 8: cannot be tested: cm\/page has 1 deployment at N = 8 \(its 3 runs share one deployment\); a test needs 2 or more a side$/)
  assert.equal(at8.power.text, 'power for a 10% difference in throughput at N = 8 unknown: no cell has 2 deployments to show how deployments vary')
  const overall = p.tests.find(x => x.quantity === 'overall')
  assert.equal(overall.outcome, 'different', overall.line)
  assert.equal(p.family, 1, 'only the ratio over N is in the family')
})

test('which deployment a run measured: its placement, else its sweep\'s order, else its own; a search its probes\'', () => {
  const run = (file, config, extra = {}) => ({ file, dir: file, run: { status: 'done', config, ...extra } })
  const shape = (strategy, instances) => ({ strategy, instances, benchmark: 'page' })
  const inSweep = (index, startedAt, s, status = 'done') => run(`s${index}`, { ...s, sweep: { id: 'sw', index, repeat: 1 } }, { startedAt, status })
  const read = {
    runs: [
      run('p1', shape('cm', 2), { placement: [{ node: 'h', pid: 7, port: 1 }] }),
      run('p2', shape('cm', 2), { placement: [{ node: 'h', pid: 7, port: 1 }] }),
      run('p3', shape('cm', 2), { placement: [{ node: 'h', pid: 8, port: 1 }] }),
      // a sweep without placements: a deployment lasts while its shape does and the run before it finished
      inSweep(3, '2026-01-01T00:00:03Z', shape('up', 1)),
      inSweep(0, '2026-01-01T00:00:00Z', shape('cm', 1)),
      inSweep(1, '2026-01-01T00:00:01Z', shape('cm', 1)),
      inSweep(2, '2026-01-01T00:00:02Z', shape('cm', 1), 'failed'),
      inSweep(4, '2026-01-01T00:00:04Z', shape('cm', 1)),
      run('alone', shape('cm', 1)),
      run('probe', { ...shape('hs', 2), capacity: { search: 'c1', phase: 'bracket' } }, { placement: [{ node: 'h', container: 'abc' }] })
    ],
    capacities: [{ file: 'c1.json', dir: 'c1', capacity: { id: 'c1' } }, { file: 'c2.json', dir: 'c2', capacity: { id: 'c2' } }],
    unreadable: []
  }
  const d = deploymentsOf(read)
  assert.equal(d.get('p1'), d.get('p2'))
  assert.notEqual(d.get('p1'), d.get('p3'))
  assert.equal(d.get('s0'), d.get('s1'))
  assert.equal(d.get('s1'), d.get('s2'), 'the failed run measured the deployment it tore down')
  assert.notEqual(d.get('s3'), d.get('s2'))
  assert.notEqual(d.get('s4'), d.get('s2'), 'after a failed run the next run deploys again')
  assert.equal(d.get('alone'), 'run:alone')
  assert.equal(d.get('c1.json'), d.get('probe'))
  assert.equal(d.get('c2.json'), 'search:c2.json', 'a search without its probes is its own')
})

test('Holm over one family per benchmark: every pair and quantity of it, untestable tests left out', () => {
  const rng = randomSource(3)
  const groups = ['cm', 'hs', 'up'].flatMap((s, i) => ['page', 'cpu'].map(benchmark => {
    const g = synthGroup(s, rng, { deployments: 3, repeats: 2, truth: { gamma: 1000 * (1 + 0.1 * i) } })
    return { ...g, name: `${s}/${benchmark}`, key: { strategy: s, benchmark } }
  }))
  const pairs = testGroups(groups)
  assert.equal(pairs.length, 6, '3 pairs per benchmark')
  for (const benchmark of ['page', 'cpu']) {
    const tests = pairs.filter(p => p.benchmark === benchmark).flatMap(p => p.tests)
    assert.equal(tests.length, 3 * 7)
    assert.ok(pairs.filter(p => p.benchmark === benchmark).every(p => p.family === 21))
    assert.deepEqual(tests.map(x => x.pHolm), holm(tests.map(x => x.p)))
    assert.deepEqual(tests.map(x => x.pEquivalenceHolm), holm(tests.map(x => x.pEquivalence)))
    for (const x of tests) assert.equal(x.outcome, x.pHolm < ALPHA ? 'different' : x.pEquivalenceHolm < ALPHA ? 'equivalent' : 'inconclusive')
  }
})

test('identical strategies with shared deployments: few false differences with the deployment as unit, many without', () => {
  // ICC 0.5: half the variance is the deployment's; 3 deployments × 2 repeats a cell, 3 strategies, 21 tests. The
  // calibration (calibration/scenarios/compare.js) measures this over a grid; here 200 fixed seeds hold the contrast
  let asUnit = 0
  let asRuns = 0
  const seeds = 200
  for (let seed = 1; seed <= seeds; seed++) {
    const o = { deployments: 3, repeats: 2, icc: 0.5 }
    const made = pooled => ['a', 'b', 'c'].map(s => synthGroup(s, randomSource(seed * 7 + s.charCodeAt(0)), { ...o, pooled }))
    if (testGroups(made(false), { effect: null }).some(p => p.tests.some(x => x.outcome === 'different'))) asUnit++
    if (testGroups(made(true), { effect: null }).some(p => p.tests.some(x => x.outcome === 'different'))) asRuns++
  }
  assert.ok(asUnit / seeds <= 0.08, `deployment as unit: ${asUnit} of ${seeds} families had a false difference`)
  // every run counted as a unit: above α (Binomial(200, 0.05) reaches 15 with probability 0.07)
  assert.ok(asRuns > 3 * asUnit && asRuns >= 15, `every run as a unit: ${asRuns} of ${seeds} (as unit: ${asUnit})`)
})

test('the power printed for a 10% difference is about what a simulation finds, and its deployments for 80% give it', () => {
  const rng = randomSource(21)
  const cell = { deployments: 4, repeats: 2, icc: 0.3 }
  const pair = (r, deployments) =>
    testGroups([synthGroup('a', r, { ...cell, deployments }), synthGroup('b', r, { ...cell, deployments, truth: { gamma: 1100 } })])[0]
  const at4 = p => p.tests.find(x => x.quantity === 'throughput' && x.n === 4)
  const first = at4(pair(rng, 4))
  assert.ok(first.power.value > 0 && first.power.value < 0.8, first.power.text)
  assert.match(first.power.text,
    /^a 10% difference in throughput at N = 4 is detected at least \d+% of the time with 4 deployments each; \d+ deployments each would give 80%$/)
  const k = first.power.unitsFor80
  assert.ok(k > 4 && k <= 20, `unitsFor80 ${k}`)
  let hits = 0
  let printed = 0
  const sims = 60
  for (let i = 0; i < sims; i++) {
    const t = at4(pair(rng, k))
    printed += t.power.value / sims
    if (t.outcome === 'different' && t.ratio < 1) hits++
  }
  assert.ok(hits / sims >= printed - 0.15, `detected ${hits / sims}, printed ${printed}`)
  assert.ok(hits / sims >= 0.65, `at the ${k} deployments advised: ${hits / sims}`)
})

test('equivalent within the margin: the same curve measured on many deployments', () => {
  const rng = randomSource(5)
  const o = { deployments: 10, repeats: 1, cv: 0.02 }
  const [p] = testGroups([synthGroup('a', rng, o), synthGroup('b', rng, o)])
  const perN = p.tests.filter(x => x.quantity === 'throughput')
  assert.ok(perN.every(x => x.outcome === 'equivalent'), perN.map(x => x.line).join('\n'))
  assert.match(perN[0].line,
    /^throughput at N = 1: equivalent within ±5% \(a \/ b = [\d.]+ \[[\d.]+, [\d.]+\]; TOST p (< 0\.001|= [\d.]+), Holm over 7 tests\)$/)
  // a margin narrower than the noise allows: not shown
  const [narrow] = testGroups([synthGroup('a', rng, o), synthGroup('b', rng, o)], { margin: 0.002 })
  assert.ok(narrow.tests.every(x => x.outcome !== 'equivalent'))
})

test('cells of one group: a deployment\'s runs averaged into one unit; a deployment across N is said', () => {
  const g = {
    name: 'g',
    key: {},
    observations: [
      { n: 1, throughput: 100, deployment: 'd1' }, { n: 1, throughput: 110, deployment: 'd1' }, { n: 1, throughput: 90, deployment: 'd2' },
      { n: 2, throughput: 200, deployment: null }, { n: 2, throughput: 210, deployment: null }
    ]
  }
  const { cells, spansN } = cellsOf(g)
  assert.deepEqual(cells.get(1), { units: [105, 90], runs: 3, shared: 1 })
  assert.deepEqual(cells.get(2), { units: [200, 210], runs: 2, shared: 0 })
  assert.equal(spansN, false)
  assert.equal(cellsOf({ ...g, observations: [...g.observations, { n: 2, throughput: 190, deployment: 'd2' }] }).spansN, true)
})

// R's usl package fits unweighted (nls): these hold the unweighted fit (weights none) to its answers; the default,
// relative-error weighting, is checked in test/analyzer-fit-relative.test.js (docs/statistics/fits.md)
test('every repeat fitted: repeats symmetric around the R usl package\'s points give its coefficients', async (t) => {
  const f = fixture('usl-package-coef.json')
  const repeats = f.points.flatMap(p => [0.99, 1, 1.01].map(k => ({ n: p.n, throughput: p.throughput * k })))
  const r = fitUsl(repeats, { weights: 'none' })
  assert.equal(r.observations, 18)
  assert.equal(r.points, 6)
  assert.equal(r.dof, 15)
  for (const k of ['sigma', 'lambda', 'gamma']) assert.equal(signif(r[k], 3), f.documented[k], k)
  const means = fitUsl(f.points, { weights: 'none' })
  for (const k of ['sigma', 'lambda', 'gamma']) assert.ok(Math.abs(r[k] / means[k] - 1) < 1e-6, `${k}: ${r[k]} vs ${means[k]} on the means`)
  // the same through run.json files: every run is an observation of its group
  const out = tmp(t)
  let i = 0
  for (const p of repeats) writeRun(out, i++, { strategy: 'cm', instances: p.n, concurrency: 50 }, p.throughput)
  const fit = (await fitSources(out, { weights: 'none' })).groups[0]
  assert.equal(fit.observations.length, 18)
  for (const k of ['sigma', 'lambda', 'gamma']) assert.equal(signif(fit.fits.usl[k], 3), f.documented[k], `${k} from run.json`)
  assert.match(formatFit(await fitSources(out)), /cm\/page {2}\(N = workers; 6 points from 18 runs\)/)
})

test('every repeat fitted: Gunther\'s SPEC SDM91 with two runs per N keeps the published sigma, lambda and fit', () => {
  const f = fixture('gunther-specsdm91.json')
  const r = fitUsl(f.points.flatMap(p => [0.98, 1.02].map(k => ({ n: p.n, throughput: p.throughput * k }))), { weights: 'none' })
  assert.ok(Math.abs(r.sigma / f.documented.sigma - 1) < 0.01, `sigma ${r.sigma}`)
  assert.ok(Math.abs(r.lambda / f.documented.lambda - 1) < 0.01, `lambda ${r.lambda}`)
  assert.deepEqual(r.efficiency.map(e => e.n), f.points.map(p => p.n))
  const ray = fixture('gunther-raytracer.json')
  const rr = fitUsl(ray.points.flatMap(p => [0.99, 1.01].map(k => ({ n: p.n, throughput: p.throughput * k }))), { weights: 'none' })
  assert.ok(Math.abs(rr.sigma / ray.documented.sigma - 1) < 0.001)
  assert.deepEqual(rr.bounds, ['lambda=0'], 'lambda stays at its bound, as R finds')
})

test('--bootstrap resamples the repeats within each N when there are repeats (seeded), the residuals otherwise', () => {
  const truth = { gamma: 2000, sigma: 0.05, lambda: 0.002 }
  const rnd = seededRandom(5)
  const rows = noisyRows(truth, rnd, { repeats: 3, ns: [1, 2, 3, 4, 6, 8, 12, 16] })
  const r = fitUsl(rows, { bootstrap: 200, seed: 4 })
  assert.equal(r.bootstrapCi.method, 'cases')
  for (const k of ['gamma', 'sigma', 'lambda']) assert.ok(r.bootstrapCi[k][0] <= r[k] && r[k] <= r.bootstrapCi[k][1], `${k} outside ${r.bootstrapCi[k]}`)
  assert.deepEqual(fitUsl(rows, { bootstrap: 200, seed: 4 }).bootstrapCi, r.bootstrapCi)
  assert.notDeepEqual(fitUsl(rows, { bootstrap: 200, seed: 5 }).bootstrapCi.sigma, r.bootstrapCi.sigma)
  const single = fitUsl([1, 2, 3, 4, 6, 8].map(n => ({ n, throughput: throughputAt(n, truth) * (1 + 0.02 * normalDraw(rnd)) })), { bootstrap: 100 })
  assert.equal(single.bootstrapCi.method, 'residual')
})

test('a CSV with repeated rows: each row is fitted; one row per N fits as before', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'r.csv'),
    'n,throughput\n' + NS.flatMap(n => [0.97, 1.03].map(k => `${n},${throughputAt(n, { gamma: 100, sigma: 0.05, lambda: 0.002 }) * k}`)).join('\n') + '\n')
  const r = await fitSources(join(dir, 'r.csv'))
  assert.equal(r.groups[0].points.length, 6)
  assert.equal(r.groups[0].observations.length, 12)
  assert.equal(r.groups[0].fits.usl.dof, 12 - 3)
})

/** A sweep of cm over 6 N with 2 repeats, where two runs are flagged invalid and their throughput is off. */
function writeWithInvalid (out) {
  const p = { gamma: 3000, sigma: 0.05, lambda: 0.004 }
  let i = 0
  for (const n of NS) for (const k of [0.99, 1.01]) writeRun(out, i++, { strategy: 'cm', instances: n, concurrency: 50 }, throughputAt(n, p) * k)
  const flag = (name, message) => ({ name, value: 0.99, threshold: 0.9, message })
  writeRun(out, i++, { strategy: 'cm', instances: 4, concurrency: 50 }, 500, 'done',
    { validity: { ok: false, flags: [flag('generator-saturated', 'the load generator used 99% of a core')] } })
  writeRun(out, i++, { strategy: 'cm', instances: 8, concurrency: 50 }, 400, 'done',
    { validity: { ok: false, flags: [flag('throttled', 'CPU throttled 40% of the time'), flag('unstable', 'throughput varied 30%')] } })
  // a valid run that says so, flags and all, counts
  writeRun(out, i++, { strategy: 'cm', instances: 2, concurrency: 50 }, throughputAt(2, p), 'done', { validity: { ok: true, flags: [] } })
  return p
}

test('invalid runs are left out of points, observations and fits by default; --include-invalid puts them back', async (t) => {
  const out = tmp(t)
  const truth = writeWithInvalid(out)
  const r = await loadPoints(out)
  assert.equal(r.skipped.invalid, 2)
  const g = r.groups[0]
  assert.equal(g.observations.length, 13, '12 runs and the valid one with validity')
  assert.ok(g.observations.every(o => o.throughput > 1000), 'the off runs are not observations')
  assert.deepEqual(g.excluded.map(e => [e.n, e.flags]), [[4, ['generator-saturated']], [8, ['throttled', 'unstable']]])
  assert.ok(g.excluded.every(e => typeof e.run === 'string' && e.run.startsWith(out)))
  assert.deepEqual(g.points.map(p => p.count), [2, 3, 2, 2, 2, 2])
  const fit = (await fitSources(out)).groups[0].fits.usl
  assert.ok(Math.abs(fit.sigma - truth.sigma) < 0.005, `sigma ${fit.sigma}`)
  assert.equal(fit.observations, 13)
  const all = await loadPoints(out, { includeInvalid: true })
  assert.equal(all.skipped.invalid, 0)
  assert.deepEqual(all.groups[0].excluded, [])
  assert.equal(all.groups[0].observations.length, 15)
  assert.deepEqual(all.groups[0].notes,
    ['N=4: 1 invalid run kept by --include-invalid (generator-saturated)', 'N=8: 1 invalid run kept by --include-invalid (throttled, unstable)'])
  const withBad = (await fitSources(out, { includeInvalid: true })).groups[0].fits.usl
  assert.notEqual(withBad.sigma, fit.sigma)
})

test('fit, compare and report say what was left out and why; --include-invalid is a flag of each', async (t) => {
  const out = tmp(t)
  writeWithInvalid(out)
  const line = /left out 2 invalid runs: N=4 \(generator-saturated\), N=8 \(throttled, unstable\); --include-invalid puts them back/
  const fit = await runCli('analyzer', ['fit', out])
  assert.equal(fit.code, 0, fit.stderr)
  assert.match(fit.stdout, line)
  assert.match(fit.stdout, /^skipped: 2 invalid runs \(--include-invalid puts them back\)$/m)
  const compared = await runCli('analyzer', ['compare', out])
  assert.match(compared.stdout, new RegExp(`^cm/page: ${line.source}`, 'm'))
  const json = JSON.parse((await runCli('analyzer', ['compare', out, '--json'])).stdout)
  assert.equal(json.skipped.invalid, 2)
  assert.equal(json.rows[0].excluded.length, 2)
  const back = JSON.parse((await runCli('analyzer', ['compare', out, '--json', '--include-invalid'])).stdout)
  assert.equal(back.skipped.invalid, 0)
  assert.equal(back.rows[0].observations, 15)
  const md = await runCli('analyzer', ['report', out, '--format', 'md'])
  assert.equal(md.code, 0, md.stderr)
  assert.match(md.stdout, new RegExp(`^- cm/page: ${line.source}`, 'm'))
  assert.match(md.stdout, /^> 2 finished runs left out as invalid/m)
  assert.match(md.stdout, /\| invalid: generator-saturated: the load generator used 99% of a core \|/)
  const mdBack = await runCli('analyzer', ['report', out, '--format', 'md', '--include-invalid'])
  assert.doesNotMatch(mdBack.stdout, line)
  assert.match(mdBack.stdout, /^> 2 finished runs flagged invalid are used \(--include-invalid\)/m)
})

test('the report shows the tests between groups: outcome, p after Holm, power', async (t) => {
  const out = tmp(t)
  writeStrategies(out,
    { cm: { gamma: 3000, sigma: 0.02, lambda: 0.002 }, up: { gamma: 3000, sigma: 0.3, lambda: 0.002 }, pm2: { gamma: 3000, sigma: 0.025, lambda: 0.002 } },
    { repeats: 3 })
  const file = join(out, 'r.html')
  const r = await runCli('analyzer', ['report', out, '-o', file])
  assert.equal(r.code, 0, r.stderr)
  const html = readFileSync(file, 'utf8')
  const m = /<table class="pairs">([\s\S]*?)<\/table>/.exec(html)
  assert.ok(m, 'a table of the tests between groups')
  const rows = [...m[1].matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map(x => [...x[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(c => c[1]))
  assert.equal(rows.length, 3 * 9, 'three pairs, nine quantities each')
  const cmUp = rows.find(x => /^(cm\/page vs up\/page|up\/page vs cm\/page)$/.test(x[1]) && x[2] === 'throughput at N = 8')
  assert.equal(cmUp[3], '3 / 3')
  assert.match(cmUp[5], /^(&lt; 0\.001|0\.0[0-4]\d*)$/)
  assert.equal(cmUp[7], 'different: cm/page is higher')
  assert.ok(rows.some(x => /^(inconclusive|equivalent)$/.test(x[7]) && /^a 10% difference in .* is detected at least \d+% of the time/.test(x[8])),
    'a test without a difference has its power')
  const md = await runCli('analyzer', ['report', out, '--format', 'md'])
  assert.match(md.stdout, /^### Tests between groups$/m)
  assert.match(md.stdout, /^\| page \| \S+ vs \S+ \| throughput at N = 1 \| 3 \/ 3 \| [\d.]+ \[[\d.]+, [\d.]+\] \|/m)
})
