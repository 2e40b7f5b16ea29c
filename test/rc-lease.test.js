// Finding 3 of docs/SECURITY.md: an RC sampling session lives as long as its executor reads it. Sessions nobody reads
// expire and free their slot; the executor's sampler (executor/docker/rc-client.js) reads often enough to keep its
// own alive, and an executor killed with -9 leaves nothing that holds a slot past the lease.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRcApp } from '../rc/service.js'
import { createRcSampler } from '../executor/docker/rc-client.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'
import { ROOT } from './helpers/cli.js'

const TOKEN = 'lease-token-0123456789abcdef'
const RECEIVER = '0123456789abcdef0123456789abcdef'
const LEASE_MS = 800
const ids = ['a', 'b', 'c'].map(c => c.repeat(64))

/** An RC over a recorded cgroup v2 layout with three containers, served on loopback for one test. */
async function serve (t, opts) {
  const root = mkdtempSync(join(tmpdir(), 'ns-lease-'))
  writeFileSync(join(root, 'cgroup.controllers'), 'cpu memory\n')
  for (const id of ids) {
    const dir = join(root, 'system.slice', `docker-${id}.scope`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'cpu.stat'), 'usage_usec 1000\n')
  }
  const expired = []
  const { app, close } = createRcApp({
    token: TOKEN,
    cgroupRoot: root,
    intervalMs: 100,
    pidOf: async () => null,
    leaseMs: LEASE_MS,
    log: (l) => expired.push(l),
    receiverId: RECEIVER,
    ...opts
  })
  const server = await new Promise(resolve => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  t.after(() => { close(); server.closeAllConnections(); server.close(); rmSync(root, { recursive: true, force: true }) })
  const url = `http://127.0.0.1:${server.address().port}`
  const call = async (method, path, body) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const res = await fetch(url + path, {
      method, body: text, headers: { 'content-type': 'application/json', [AUTH_HEADER]: signRequest(TOKEN, { receiver: RECEIVER, method, path, body: text }) }
    })
    return { status: res.status, body: await res.json() }
  }
  return { url, call, expired }
}

test('sessions not read for the lease expire and free their slot; sessions read within it live', async (t) => {
  const { call, expired } = await serve(t, { maxSessions: 2 })
  const kept = await call('POST', '/start', { containers: [ids[0]] })
  const left = await call('POST', '/start', { containers: [ids[1]] })
  assert.equal(kept.status, 201)
  assert.equal(kept.body.leaseMs, LEASE_MS, 'the RC says its lease')
  assert.equal((await call('POST', '/start', { containers: [ids[2]] })).status, 429, 'both slots taken')
  // three leases: one session read every 200 ms, the other never
  for (let i = 0; i < 12; i++) {
    await sleep(200)
    assert.equal((await call('GET', `/timeline?session=${kept.body.session}`)).status, 200, `read ${i}: the session read within its lease lives`)
  }
  assert.equal((await call('GET', `/timeline?session=${left.body.session}`)).status, 404, 'the one nobody read is gone')
  assert.ok(expired.some(l => l.includes(left.body.session)), expired.join('\n'))
  assert.equal((await call('POST', '/start', { containers: [ids[2]] })).status, 201, 'its slot is free again')
  const stopped = await call('POST', '/stop', { session: kept.body.session })
  assert.equal(stopped.status, 200)
  assert.throws(() => createRcApp({ token: TOKEN, leaseMs: 0 }), /lease/)
})

test('the executor\'s sampler keeps its session alive by its reads, without checkpoints', async (t) => {
  const { url } = await serve(t, { maxSessions: 1 })
  const sampler = createRcSampler({ rcs: [{ node: 'n1', url }], token: TOKEN, containers: [{ node: 'n1', containerId: ids[0] }], checkpointMs: 0 })
  await sampler.start()
  await sleep(LEASE_MS * 3)
  const timeline = await sampler.stop()
  assert.ok(timeline, 'a timeline')
  assert.ok(!timeline.nodes[0].partial, 'the RC still had the session at stop: not a partial copy')
  assert.ok(timeline.samples.length >= 15, `${timeline.samples.length} samples of 100 ms over ${LEASE_MS * 3} ms`)
})

test('a sampler whose process is killed with -9 holds no slot past the lease', { timeout: 30000 }, async (t) => {
  const { url, call } = await serve(t, { maxSessions: 1 })
  const script = `import { createRcSampler } from ${JSON.stringify(pathToFileURL(join(ROOT, 'executor/docker/rc-client.js')).href)}
const s = createRcSampler({ rcs: [{ node: 'n1', url: ${JSON.stringify(url)} }], token: ${JSON.stringify(TOKEN)}, ` +
    `containers: [{ node: 'n1', containerId: ${JSON.stringify(ids[0])} }] })
await s.start()
process.stdout.write('started\\n')
setInterval(() => {}, 1000)
`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.after(() => { try { child.kill('SIGKILL') } catch {} })
  await new Promise((resolve, reject) => {
    child.stdout.on('data', d => { if (String(d).includes('started')) resolve(undefined) })
    child.once('exit', code => reject(new Error(`the sampler exited (${code}) before it started`)))
  })
  await sleep(LEASE_MS * 2)
  assert.equal((await call('POST', '/start', { containers: [ids[1]] })).status, 429, 'its live session holds the one slot while it reads')
  child.kill('SIGKILL')
  const killedAt = Date.now()
  let status = 429
  while (status === 429 && Date.now() - killedAt < LEASE_MS * 4) {
    await sleep(100)
    status = (await call('POST', '/start', { containers: [ids[1]] })).status
  }
  assert.equal(status, 201, 'the slot is free')
  const after = Date.now() - killedAt
  assert.ok(after <= LEASE_MS + 1200, `freed ${after} ms after the kill (lease ${LEASE_MS} ms)`)
})

test('a load agent aborts a running load when its executor stops asking for a lease', { timeout: 30000 }, async (t) => {
  const { createAgent } = await import('../executor/load-agent/agent.js')
  const { createServer } = await import('node:http')
  /** @type {{ at: number }} */
  const seen = { at: 0 }
  const target = createServer((req, res) => { seen.at = Date.now(); res.end('ok') })
  await new Promise(resolve => target.listen(0, '127.0.0.1', () => resolve(undefined)))
  const dir = mkdtempSync(join(tmpdir(), 'ns-lease-agent-'))
  const handle = createAgent({ token: TOKEN, dir, leaseMs: LEASE_MS, receiverId: RECEIVER })
  const agent = createServer((req, res) => { handle(req, res).catch(err => { res.statusCode = 500; res.end(err.message) }) })
  await new Promise(resolve => agent.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { target.closeAllConnections(); target.close(); agent.close(); rmSync(dir, { recursive: true, force: true }) })
  // @ts-ignore TCP address
  const base = `http://127.0.0.1:${agent.address().port}`
  const call = async (method, path, body) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const res = await fetch(base + path, {
      method, body: text, headers: { 'content-type': 'application/json', [AUTH_HEADER]: signRequest(TOKEN, { receiver: RECEIVER, method, path, body: text }) }
    })
    return res.json()
  }
  // @ts-ignore TCP address
  const load = { url: `http://127.0.0.1:${target.address().port}/`, method: 'GET', concurrency: 1, duration: 20, warmup: 0, label: 'lease' }
  assert.deepEqual(await call('POST', '/start', { driver: 'autocannon', startAt: Date.now(), load }), { started: true })
  // asked while it starts (each request renews the lease), until the target sees the load
  const until = Date.now() + 15_000
  while (!seen.at && Date.now() < until) { await call('GET', '/status'); await sleep(200) }
  assert.ok(seen.at, 'the load ran')
  // then nobody asks: the load ends within the lease (and a moment to stop), not after its 20 s
  const quietFrom = Date.now()
  while (Date.now() - seen.at < 1000 && Date.now() - quietFrom < 15_000) await sleep(100)
  assert.ok(seen.at - quietFrom <= LEASE_MS + 1500,
    `the target's last request ${seen.at - quietFrom} ms after the last one to the agent (lease ${LEASE_MS} ms)`)
  const status = await call('GET', '/status')
  assert.notEqual(status.state, 'running', JSON.stringify(status))
})
