// analyzer correlate (Ibenchjs Figure 21): Pearson r of nodes and instances with each cell's throughput, sd and
// relative sd, against values worked out by hand; "n/a" with a reason where r says nothing; failed and degraded runs
// left out.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from './helpers/cli.js'
import { writeMimnRun } from './helpers/mimn-runs.js'
import { correlate, correlation } from '../analyzer/correlate.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-corr-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * The hand-worked grid, benchmark cpu: four cells (nodes, instances) = (1,1), (1,2), (2,2), (2,4), mean throughput
 * 100 x instances, each cell two runs at mean ± d with d = 5, 5, 10, 10 (sd = d√2). By hand, with x̄ and ȳ removed:
 *   nodes     x = 1,1,2,2   mean 100,200,200,400 -> Σdxdy 150, Σdx² 1, Σdy² 47500: r = 150/√47500 = 3/√19
 *   instances x = 1,2,2,4   mean = 100x: r = 1
 *   nodes     sd ∝ 1,1,2,2: r = 1;         instances sd: Σdxdy 1.5, Σdx² 4.75, Σdy² 1: r = 3/√19
 *   relSd ∝ 2,1,2,1:  nodes r = 0;        instances r = -1.5/√4.75 = -3/√19
 * Benchmark baseline: two cells on one node (too few; nodes does not vary). Benchmark net-out: three cells of one run
 * each (no sd). A failed and a degraded run with absurd throughput must change nothing.
 */
function writeGrid (out) {
  const cells = [[1, 1, 5], [1, 2, 5], [2, 2, 10], [2, 4, 10]]
  for (const [nodes, instances, d] of cells) {
    for (const sign of [-1, 1]) writeMimnRun(out, { benchmark: 'cpu', nodes, instances }, { throughput: 100 * instances + sign * d })
  }
  writeMimnRun(out, { benchmark: 'cpu', nodes: 2, instances: 4 }, {
    throughput: 99999,
    status: 'degraded',
    degraded: {
      nodes: [{
        node: 'nodescale-w2',
        nodeId: 'id2',
        label: 'nodescale-w2',
        why: 'its RC does not answer (ECONNREFUSED)',
        lostAt: '2026-11-23T10:00:03.500Z',
        lostAfterMs: 2500
      }],
      errorsDuringLoss: 37
    }
  })
  writeMimnRun(out, { benchmark: 'cpu', nodes: 1, instances: 1 }, { throughput: 99999, status: 'failed' })
  for (const instances of [1, 2]) for (const t of [50, 52]) writeMimnRun(out, { benchmark: 'baseline', nodes: 1, instances }, { throughput: t * instances })
  for (const [nodes, t] of [[1, 30], [2, 55], [3, 70]]) writeMimnRun(out, { benchmark: 'net-out', nodes, instances: nodes }, { throughput: t })
}

const R = 3 / Math.sqrt(19)
const close = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`)

test('correlations of nodes and instances match the hand-worked values; failed and degraded runs are left out', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const c = await correlate(out)
  assert.deepEqual(c.skipped, { notDone: 1, degraded: 1, unreadable: 0, noSummary: 0, invalid: 0, probes: 0 })
  const row = (benchmark, factor) => c.rows.find(r => r.benchmark === benchmark && r.factor === factor)
  const nodes = row('cpu', 'nodes')
  const inst = row('cpu', 'instances')
  assert.deepEqual([nodes.values, nodes.cells, nodes.runs], [[1, 2], 4, 8])
  assert.deepEqual(inst.values, [1, 2, 4])
  close(nodes.throughput.r, R, 'nodes/throughput')
  close(inst.throughput.r, 1, 'instances/throughput')
  close(nodes.sd.r, 1, 'nodes/sd')
  close(inst.sd.r, R, 'instances/sd')
  close(nodes.relSd.r, 0, 'nodes/relSd')
  close(inst.relSd.r, -R, 'instances/relSd')
  for (const m of ['throughput', 'sd', 'relSd']) assert.deepEqual([nodes[m].cells, nodes[m].why], [4, null], m)
  // the cells behind them: repeats aggregated, sd = d√2
  const cpuCells = c.cells.filter(x => x.benchmark === 'cpu')
  assert.deepEqual(cpuCells.map(x => [x.nodes, x.instances, x.runs, x.throughput]), [[1, 1, 2, 100], [1, 2, 2, 200], [2, 2, 2, 200], [2, 4, 2, 400]])
  close(cpuCells[3].sd, 10 * Math.SQRT2, 'sd of the last cell')
  close(cpuCells[3].relSd, 10 * Math.SQRT2 / 400, 'relSd of the last cell')
})

test('n/a with the reason where r says nothing: a factor that does not vary, too few cells, no sd', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const c = await correlate(out)
  const row = (benchmark, factor) => c.rows.find(r => r.benchmark === benchmark && r.factor === factor)
  const flat = row('baseline', 'nodes')
  for (const m of ['throughput', 'sd', 'relSd']) assert.deepEqual([flat[m].r, flat[m].why], [null, 'nodes does not vary (1 in every cell)'])
  assert.deepEqual(row('baseline', 'instances').throughput, { r: null, cells: 2, why: 'too few cells (2; a correlation needs 3)' })
  const net = row('net-out', 'nodes')
  // nodes 1,2,3 vs 30,55,70: Σdxdy 40, Σdx² 2, Σdy² 7350/9, so r = 120/√14700
  close(net.throughput.r, 120 / Math.sqrt(14700), 'net-out nodes/throughput')
  assert.equal(net.sd.r, null)
  assert.match(net.sd.why, /^no cell has two or more runs, which a standard deviation needs \(repeats: 2\)$/)
  // a metric equal in every cell (sd / mean of proportional cells, equal up to rounding) is n/a, not noise
  const same = [1, 2, 3].map(n => ({ nodes: n, instances: n, throughput: 100 * n, sd: 10 * n, relSd: (10 * n) / (100 * n) + (n === 2 ? 1e-17 : 0) }))
  assert.deepEqual(correlation(/** @type {any} */ (same), 'nodes', 'relSd'),
    { r: null, cells: 3, why: 'its relative standard deviation is the same in every cell' })
  // every correlation is a number in [-1, 1] or null with a reason: never NaN
  for (const r of c.rows) {
    for (const m of c.metrics) {
      const x = r[m]
      assert.ok(x.r === null ? typeof x.why === 'string' && x.why.length > 0 : Number.isFinite(x.r) && Math.abs(x.r) <= 1 && x.why === null,
        `${r.benchmark} ${r.factor} ${m}: ${JSON.stringify(x)}`)
    }
  }
})

test('analyzer correlate --json through the CLI: the library\'s result; the table says n/a and why', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const r = await runCli('analyzer', ['correlate', out, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.deepEqual(Object.keys(j).sort(), ['cells', 'factors', 'metrics', 'minCells', 'rows', 'skipped', 'sources'])
  assert.deepEqual(j.factors, ['nodes', 'instances'])
  assert.deepEqual(j.metrics, ['throughput', 'sd', 'relSd'])
  assert.deepEqual(Object.keys(j.rows[0]).sort(), ['benchmark', 'cells', 'factor', 'relSd', 'runs', 'sd', 'throughput', 'values'])
  close(j.rows.find(x => x.benchmark === 'cpu' && x.factor === 'nodes').throughput.r, R, 'CLI nodes/throughput')
  const text = await runCli('analyzer', ['correlate', out])
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /^cpu\s+nodes \(1, 2\)\s+4 \(8\)\s+0\.69\s+1\.00\s+0\.00$/m)
  assert.match(text.stdout, /^cpu\s+instances \(1, 2, 4\)\s+4 \(8\)\s+1\.00\s+0\.69\s+-0\.69$/m)
  assert.match(text.stdout, /^baseline\s+nodes \(1\)\s+2 \(4\)\s+n\/a\s+n\/a\s+n\/a$/m)
  assert.match(text.stdout, /^n\/a for baseline · nodes · throughput, sd, relative sd: nodes does not vary \(1 in every cell\)$/m)
  assert.match(text.stdout, /^skipped: 1 runs not done, 1 degraded runs \(a node was lost\)$/m)
  assert.doesNotMatch(text.stdout, /NaN/)
})

test('analyzer correlate: help, and bad input named with exit 2', async (t) => {
  const help = await runCli('analyzer', ['correlate', '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^Usage: analyzer correlate <sweep-folder>\.\.\. \[--json\]/)
  assert.match(help.stdout, /relative standard deviation/)
  const main = await runCli('analyzer', ['--help'])
  assert.match(main.stdout, /^ {2}correlate /m)
  const none = await runCli('analyzer', ['correlate'])
  assert.equal(none.code, 2)
  assert.match(none.stderr, /analyzer correlate needs one or more sweep folders/)
  const missing = await runCli('analyzer', ['correlate', join(tmp(t), 'nope')])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /NS_ERR_BAD_FILE: .*nope: no such folder/)
  const empty = await runCli('analyzer', ['correlate', tmp(t)])
  assert.equal(empty.code, 2)
  assert.match(empty.stderr, /NS_ERR_BAD_DATA: .*no finished runs/)
})
