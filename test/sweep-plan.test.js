// The plan of a sweep: counts, deployments, the seeded order (reproducible with --seed) and the shipped experiments.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, ROOT } from './helpers/cli.js'
import { parseExperiment } from '../executor/sweep/experiment.js'
import { buildCells, buildPlan, estimatePlan } from '../executor/sweep/sweep-plan.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-plan-'))
const GRID = 'backend: local\nbenchmark: baseline\nstrategies: [cm, pm2, hs]\ninstances: 1..3\nconcurrency: [4, 8]\nduration: 2\nwarmup: 1\nrepeats: 3\n'

function dryRun (file, extra = []) {
  return runCli('executor', ['sweep', file, '--dry-run', '--json', '--out', join(tmp(), 'never'), ...extra])
}

test('dry run: cells x repeats runs, one deployment per shape, an estimate, nothing written', async () => {
  const dir = tmp()
  const file = join(dir, 'grid.yml')
  writeFileSync(file, GRID)
  const out = join(dir, 'out')
  const r = await runCli('executor', ['sweep', file, '--dry-run', '--seed', '11', '--out', out])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /3 × 3 × 2|= 18 cells × 3 repeats/)
  assert.match(r.stdout, /plan: 54 runs on 9 deployments \(order: shapes\)/)
  assert.match(r.stdout, /estimated time: \d+ min \d+ s on the local backend/)
  assert.match(r.stdout, /seed 11 /)
  assert.equal(r.stdout.match(/^\s+\d+ {2}(cm|pm2|hs) x\d/gm).length, 54)
  assert.ok(!existsSync(out), 'a dry run writes nothing')
  const j = JSON.parse((await dryRun(file, ['--seed', '11'])).stdout)
  assert.equal(j.plan.length, 54)
  assert.equal(j.estimate.deployments, 9)
  // 54 runs of 3 s each plus overheads: more than the load time, less than twice it
  assert.ok(j.estimate.seconds > 54 * 3 && j.estimate.seconds < 54 * 6, String(j.estimate.seconds))
})

test('the same seed gives the same order; another seed another; each repeat holds every cell once', async () => {
  const dir = tmp()
  const file = join(dir, 'grid.yml')
  writeFileSync(file, GRID)
  const a = JSON.parse((await dryRun(file, ['--seed', '12345'])).stdout)
  const b = JSON.parse((await dryRun(file, ['--seed', '12345'])).stdout)
  const c = JSON.parse((await dryRun(file, ['--seed', '54321'])).stdout)
  assert.deepEqual(a.plan, b.plan)
  assert.notDeepEqual(a.plan.map(e => e.cell), c.plan.map(e => e.cell))
  for (const p of [a.plan, c.plan]) {
    for (let r = 1; r <= 3; r++) assert.deepEqual(p.filter(e => e.repeat === r).map(e => e.cell).sort((x, y) => x - y), [...Array(18).keys()])
  }
  // without --seed a fresh seed is drawn and printed
  const d = JSON.parse((await dryRun(file)).stdout)
  assert.ok(Number.isInteger(d.seed) && d.seed > 0)
})

test('order shapes keeps a shape together (one deployment each, levels shuffled per repeat); blocks redeploys per repeat', () => {
  const exp = parseExperiment(GRID, { file: 'g.yml' })
  const cells = buildCells(exp, { out: tmp() })
  const shapes = buildPlan(cells, { repeats: 3, order: 'shapes', seed: 7 })
  assert.equal(estimatePlan(shapes, cells).deployments, 9)
  // within a shape, the two levels are reshuffled for each repeat: over 9 shapes x 3 repeats both orders occur
  const firsts = new Set(shapes.filter((e, i) => i % 2 === 0).map(e => cells[e.cell].config.concurrency))
  assert.deepEqual([...firsts].sort(), [4, 8])
  const blocks = buildPlan(cells, { repeats: 3, order: 'blocks', seed: 7 })
  assert.equal(estimatePlan(blocks, cells).deployments, 27)
  // in blocks order, repeat r+1 starts only after repeat r has run every cell
  assert.deepEqual(blocks.map(e => e.repeat), [...Array(54).keys()].map(i => Math.floor(i / 18) + 1))
})

test('the shipped experiments plan in every profile; smoke gives every strategy 3 instance counts', async () => {
  // the twelve dry runs plan and write nothing: they run side by side
  const pairs = ['ibench-smisn', 'multicore', 'ibench-table5', 'ibench-finding5'].flatMap(name => ['smoke', 'default', 'full'].map(profile => [name, profile]))
  const dry = await Promise.all(pairs.map(([name, profile]) =>
    dryRun(join(ROOT, 'experiments', `${name}.yml`), ['--profile', profile, '--backend', profile === 'smoke' ? 'local' : 'swarm'])))
  for (const [i, [name, profile]] of pairs.entries()) {
    const r = dry[i]
    assert.equal(r.code, 0, `${name} ${profile}: ${r.stderr}`)
    const j = JSON.parse(r.stdout)
    assert.ok(j.plan.length > 0)
    // ibench-smisn's default is a capacity search per point, for a verdict: each an independent search on its own
    // deployment with 12 probes near the boundary (docs/statistics/capacity.md), about 40 minutes on Swarm here
    const bound = name === 'ibench-smisn' && profile === 'default' ? 45 : 15
    if (profile !== 'full') assert.ok(j.estimate.seconds < bound * 60, `${name} ${profile}: ${j.estimate.seconds} s`)
    if (profile === 'smoke') assert.ok(j.estimate.seconds < 3 * 60, `${name} smoke: ${j.estimate.seconds} s`)
  }
  const smoke = JSON.parse((await dryRun(join(ROOT, 'experiments', 'ibench-smisn.yml'), ['--profile', 'smoke', '--seed', '1'])).stdout)
  const counts = {}
  for (const e of smoke.plan) (counts[e.label.split(' ')[0]] ??= new Set()).add(e.label.split(' ')[1])
  assert.deepEqual(Object.fromEntries(Object.entries(counts).map(([s, n]) => [s, n.size])), { hs: 3, cm: 3, up: 3 })
})

test('ibench-smisn --profile verdict: up and cm at N = 1 and 4 on 3 deployments each, planned within 20 minutes on Swarm', async () => {
  const r = await dryRun(join(ROOT, 'experiments', 'ibench-smisn.yml'), ['--profile', 'verdict', '--backend', 'swarm', '--seed', '1'])
  assert.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.deepEqual([...new Set(j.plan.map(e => e.label.split(' ').slice(0, 2).join(' ')))].sort(), ['cm x1', 'cm x4', 'up x1', 'up x4'])
  assert.equal(j.plan.length, 12)
  assert.ok(j.estimate.seconds <= 20 * 60, `${j.estimate.seconds} s`)
})

test('a nodes axis: each node count is its own shape (deployment); labels and run folders name the nodes', async () => {
  const { entryLabel } = await import('../executor/sweep/sweep.js')
  const { newRunId } = await import('../lib/run-files.js')
  const exp = parseExperiment('backend: swarm\nbenchmark: cpu\nstrategies: [hs]\nnodes: 1..3\ninstances-per-node: [1, 2]\nconcurrency: [4, 16]\nrepeats: 2\n',
    { file: 'm.yml' })
  const cells = buildCells(exp, { out: tmp() })
  assert.equal(cells.length, 3 * 2 * 2)
  // hs x2 on 1 node and hs x2 on 2 nodes: same instances, different deployments
  const twos = cells.filter(c => c.config.instances === 2)
  assert.deepEqual(twos.map(c => c.config.nodes), [1, 1, 2, 2])
  assert.equal(new Set(twos.map(c => c.shape)).size, 2)
  const plan = buildPlan(cells, { repeats: 2, order: 'shapes', seed: 3 })
  const { runs, deployments, seconds } = estimatePlan(plan, cells, { backendName: 'swarm' })
  assert.deepEqual({ runs, deployments, seconds }, { runs: 24, deployments: 6, seconds: Math.round(6 * 15 + 24 * (2 + 10 + 0.5)) })
  assert.equal(entryLabel(twos[2]), 'hs x2 on 2 nodes · cpu · c=4')
  assert.equal(entryLabel(cells[0]), 'hs x1 on 1 node · cpu · c=4')
  assert.match(newRunId(twos[2].config, new Date('2026-11-23T09:19:00Z')), /^20261123-091900-hs2-2n-[0-9a-f]{4}$/)
  assert.match(newRunId({ strategy: 'cm', instances: 4 }, new Date('2026-11-23T09:19:00Z')), /^20261123-091900-cm4-[0-9a-f]{4}$/)
})

test('ibench-mimn plans in every profile on a swarm, with or without its workers; smoke is small enough for 5 minutes', async () => {
  const file = join(ROOT, 'experiments', 'ibench-mimn.yml')
  const plans = {}
  for (const profile of ['smoke', 'default', 'full']) {
    const r = await dryRun(file, ['--profile', profile, '--seed', '2'])
    assert.equal(r.code, 0, `${profile}: ${r.stderr}`)
    plans[profile] = JSON.parse(r.stdout)
    // the workers this machine has now decide whether there is a warning; the plan is there either way
    assert.ok(Array.isArray(plans[profile].warnings))
    for (const w of plans[profile].warnings) assert.match(w, /ibench-mimn\.yml:\d+: nodes \(--nodes\) \(strategy hs\): \d+ worker nodes asked/)
  }
  const shapes = p => new Set(p.plan.map(e => e.label.replace(/ c=\d+$/, '')))
  assert.deepEqual([...shapes(plans.smoke)].sort(), ['hs x1 on 1 node cpu', 'hs x2 on 1 node cpu', 'hs x2 on 2 nodes cpu', 'hs x4 on 2 nodes cpu'])
  assert.equal(plans.smoke.plan.length, 16)
  assert.ok(plans.smoke.estimate.seconds < 3 * 60, `smoke: ${plans.smoke.estimate.seconds} s (Swarm deployments included)`)
  assert.equal(plans.default.plan.length, 2 * 4 * 3 * 2 * 2)
  // order blocks: a deployment per shape and repeat (48 on Swarm), so that repeats are independent units
  assert.ok(plans.default.estimate.seconds < 25 * 60, `default: ${plans.default.estimate.seconds} s`)
  assert.equal(plans.default.estimate.deployments, 2 * 4 * 3 * 2)
  // the paper's sizes: three apps, 1-4 nodes, 1-20 replicas, five workloads, 15 repeats
  assert.equal(plans.full.plan.length, 3 * 4 * 5 * 5 * 15)
  assert.ok(plans.full.plan.some(e => e.label.startsWith('hs x20 on 4 nodes baseline c=45')))
  // the local backend cannot run it: exit 2, the nodes line named
  const local = await dryRun(file, ['--profile', 'smoke', '--backend', 'local'])
  assert.equal(local.code, 2)
  assert.match(local.stderr, /--backend: local cannot run .*ibench-mimn\.yml: its nodes \(line \d+\) are Swarm worker nodes/)
})
