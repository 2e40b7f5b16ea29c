// `executor run --backend swarm` end to end on the real engine: every strategy measured through a stack, CPU per core
// and per container from the RC, placement in run.json, a killed replica restarted mid-run, Ctrl-C and failures that
// leave nothing behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { stackResources, removeLeftovers, localAddress } from '../executor/docker/stack-deploy.js'
import { RUN_LABEL } from '../executor/docker/stack-render.js'
import { swarmEngine } from './swarm-helper.js'
import { runCli, readRun, jtlRows, assertCompleteRun, ROOT } from './helpers/cli.js'

const { docker, skip } = await swarmEngine()
if (!skip) await removeLeftovers(docker)

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-swarm-run-'))
const short = ['--backend', 'swarm', '--duration', '2', '--warmup', '1', '--concurrency', '4', '--cpus-per-instance', '0.5']

/** Asserts that nothing of the run's stack is left: no service, container, network or config (through the API). */
async function assertGone (run) {
  const stack = run.placement[0]?.service?.replace(/_app$/, '') ?? `ns-${run.id}`
  const left = await stackResources(docker, stack)
  assert.deepEqual(
    { services: left.services.length, containers: left.containers.length, networks: left.networks.length, configs: left.configs.length },
    { services: 0, containers: 0, networks: 0, configs: 0 },
    `left of ${stack}`
  )
}

/**
 * The swarm-specific parts of run.json: placement per task, per-container CPU from the RC, the engine in environment.
 */
function assertSwarmRun (run, { tasks }, dir) {
  assert.equal(run.environment.backend, 'swarm')
  assert.match(run.environment.docker, /^\d+\.\d+/)
  assert.match(run.environment.image, /^sha256:/)
  assert.equal(run.environment.swarmNodes, 1)
  assert.equal(run.placement.filter(p => p.service.endsWith('_app')).length, tasks)
  for (const p of run.placement) {
    assert.match(p.container, /^[0-9a-f]{64}$/)
    assert.ok(p.node && p.nodeId, 'each task names its node')
  }
  assert.match(run.cpu.source, /^cgroup-v[12]$/)
  assert.equal(run.cpu.containers.length, tasks, 'one CPU row per app container')
  for (const c of run.cpu.containers) {
    assert.ok(run.placement.some(p => p.container === c.id), 'CPU rows are the app containers')
    assert.ok(c.total > 0, `container ${c.id.slice(0, 12)} used CPU (${c.total})`)
  }
  // each app container's network, as its namespace counts it: the responses it sent
  assert.equal(run.diagnosis.network.length, tasks, JSON.stringify(run.diagnosis.network))
  for (const n of run.diagnosis.network) assert.ok(n.txBytesPerSec > 1000 && n.rxBytesPerSec > 0, JSON.stringify(n))
  // the RC's samples of each app container (timeline.json): its memory and its network namespace's byte counters, read
  // by an RC without the engine's socket
  const last = JSON.parse(readFileSync(join(dir, 'timeline.json'), 'utf8')).samples.at(-1)
  for (const c of run.cpu.containers) {
    const x = last.containers[c.id]
    assert.ok(x?.memoryBytes > 0 && x.net?.rx > 0 && x.net.tx > 0, `container ${c.id.slice(0, 12)}: ${JSON.stringify(x)}`)
  }
  // the load enters the published port at docker_gwbridge's address, where the kernel's NAT carries it: Docker's
  // userland proxy (docker-proxy, a measured role) relays none of it (on loopback it took 0.21 cores at 3.9k req/s),
  // nor the executor's requests to the RC, which go the same way (measured here: 0.000 cores)
  assert.notEqual(new URL(run.load.url).hostname, '127.0.0.1', run.load.url)
  assert.ok((run.diagnosis.roles['docker-proxy'] ?? 0) < 0.01, JSON.stringify(run.diagnosis.roles))
}

for (const [strategy, instances, tasks] of /** @type {Array<[string, number, number]>} */ ([['up', 2, 1], ['cm', 2, 1], ['pm2', 2, 1], ['hs', 2, 2]])) {
  test(`swarm: run --strategy ${strategy} --instances ${instances} measures through the stack and removes it`, { skip, timeout: 180_000 }, async () => {
    const out = tmp()
    const r = await runCli('executor',
      ['run', '--strategy', strategy, '--instances', String(instances), '--benchmark', 'baseline', '--out', out, ...short, '--quiet'])
    assert.equal(r.code, 0, r.stderr)
    const { run, dir } = assertCompleteRun(out, { strategy, instances })
    assertSwarmRun(run, { tasks }, dir)
    await assertGone(run)
  })
}

test('swarm: a container at a tiny CPU quota: the RC counts its throttled periods, and the run warns of it', { skip, timeout: 180_000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--benchmark', 'cpu', '--param', 'n=1000003', '--out', out, ...short,
    '--cpus-per-instance', '0.1', '--duration', '4'])
  assert.equal(r.code, 0, r.stderr)
  const { run } = assertCompleteRun(out, { strategy: 'up', instances: 1 })
  assert.ok(run.cpu.throttling.share > 0.5, JSON.stringify(run.cpu.throttling))
  assert.ok(run.cpu.containers[0].throttling.throttledPeriods > 10, JSON.stringify(run.cpu.containers[0].throttling))
  assert.ok(run.validity.flags.some(f => f.name === 'throttled'), JSON.stringify(run.validity))
  assert.equal(run.diagnosis.bottleneck.kind, 'cpu-quota', JSON.stringify(run.diagnosis.bottleneck))
  await assertGone(run)
})

test('swarm: a custom app is built into the image and measured under its own name, within its memory limit', { skip, timeout: 180_000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--app', join(ROOT, 'test/fixtures/apps/handler.js'),
    '--memory-per-instance', '96M', '--out', out, ...short, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const run = JSON.parse(r.stdout)
  assert.equal(run.config.benchmark, 'handler')
  const compose = readFileSync(join(run.dir, 'docker-compose.yml'), 'utf8')
  assert.match(compose, new RegExp(`memory: '?${2 * 96 * 1024 * 1024}'?`), 'the replica is limited to instances x memory-per-instance')
  assert.equal(run.summary.errors, 0)
  assert.ok(run.summary.requests > 20)
  await assertGone(run)
})

test('swarm: a replica killed mid-run is restarted by Swarm and the run completes with its errors counted', { skip, timeout: 180_000 }, async () => {
  const out = tmp()
  let killed = null
  let restarted = false
  let armed = false
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--benchmark', 'baseline', '--out', out, ...short, '--duration', '8'], {
    onStderr (text) {
      if (armed || !/load: /.test(text)) return
      armed = true
      ;(async () => {
        await sleep(1500)
        const [victim] = await docker.listContainers({ filters: { label: [RUN_LABEL], name: ['_app.'] } })
        killed = victim.Id
        await docker.getContainer(victim.Id).kill()
        const service = victim.Labels['com.docker.swarm.service.name']
        for (let i = 0; i < 50 && !restarted; i++) {
          const tasks = await docker.listTasks({ filters: { service: [service], 'desired-state': ['running'] } })
          restarted = tasks.some(t => t.Status?.State === 'running' && t.Status?.ContainerStatus?.ContainerID !== killed) && tasks.length === 2 &&
            tasks.every(t => t.Status?.ContainerStatus?.ContainerID !== killed)
          await sleep(100)
        }
      })().catch(err => { killed = `error: ${err.message}` })
    }
  })
  assert.equal(r.code, 0, r.stderr)
  assert.match(String(killed), /^[0-9a-f]{64}$/, 'a replica was killed')
  assert.ok(restarted, 'Swarm started a new task for the killed replica during the run')
  const { dir, run } = readRun(out)
  assert.equal(run.status, 'done')
  const rows = jtlRows(join(dir, 'samples.jtl'))
  assert.equal(run.summary.requests, rows.length)
  assert.equal(run.summary.errors, rows.filter(x => x.success !== 'true').length, 'errors during the loss are counted')
  await assertGone(run)
})

test('swarm: Ctrl-C during load exits 1, marks the run interrupted and leaves no service, container or network', { skip, timeout: 180_000 }, async () => {
  const out = tmp()
  let armed = false
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--benchmark', 'baseline', '--out', out, ...short, '--duration', '60'], {
    onStderr (text, child) {
      if (armed || !/load: /.test(text)) return
      armed = true
      setTimeout(() => child.kill('SIGINT'), 1500)
    }
  })
  assert.equal(r.code, 1, r.stderr)
  const { run } = readRun(out)
  assert.equal(run.status, 'interrupted')
  await assertGone(run)
  const runs = await docker.listServices({ filters: { label: [`${RUN_LABEL}=${run.id}`] } })
  assert.equal(runs.length, 0)
})

test('swarm: a CPU limit no node can hold fails fast, naming the limit, and leaves nothing', { skip, timeout: 120_000 }, async () => {
  const out = tmp()
  const started = Date.now()
  const r = await runCli('executor',
    ['run', '--strategy', 'cm', '--instances', '4', '--benchmark', 'baseline', '--out', out, ...short, '--cpus-per-instance', '1'])
  assert.equal(r.code, 1, r.stderr)
  assert.match(r.stderr, /NS_ERR_DEPLOY[\s\S]*CPU/i)
  assert.ok(Date.now() - started < 60_000, 'fails fast')
  const { run } = readRun(out)
  assert.equal(run.status, 'failed')
  assert.equal((await docker.listServices({ filters: { label: [`${RUN_LABEL}=${run.id}`] } })).length, 0)
})

test('executor up starts the control plane once and reuses it; executor down removes it', { skip, timeout: 120_000 }, async () => {
  const first = await runCli('executor', ['up', '--json'])
  assert.equal(first.code, 0, first.stderr)
  const plane = JSON.parse(first.stdout)
  assert.equal(plane.rcs.length, 1)
  // this node's RC at docker_gwbridge's gateway, where the kernel's NAT carries the executor's requests, as it does the
  // load's: not through loopback, where Docker's userland proxy would relay them
  const gateway = await localAddress(docker)
  assert.notEqual(gateway, '127.0.0.1', 'docker_gwbridge has an IPv4 gateway here')
  assert.equal(plane.rcs[0].url, `http://${gateway}:9100`)
  const second = await runCli('executor', ['up', '--json'])
  assert.equal(second.code, 0, second.stderr)
  assert.equal(JSON.parse(second.stdout).reused, true)
  const down = await runCli('executor', ['down', '--json'])
  assert.equal(down.code, 0, down.stderr)
  assert.equal((await docker.listServices({ filters: { label: ['com.docker.stack.namespace=nodescale'] } })).length, 0)
})
