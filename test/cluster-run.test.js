// The local multi-node swarm on the real engine: cluster up 3 (Ready, distinct labels and hostnames), MIMN runs placed
// on the workers (spread, pack, a constraint) with per-node CPU in run.json, shrink, and cluster down leaving nothing
// behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import Docker from 'dockerode'
import { stackResources } from '../executor/docker/stack-deploy.js'
import { checkHost } from '../executor/local-swarm/host.js'
import { probe } from '../lib/net.js'
import { cacheDir } from '../lib/paths.js'
import { swarmEngine } from './swarm-helper.js'
import { runCli, readRun, assertCompleteRun } from './helpers/cli.js'
import { cluster, enginePidOf } from './helpers/cluster.js'

const engine = await swarmEngine()
let skip = engine.skip
if (!skip) {
  try { checkHost() } catch (err) { skip = `the local cluster cannot run here: ${err.message}` }
  if (skip && process.env.CI === 'true') throw new Error(`${skip} (CI=true: the cluster suite must run)`)
}
const docker = /** @type {import('dockerode')} */ (engine.docker)

const netns = () => execFileSync('ip', ['-j', 'netns', 'list'], { encoding: 'utf8' }).trim()
const ourNetns = () => (netns() ? JSON.parse(netns()) : []).map(n => n.name).filter(n => n.startsWith('nodescale-'))
const linkExists = (name) => { try { execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' }); return true } catch { return false } }
const run = (out, args) => runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--benchmark', 'baseline', '--cpus-per-instance', '0.25',
  '--duration', '2', '--warmup', '1', '--concurrency', '4', '--out', out, '--quiet', ...args], { timeoutMs: 180_000 })
const appNodes = (r) => r.placement.filter(p => p.service.endsWith('_app')).map(p => p.nodeLabel).sort()

const workerEngine = (i) => new Docker({ socketPath: `/var/run/nodescale-cluster/nodescale-w${i}.sock` })

/** Removes from worker i's engine every image with a tag or digest reference matching re (any registry prefix). */
async function dropImages (i, re) {
  const engine = workerEngine(i)
  for (const img of await engine.listImages()) {
    if ([...(img.RepoTags ?? []), ...(img.RepoDigests ?? [])].some(t => re.test(t))) await engine.getImage(img.Id).remove({ force: true })
  }
}

/** Takes the builtin registry out of the manager engine's insecure registries (daemon.json, reloaded), as before up. */
async function untrustRegistry (file = '/etc/docker/daemon.json') {
  if (!existsSync(file)) return
  const conf = JSON.parse(readFileSync(file, 'utf8'))
  conf['insecure-registries'] = (conf['insecure-registries'] ?? []).filter(r => r !== '10.99.0.1:5000')
  writeFileSync(file, JSON.stringify(conf, null, 2))
  process.kill(Number(readFileSync('/var/run/docker.pid', 'utf8')), 'SIGHUP')
  for (let i = 0; i < 50 && (await docker.info()).RegistryConfig.IndexConfigs['10.99.0.1:5000']; i++) await sleep(100)
}

/**
 * An hs x4 run on both workers (2 tasks each) in which `inject` takes nodescale-w2 away 3 s after the load starts.
 * Checks what every lost-node run must show and returns run.json.
 */
async function faultRun (t, what, inject) {
  const out = mkdtempSync(join(tmpdir(), 'ns-cluster-fault-'))
  // long enough that a request in flight at the loss reaches the driver's 10 s timeout before the run ends, and is
  // counted, and that the manager marks the node down (~15 s after the fault, measured here) with time left to replace
  // its tasks
  const duration = 24
  let loadAt = 0
  let injected = null
  const r = await runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--benchmark', 'baseline', '--cpus-per-instance', '0.25',
    '--instances', '4', '--nodes', '2', '--duration', String(duration), '--warmup', '1', '--concurrency', '4', '--out', out], {
    timeoutMs: 240_000,
    onStderr (text) {
      if (loadAt || !/^load: /m.test(text)) return
      loadAt = Date.now()
      setTimeout(() => { try { inject(); injected = Date.now() } catch (err) { injected = err } }, 3000)
    }
  })
  const endedAt = Date.now()
  assert.equal(r.code, 0, r.stderr)
  assert.ok(typeof injected === 'number', `the fault was injected: ${injected}`)
  const { run: json } = readRun(out)
  t.diagnostic(`${what}: load ${((endedAt - loadAt) / 1000).toFixed(1)} s to exit; ${JSON.stringify({
    nodes: json.degraded?.nodes.map(n => [n.label, n.lostAfterMs, n.why]),
    during: json.degraded?.duringLoss,
    before: json.degraded?.beforeLoss,
    rescheduled: json.degraded?.rescheduled?.length
  })}`)
  assert.equal(json.status, 'degraded', JSON.stringify(json.error))
  assert.match(r.stdout, /degraded: node nodescale-w2 lost/)
  // bounded: warm-up + duration, the RC stop of the lost node (5 s), the summary and the teardown, which does not wait
  // for it
  assert.ok(endedAt - loadAt < (1 + duration + 30) * 1000, `ended ${endedAt - loadAt} ms after the load began`)
  const [lost] = json.degraded.nodes
  assert.equal(json.degraded.nodes.length, 1)
  assert.equal(lost.label, 'nodescale-w2')
  assert.equal(lost.tasksLost, 2)
  const lostAt = Date.parse(lost.lostAt)
  assert.ok(lostAt >= injected - 1500 && lostAt <= injected + 20_000, `lost at ${lostAt}, injected at ${injected}`)
  // the requests in flight to the lost node's replicas fail, and only then: every error of the run is in the loss
  // window
  assert.ok(json.degraded.errorsDuringLoss >= 1, JSON.stringify(json.degraded.duringLoss))
  assert.equal(json.degraded.beforeLoss.errors, 0)
  assert.ok(json.degraded.duringLoss.requests > 0, 'the run went on serving from the other worker')
  assert.ok(Array.isArray(json.degraded.rescheduled))
  // once the manager has marked the node down (a stopped engine: when its containers have stopped; a cut link: ~15 s of
  // missed heartbeats), Swarm replaces the node's tasks at once on the worker left; they start after the restart delay
  // (5 s)
  const downBeforeEnd = lost.swarmDownAt ? json.load.steadyEnd - Date.parse(lost.swarmDownAt) : null
  t.diagnostic(`${what}: the manager marked the node down ` +
    `${downBeforeEnd === null ? 'after the load' : `${(downBeforeEnd / 1000).toFixed(1)} s before its end`}; after the load: ` +
    `${JSON.stringify(json.degraded.placementAfter.filter(p => p.service.endsWith('_app')).map(p => [p.nodeLabel, p.state]))}`)
  assert.ok(downBeforeEnd !== null, 'the manager marked the node down during the load')
  if (downBeforeEnd > 1000) {
    assert.ok(json.degraded.placementAfter.filter(p => p.service.endsWith('_app') && p.nodeLabel).every(p => p.nodeLabel === 'nodescale-w1'),
      'Swarm moved the tasks to the worker left')
    assert.ok(json.degraded.rescheduled.length >= 1, 'the replacements are listed, started or not')
  }
  const w2cpu = json.cpu.nodes.find(n => n.label === 'nodescale-w2')
  if (w2cpu) assert.ok(w2cpu.partial && w2cpu.samples < json.cpu.samples, 'the lost node keeps the CPU samples taken before the loss')
  await assertStackGone(json)
  return json
}

async function assertStackGone (r) {
  const stack = r.placement[0].service.replace(/_(app|lb)$/, '')
  const left = await stackResources(docker, stack)
  assert.deepEqual([left.services.length, left.containers.length, left.networks.length], [0, 0, 0], `left of ${stack}`)
}

test('cluster up 3, runs placed on the workers, shrink, cluster down leaves nothing and single-node runs work again', { skip, timeout: 600_000 }, async (t) => {
  let down = null
  t.after(async () => { if (!down) await cluster(['down']) })

  await t.test('cluster up --nodes 3: three Ready nodes with distinct labels and hostnames; a second up changes nothing', async () => {
    // the manager's engine as on a fresh machine: it does not trust the builtin registry's plain HTTP; up makes it
    await untrustRegistry()
    const up = await cluster(['up', '--nodes', '3', '--json'])
    assert.equal(up.code, 0, up.stderr)
    t.diagnostic(`cluster up --nodes 3: ${up.ms} ms`)
    assert.match(up.stderr, /the manager's engine now trusts the control plane's registry 10\.99\.0\.1:5000 over plain HTTP/)
    assert.equal((await docker.info()).RegistryConfig.IndexConfigs['10.99.0.1:5000']?.Secure, false)
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
    // not assertCompleteRun: cpu.cores spans every node's cores here (rc-client numbers them node after node), not this
    // host's
    const { run: json } = readRun(out)
    assert.equal(json.status, 'done', JSON.stringify(json.error))
    assert.equal(json.environment.swarmNodes, 3)
    assert.equal(json.environment.imagesVia, 'load', 'a local cluster without --registry: images loaded through the API')
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

  let registerTag = null
  await t.test('--registry builtin: workers pull the images by digest from the control plane\'s registry, with credentials nobody sees; ' +
    'a tag pushed over later is not what runs; executor down removes it', async () => {
    for (const w of [1, 2]) await dropImages(w, /nodescale\/register[:@]/)
    const out = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const r = await runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--benchmark', 'baseline', '--cpus-per-instance', '0.25',
      '--duration', '2', '--warmup', '1', '--concurrency', '4', '--out', out, '--instances', '2', '--nodes', '2',
      '--registry', 'builtin'], { timeoutMs: 180_000 })
    assert.equal(r.code, 0, r.stderr)
    const { run: json } = readRun(out)
    assert.equal(json.status, 'done', JSON.stringify(json.error))
    assert.match(json.environment.imagesVia, /^builtin 10\.99\.0\.1:5000$/)
    assert.deepEqual(json.environment.imagesCopied, [], 'nothing loaded through the API')
    assert.match(json.environment.imageRef, /^10\.99\.0\.1:5000\/nodescale\/register@sha256:[0-9a-f]{64}$/, 'deployed by digest')
    registerTag = json.environment.imageTag
    const rc = json.environment.images.find(i => i.tag.startsWith('nodescale/rc:'))
    assert.match(rc.ref, /^10\.99\.0\.1:5000\/nodescale\/rc@sha256:[0-9a-f]{64}$/)
    assert.equal(rc.ref.split('@')[1], rc.digest)
    assert.deepEqual(appNodes(json), ['nodescale-w1', 'nodescale-w2'])
    for (const w of [1, 2]) {
      const refs = (await workerEngine(w).listImages()).flatMap(i => i.RepoDigests ?? [])
      assert.ok(refs.includes(json.environment.imageRef), `nodescale-w${w} pulled ${json.environment.imageRef}: ${refs.join(', ')}`)
    }

    // without credentials: 401, to read and to push; with them (the owner-only cache file), the catalog
    const creds = JSON.parse(readFileSync(join(cacheDir(), 'registry.json'), 'utf8'))
    assert.equal((statSync(join(cacheDir(), 'registry.json')).mode & 0o777).toString(8), '600')
    assert.equal((await probe('http://127.0.0.1:5000/v2/_catalog')).status, 401)
    assert.equal((await fetch('http://127.0.0.1:5000/v2/nodescale/register/blobs/uploads/', { method: 'POST' })).status, 401,
      'an unauthenticated push is refused')
    const basic = { authorization: `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}` }
    const catalog = await (await fetch('http://127.0.0.1:5000/v2/_catalog', { headers: basic })).json()
    assert.ok(catalog.repositories.includes('nodescale/register'), JSON.stringify(catalog))
    // the password is nowhere a user or a log sees: not on the terminal, not in the run's files, not in the services
    const services = JSON.stringify(await Promise.all((await docker.listServices()).map(x => docker.getService(x.ID).inspect())))
    const files = readdirSync(out, { recursive: true }).map(f => join(out, String(f))).filter(f => statSync(f).isFile())
      .map(f => readFileSync(f).toString('latin1')).join('\n')
    const token = JSON.parse(readFileSync(join(cacheDir(), 'control-plane.json'), 'utf8')).token
    for (const [where, text] of [['stdout', r.stdout], ['stderr', r.stderr], ['the run folder', files], ['docker service inspect', services]]) {
      assert.ok(!text.includes(creds.password), `the registry password appears in ${where}`)
      assert.ok(!text.includes(token), `the RC token appears in ${where}`)
    }

    // someone with the credentials pushes another image under the RC's tag; the RC that Swarm starts again on a worker
    // still runs the digest the run recorded
    const other = (await docker.listImages()).find(i => (i.RepoTags ?? []).some(x => x.startsWith('nodescale/registry:')))
    const version = rc.tag.split(':')[1]
    await docker.getImage(other.Id).tag({ repo: '10.99.0.1:5000/nodescale/rc', tag: version })
    const pushed = await docker.getImage(`10.99.0.1:5000/nodescale/rc:${version}`)
      .push({ authconfig: { username: creds.user, password: creds.password, serveraddress: '10.99.0.1:5000' } })
    await new Promise((resolve, reject) => { pushed.on('end', resolve); pushed.on('error', reject); pushed.resume() })
    const w1 = (await docker.listNodes()).find(n => n.Description.Hostname === 'nodescale-w1').ID
    const before = (await docker.listTasks({ filters: { service: ['nodescale_rc'], node: [w1], 'desired-state': ['running'] } }))[0]
    await workerEngine(1).getContainer(before.Status.ContainerStatus.ContainerID).remove({ force: true })
    let again = null
    for (let i = 0; i < 100 && !again; i++) {
      await sleep(200)
      again = (await docker.listTasks({ filters: { service: ['nodescale_rc'], node: [w1] } }))
        .find(x => x.ID !== before.ID && x.Status.State === 'running') ?? null
    }
    assert.ok(again, 'Swarm started the RC again on nodescale-w1')
    assert.equal(again.Spec.ContainerSpec.Image, rc.ref, 'the new task is deployed by the recorded digest')
    const ran = await workerEngine(1).getContainer(again.Status.ContainerStatus.ContainerID).inspect()
    const runs = await workerEngine(1).getImage(ran.Image).inspect()
    assert.ok(runs.RepoDigests.includes(rc.ref), `it runs ${runs.RepoDigests.join(', ')}, the recorded image`)
    assert.notEqual(ran.Image, other.Id, 'not the image pushed over the tag')

    const down = await runCli('executor', ['down'], { timeoutMs: 120_000 })
    assert.equal(down.code, 0, down.stderr)
    assert.deepEqual((await docker.listServices()).map(x => x.Spec.Name).filter(n => n.startsWith('nodescale')), [], 'control plane and registry removed')
    assert.equal(existsSync(join(cacheDir(), 'registry.json')), false, 'its credentials forgotten')
    assert.deepEqual((await docker.listSecrets({ filters: { label: ['com.docker.stack.namespace=nodescale-registry'] } })).length, 0, 'its secrets removed')
  })

  await t.test('a worker that lacks the image (--registry none) fails the deploy at once, naming the node and the fix', async () => {
    // nodescale-w2 has the image under its local name (as after a docker load), nodescale-w1 has none
    for (const img of await workerEngine(2).listImages()) {
      if ((img.RepoDigests ?? []).some(x => /^10\.99\.0\.1:5000\/nodescale\/register@/.test(x))) {
        await workerEngine(2).getImage(img.Id).tag({ repo: 'nodescale/register', tag: registerTag.split(':')[1] })
      }
    }
    await dropImages(1, /nodescale\/register[:@]/)
    const out = mkdtempSync(join(tmpdir(), 'ns-cluster-'))
    const started = Date.now()
    const r = await run(out, ['--instances', '2', '--nodes', '2', '--registry', 'none'])
    assert.equal(r.code, 1, r.stderr)
    assert.ok(Date.now() - started < 60_000, `failed after ${Date.now() - started} ms`)
    assert.match(r.stderr, /on node nodescale-w1: rejected \(No such image: nodescale\/register:/)
    assert.match(r.stderr, /fix: a node lacks the image: run with --registry builtin/)
    const { run: json } = readRun(out)
    assert.equal(json.status, 'failed')
    const left = (await docker.listServices()).filter(x => x.Spec.Name.startsWith('ns-'))
    assert.deepEqual(left.map(x => x.Spec.Name), [], 'the failed stack was removed')
  })

  await t.test('--nodes beyond the ready workers exits 2 naming the flag, before anything is deployed', async () => {
    const r = await run(mkdtempSync(join(tmpdir(), 'ns-cluster-')), ['--instances', '2', '--nodes', '3'])
    assert.equal(r.code, 2, r.stderr)
    assert.match(r.stderr, /--nodes: 3 worker nodes asked, and the swarm has 2 ready workers \(nodescale-w1, nodescale-w2\)/)
  })

  await t.test('a worker stopped mid-run: the run ends in time, marked degraded with the node, the errors counted, nothing left', async () => {
    try {
      const json = await faultRun(t, 'engine stopped', () => process.kill(enginePidOf('nodescale-w2'), 'SIGTERM'))
      assert.match(json.degraded.nodes[0].why, /RC does not answer|marks it down/)
    } finally {
      const up = await cluster(['up', '--nodes', '3', '--json'])
      assert.equal(up.code, 0, up.stderr)
    }
  })

  await t.test('a worker cut off mid-run (its veth down): the same; it is back once its link is up again', async () => {
    let cut = false
    try {
      const json = await faultRun(t, 'veth down', () => { execFileSync('ip', ['-n', 'nodescale-lan', 'link', 'set', 'w2', 'down']); cut = true })
      assert.match(json.degraded.nodes[0].why, /RC does not answer \(ETIMEDOUT\)|marks it down/, 'a cut link times out rather than refuses')
    } finally {
      if (cut) execFileSync('ip', ['-n', 'nodescale-lan', 'link', 'set', 'w2', 'up'])
    }
    const deadline = Date.now() + 90_000
    while ((await docker.listNodes()).find(n => n.Description.Hostname === 'nodescale-w2')?.Status.State !== 'ready') {
      assert.ok(Date.now() < deadline, 'nodescale-w2 is ready again once its link is up')
      await sleep(1000)
    }
  })

  await t.test('a worker whose engine stopped is skipped at deploy with a warning; cluster up brings it back', async () => {
    process.kill(enginePidOf('nodescale-w2'), 'SIGTERM')
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

  await t.test('a worker that lost its swarm state joins again as a new node; cluster up removes its old entry', async () => {
    const old = (await docker.listNodes()).find(n => n.Description.Hostname === 'nodescale-w1').ID
    await workerEngine(1).swarmLeave({ force: true })
    const up = await cluster(['up', '--nodes', '3', '--json'])
    assert.equal(up.code, 0, up.stderr)
    assert.match(up.stderr, new RegExp(`removing a stale node entry ${old} \\(nodescale-w1`))
    const nodes = await docker.listNodes()
    assert.deepEqual(nodes.filter(n => n.Spec.Role === 'worker').map(n => n.Description.Hostname).sort(), ['nodescale-w1', 'nodescale-w2'])
    assert.equal(nodes.some(n => n.ID === old), false)
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
