// Multi-node sweeps in the analyzer: points over nodes (the best instances and load of each node count, Ibenchjs
// Table 4), the server's CPU summed over the nodes, degraded runs left out of points and listed in the report, and the
// report's charts and correlation table over nodes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from './helpers/cli.js'
import { writeMimnRun } from './helpers/mimn-runs.js'
import { loadPoints } from '../analyzer/points.js'
import { formatFit } from '../analyzer/text-format.js'
import { fitSources } from '../analyzer/compare.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-mimn-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Throughput of a cell: 100 req/s per replica, 80% of it at 5 clients, 5% lost per extra node (the overlay's cost). */
const truth = (nodes, instances, concurrency) => 100 * instances * (concurrency === 25 ? 1 : 0.8) * (1 - 0.05 * (nodes - 1))
const LOST = {
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

/**
 * hs on the cpu app over 1..4 nodes, 1 or 2 replicas per node, 5 and 25 clients, 2 repeats at ±2 req/s; each node's
 * server CPU 0.25 cores per replica it holds (cpu.total deliberately 9, so the sum over cpu.nodes is what counts);
 * p95 = 10 x clients / replicas. Plus a degraded run and a failed one, both with absurd throughput.
 */
function writeGrid (out) {
  for (let nodes = 1; nodes <= 4; nodes++) {
    for (const perNode of [1, 2]) {
      for (const concurrency of [5, 25]) {
        const instances = perNode * nodes
        for (const sign of [-1, 1]) {
          writeMimnRun(out, { nodes, instances, concurrency }, {
            throughput: truth(nodes, instances, concurrency) + 2 * sign,
            p95: 10 * concurrency / instances,
            nodeCpu: Array(nodes).fill(0.25 * perNode),
            cpuTotal: 9
          })
        }
      }
    }
  }
  writeMimnRun(out, { nodes: 3, instances: 6, concurrency: 25 }, { throughput: 99999, status: 'degraded', degraded: LOST })
  writeMimnRun(out, { nodes: 2, instances: 4, concurrency: 25 }, { throughput: 99999, status: 'failed' })
}

test('points over nodes: per node count the best mean throughput over instances and load, which instances, its CPU', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const r = await loadPoints(out, { x: 'nodes' })
  assert.deepEqual(r.groupBy, ['strategy', 'benchmark'])
  assert.deepEqual(r.skipped, { notDone: 1, degraded: 1, unreadable: 0, noSummary: 0, invalid: 0, probes: 0, noX: 0 })
  assert.equal(r.groups.length, 1)
  const g = r.groups[0]
  assert.equal(g.name, 'hs/cpu')
  assert.equal(g.unit, 'nodes')
  assert.deepEqual(g.points.map(p => p.n), [1, 2, 3, 4])
  for (const p of g.points) {
    assert.equal(p.throughput, truth(p.n, 2 * p.n, 25), `N=${p.n}: the degraded run is no repeat`)
    assert.equal(p.count, 2)
    assert.ok(Math.abs(p.sd - 2 * Math.SQRT2) < 1e-9)
    assert.equal(p.config.instances, 2 * p.n, 'Table 4: the instances at the maximum')
    assert.equal(p.config.concurrency, 25)
    assert.ok(Math.abs(p.cpuTotal - 0.5 * p.n) < 1e-9, `N=${p.n}: cluster CPU ${p.cpuTotal}`)
    assert.equal(p.p95, 10 * 25 / (2 * p.n))
    assert.equal(p.runs.length, 2)
  }
  assert.deepEqual(g.notes, [1, 2, 3, 4].map(n => `N=${n}: the best of 4 configurations (instances ${2 * n}, concurrency 25)`))
  const fit = await fitSources(out, { x: 'nodes', model: 'usl' })
  assert.ok(!fit.groups[0].fits.usl.error, JSON.stringify(fit.groups[0].fits.usl.error))
  assert.match(formatFit(fit), /^hs\/cpu {2}\(N = nodes; 4 points from 8 runs\)$/m)
  assert.match(formatFit(fit), /^skipped: 1 runs not done, 1 degraded runs \(a node was lost\)$/m)
})

test('over instances, runs of one instance count on different node counts are different configurations, not repeats', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const r = await loadPoints(out, { x: 'instances' })
  const two = r.groups[0].points.find(p => p.n === 2)
  // instances 2 ran on 1 node (2 per node) and on 2 nodes (1 per node): the best of them, 2 runs, not 4 averaged
  assert.equal(two.count, 2)
  assert.equal(two.config.nodes, 1)
  assert.equal(two.throughput, truth(1, 2, 25))
})

/** Rows of `<table class="cls">` as text cells. */
function tableRows (html, cls) {
  const m = new RegExp(`<table class="${cls}">([\\s\\S]*?)</table>`).exec(html)
  assert.ok(m, `no table ${cls}`)
  const header = [...m[1].matchAll(/<th>([\s\S]*?)<\/th>/g)].map(x => x[1])
  const rows = [...m[1].matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].slice(1)
    .map(r => [...r[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(c => c[1].replace(/&#39;/g, "'")))
  return { header, rows }
}

test('report over nodes: throughput, p95 and the cluster\'s CPU vs nodes, the correlation table, the degraded run listed', async (t) => {
  const out = tmp(t)
  writeGrid(out)
  const file = join(out, 'mimn.html')
  const r = await runCli('analyzer', ['report', out, '--x', 'nodes', '-o', file])
  assert.equal(r.code, 0, r.stderr)
  const html = readFileSync(file, 'utf8')
  assert.doesNotMatch(html, /NaN|undefined|Infinity|<script|\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//)
  const charts = Object.fromEntries([...html.matchAll(/<figure data-chart="([^"]+)">([\s\S]*?)<\/figure>/g)].map(m => [m[1], m[2]]))
  assert.deepEqual(Object.keys(charts).sort(), ['cluster-cpu', 'cpu', 'fit:hs/cpu', 'latency', 'throughput'])
  for (let n = 1; n <= 4; n++) {
    assert.match(charts['cluster-cpu'], new RegExp(`aria-label="hs/cpu N=${n}: server CPU ${0.5 * n} cores"`))
    assert.match(charts.latency, new RegExp(`aria-label="hs/cpu N=${n}: p95 ${Number((125 / n).toPrecision(3))} ms"`))
  }
  assert.match(charts.throughput, /worker nodes/)
  // the points table says which configuration each node count's maximum came from (Table 4)
  const points = tableRows(html, 'points')
  assert.deepEqual(points.header.slice(0, 9),
    ['N', 'throughput (req/s)', 'sd', 'runs', 'p95 (ms)', 'errors', 'server CPU (cores)', 'instances at max', 'load at max'])
  assert.deepEqual(points.rows.map(x => [x[0], x[6], x[7], x[8]]), [1, 2, 3, 4].map(n => [String(n), (0.5 * n).toFixed(2), String(2 * n), '25 connections']))
  // Figure 21's table
  const corr = tableRows(html, 'correlations')
  assert.deepEqual(corr.rows.map(x => [x[0], x[1], x[2]]), [['cpu', 'nodes (1–4)', '16 (32)'], ['cpu', 'instances (1, 2, 3, 4, 6, 8)', '16 (32)']])
  // every cell's repeats are ±2 req/s: the sd is the same everywhere, so its r is n/a, and the page says why
  assert.deepEqual(corr.rows.map(x => [/^-?[01]\.\d\d$/.test(x[3]), x[4], /^-?[01]\.\d\d$/.test(x[5])]), [[true, 'n/a', true], [true, 'n/a', true]])
  assert.match(html, /<p class="hint">n\/a for cpu · nodes · sd: its standard deviation is the same in every cell<\/p>/)
  // the degraded run: its status, and a reason built from the lost node
  const runs = tableRows(html, 'runs')
  const degraded = runs.rows.filter(x => x[1] === 'degraded')
  assert.equal(degraded.length, 1)
  assert.equal(degraded[0][3], '6 on 3 nodes')
  assert.equal(degraded[0][9],
    'node nodescale-w2 lost at 10:00:03 (2.5 s into the steady window; its RC does not answer (ECONNREFUSED)); 37 errors during the loss')
  assert.match(html, /<tr class="degraded"><td>run-\d+-hs6-3n<\/td>/)
  const md = await runCli('analyzer', ['report', out, '--x', 'nodes', '--format', 'md'])
  assert.equal(md.code, 0, md.stderr)
  assert.match(md.stdout, /^## Correlations$/m)
  assert.match(md.stdout, /^\| cpu \| nodes \(1–4\) \| 16 \(32\) \| -?[01]\.\d\d \|/m)
  assert.match(md.stdout, new RegExp(/^- run-\d+-hs6-3n: degraded \(node nodescale-w2 lost at 10:00:03 \(2\.5 s into the steady window; /.source +
    /its RC does not answer \(ECONNREFUSED\)\); 37 errors during the loss\)$/.source, 'm'))
})

test('no correlation table where nothing varies in nodes or instances; x nodes over runs without nodes says so', async (t) => {
  const out = tmp(t)
  for (const c of [5, 25]) for (const sign of [-1, 1]) writeMimnRun(out, { instances: 2, concurrency: c }, { throughput: 100 + c + sign })
  const r = await runCli('analyzer', ['report', out, '--format', 'md'])
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stdout, /Correlations/)
  const fit = await runCli('analyzer', ['fit', out, '--x', 'nodes'])
  assert.equal(fit.code, 2)
  assert.match(fit.stderr, /NS_ERR_BAD_DATA/)
  const bad = await runCli('analyzer', ['fit', out, '--x', 'racks'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--x: "racks" is not allowed; one of: instances, concurrency, nodes/)
})
