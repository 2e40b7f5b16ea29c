// Designs whose repeats are independent units for the tests between groups (analyzer/stats/group-tests.js): `order:
// blocks`
// deploys every shape afresh in every repeat, and the shipped experiments' default profiles use it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, runCli } from './helpers/cli.js'
import { loadPoints } from '../analyzer/points.js'
import { parseExperiment, loadExperiment } from '../executor/sweep/experiment.js'
import { buildCells, buildPlan, estimatePlan } from '../executor/sweep/sweep-plan.js'

test('order blocks: no block opens with the shape the block before closed with, so every repeat deploys every shape', (t) => {
  const out = mkdtempSync(join(tmpdir(), 'ns-blocks-'))
  t.after(() => rmSync(out, { recursive: true, force: true }))
  const exp = parseExperiment('backend: local\nbenchmark: baseline\nstrategies: [cm, hs]\ninstances: [1]\n' +
    'concurrency: [4, 8]\nduration: 1\nrepeats: 4\norder: blocks\n', { file: 'b.yml' })
  const cells = buildCells(exp, { out })
  // two shapes: without the rule half the block boundaries would keep a deployment (a seed's plan of 4 repeats has 3)
  for (let seed = 1; seed <= 100; seed++) {
    const plan = buildPlan(cells, { repeats: 4, order: 'blocks', seed })
    assert.equal(estimatePlan(plan, cells).deployments, 2 * 4, `seed ${seed}`)
    assert.deepEqual(plan.map(e => e.repeat), [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4])
  }
})

test('the shipped experiments\' default profiles deploy afresh for every repeat (order blocks) and repeat at least twice', async () => {
  const files = readdirSync(join(ROOT, 'experiments')).filter(f => f.endsWith('.yml'))
  assert.ok(files.length >= 5)
  for (const f of files) {
    const exp = await loadExperiment(join(ROOT, 'experiments', f))
    assert.equal(exp.order, 'blocks', f)
    assert.ok(exp.repeats >= 2, `${f}: ${exp.repeats} repeats`)
  }
})

test('real sweeps: order shapes runs a shape\'s repeats on one deployment, blocks on one each, as the analyzer reads them', { timeout: 180000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-blocks-real-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const units = {}
  for (const order of ['shapes', 'blocks']) {
    const file = join(dir, `${order}.yml`)
    writeFileSync(file, 'backend: local\nbenchmark: baseline\nstrategies: [cm]\ninstances: [1, 2]\n' +
      `concurrency: [4]\nduration: 2\nwarmup: 0\nrepeats: 2\norder: ${order}\n`)
    const r = await runCli('executor', ['sweep', file, '--out', join(dir, order), '--seed', '3'])
    assert.equal(r.code, 0, r.stderr)
    // the analyzer finds the deployment from each run.json's placement (the replica's process and port)
    const { groups } = await loadPoints(join(dir, order), { includeInvalid: true })
    const obs = groups[0].observations
    assert.equal(obs.length, 4)
    assert.ok(obs.every(o => o.deployment.startsWith('placement:')), JSON.stringify(obs))
    units[order] = new Set(obs.map(o => o.deployment)).size
  }
  assert.deepEqual(units, { shapes: 2, blocks: 4 })
})
