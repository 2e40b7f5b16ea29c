// Every strategy's stack on the real swarm: it deploys and answers, hs spreads over its replicas, failures are fast and
// say why, and nothing is left behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import { renderStack, stackNameFor } from '../executor/docker/stack-render.js'
import { deployStack, removeStack, removeLeftovers, stackResources, ingressWorks, localAddress } from '../executor/docker/stack-deploy.js'
import { probe } from '../lib/net.js'
import { buildImage } from '../executor/docker/image-build.js'
import { deployControlPlane, removeControlPlane } from '../executor/docker/control-plane.js'
import { freePort } from '../lib/net.js'
import { swarmEngine, testImages, testRunId } from './swarm-helper.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'

const { docker, skip } = await swarmEngine()
const images = skip ? null : await testImages(docker)
// Swarm state survives daemon restarts: start from a swarm without stacks of dead runs.
if (!skip) await removeLeftovers(docker)

/** Renders and deploys a stack of this test; it is removed when the test ends, whatever happens. */
async function deploy (t, opts, deployOpts = {}) {
  const doc = renderStack({
    instances: 2,
    cpusPerInstance: 0.25,
    image: images.register.tag,
    lbImage: images.haproxy.tag,
    benchmark: 'baseline',
    lb: 'haproxy',
    runId: testRunId(opts.strategy),
    ...opts
  })
  const stack = doc['x-nodescale'].stack
  t.after(() => removeStack(docker, stack))
  return { doc, stack, result: await deployStack(docker, doc, { readyTimeoutMs: 60_000, ...deployOpts }) }
}

async function assertGone (stack) {
  const left = await stackResources(docker, stack)
  assert.deepEqual(
    { services: left.services.length, containers: left.containers.length, networks: left.networks.length, configs: left.configs.length },
    { services: 0, containers: 0, networks: 0, configs: 0 },
    `left of ${stack}: ${JSON.stringify(left).slice(0, 400)}`
  )
}

test('up: one replica running register/serve.js answers, with CPU limit instances x cpus-per-instance', { skip }, async (t) => {
  const { result, stack } = await deploy(t, { strategy: 'up', instances: 2 })
  assert.equal(result.stack, stack)
  // this node's published port at docker_gwbridge's gateway (the kernel's NAT, not docker-proxy's relay on loopback)
  const here = await localAddress(docker)
  assert.match(here, /^\d+\.\d+\.\d+\.\d+$/)
  assert.notEqual(here, '127.0.0.1', 'a swarm node has docker_gwbridge')
  assert.equal(result.url, `http://${here}:${new URL(result.url).port}`)
  assert.deepEqual(result.instances, ['r1'])
  const res = await probe(`${result.url}/healthz`)
  assert.equal(res.status, 200)
  assert.equal(JSON.parse(res.body).benchmark, 'baseline')
  const [svc] = result.services
  const spec = (await docker.getService(svc.id).inspect()).Spec
  assert.equal(spec.TaskTemplate.Resources.Limits.NanoCPUs, 500_000_000)
  assert.equal(spec.Labels['com.docker.stack.namespace'], stack)
  assert.deepEqual(spec.TaskTemplate.ContainerSpec.Args, ['register/serve.js'])
  assert.equal(result.tasks.length, 1)
  const c = await docker.getContainer(result.tasks[0].containerId).inspect()
  assert.equal(c.State.Running, true)
  assert.equal(c.Config.Labels['io.nodescale.run'], spec.Labels['io.nodescale.run'])
  assert.equal(c.HostConfig.NanoCpus, 500_000_000)
})

test('cm: the primary forks N workers and all N answer', { skip }, async (t) => {
  const { result } = await deploy(t, { strategy: 'cm', instances: 3 })
  assert.deepEqual(result.instances, ['r1-w1', 'r1-w2', 'r1-w3'])
  assert.equal(result.services.length, 1)
})

test('pm2: pm2-runtime -i N runs N instances and all N answer', { skip }, async (t) => {
  const { result } = await deploy(t, { strategy: 'pm2', instances: 2 })
  assert.equal(result.instances.length, 2)
  assert.ok(result.instances.every(i => /^r1-pm2-\d$/.test(i)), result.instances.join(','))
})

test('hs behind HAProxy: N replicas, requests spread over all of them; removeStack leaves nothing (through the API)', { skip }, async (t) => {
  const { result, stack } = await deploy(t, { strategy: 'hs', instances: 3 })
  assert.deepEqual(result.instances, ['r1', 'r2', 'r3'])
  assert.deepEqual(result.services.map(s => s.name).sort(), [`${stack}_app`, `${stack}_lb`])
  assert.equal(result.tasks.filter(x => x.service === `${stack}_app`).length, 3)
  const counts = {}
  for (let i = 0; i < 30; i++) {
    const res = await probe(`${result.url}/healthz`)
    assert.equal(res.status, 200)
    counts[res.instance] = (counts[res.instance] ?? 0) + 1
  }
  assert.deepEqual(Object.keys(counts).sort(), ['r1', 'r2', 'r3'], JSON.stringify(counts))
  assert.ok(Object.values(counts).every(n => n >= 5), `uneven: ${JSON.stringify(counts)}`)

  const removed = await removeStack(docker, stack)
  assert.deepEqual({ services: removed.services, networks: removed.networks, configs: removed.configs }, { services: 2, networks: 1, configs: 1 })
  await assertGone(stack)
  const tasks = await docker.listTasks()
  assert.deepEqual(tasks.filter(x => result.services.some(s => s.id === x.ServiceID)), [])
  for (const x of result.tasks) {
    await assert.rejects(docker.getContainer(x.containerId).inspect(), (/** @type {any} */ err) => err.statusCode === 404)
  }
})

test('an image no node has fails fast with the task error, and the stack is removed', { skip }, async (t) => {
  const runId = testRunId('bad-image')
  const started = Date.now()
  await assert.rejects(deploy(t, { strategy: 'up', image: 'nodescale/no-such-image:0', runId }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_DEPLOY')
    assert.match(err.message, /rejected \(No such image: nodescale\/no-such-image:0\)/)
    return true
  })
  assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`)
  await assertGone(stackNameFor(runId))
})

test('a CPU limit no node can hold is refused before anything is created', { skip }, async (t) => {
  const runId = testRunId('up-big')
  await assert.rejects(deploy(t, { strategy: 'up', instances: 64, cpusPerInstance: 1, runId }), /reserves 64 CPUs per task, and the largest ready node has \d+/)
  await assertGone(stackNameFor(runId))
})

test('replicas that do not all fit fail fast with the scheduler\'s error, and the stack is removed', { skip }, async (t) => {
  const nodes = await docker.listNodes()
  const cpus = Math.max(...nodes.map(n => n.Description.Resources.NanoCPUs)) / 1e9 * nodes.length
  const runId = testRunId('hs-big')
  const started = Date.now()
  // Each replica fits a node; all of them together do not.
  await assert.rejects(deploy(t, { strategy: 'hs', instances: Math.floor(cpus / 0.9) + 1, cpusPerInstance: 0.9, runId }, { pendingGraceMs: 2000 }),
    (/** @type {any} */ err) => {
      assert.equal(err.code, 'NS_ERR_DEPLOY')
      assert.match(err.message, /no suitable node \(insufficient resources/)
      return true
    })
  assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`)
  await assertGone(stackNameFor(runId))
})

test('an abort while waiting removes the stack and says the deploy was interrupted', { skip }, async (t) => {
  const ac = new AbortController()
  const runId = testRunId('abort')
  setTimeout(() => ac.abort(), 300)
  await assert.rejects(deploy(t, { strategy: 'hs', instances: 2, runId }, { signal: ac.signal }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_INTERRUPTED')
    return true
  })
  await assertGone(stackNameFor(runId))
})

test('removeLeftovers removes stacks of runs whose process is gone, and keeps live ones', { skip }, async (t) => {
  const dead = spawnSync(process.execPath, ['-e', '']).pid
  const make = async (what, owner) => {
    const runId = testRunId(what)
    const stack = stackNameFor(runId)
    const labels = { 'com.docker.stack.namespace': stack, 'io.nodescale.run': runId, 'io.nodescale.owner': owner }
    t.after(() => removeStack(docker, stack))
    await docker.createNetwork({ Name: `${stack}_bench`, Driver: 'overlay', Labels: labels })
    await docker.createService({
      Name: `${stack}_app`,
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: images.register.tag, Command: ['node'], Args: ['register/serve.js'], Env: ['NODESCALE_BENCHMARK=baseline', 'PORT=8080'], Labels: labels
        },
        Networks: [{ Target: `${stack}_bench` }]
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' }
    })
    return stack
  }
  const old = await make('old', `${hostname()}:${dead}`)
  const live = await make('live', `${hostname()}:${process.pid}`)
  // a run killed between removing its services and its token secret: the secret is all that is left of it
  const orphan = stackNameFor(testRunId('orphan'))
  const secret = await docker.createSecret({
    Name: `${orphan}_token_x`,
    Labels: { 'com.docker.stack.namespace': orphan, 'io.nodescale.run': orphan, 'io.nodescale.owner': `${hostname()}:${dead}` },
    Data: Buffer.from('t').toString('base64')
  })
  t.after(() => docker.getSecret(secret.id).remove().catch(() => {}))
  const removed = await removeLeftovers(docker)
  assert.ok(removed.includes(old), `removed: ${removed}`)
  assert.ok(removed.includes(orphan), `removed: ${removed}`)
  assert.ok(!removed.includes(live))
  await assertGone(old)
  assert.deepEqual(await docker.listSecrets({ filters: { label: [`com.docker.stack.namespace=${orphan}`] } }), [])
  assert.equal((await stackResources(docker, live)).services.length, 1)
})

test('ingressWorks gives the same answer twice, the second from memory', { skip }, async () => {
  const first = await ingressWorks(docker, { image: images.register.tag })
  assert.equal(typeof first, 'boolean')
  const started = Date.now()
  assert.equal(await ingressWorks(docker), first)
  assert.ok(Date.now() - started < 50)
  assert.deepEqual((await docker.listServices({ filters: { label: [`com.docker.stack.namespace=ns-ingress-probe-${process.pid}`] } })).length, 0)
})

test('the control plane runs the RC on every node behind a fresh token, unprivileged, and goes away with its secret', { skip }, async (t) => {
  const rc = await buildImage(docker, { kind: 'rc', base: 'host' })
  const stack = stackNameFor(testRunId('cp'))
  t.after(() => removeControlPlane(docker, { stack }))
  const cp = await deployControlPlane(docker, { image: rc.tag, stack, port: await freePort() })
  const nodes = (await docker.listNodes()).filter(n => n.Status.State === 'ready')
  assert.equal(cp.rcs.length, nodes.length)
  assert.match(cp.token, /^[0-9a-f]{48}$/)
  const [one] = cp.rcs
  const path = `/snapshot?containers=${one.containerId}`
  const get = (headers) => fetch(`${one.url}${path}`, { headers, signal: AbortSignal.timeout(5000) })
  assert.equal((await get({})).status, 401)
  const receiver = (await (await fetch(`${one.url}/healthz`)).json()).id
  assert.equal((await get({ [AUTH_HEADER]: signRequest('not-the-token-at-all', { receiver, method: 'GET', path }) })).status, 401)
  const signed = { [AUTH_HEADER]: signRequest(cp.token, { receiver, method: 'GET', path }) }
  const ok = await get(signed)
  assert.equal(ok.status, 200)
  assert.equal((await get(signed)).status, 401, 'a replay of what crossed the network is refused')
  const snap = await ok.json()
  const own = snap.containers[one.containerId]
  assert.ok(own.usagePercpuNs?.length > 0 || own.usageUsec > 0, JSON.stringify(snap).slice(0, 300))
  assert.ok(own.memoryBytes > 0, JSON.stringify(own))
  // its own container's pid, found in its own pid namespace without the engine (the host's /proc, cgroup paths): this
  // request came in over that container's network
  assert.ok(own.net?.rx > 0 && own.net.tx > 0, JSON.stringify(own.net))
  // unprivileged: no engine socket, no capability, not root, nothing it can write but its secret's tmpfs
  const spec = (await docker.getService(cp.service).inspect()).Spec
  assert.ok('Global' in spec.Mode)
  const cs = spec.TaskTemplate.ContainerSpec
  assert.deepEqual(cs.Mounts.map(m => [m.Target, m.ReadOnly]).sort(), [['/host/proc', true], ['/host/sys/fs/cgroup', true]])
  assert.deepEqual(cs.Mounts.filter(m => /docker\.sock|containerd\.sock/.test(m.Source)), [])
  assert.deepEqual([cs.User, cs.ReadOnly, cs.CapabilityDrop, cs.CapabilityAdd], ['64100:64100', true, ['ALL'], undefined])
  assert.deepEqual(cs.Secrets.map(x => x.File), [{ Name: 'nodescale_rc_token', UID: '64100', GID: '64100', Mode: 0o400 }])
  const c = await docker.getContainer(one.containerId).inspect()
  assert.deepEqual([c.Config.User, c.HostConfig.ReadonlyRootfs, c.HostConfig.CapAdd ?? null, c.HostConfig.CapDrop, c.HostConfig.Privileged],
    ['64100:64100', true, null, ['ALL'], false])
  assert.deepEqual(c.Mounts.filter(m => /\.sock$/.test(m.Source ?? '')), [])
  // the process itself, as the host's kernel sees it: uid 64100, no effective capability
  const status = spawnSync('cat', [`/proc/${c.State.Pid}/status`], { encoding: 'utf8' }).stdout
  assert.match(status, /^Uid:\s+64100\s+64100\s+64100\s+64100$/m)
  assert.match(status, /^CapEff:\s+0{16}$/m)

  await removeControlPlane(docker, { stack })
  await assertGone(stack)
  assert.equal((await docker.listSecrets({ filters: { label: [`com.docker.stack.namespace=${stack}`] } })).length, 0)
})
