// The plan of a sweep: counts, deployments, the seeded order (reproducible with --seed) and the shipped experiments.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, ROOT } from './helpers/cli.js'
import { parseExperiment } from '../executor/experiment.js'
import { buildCells, buildPlan, estimatePlan } from '../executor/sweep-plan.js'

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
  for (const name of ['ibench-smisn', 'multicore']) {
    for (const profile of ['smoke', 'default', 'full']) {
      const r = await dryRun(join(ROOT, 'experiments', `${name}.yml`), ['--profile', profile, '--backend', profile === 'smoke' ? 'local' : 'swarm'])
      assert.equal(r.code, 0, `${name} ${profile}: ${r.stderr}`)
      const j = JSON.parse(r.stdout)
      assert.ok(j.plan.length > 0)
      if (profile !== 'full') assert.ok(j.estimate.seconds < 15 * 60, `${name} ${profile}: ${j.estimate.seconds} s`)
      if (profile === 'smoke') assert.ok(j.estimate.seconds < 3 * 60, `${name} smoke: ${j.estimate.seconds} s`)
    }
  }
  const smoke = JSON.parse((await dryRun(join(ROOT, 'experiments', 'ibench-smisn.yml'), ['--profile', 'smoke', '--seed', '1'])).stdout)
  const counts = {}
  for (const e of smoke.plan) (counts[e.label.split(' ')[0]] ??= new Set()).add(e.label.split(' ')[1])
  assert.deepEqual(Object.fromEntries(Object.entries(counts).map(([s, n]) => [s, n.size])), { hs: 3, cm: 3, up: 3 })
})
