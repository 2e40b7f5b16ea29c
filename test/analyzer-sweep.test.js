// Points from sweep folders and CSVs, fits per group, and comparisons of strategies.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPoints } from '../analyzer/points.js'
import { fitSources, compare } from '../analyzer/compare.js'
import { throughputAt } from '../analyzer/fit/usl-model.js'
import { seededRandom } from '../lib/random.js'
import { TRUTH, writeRun, writeSweep } from './fixtures/usl/sweep.js'

const FIX = new URL('./fixtures/usl/', import.meta.url).pathname

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-sweep-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('a sweep folder becomes one curve per strategy/benchmark: repeats averaged, the best concurrency per N kept', async (t) => {
  const out = tmp(t)
  writeSweep(out)
  const r = await loadPoints(out)
  assert.deepEqual(r.groups.map(g => g.name), ['cm/page', 'hs/page'])
  assert.deepEqual(r.skipped, { notDone: 2, degraded: 0, unreadable: 1, noSummary: 0, invalid: 0, probes: 0, noX: 0 })
  const cm = r.groups[0]
  assert.equal(cm.unit, 'workers')
  assert.equal(r.groups[1].unit, 'replicas')
  assert.deepEqual(cm.points.map(p => p.n), [1, 2, 3, 4, 6, 8, 12, 16])
  for (const p of cm.points) {
    assert.equal(p.count, 3)
    assert.equal(p.config.concurrency, 50)
    assert.ok(p.sd > 0 && p.sd < 0.02 * p.throughput)
    assert.ok(Math.abs(p.throughput / throughputAt(p.n, TRUTH.cm) - 1) < 0.01)
    assert.equal(p.runs.length, 3)
  }
  assert.deepEqual(cm.notes, ['N=1,2,3,4,6,8,12,16: the best of 2 configurations (concurrency 50)'])
})

test('fit recovers each strategy\'s parameters from the sweep; the intervals hold the truth', async (t) => {
  const out = tmp(t)
  writeSweep(out)
  const r = await fitSources(out, { model: 'both' })
  for (const g of r.groups) {
    const truth = TRUTH[g.key.strategy]
    const f = g.fits.usl
    for (const k of ['sigma', 'lambda', 'gamma']) {
      assert.ok(f.ci95[k][0] <= truth[k] && truth[k] <= f.ci95[k][1], `${g.name} ${k} ${truth[k]} outside ${f.ci95[k]}`)
    }
    assert.equal(g.better, 'usl', 'the data has a coherency term, so USL beats Amdahl')
    assert.ok(g.fits.amdahl.sigma > 0)
  }
})

test('compare: sorted rows with verdict lines, and cm serves more than hs where their curves part', async (t) => {
  const out = tmp(t)
  writeSweep(out)
  const r = await compare([out])
  assert.deepEqual(r.rows.map(x => x.name), ['cm/page', 'hs/page'], 'cm reaches more throughput, so it comes first')
  assert.ok(r.rows[0].reach > r.rows[1].reach)
  assert.match(r.rows[0].line, /^cm\/page: (contention|coherency)-limited, peak [\d,]+\/s at [\d.]+ workers/)
  assert.match(r.rows[1].line, /replicas/)
  const at16 = r.pairs[0].tests.find(x => x.quantity === 'throughput' && x.n === 16)
  assert.match(at16.line, /^throughput at N = 16: different: cm\/page is higher/)
})

test('compare falls back to Amdahl for a group with three points and says why', async (t) => {
  const out = tmp(t)
  let i = 0
  for (const n of [1, 2, 4]) writeRun(out, i++, { strategy: 'pm2', instances: n }, throughputAt(n, { gamma: 100, sigma: 0.1, lambda: 0 }))
  const r = await compare([out])
  assert.equal(r.rows[0].model, 'amdahl')
  assert.match(r.rows[0].fallback, /at least 4 distinct N/)
})

test('--x concurrency makes one curve per instance count', async (t) => {
  const out = tmp(t)
  writeSweep(out)
  const r = await loadPoints(out, { x: 'concurrency' })
  assert.equal(r.groups.length, 16)
  assert.deepEqual(r.groups[0].points.map(p => p.n), [10, 50])
  assert.equal(r.groups[0].unit, 'connections')
  await assert.rejects(loadPoints(out, { groupBy: 'strategy,colour' }),
    (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FLAG' && /--group-by: "colour"/.test(e.message))
  await assert.rejects(loadPoints(out, { x: 'instances', groupBy: 'instances' }), (/** @type {any} */ e) => /x axis/.test(e.message))
})

test('a CSV of points: n/throughput columns, repeats averaged, optional groups; bad CSVs are named', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'p.csv'), 'processors,throughput\n1,20\n4,78\n8,130\n8,132\n16,190\n32,260\n')
  const r = await loadPoints(join(dir, 'p.csv'))
  assert.equal(r.groups.length, 1)
  assert.equal(r.groups[0].unit, 'processors')
  assert.deepEqual(r.groups[0].points.map(p => p.n), [1, 4, 8, 16, 32])
  assert.equal(r.groups[0].points[2].throughput, 131)
  assert.equal(r.groups[0].points[2].count, 2)
  writeFileSync(join(dir, 'g.csv'), 'strategy,n,throughput\ncm,1,10\ncm,2,19\ncm,4,33\nhs,1,10\nhs,2,18\nhs,4,30\n')
  assert.deepEqual((await loadPoints(join(dir, 'g.csv'))).groups.map(g => g.name), ['cm', 'hs'])
  writeFileSync(join(dir, 'bad.csv'), 'users,rps\n1,2\n')
  await assert.rejects(loadPoints(join(dir, 'bad.csv')),
    (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FILE' && /bad\.csv: needs a header with an N column/.test(e.message))
  writeFileSync(join(dir, 'nan.csv'), 'n,throughput\n1,abc\n')
  await assert.rejects(loadPoints(join(dir, 'nan.csv')), (/** @type {any} */ e) => /nan\.csv: row 2: throughput "abc"/.test(e.message))
  await assert.rejects(loadPoints(join(dir, 'none')), (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FILE' && /none: no such file/.test(e.message))
  const empty = join(dir, 'empty')
  mkdirSync(empty)
  await assert.rejects(loadPoints(empty), (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_DATA' && /no finished runs/.test(e.message))
})

test('the recorded run.json fixtures: only the done run counts', async (t) => {
  const out = tmp(t)
  for (const name of ['run-done-cm2.json', 'run-failed-hs4.json', 'run-interrupted-up1.json']) {
    mkdirSync(join(out, name))
    writeFileSync(join(out, name, 'run.json'), readFileSync(join(FIX, name)))
  }
  const r = await loadPoints(out)
  assert.deepEqual(r.groups.map(g => [g.name, g.points.map(p => [p.n, p.throughput])]), [['cm/page', [[2, 14110.6]]]])
  assert.equal(r.skipped.notDone, 2)
})

test('--model both: on Amdahl-shaped data the F test says the coherency term is not needed', async (t) => {
  const dir = tmp(t)
  const rnd = seededRandom(5)
  const rows = [1, 2, 3, 4, 6, 8, 12, 16].map(n => `${n},${throughputAt(n, { gamma: 900, sigma: 0.07, lambda: 0 }) * (1 + (rnd() - 0.5) * 0.02)}`)
  writeFileSync(join(dir, 'amdahl.csv'), 'n,throughput\n' + rows.join('\n') + '\n')
  const r = await fitSources(join(dir, 'amdahl.csv'), { model: 'both' })
  assert.equal(r.groups[0].better, 'amdahl')
  assert.ok(r.groups[0].test.p >= 0.05)
  assert.ok(Math.abs(r.groups[0].fits.amdahl.sigma - 0.07) < 0.007)
})
