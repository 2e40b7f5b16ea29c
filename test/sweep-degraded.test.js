// Degraded runs in a sweep (a node lost mid-run): counted, said in the end lines with the node, the sweep failed (exit
// 1) and redone by --resume; and the end of a multi-node sweep: the fit over nodes and the correlations it asked for.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseExperiment } from '../executor/sweep/experiment.js'
import { buildCells, buildPlan } from '../executor/sweep/sweep-plan.js'
import { createSweep, openSweep, saveSweep, sweepStatus, countEntries } from '../executor/sweep/sweep.js'
import { analyseSweep } from '../executor/sweep/sweep-analysis.js'
import { formatRunLine, formatSweepEnd } from '../executor/sweep/sweep-text.js'
import { formatCapacity } from '../executor/capacity/capacity-text.js'
import { writeMimnRun } from './helpers/mimn-runs.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-degraded-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const LOST = {
  nodes: [{
    node: 'nodescale-w2',
    nodeId: 'id2',
    label: 'nodescale-w2',
    why: 'its RC does not answer (ECONNREFUSED)',
    lostAt: '2026-11-23T10:00:04.000Z',
    lostAfterMs: 3000
  }],
  errorsDuringLoss: 12
}

async function mimnSweep (t, analysis = '{ x: nodes, correlations: true }') {
  const out = tmp(t)
  const text = `backend: swarm\nstrategies: [hs]\nbenchmark: cpu\nnodes: 1..2\ninstances-per-node: [1, 2]\nconcurrency: 8\nrepeats: 2\nanalysis: ${analysis}\n`
  const exp = parseExperiment(text, { file: 'mimn.yml', path: join(out, 'mimn.yml') })
  const cells = buildCells(exp, { out })
  const sweep = await createSweep({ exp, cells, plan: buildPlan(cells, { repeats: 2, order: 'shapes', seed: 1 }), seed: 1, out })
  return { sweep, cells }
}

test('the sweep\'s status: a degraded run fails it like a failed one; done only when every run is', () => {
  const counts = over => ({ runs: 4, done: 0, failed: 0, degraded: 0, interrupted: 0, pending: 0, running: 0, ...over })
  assert.equal(sweepStatus(counts({ done: 4 })), 'done')
  assert.equal(sweepStatus(counts({ done: 3, degraded: 1 })), 'failed')
  assert.equal(sweepStatus(counts({ done: 3, failed: 1 })), 'failed')
  assert.equal(sweepStatus(counts({ done: 2, pending: 2 })), 'interrupted')
  assert.equal(sweepStatus(counts({ done: 3, degraded: 1 }), { aborted: true }), 'interrupted')
  assert.deepEqual(countEntries([{ status: 'done' }, { status: 'degraded' }]),
    { runs: 2, done: 1, failed: 0, degraded: 1, interrupted: 0, pending: 0, running: 0 })
})

test('the end lines count the degraded runs, name the lost node and point at --resume', async (t) => {
  const { sweep } = await mimnSweep(t)
  Object.assign(sweep.plan[0], { status: 'done' })
  Object.assign(sweep.plan[1], {
    status: 'degraded',
    reason: 'node nodescale-w2 lost at 10:00:04 (3.0 s into the steady window; its RC does not answer (ECONNREFUSED)); 12 errors during the loss'
  })
  for (const e of sweep.plan.slice(2)) e.status = 'done'
  sweep.counts = countEntries(sweep.plan)
  sweep.status = sweepStatus(sweep.counts)
  sweep.deployments = 4
  const text = formatSweepEnd(sweep, null, { seconds: 100 })
  const lines = text.split('\n')
  assert.match(lines[0], /^sweep \S+: failed · 7\/8 runs done · 1 degraded · 4 deployments · 1 min 40 s$/)
  assert.equal(lines[1], `  degraded: #2 ${sweep.plan[1].label} (repeat ${sweep.plan[1].repeat}): node nodescale-w2 lost at 10:00:04 ` +
    '(3.0 s into the steady window; its RC does not answer (ECONNREFUSED)); 12 errors during the loss')
  assert.match(sweep.plan[1].label, /^hs x\d on \d nodes? · cpu · c=8$/)
  assert.equal(lines[2], `  resume: executor sweep --resume ${sweep.dir} (redoes the degraded runs too: a node lost mid-run is no steady-state measurement)`)
})

test('--resume redoes a degraded run; its folder stays, and the analysis skips it', async (t) => {
  const { sweep, cells } = await mimnSweep(t)
  const degraded = sweep.plan[0]
  const config = { ...cells[degraded.cell].config, sweep: { id: sweep.id, index: degraded.index, repeat: degraded.repeat } }
  const { dir, run } = writeMimnRun(sweep.dir, config, { throughput: 500, status: 'degraded', degraded: LOST })
  Object.assign(degraded, { status: 'degraded', run: run.id, reason: 'node nodescale-w2 lost' })
  await saveSweep(sweep)
  const reopened = await openSweep(sweep.dir)
  assert.equal(reopened.plan[0].status, 'pending')
  assert.equal(reopened.plan[0].reason, 'node nodescale-w2 lost')
  assert.ok(existsSync(join(dir, 'run.json')), 'the degraded run folder is kept')
  assert.equal(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).status, 'degraded')
  assert.equal(JSON.parse(readFileSync(join(sweep.dir, 'sweep.json'), 'utf8')).plan[0].status, 'degraded',
    'sweep.json is rewritten only when the resumed sweep runs')
})

test('the end of a sweep over nodes: the fit per node count and the correlations the experiment asked for', async (t) => {
  const { sweep, cells } = await mimnSweep(t)
  for (const e of sweep.plan) {
    const c = cells[e.cell].config
    writeMimnRun(sweep.dir, { ...c, sweep: { id: sweep.id, index: e.index, repeat: e.repeat } },
      { throughput: 90 * c.instances * (1 - 0.1 * (c.nodes - 1)) + (e.repeat === 1 ? -3 : 3) * c.nodes })
    e.status = 'done'
  }
  const lost = writeMimnRun(sweep.dir, { ...cells[0].config }, { throughput: 9999, status: 'degraded', degraded: LOST })
  mkdirSync(join(sweep.dir, 'empty'))
  writeFileSync(join(sweep.dir, 'empty', 'note.txt'), 'not a run')
  sweep.counts = countEntries(sweep.plan)
  sweep.status = 'done'
  const analysis = await analyseSweep(sweep)
  assert.equal(analysis.fit.x, 'nodes')
  assert.equal(analysis.correlations.skipped.degraded, 1, `${lost.dir} is left out`)
  const text = formatSweepEnd(sweep, analysis, { seconds: 60 })
  // two node counts are too few for Amdahl (3) or USL (4): said per group, with the N it had
  assert.match(text,
    /^scalability fit: not enough points for any group\n {2}hs\/cpu: cannot fit \(USL has 3 parameters and needs at least 4 distinct N; got 2 \(N = 1, 2\)/m)
  assert.match(text, /^Pearson r of nodes and instances with each cell's mean throughput, its sd and relative sd, per benchmark \(Ibenchjs Figure 21\):$/m)
  assert.match(text, /^cpu\s+nodes \(1, 2\)\s+4 \(8\)\s+-?\d\.\d\d\s+-?\d\.\d\d\s+-?\d\.\d\d$/m)
  assert.match(text, /^skipped: 1 degraded runs \(a node was lost\)$/m)
  // without correlations: true, none are printed
  const { sweep: plain } = await mimnSweep(t, '{ x: nodes }')
  assert.equal((await analyseSweep(plain)).correlations, null)
})

test('the reason of a degraded run: each lost node by label, its clock time, how far into the steady window and why, the errors meanwhile', async () => {
  const { degradedReason } = await import('../analyzer/report/report-runs.js')
  assert.equal(degradedReason({ degraded: LOST }),
    'node nodescale-w2 lost at 10:00:04 (3.0 s into the steady window; its RC does not answer (ECONNREFUSED)); 12 errors during the loss')
  // two nodes, the second without a label (a real cluster's node: its hostname)
  const two = {
    nodes: [LOST.nodes[0], { node: 'w3', nodeId: 'id3', label: null, why: 'the manager marks it down', lostAt: '2026-11-23T10:00:05.200Z', lostAfterMs: 4200 }],
    errorsDuringLoss: 0
  }
  assert.equal(degradedReason({ degraded: two }), 'node nodescale-w2 lost at 10:00:04 (3.0 s into the steady window; its RC does not answer ' +
    '(ECONNREFUSED)), node w3 lost at 10:00:05 (4.2 s into the steady window; the manager marks it down); 0 errors during the loss')
  assert.equal(degradedReason({ status: 'degraded' }), 'a node was lost during the run')
})

test('a search\'s line names the next rate up that missed, and none where the capacity lies above every miss', () => {
  const e = { index: 0, label: 'up x1 · cpu · capacity', repeat: 1, status: 'done', seconds: 83.5 }
  const search = (hi) => ({ probes: new Array(15), capacity: 75.65, atCapacity: { latency: { p99: 147 } }, bounds: { lo: 74.39, hi }, notes: [] })
  assert.equal(formatRunLine(e, search(77.2), 12),
    '[ 1/12] up x1 · cpu · capacity · repeat 1  capacity 76 req/s (p99 147 ms, next up 77 misses) · 15 probes  (83.5 s)')
  // a probit's capacity above the highest miss (75.43 missed, 74.39 met, the 50% point 75.65): no "next up 0 misses"
  assert.equal(formatRunLine(e, search(null), 12),
    '[ 1/12] up x1 · cpu · capacity · repeat 1  capacity 76 req/s (p99 147 ms) · 15 probes  (83.5 s)')
})

test('executor capacity\'s text: the lowest miss above the capacity, or that none above it missed', () => {
  const c = (hi) => ({
    config: { strategy: 'up', instances: 1, driver: 'autocannon' },
    benchmark: 'cpu',
    objective: 'p99 ≤ 250 ms, errors ≤ 0.1%',
    capacity: 75.65,
    interval: { lo: 72.1, hi: 78.3 },
    meaning: 'the rate a probe meets half the time',
    bounds: { lo: 74.39, hi },
    noise: 0.021,
    probes: [],
    seconds: 83,
    notes: [],
    dir: '/tmp/x'
  })
  assert.match(formatCapacity(c(77.2)), /probes near it: 74 req\/s the highest met below, 77 the lowest missed above;/)
  assert.match(formatCapacity(c(null)), /probes near it: 74 req\/s the highest met below, none above it missed;/)
})
