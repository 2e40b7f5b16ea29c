// A load agent's samples, fetched the way the executor does (fetchSamples, executor/generators/agent-client.js), from
// real agents on loopback after a real autocannon load: signed by the agent for the request's nonce and checked, cut
// off past the stated byte limit with a coded error naming the agent; and requests signed for one agent (g1's abort)
// are refused by another, and by the same one after a restart (issue 27, finding 5).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { setTimeout as sleep } from 'node:timers/promises'
import { createAgent } from '../executor/load-agent/agent.js'
import { agentCaller, agentPlace, fetchSamples, measureClock, samplesLimit } from '../executor/generators/agent-client.js'
import { mostOnOneMachine } from '../executor/generators/run-generators.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'

const TOKEN = 'agent-token-0123456789abcdef'

const listen = (server) => new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)))

/** An agent on a loopback port; `restart` closes it and starts a new one (a new id) on the same port. */
async function startAgent (t, dir) {
  let handle = createAgent({ token: TOKEN, dir })
  const server = createServer((req, res) => { handle(req, res).catch(err => { res.statusCode = 500; res.end(err.message) }) })
  const base = await listen(server)
  t.after(() => { server.closeAllConnections(); server.close() })
  return { base, restart: () => { handle = createAgent({ token: TOKEN, dir }) } }
}

test('samples: signed for the request and checked, cut off past the limit naming the agent; signatures bound to one agent', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-agent-samples-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const target = createServer((req, res) => res.end('ok'))
  const targetUrl = await listen(target)
  t.after(() => { target.closeAllConnections(); target.close() })
  const g1 = await startAgent(t, join(dir, 'g1'))
  const g2 = await startAgent(t, join(dir, 'g2'))
  const call1 = agentCaller(g1.base, TOKEN)

  const load = { url: `${targetUrl}/`, method: 'GET', concurrency: 2, duration: 1, warmup: 0, label: 'samples' }
  // started ahead, as the executor starts its generators (LEAD_MS): a window that began before the agent's autocannon
  // was up (a second on a busy host) would be over with nothing in it
  const started = await call1('POST', '/start', { body: { driver: 'autocannon', startAt: Date.now() + 1000, load } })
  assert.equal(started.status, 202, await started.text())
  let status
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
    status = await (await call1('GET', '/status')).json()
    if (status.state !== 'running') break
  }
  assert.equal(status.state, 'done', JSON.stringify(status))
  const requests = status.result.requests
  assert.ok(requests > 0, JSON.stringify(status.result))

  // what it sent, whole and signed
  const who = `generator g1 on test (agent ${g1.base})`
  const dest = join(dir, 'g1.jtl.gz')
  const { bytes } = await fetchSamples(call1, { token: TOKEN, dest, who, maxBytes: samplesLimit(requests) })
  const rows = gunzipSync(readFileSync(dest)).toString('utf8').trim().split('\n')
  assert.equal(rows.length - 1, requests, 'a row per request, after the header')
  assert.ok(bytes > 0 && bytes < samplesLimit(requests))

  // past the limit: a coded error naming the agent, and no part left
  const small = join(dir, 'small.jtl.gz')
  await assert.rejects(fetchSamples(call1, { token: TOKEN, dest: small, who, maxBytes: Math.floor(bytes / 2) }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_RUN' && err.message.startsWith(who) && /over \d+ bytes .*stopped reading/.test(err.message))
  assert.ok(!existsSync(small))
  // a sender that states no length is cut off while it streams
  const unstated = createServer((req, res) => {
    if (req.url === '/healthz') return res.end(JSON.stringify({ id: 'ab'.repeat(16) }))
    res.writeHead(200, { 'content-type': 'application/gzip' })
    const chunk = Buffer.alloc(64 * 1024)
    let sent = 0
    const more = () => { while (sent < 64 && res.write(chunk)) sent++; if (sent < 64) res.once('drain', more); else res.end() }
    more()
  })
  const unstatedUrl = await listen(unstated)
  t.after(() => { unstated.closeAllConnections(); unstated.close() })
  await assert.rejects(fetchSamples(agentCaller(unstatedUrl, TOKEN), { token: TOKEN, dest: small, who: 'generator g9', maxBytes: 256 * 1024 }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_RUN' && /^generator g9: its samples are over 262144 bytes/.test(err.message))
  assert.ok(!existsSync(small))

  // changed on the way (one byte, same length): not used
  const proxy = createServer((req, res) => {
    const up = request(`${g1.base}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      const chunks = []
      r.on('data', c => chunks.push(c))
      r.on('end', () => {
        const body = Buffer.concat(chunks)
        if (req.url === '/samples' && body.length) body[body.length - 20] ^= 1
        res.writeHead(r.statusCode ?? 500, r.headers).end(body)
      })
    })
    req.pipe(up)
  })
  const proxyUrl = await listen(proxy)
  t.after(() => { proxy.closeAllConnections(); proxy.close() })
  const changed = join(dir, 'changed.jtl.gz')
  await assert.rejects(fetchSamples(agentCaller(proxyUrl, TOKEN), { token: TOKEN, dest: changed, who, maxBytes: samplesLimit(requests) }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_RUN' && /not signed by it for this request/.test(err.message))
  assert.ok(!existsSync(changed))

  // g1's abort, as it crossed the network, resent to g2 within the window: refused; to g1 again: refused (a replay)
  const g1Id = (await (await fetch(`${g1.base}/healthz`)).json()).id
  const abort = signRequest(TOKEN, { receiver: g1Id, method: 'POST', path: '/abort' })
  const send = (base, header) => fetch(`${base}/abort`, { method: 'POST', headers: { [AUTH_HEADER]: header } })
  const atG2 = await send(g2.base, abort)
  assert.equal(atG2.status, 401)
  assert.match((await atG2.json()).error, /signed for another receiver/)
  assert.equal((await send(g1.base, abort)).status, 202, 'g1 takes it')
  assert.equal((await send(g1.base, abort)).status, 401, 'once')
  // g1 restarted (a new id, its nonces forgotten): a request seen before it restarted is refused
  const status1 = signRequest(TOKEN, { receiver: g1Id, method: 'GET', path: '/status' })
  g1.restart()
  const after = await fetch(`${g1.base}/status`, { headers: { [AUTH_HEADER]: status1 } })
  assert.equal(after.status, 401)
  assert.notEqual((await (await fetch(`${g1.base}/healthz`)).json()).id, g1Id)
  // the executor's caller reads the new id and goes on
  assert.equal((await call1('GET', '/status')).status, 200)
})

test('agents say their machine: two on one machine (as the nodes of executor cluster) count as two JVMs starting together', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-agent-machine-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const agents = [await startAgent(t, join(dir, 'g1')), await startAgent(t, join(dir, 'g2'))]
  const clocks = await Promise.all(agents.map(a => measureClock(agentCaller(a.base, TOKEN))))
  const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  assert.deepEqual(clocks.map(c => c.machine), [bootId, bootId])
  const node = (n) => ({ id: `id${n}`, hostname: `nodescale-w${n}`, label: `nodescale-w${n}`, addr: `10.99.0.${n}` })
  const places = clocks.map((clock, i) =>
    agentPlace({ name: `g${i + 1}`, group: i + 1, url: agents[i].base, token: TOKEN, node: node(i + 3), task: 't', partsDir: dir, clock }))
  assert.equal(places[0].where.machine, bootId)
  assert.ok(!('machine' in places[0].clock), 'the clock is the offset and round trip only')
  assert.equal(mostOnOneMachine(places), 2, 'two nodes, one machine')
  // an agent that does not say its machine (an older image) counts by its node
  assert.equal(mostOnOneMachine(places.map(p => ({ ...p, where: { ...p.where, machine: null } }))), 1)
})
