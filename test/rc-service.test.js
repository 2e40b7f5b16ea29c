// The RC service: token required, container ids validated before any path is built, per-container CPU per core from
// real containers (cgroup v1) and from a recorded v2 layout.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRcApp } from '../rc/service.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'
import { detectCgroup } from '../rc/cgroup.js'
import { containerPids } from '../rc/container-pid.js'
import { swarmEngine, testImages } from './swarm-helper.js'

const TOKEN = 'test-token-0123456789abcdef'
const RECEIVER = '0123456789abcdef0123456789abcdef'

/** Serves an RC app on a loopback port for one test; returns a small client. */
async function serve (t, opts = {}) {
  const { app, close } = createRcApp({ token: TOKEN, intervalMs: 250, pidOf: async () => null, receiverId: RECEIVER, ...opts })
  const server = await new Promise(resolve => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  t.after(() => { close(); server.closeAllConnections(); server.close() })
  const base = `http://127.0.0.1:${server.address().port}`
  /** @param {string} method @param {string} path @param {{ body?: any, token?: string | null }} [opts] */
  const call = async (method, path, { body, token = TOKEN } = {}) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const headers = {
      'content-type': 'application/json', ...(token ? { [AUTH_HEADER]: signRequest(token, { receiver: RECEIVER, method, path, body: text }) } : {})
    }
    const res = await fetch(base + path, { method, headers, body: text, signal: AbortSignal.timeout(5000) })
    return { status: res.status, body: await res.json() }
  }
  return Object.assign(call, { base })
}

const fakeId = (c) => c.repeat(64)

test('every route but /healthz needs a request signed with the token; the token itself is never sent', async (t) => {
  const call = await serve(t)
  assert.equal((await call('GET', '/healthz', { token: null })).status, 200)
  for (const [method, path] of [['GET', `/snapshot?containers=${fakeId('a')}`], ['POST', '/start'], ['POST', '/stop'], ['GET', '/timeline?session=x']]) {
    assert.equal((await call(method, path, { token: null, body: method === 'POST' ? {} : undefined })).status, 401, `${method} ${path} without token`)
    assert.equal((await call(method, path, { token: 'wrong-token-0123456789', body: method === 'POST' ? {} : undefined })).status, 401,
      `${method} ${path} wrong token`)
  }
  // what a listener on the network sees is a signed request's header: it passes once, for that request only
  const path = '/timeline?session=x'
  const header = signRequest(TOKEN, { receiver: RECEIVER, method: 'GET', path })
  const get = (p, h) => fetch(call.base + p, { headers: { [AUTH_HEADER]: h } }).then(r => r.status)
  assert.equal(await get(path, header), 400, 'the signed request passes (400: no such session)')
  assert.equal(await get(path, header), 401, 'its replay does not')
  assert.equal(await get(`/snapshot?containers=${fakeId('a')}`, signRequest(TOKEN, { receiver: RECEIVER, method: 'GET', path })), 401,
    'nor a signature for another request')
  assert.equal(await get(path, signRequest(TOKEN, { receiver: RECEIVER, method: 'GET', path, now: Date.now() - 10 * 60_000 })), 401,
    'nor one signed 10 min ago')
  assert.equal(await get(path, TOKEN), 401, 'the token itself is no header')
  assert.throws(() => createRcApp({ token: 'short' }), /token of at least 16/)
})

test('ids that are not container ids are refused before any path is built', async (t) => {
  const call = await serve(t)
  for (const bad of ['../../../../etc', '..%2F..%2Fetc%2Fpasswd', 'abc', fakeId('A'), `${fakeId('a')}/../x`, `${fakeId('a').slice(1)}g`]) {
    const r = await call('GET', `/snapshot?containers=${bad}`)
    assert.equal(r.status, 400, bad)
    assert.match(r.body.error, /is not a container id/)
    assert.equal((await call('POST', '/start', { body: { containers: [decodeURIComponent(bad)] } })).status, 400, bad)
  }
  assert.equal((await call('POST', '/start', { body: { containers: 'x' } })).status, 400)
  const unknown = await call('POST', '/start', { body: { containers: [fakeId('f')] } })
  assert.equal(unknown.status, 404)
  assert.match(unknown.body.error, /no container f{64} on this node/)
  assert.equal((await call('GET', '/timeline?session=../../x')).status, 400)
  assert.equal((await call('POST', '/stop', { body: { session: '00000000-0000-0000-0000-000000000000' } })).status, 404)
})

test('cgroup v2 (recorded layout): the container total comes from cpu.stat and memory from memory.current', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nodescale-cg2-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const id = fakeId('c')
  const dir = join(root, 'system.slice', `docker-${id}.scope`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n')
  let usec = 1_000_000
  const write = () => writeFileSync(join(dir, 'cpu.stat'), `usage_usec ${usec}\nuser_usec ${usec}\nsystem_usec 0\n`)
  write()
  writeFileSync(join(dir, 'memory.current'), '12345678\n')
  assert.equal(detectCgroup(root), 'v2')
  const call = await serve(t, { cgroupRoot: root })
  const started = await call('POST', '/start', { body: { containers: [id] } })
  assert.equal(started.status, 201)
  assert.equal(started.body.source, 'cgroup-v2')
  // 0.5 s of CPU per 250 ms interval: two cores' worth
  const timer = setInterval(() => { usec += 500_000; write() }, 250)
  t.after(() => clearInterval(timer))
  await sleep(1200)
  clearInterval(timer)
  const tl = (await call('POST', '/stop', { body: { session: started.body.session } })).body
  assert.ok(tl.samples.length >= 3, `${tl.samples.length} samples`)
  const totals = tl.samples.map(s => s.containers[id].total)
  assert.ok(Math.max(...totals) > 1, totals.join(','))
  assert.equal(tl.samples[0].containers[id].memoryBytes, 12345678)
  assert.equal(tl.samples[0].server.length, tl.cpus)
  const snap = await call('GET', `/snapshot?containers=${id}`)
  assert.equal(snap.body.containers[id].usageUsec, usec)
})

test('a container named with a role (the load balancer\'s) counts as that role, not as the server; the RC says its own', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nodescale-cg2-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n')
  const [app, lb] = [fakeId('a'), fakeId('b')]
  const usec = { [app]: 0, [lb]: 0 }
  const write = () => {
    for (const id of [app, lb]) {
      const dir = join(root, 'system.slice', `docker-${id}.scope`)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'cpu.stat'), `usage_usec ${usec[id]}\nuser_usec ${usec[id]}\nsystem_usec 0\n`)
    }
  }
  write()
  const call = await serve(t, { cgroupRoot: root })
  for (const roles of [{ [lb]: 'Load Balancer' }, { [fakeId('c')]: 'load-balancer' }, { [lb]: 'rc' }, { [lb]: 'kernel' }, ['load-balancer']]) {
    assert.equal((await call('POST', '/start', { body: { containers: [app, lb], roles } })).status, 400, JSON.stringify(roles))
  }
  const started = await call('POST', '/start', { body: { containers: [app, lb], roles: { [lb]: 'load-balancer' } } })
  assert.equal(started.status, 201, JSON.stringify(started.body))
  // per 250 ms: the app 125 ms of CPU (0.5 cores), the balancer 50 ms (0.2 cores)
  const timer = setInterval(() => { usec[app] += 125_000; usec[lb] += 50_000; write() }, 250)
  t.after(() => clearInterval(timer))
  await sleep(1300)
  clearInterval(timer)
  const tl = (await call('POST', '/stop', { body: { session: started.body.session } })).body
  const steady = tl.samples.slice(1, -1)
  assert.ok(steady.length >= 2, `${tl.samples.length} samples`)
  for (const x of steady) {
    assert.ok(Math.abs(x.serverTotal - 0.5) < 0.2, `server ${x.serverTotal}: the balancer is not the server`)
    assert.ok(Math.abs(x.roles['load-balancer'] - 0.2) < 0.1, JSON.stringify(x.roles))
    assert.ok(x.roles.rc >= 0 && x.roles.rc < 0.5, JSON.stringify(x.roles))
    assert.ok(x.roles.kernel >= 0 && x.roles.kernel <= x.host.length, 'the kernel\'s interrupt work, from /proc/stat')
    assert.deepEqual(Object.keys(x.containers), [app], 'only the server\'s containers are rows')
  }
})

const { docker, skip } = await swarmEngine()
const v1 = detectCgroup() === 'v1'

test('cgroup v1 on real containers: a busy container shows CPU on a core, ' +
  'an idle one does not', { skip: skip || (!v1 && 'this host has no cgroup v1 cpuacct') }, async (t) => {
  const { register } = await testImages(docker)
  const run = async (script) => {
    const c = await docker.createContainer({
      Image: register.tag, Cmd: ['node', '-e', script], Labels: { 'io.nodescale.test': 'rc-service' }, HostConfig: { NanoCpus: 500_000_000 }
    })
    t.after(() => c.remove({ force: true }).catch(() => {}))
    await c.start()
    return c.id
  }
  // bounded: each stops by itself after 20 s
  const busy = await run('const end = Date.now() + 20000; while (Date.now() < end) {}')
  const idle = await run('setTimeout(() => {}, 20000)')
  // the RC's own lookup of a container's pid (cgroup and proc files), as the engine knows it
  const pids = containerPids([busy, idle])
  for (const id of [busy, idle]) assert.equal(pids.get(id), (await docker.getContainer(id).inspect()).State.Pid, id)
  const call = await serve(t, { pidOf: undefined })
  const started = await call('POST', '/start', { body: { containers: [busy, idle] } })
  assert.equal(started.status, 201, JSON.stringify(started.body))
  assert.equal(started.body.source, 'cgroup-v1')
  await sleep(1600)
  const mid = await call('GET', `/timeline?session=${started.body.session}`)
  assert.ok(mid.body.samples.length >= 2)
  // since: only what came after the copy a client has (the executor's checkpoints of a node that may be lost)
  const since = mid.body.samples.at(-1).t
  await sleep(1100)
  const fresh = (await call('GET', `/timeline?session=${started.body.session}&since=${since}`)).body
  assert.ok(fresh.samples.length >= 1 && fresh.samples.every(x => x.t > since), JSON.stringify(fresh.samples.map(x => x.t)))
  assert.equal((await call('GET', `/timeline?session=${started.body.session}&since=soon`)).status, 400)
  // drop: the client holds every sample up to since, and the RC forgets them (its memory that of one checkpoint)
  const held = fresh.samples.at(-1).t
  const kept = (await call('GET', `/timeline?session=${started.body.session}&since=${held}&drop=1`)).body
  assert.equal(kept.dropped, mid.body.samples.length + fresh.samples.length, 'every sample up to since is forgotten')
  const all = (await call('GET', `/timeline?session=${started.body.session}`)).body
  assert.ok(all.samples.every(x => x.t > held) && all.dropped === kept.dropped, JSON.stringify(all.samples.map(x => x.t)))
  assert.equal((await call('GET', `/timeline?session=${started.body.session}&drop=1`)).status, 400, 'drop needs since')
  await sleep(1100)
  const tl = (await call('POST', '/stop', { body: { session: started.body.session } })).body
  const mean = (id) => tl.samples.reduce((s, x) => s + x.containers[id].total, 0) / tl.samples.length
  assert.ok(mean(busy) > mean(idle), `busy ${mean(busy)} vs idle ${mean(idle)}`)
  assert.ok(mean(busy) <= 0.75, `busy ${mean(busy)} cores, well above its 0.5 CPU quota`)
  assert.ok(Math.max(...tl.samples.flatMap(x => x.containers[busy].cores)) > 10, 'no core shows the busy container')
  const last = tl.samples.at(-1).containers[busy]
  assert.equal(last.cores.length, tl.cpus)
  assert.ok(last.memoryBytes > 0)
  assert.ok(last.net && last.net.rx >= 0 && last.net.tx >= 0, `the container's network namespace is read: ${JSON.stringify(last.net)}`)
  const snap = await call('GET', `/snapshot?containers=${busy}`)
  assert.equal(snap.body.containers[busy].usagePercpuNs.length >= tl.cpus, true)
})
