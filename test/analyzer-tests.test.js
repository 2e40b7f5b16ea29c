// Tests between groups (joint fits, F tests), the advice when they find nothing, fits of every repeat against the R usl
// package's answers, and invalid runs left out of points and fits.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compare, fitSources } from '../analyzer/compare.js'
import { loadPoints } from '../analyzer/points.js'
import { fitUsl } from '../analyzer/usl-fit.js'
import { throughputAt } from '../analyzer/usl-model.js'
import { jointData, fitSeparate, testShared, ALPHA } from '../analyzer/group-tests.js'
import { nextNs } from '../analyzer/power.js'
import { normalDraw } from '../analyzer/stats-math.js'
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

test('a known difference in contention is found: cm has less than up, p < 0.05, and no advice is needed', async (t) => {
  const out = tmp(t)
  writeStrategies(out, { cm: { gamma: 3000, sigma: 0.02, lambda: 0.002 }, up: { gamma: 3000, sigma: 0.3, lambda: 0.002 } })
  const r = await compare([out])
  assert.equal(r.pairs.length, 1)
  const p = r.pairs[0]
  assert.deepEqual([p.benchmark, p.a, p.b, p.models, p.observations], ['page', 'cm/page', 'up/page', ['usl', 'usl'], [12, 12]])
  assert.ok(p.sigma.pValue < ALPHA, `p = ${p.sigma.pValue}`)
  assert.equal(p.sigma.significant, true)
  assert.equal(p.sigma.less, 'cm/page')
  // df2 = 24 runs - 6 parameters of the full model: every repeat counts
  assert.deepEqual(p.sigma.df, [1, 18])
  assert.ok(p.sigma.F > 4.4, `F = ${p.sigma.F}`)
  assert.match(p.sigma.verdict, /^cm\/page has less contention than up\/page \(σ 0\.0\d+ vs 0\.[23]\d*, p (< 0\.001|= 0\.0\d+)\)$/)
  // the test's sigmas are the rows' fits (same runs, same weights)
  assert.equal(p.sigma.a, r.rows.find(x => x.name === 'cm/page').sigma)
  assert.equal(p.sigma.advice, null)
  assert.ok(p.lambda, 'both are USL: coherency is tested too')
  assert.equal(p.lambda.df[1], 18)
  assert.equal(p.advice, p.lambda.significant ? null : p.lambda.advice)
  const text = formatCompare(r)
  assert.match(text, /tests between groups/)
  assert.match(text, /^ {2}cm\/page vs up\/page \(page\):$/m)
  assert.match(text, /^ {4}contention: cm\/page has less contention than up\/page \(σ .*\); F\(1, 18\) = [\d.]+$/m)
  // the older reading stays beside it
  assert.equal(r.overlaps.length, 1)
  // the tests weigh every run the same whatever --weights (the rows' fits do follow it)
  const weighted = (await compare([out], { weights: 'sd' })).pairs[0]
  for (const kind of ['sigma', 'lambda']) assert.ok(Math.abs(weighted[kind].pValue - p[kind].pValue) <= 1e-6 * p[kind].pValue + 1e-12, kind)
})

test('no difference: over 200 seeds the tests reject at about α (at most 10%, never at 0%)', () => {
  // same sigma and lambda, different gamma, 3% noise, 2 repeats at 6 N. With a calibrated test the count of
  // rejections is Binomial(200, 0.05): 10 expected, 21 or more has probability 0.0012, 0 has 0.00004. The seeds are
  // fixed, so the outcome is the same on every run; the bound says the F test with df2 = runs - 6 holds its level.
  const a = { gamma: 3000, sigma: 0.05, lambda: 0.01 }
  const b = { gamma: 2000, sigma: 0.05, lambda: 0.01 }
  const hits = { sigma: 0, lambda: 0 }
  const seeds = 200
  for (let seed = 1; seed <= seeds; seed++) {
    const rnd = seededRandom(seed)
    const joint = jointData(noisyRows(a, rnd), noisyRows(b, rnd), ['usl', 'usl'])
    const full = fitSeparate(joint)
    for (const kind of /** @type {const} */ (['sigma', 'lambda'])) if (testShared(joint, kind, { names: ['a', 'b'], full }).pValue < ALPHA) hits[kind]++
  }
  for (const [kind, n] of Object.entries(hits)) {
    assert.ok(n / seeds <= 0.10, `${kind}: ${n} of ${seeds} rejected`)
    assert.ok(n >= 1, `${kind}: never rejected: the test cannot fail`)
  }
})

test('the same difference is found more often with more repeats: the test has power, and uses every run', () => {
  const a = { gamma: 3000, sigma: 0.05, lambda: 0.004 }
  const b = { gamma: 3000, sigma: 0.12, lambda: 0.004 }
  const rate = repeats => {
    let hits = 0
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = seededRandom(1000 + seed)
      const joint = jointData(noisyRows(a, rnd, { repeats }), noisyRows(b, rnd, { repeats }), ['usl', 'usl'])
      if (testShared(joint, 'sigma', { names: ['a', 'b'] }).pValue < ALPHA) hits++
    }
    return hits / 40
  }
  const two = rate(2)
  const eight = rate(8)
  assert.ok(eight > two + 0.2, `2 repeats: ${two}, 8 repeats: ${eight}`)
  assert.ok(eight >= 0.7, `8 repeats: ${eight}`)
})

test('no verdict: the advice says how many repeats per N would find the difference, and it is about right', async (t) => {
  const out = tmp(t)
  // a real difference in contention under 3% noise, 2 repeats: not significant yet (p about 0.1 with this seed)
  writeStrategies(out, { cm: { gamma: 3000, sigma: 0.05, lambda: 0.004 }, pm2: { gamma: 3000, sigma: 0.12, lambda: 0.004 } }, { cv: 0.03, seed: 3 })
  const r = await compare([out])
  const p = r.pairs[0]
  assert.equal(p.sigma.significant, false, p.sigma.verdict)
  assert.match(p.sigma.verdict, /^no difference in contention detectable \(σ [\d.]+ vs [\d.]+, p = 0\.\d+\)$/)
  const advice = p.sigma.advice
  assert.equal(p.advice, advice, 'the pair\'s advice is that of its first test without a verdict')
  assert.equal(advice.nowRepeatsPerN, 2)
  assert.ok(Number.isInteger(advice.repeatsPerN) && advice.repeatsPerN > 2 && advice.repeatsPerN <= 20, JSON.stringify(advice))
  assert.match(advice.text, new RegExp(`^about ${advice.repeatsPerN} repeats per N \\(now 2\\)`))
  assert.ok(advice.power.repeats >= 0.8, JSON.stringify(advice.power))
  assert.ok(advice.simulations > 0 && advice.simulations <= 1000, `${advice.simulations} simulations`)
  assert.match(formatCompare(r), /^ {6}to tell them apart: about \d+ repeats per N \(now 2\)/m)
  // same seed, same advice; the JSON carries what the text says
  assert.deepEqual((await compare([out])).pairs[0].sigma.advice, advice)
  // checked independently: data from the two fits at the advised repeats, tested with the full search
  const { groups } = await loadPoints(out)
  const joint = jointData(groups[0].observations, groups[1].observations, ['usl', 'usl'])
  const full = fitSeparate(joint)
  const s = Math.sqrt(full.ssr / full.df)
  const rnd = seededRandom(99)
  let hits = 0
  const sims = 80
  for (let i = 0; i < sims; i++) {
    const rows = g => NS.flatMap(n => Array.from({ length: advice.repeatsPerN }, () => ({ n, throughput: throughputAt(n, full.params[g]) + s * normalDraw(rnd) })))
    if (testShared(jointData(rows(0), rows(1), ['usl', 'usl']), 'sigma', { names: ['a', 'b'] }).pValue < ALPHA) hits++
  }
  assert.ok(hits / sims >= 0.6 && hits / sims <= 0.97, `power at ${advice.repeatsPerN} repeats: ${hits / sims}`)
})

test('groups that behave alike: no repeats would tell them apart, and the advice says so', async (t) => {
  const out = tmp(t)
  const same = { gamma: 3000, sigma: 0.05, lambda: 0.004 }
  writeStrategies(out, { cm: same, hs: { ...same, gamma: 3010 } }, { cv: 0.03, seed: 3 })
  const p = (await compare([out])).pairs[0]
  assert.equal(p.sigma.significant, false)
  assert.equal(p.sigma.advice.repeatsPerN, null)
  assert.match(p.sigma.advice.text, /^not detectable with up to 20 repeats per N( or \d+ more N values)?: the groups behave alike$/)
})

test('more N values are spread like the measured ones', () => {
  assert.deepEqual(nextNs([1, 2, 3, 4], 3), [5, 6, 7])
  assert.deepEqual(nextNs([1, 2, 4, 8], 5), [16, 32], 'doubling, at most 4 times the largest N')
  assert.deepEqual(nextNs([1, 2, 4, 6, 8], 2), [10, 12])
})

test('Amdahl groups: only contention is tested', async (t) => {
  const out = tmp(t)
  writeStrategies(out, { cm: { gamma: 1000, sigma: 0.02, lambda: 0 }, up: { gamma: 1000, sigma: 0.25, lambda: 0 } }, { ns: [1, 2, 4] })
  const r = await compare([out])
  assert.deepEqual(r.rows.map(x => x.model), ['amdahl', 'amdahl'])
  const p = r.pairs[0]
  assert.deepEqual(p.models, ['amdahl', 'amdahl'])
  assert.equal(p.lambda, null)
  assert.deepEqual(p.sigma.df, [1, 12 - 4])
  assert.ok(p.sigma.pValue < ALPHA, p.sigma.verdict)
})

test('every repeat fitted: repeats symmetric around the R usl package\'s points give its coefficients', async (t) => {
  const f = fixture('usl-package-coef.json')
  const repeats = f.points.flatMap(p => [0.99, 1, 1.01].map(k => ({ n: p.n, throughput: p.throughput * k })))
  const r = fitUsl(repeats)
  assert.equal(r.observations, 18)
  assert.equal(r.points, 6)
  assert.equal(r.dof, 15)
  for (const k of ['sigma', 'lambda', 'gamma']) assert.equal(signif(r[k], 3), f.documented[k], k)
  const means = fitUsl(f.points)
  for (const k of ['sigma', 'lambda', 'gamma']) assert.ok(Math.abs(r[k] / means[k] - 1) < 1e-6, `${k}: ${r[k]} vs ${means[k]} on the means`)
  // the same through run.json files: every run is an observation of its group
  const out = tmp(t)
  let i = 0
  for (const p of repeats) writeRun(out, i++, { strategy: 'cm', instances: p.n, concurrency: 50 }, p.throughput)
  const fit = (await fitSources(out)).groups[0]
  assert.equal(fit.observations.length, 18)
  for (const k of ['sigma', 'lambda', 'gamma']) assert.equal(signif(fit.fits.usl[k], 3), f.documented[k], `${k} from run.json`)
  assert.match(formatFit(await fitSources(out)), /cm\/page {2}\(N = workers; 6 points from 18 runs\)/)
})

test('every repeat fitted: Gunther\'s SPEC SDM91 with two runs per N keeps the published sigma, lambda and fit', () => {
  const f = fixture('gunther-specsdm91.json')
  const r = fitUsl(f.points.flatMap(p => [0.98, 1.02].map(k => ({ n: p.n, throughput: p.throughput * k }))))
  assert.ok(Math.abs(r.sigma / f.documented.sigma - 1) < 0.01, `sigma ${r.sigma}`)
  assert.ok(Math.abs(r.lambda / f.documented.lambda - 1) < 0.01, `lambda ${r.lambda}`)
  assert.deepEqual(r.efficiency.map(e => e.n), f.points.map(p => p.n))
  const ray = fixture('gunther-raytracer.json')
  const rr = fitUsl(ray.points.flatMap(p => [0.99, 1.01].map(k => ({ n: p.n, throughput: p.throughput * k }))))
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
  writeFileSync(join(dir, 'r.csv'), 'n,throughput\n' + NS.flatMap(n => [0.97, 1.03].map(k => `${n},${throughputAt(n, { gamma: 100, sigma: 0.05, lambda: 0.002 }) * k}`)).join('\n') + '\n')
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
  writeRun(out, i++, { strategy: 'cm', instances: 4, concurrency: 50 }, 500, 'done', { validity: { ok: false, flags: [flag('generator-saturated', 'the load generator used 99% of a core')] } })
  writeRun(out, i++, { strategy: 'cm', instances: 8, concurrency: 50 }, 400, 'done', { validity: { ok: false, flags: [flag('throttled', 'CPU throttled 40% of the time'), flag('unstable', 'throughput varied 30%')] } })
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
  assert.deepEqual(all.groups[0].notes, ['N=4: 1 invalid run kept by --include-invalid (generator-saturated)', 'N=8: 1 invalid run kept by --include-invalid (throttled, unstable)'])
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

test('the report shows the pairwise tests: p-values, verdicts and advice', async (t) => {
  const out = tmp(t)
  writeStrategies(out, { cm: { gamma: 3000, sigma: 0.02, lambda: 0.002 }, up: { gamma: 3000, sigma: 0.3, lambda: 0.002 }, pm2: { gamma: 3000, sigma: 0.025, lambda: 0.002 } })
  const file = join(out, 'r.html')
  const r = await runCli('analyzer', ['report', out, '-o', file])
  assert.equal(r.code, 0, r.stderr)
  const html = readFileSync(file, 'utf8')
  const m = /<table class="pairs">([\s\S]*?)<\/table>/.exec(html)
  assert.ok(m, 'a table of the tests between groups')
  const rows = [...m[1].matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map(x => [...x[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(c => c[1]))
  assert.equal(rows.length, 3 * 2, 'three pairs, sigma and lambda each')
  const cmUp = rows.find(x => /cm\/page vs up\/page|up\/page vs cm\/page/.test(x[1]) && x[2].startsWith('σ'))
  assert.match(cmUp[6], /has less contention than/)
  assert.match(cmUp[5], /^(&lt; 0\.001|0\.0[0-4]\d*)$/)
  assert.ok(rows.some(x => /no difference/.test(x[6]) && /(repeats per N|behave alike)/.test(x[7])), 'a test without a verdict has advice')
  const md = await runCli('analyzer', ['report', out, '--format', 'md'])
  assert.match(md.stdout, /^### Tests between groups$/m)
  assert.match(md.stdout, /^\| page \| \S+ vs \S+ \| σ \(contention\) \| [\d.]+ vs [\d.]+ \| [\d.]+ \(1, \d+\) \|/m)
})
