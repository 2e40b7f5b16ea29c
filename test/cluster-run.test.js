// The local multi-node swarm on the real engine: cluster up 3 (Ready, distinct labels and hostnames), MIMN runs placed on the
// workers (spread, pack, a constraint) with per-node CPU in run.json, shrink, and cluster down leaving nothing behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import Docker from 'dockerode'
import { stackResources } from '../executor/docker/stack-deploy.js'
import { checkHost } from '../executor/cluster/host.js'
import { swarmEngine } from './swarm-helper.js'
import { runCli, readRun, assertCompleteRun } from './helpers/cli.js'

const engine = await swarmEngine()
let skip = engine.skip
if (!skip) {
  try { checkHost() } catch (err) { skip = `the local cluster cannot run here: ${err.message}` }
  if (skip && process.env.CI === 'true') throw new Error(`${skip} (CI=true: the cluster suite must run)`)
}
const docker = /** @type {import('dockerode')} */ (engine.docker)

/** Runs `executor cluster ...`; while someone else's stack runs (the swarm cannot be re-initialised), waits and retries. */
async function cluster (args, { waitMs = 180_000 } = {}) {
  const started = Date.now()
  for (;;) {
    const r = await runCli('executor', ['cluster', ...args], { timeoutMs: 180_000 })
    if (r.code === 0 || !/would remove running stacks/.test(r.stderr) || Date.now() - started > waitMs) return { ...r, ms: Date.now() - started }
    await sleep(5000)
  }
}

const netns = () => execFileSync('ip', ['-j', 'netns', 'list'], { encoding: 'utf8' }).trim()
const ourNetns = () => (netns() ? JSON.parse(netns()) : []).map(n => n.name).filter(n => n.startsWith('nodescale-'))
const linkExists = (name) => { try { execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' }); return true } catch { return false } }
const run = (out, args) => runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--benchmark', 'baseline', '--cpus-per-instance', '0.25',
  '--duration', '2', '--warmup', '1', '--concurrency', '4', '--out', out, '--quiet', ...args], { timeoutMs: 180_000 })
const appNodes = (r) => r.placement.filter(p => p.service.endsWith('_app')).map(p => p.nodeLabel).sort()

async function assertStackGone (r) {
  const stack = r.placement[0].service.replace(/_(app|lb)$/, '')
  const left = await stackResources(docker, stack)
  assert.deepEqual([left.services.length, left.containers.length, left.networks.length], [0, 0, 0], `left of ${stack}`)
}

test('cluster up 3, runs placed on the workers, shrink, cluster down leaves nothing and single-node runs work again', { skip, timeout: 600_000 }, async (t) => {
  let down = null
  t.after(async () => { if (!down) await cluster(['down']) })

  await t.test('cluster up --nodes 3: three Ready nodes with distinct labels and hostnames; a second up changes nothing', async () => {
    const up = await cluster(['up', '--nodes', '3', '--json'])
    assert.equal(up.code, 0, up.stderr)
    t.diagnostic(`cluster up --nodes 3: ${up.ms} ms`)
    const status = JSON.parse(up.stdout)
    assert.equal(status.advertise, '10.99.0.1')
    assert.equal(status.nodes.length, 3)
    assert.deepEqual(status.nodes.map(n => n.label), ['m0', 'nodescale-w1', 'nodescale-w2'])
    assert.deepEqual(status.nodes.map(n => n.role), ['manager', 'worker', 'worker'])
    assert.ok(status.nodes.every(n => n.state === 'ready'))
    assert.equal(new Set(status.nodes.map(n => n.hostname)).size, 3, 'every node has its own hostname')
    for (const w of status.nodes.filter(n => n.role === 'worker')) {
      const info = await new Docker({ socketPath: w.engine }).info()
      assert.equal(info.Name, w.hostname, 'the worker engine answers on its own socket under its own hostname')
      assert.equal(info.Swarm.NodeID, w.id)
    }
    const again = await cluster(['up', '--nodes', '3', '--json'])
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual(JSON.parse(again.stdout).nodes.map(n => n.id), status.nodes.map(n => n.id), 'idempotent: the same nodes')
  })

  await t.test('executor up on a fresh cluster loads the RC image into the workers: one RC per node answers', async () => {
    const r = await runCli('executor', ['up', '--json'], { timeoutMs: 120_000 })
    assert.equal(r.code, 0, r.stderr)
    const plane = JSON.parse(r.stdout)
    assert.equal(plane.rcs.length, 3, 'the manager and both workers run an RC')
    assert.equal(new Set(plane.rcs.map(x => x.node)).size, 3)
  })

  await t.test('hs --instances 4 --nodes 2 puts 2 tasks on each worker, HAProxy on the manager, CPU per node per core', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const started = Date.now()
    const r = await run(out, ['--instances', '4', '--nodes', '2'])
    assert.equal(r.code, 0, r.stderr)
    t.diagnostic(`run hs x4 on 2 workers: ${Date.now() - started} ms`)
    // not assertCompleteRun: cpu.cores spans every node's cores here (rc-client numbers them node after node), not this host's
    const { run: json } = readRun(out)
    assert.equal(json.status, 'done', JSON.stringify(json.error))
    assert.equal(json.environment.swarmNodes, 3)
    assert.deepEqual(appNodes(json), ['nodescale-w1', 'nodescale-w1', 'nodescale-w2', 'nodescale-w2'])
    assert.deepEqual(json.placement.filter(p => p.service.endsWith('_lb')).map(p => p.nodeLabel), ['m0'])
    assert.deepEqual(json.cpu.nodes.map(n => n.label), ['nodescale-w1', 'nodescale-w2'])
    for (const n of json.cpu.nodes) {
      assert.equal(n.cores.length, json.environment.cpus, 'each node has its own cores')
      assert.ok(n.host.overall > 0, `${n.label}'s host cores were sampled`)
      assert.ok(n.total > 0, `the server used CPU on ${n.label}`)
    }
    assert.equal(json.cpu.cores.length, 2 * json.environment.cpus)
    assert.ok(json.summary.requests > 50 && json.summary.errors === 0, JSON.stringify(json.summary))
    await assertStackGone(json)
  })

  await t.test('--placement pack fills one worker; --constraint puts the tasks where it says', async () => {
    const pack = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const r1 = await run(pack, ['--instances', '2', '--placement', 'pack'])
    assert.equal(r1.code, 0, r1.stderr)
    assert.deepEqual(appNodes(assertCompleteRun(pack, { strategy: 'hs', instances: 2 }).run), ['nodescale-w1', 'nodescale-w1'])
    const only = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const r2 = await run(only, ['--instances', '2', '--constraint', 'node.labels.io.nodescale.node==nodescale-w2'])
    assert.equal(r2.code, 0, r2.stderr)
    assert.deepEqual(appNodes(assertCompleteRun(only, { strategy: 'hs', instances: 2 }).run), ['nodescale-w2', 'nodescale-w2'])
  })

  await t.test('--nodes beyond the ready workers exits 2 naming the flag, before anything is deployed', async () => {
    const r = await run(mkdtempSync(join(tmpdir(), 'ns-cluster-')), ['--instances', '2', '--nodes', '3'])
    assert.equal(r.code, 2, r.stderr)
    assert.match(r.stderr, /--nodes: 3 worker nodes asked, and the swarm has 2 ready workers \(nodescale-w1, nodescale-w2\)/)
  })

  await t.test('a worker whose engine stopped is skipped at deploy with a warning; cluster up brings it back', async () => {
    const pid = Number(readFileSync('/var/run/nodescale-cluster/nodescale-w2.pid', 'utf8'))
    process.kill(pid, 'SIGTERM')
    const deadline = Date.now() + 60_000
    while ((await docker.listNodes()).find(n => n.Description.Hostname === 'nodescale-w2')?.Status.State !== 'down') {
      assert.ok(Date.now() < deadline, 'the manager marks the stopped worker down')
      await sleep(1000)
    }
    const out = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const r = await runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--benchmark', 'baseline', '--cpus-per-instance', '0.25',
      '--duration', '2', '--warmup', '1', '--concurrency', '4', '--out', out, '--instances', '2'], { timeoutMs: 180_000 })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stderr, /warning: node nodescale-w2 is not usable \(down, active\); skipped/)
    assert.deepEqual(appNodes(readRun(out).run), ['nodescale-w1', 'nodescale-w1'])
    const up = await cluster(['up', '--nodes', '3', '--json'])
    assert.equal(up.code, 0, up.stderr)
    assert.deepEqual(JSON.parse(up.stdout).nodes.map(n => `${n.label} ${n.state}`), ['m0 ready', 'nodescale-w1 ready', 'nodescale-w2 ready'])
  })

  await t.test('cluster up --nodes 2 shrinks: the second worker, its namespace and node entry are gone', async () => {
    const r = await cluster(['up', '--nodes', '2', '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout).nodes.map(n => n.label), ['m0', 'nodescale-w1'])
    assert.deepEqual(ourNetns().sort(), ['nodescale-lan', 'nodescale-w1'])
    assert.equal((await docker.listNodes()).length, 2)
  })

  await t.test('cluster down leaves no namespace, veth, engine or node entry, and the swarm advertises loopback again', async () => {
    down = await cluster(['down'])
    assert.equal(down.code, 0, down.stderr)
    t.diagnostic(`cluster down: ${down.ms} ms`)
    assert.deepEqual(ourNetns(), [])
    assert.equal(linkExists('nsc-m0'), false)
    assert.equal(existsSync('/var/run/nodescale-cluster'), false)
    assert.equal(existsSync('/var/lib/nodescale-cluster'), false)
    const engines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter(l => l.includes('nodescale-cluster'))
    assert.deepEqual(engines, [])
    const nodes = await docker.listNodes()
    assert.equal(nodes.length, 1)
    assert.equal(nodes[0].Spec.Labels['io.nodescale.node'], undefined)
    assert.equal((await docker.info()).Swarm.NodeAddr, '127.0.0.1')
  })

  await t.test('a single-node run works afterwards', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const r = await run(out, ['--instances', '2'])
    assert.equal(r.code, 0, r.stderr)
    const { run: json } = assertCompleteRun(out, { strategy: 'hs', instances: 2 })
    assert.equal(json.environment.swarmNodes, 1)
    assert.equal(new Set(json.placement.map(p => p.nodeId)).size, 1)
  })
})
