// A sweep with nodes checks the swarm before it runs anything: enough ready workers for its largest K, or exit 2 naming
// the nodes line and the fix; a dry run prints the plan with a warning instead. Reads the real swarm, deploys nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, ROOT } from './helpers/cli.js'
import { checkSwarmNodes, largestNodes } from '../executor/sweep/sweep-nodes.js'
import { parseExperiment } from '../executor/sweep/experiment.js'
import { buildCells, buildPlan } from '../executor/sweep/sweep-plan.js'
import { createSweep } from '../executor/sweep/sweep.js'
import { connectDocker } from '../executor/docker/engine.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-nodes-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const node = (id, role, state = 'ready', availability = 'active') => ({
  ID: id,
  Description: { Hostname: id, Resources: { NanoCPUs: 2e9 } },
  Spec: { Role: role, Availability: availability, Labels: role === 'worker' ? { 'io.nodescale.node': `nodescale-${id}` } : {} },
  Status: { State: state, Addr: '10.99.0.2' }
})
/** A dockerode stand-in: the engine's swarm state and its nodes, as info() and listNodes() give them. */
const fakeDocker = (nodes, state = 'active') => async () => ({
  info: async () => ({ Swarm: { LocalNodeState: state, ControlAvailable: true, NodeID: 'm0' } }),
  listNodes: async () => nodes
})
const cellsFor = (text, t) => buildCells(parseExperiment(text, { file: 'mimn.yml', path: join(tmp(t), 'mimn.yml') }), { out: tmp(t) })
const GRID = 'backend: swarm\nstrategies: [hs]\nbenchmark: baseline\nnodes: [1, 2]\ninstances-per-node: 1\n'

test('the largest K must be ready, active workers; down or drained ones do not count; the fix is named', async (t) => {
  const cells = cellsFor(GRID, t)
  assert.equal(largestNodes(cells).config.nodes, 2)
  assert.deepEqual(largestNodes(cells).paths['--nodes'], [1])
  const manager = node('m0', 'manager')
  assert.deepEqual(await checkSwarmNodes(cells, { connect: fakeDocker([manager, node('w1', 'worker'), node('w2', 'worker')]) }), { needed: 2, workers: 2 })
  for (const [nodes, seen] of /** @type {[any[], RegExp][]} */ ([
    [[manager, node('w1', 'worker'), node('w2', 'worker', 'down')], /the swarm has 1 ready worker \(nodescale-w1\); not usable: nodescale-w2 \(down, active\)/],
    [[manager, node('w1', 'worker'), node('w2', 'worker', 'ready', 'drain')], /not usable: nodescale-w2 \(ready, drain\)/],
    [[manager], /the swarm has 0 ready workers/]
  ])) {
    await assert.rejects(checkSwarmNodes(cells, { connect: fakeDocker(nodes) }), (/** @type {any} */ e) => {
      assert.equal(e.code, 'NS_ERR_BAD_FLAG')
      assert.match(e.message, /^--nodes: 2 worker nodes asked/)
      assert.match(e.message, seen)
      assert.match(e.hint, /^executor cluster up --nodes 3 \(a manager and 2 workers on this machine\), or join workers to the swarm/)
      return true
    })
  }
  // an engine in no swarm yet has no workers; a grid without nodes asks nothing of Docker
  await assert.rejects(checkSwarmNodes(cells, { connect: fakeDocker([], 'inactive') }), /the swarm has 0 ready workers/)
  const none = cellsFor('backend: auto\nstrategies: [hs]\nbenchmark: baseline\n', t)
  assert.equal(await checkSwarmNodes(none, { connect: async () => assert.fail('no connection for a grid without nodes') }), null)
})

/** This machine's swarm, or a skip when no engine answers. */
async function engine (t) {
  try {
    return await connectDocker({ timeoutMs: 3000 })
  } catch (err) {
    t.skip(`no Docker engine here (${err.message}); bash scripts/docker-up.sh starts one`)
    return null
  }
}

// K = 64 (the most --nodes takes): no swarm on this machine has that many workers, so however the local cluster of
// other tests changes meanwhile, the sweep cannot start a run on it
const K = 64

test('on this machine\'s swarm: a sweep asking more nodes than its workers stops with exit 2 before anything runs', async (t) => {
  if (!await engine(t)) return
  const dir = tmp(t)
  const file = join(dir, 'mimn.yml')
  writeFileSync(file, `backend: swarm\nstrategies: [hs]\nbenchmark: baseline\nnodes: [1, ${K}]\nduration: 1\nwarmup: 0\n`)
  const out = join(dir, 'out')
  const r = await runCli('executor', ['sweep', file, '--out', out])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, new RegExp(`NS_ERR_BAD_FILE: .*mimn\\.yml:4: nodes \\(--nodes\\) \\(strategy hs\\): ${K} worker nodes asked, ` +
    'and the swarm has \\d+ ready workers?'))
  assert.match(r.stderr, new RegExp(`\\n {2}fix: executor cluster up --nodes ${K + 1} \\(a manager and ${K} workers on this machine\\)`))
  assert.ok(!existsSync(out) || readdirSync(out).length === 0, 'nothing written')
  // a dry run prints the plan and says the same as a warning (exit 0)
  const dry = await runCli('executor', ['sweep', file, '--out', out, '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  assert.match(dry.stdout, new RegExp(`^warning: .*mimn\\.yml:4: nodes \\(--nodes\\) \\(strategy hs\\): ${K} worker nodes asked.*` +
    '\\(without --dry-run the sweep stops here, exit 2\\)$', 'm'))
  assert.match(dry.stdout, /^plan: 2 runs on 2 deployments/m)
  // --resume checks the same before it runs what is left
  const exp = parseExperiment(`backend: swarm\nstrategies: [hs]\nbenchmark: baseline\nnodes: ${K}\n`, { file: 'mimn.yml', path: file })
  const cells = buildCells(exp, { out })
  const sweep = await createSweep({ exp, cells, plan: buildPlan(cells, { repeats: 1, order: 'shapes', seed: 1 }), seed: 1, out })
  const resumed = await runCli('executor', ['sweep', '--resume', sweep.dir])
  assert.equal(resumed.code, 2, resumed.stderr)
  assert.match(resumed.stderr, new RegExp(`NS_ERR_BAD_FLAG: --resume ${sweep.dir}: --nodes: ${K} worker nodes asked`))
  assert.deepEqual(readdirSync(sweep.dir).sort(), ['experiment.yml', 'sweep.json'], 'no run folder')
})

test('executor sweep experiments/ibench-mimn.yml --profile smoke --dry-run: the plan, whatever the swarm has', async (t) => {
  const r = await runCli('executor',
    ['sweep', join(ROOT, 'experiments', 'ibench-mimn.yml'), '--profile', 'smoke', '--dry-run', '--seed', '4', '--out', join(tmp(t), 'never')])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^grid: cpu × instances per node \(hs 1,2\) × nodes \(hs 1,2\) × concurrency 4,16 = 8 cells × 2 repeats$/m)
  // ibench-mimn runs every repeat on deployments of its own (order: blocks): 4 shapes x 2 repeats
  assert.match(r.stdout, /^plan: 16 runs on 8 deployments \(order: blocks\)/m)
  assert.match(r.stdout, /^estimated time: \d+ min \d+ s on the swarm backend$/m)
  for (const shape of ['hs x1 on 1 node', 'hs x2 on 1 node', 'hs x2 on 2 nodes', 'hs x4 on 2 nodes']) assert.equal(r.stdout.split(shape).length - 1, 4, shape)
})
