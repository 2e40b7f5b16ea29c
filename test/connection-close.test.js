// --connection close: every driver and model opens a new connection for each request (the server sees one request per
// connection, every one answered), and keep-alive, the default, reuses one per client; a run records the choice.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runLoad } from '../executor/drivers/index.js'
import { planSweep } from '../executor/sweep/sweep-plan.js'
import { runCli, readRun, ROOT } from './helpers/cli.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-conn-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A server that counts the requests each connection carried and the Connection headers it was sent. */
async function connectionCounter (t) {
  const perSocket = new Map()
  const said = new Set()
  const server = http.createServer((req, res) => {
    perSocket.set(req.socket, (perSocket.get(req.socket) ?? 0) + 1)
    said.add(req.headers.connection ?? '(none)')
    res.end('OK')
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { server.closeAllConnections(); server.close() })
  // @ts-ignore listening on TCP
  const url = `http://127.0.0.1:${server.address().port}/x`
  const counts = () => ({
    connections: perSocket.size, requests: [...perSocket.values()].reduce((a, n) => a + n, 0), most: Math.max(0, ...perSocket.values()), said: [...said]
  })
  return { url, counts }
}

const cases = [
  { name: 'autocannon closed model', load: { driver: 'autocannon', concurrency: 4 } },
  { name: 'open model', load: { driver: 'autocannon', rate: 200 } },
  { name: 'jmeter closed model', load: { driver: 'jmeter', concurrency: 4 } }
]

for (const c of cases) {
  test(`${c.name}, connection close: one request per connection, every one answered and recorded`, { timeout: 90000 }, async (t) => {
    const srv = await connectionCounter(t)
    const r = await runLoad({ ...c.load, url: srv.url, connection: 'close', duration: 2, warmup: 1, jtlPath: join(tmp(t), 'samples.jtl') })
    const seen = srv.counts()
    assert.equal(r.errors, 0, JSON.stringify(r))
    assert.ok(r.requests > 50, `${r.requests} requests`)
    assert.equal(seen.most, 1, `a connection carried ${seen.most} requests`)
    // every request recorded, in the warm-up or the steady window, came on a connection of its own
    assert.ok(seen.connections >= r.requests + r.warmupRequests, JSON.stringify({ seen, r }))
    assert.deepEqual(seen.said.map(s => s.toLowerCase()), ['close'], 'the requests say Connection: close')
  })
}

test('keep-alive, the default: each client keeps one connection for all its requests', { timeout: 30000 }, async (t) => {
  const srv = await connectionCounter(t)
  const r = await runLoad({ driver: 'autocannon', concurrency: 4, url: srv.url, duration: 2, warmup: 1, jtlPath: join(tmp(t), 'samples.jtl') })
  const seen = srv.counts()
  assert.equal(r.errors, 0)
  assert.equal(seen.connections, 4)
  assert.ok(seen.most > 50, `${seen.most} requests on the busiest connection`)
})

test('executor run --connection close records it and says it; a bad value is exit 2 naming the flag', { timeout: 60000 }, async (t) => {
  const out = tmp(t)
  const r = await runCli('executor', ['run', '--backend', 'local', '--strategy', 'cm', '--instances', '2', '--benchmark', 'baseline', '--connection', 'close',
    '-c', '4', '-d', '2', '-w', '1', '--out', out])
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  assert.equal(run.config.connection, 'close')
  assert.equal(run.summary.errors, 0)
  assert.match(r.stdout, /concurrency 4 \(a connection per request\)/)
  const bad = await runCli('executor', ['run', '--backend', 'local', '--connection', 'reuse', '--out', out])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--connection.*keep-alive.*close/)
})

test('executor sweep --connection close overrides the file\'s for every run; --resume takes it from the folder', async (t) => {
  const file = join(ROOT, 'experiments', 'ibench-finding5.yml')
  const planned = await planSweep(file, { out: tmp(t), backend: 'local', connection: 'close', dryRun: true })
  assert.ok(planned.cells.length > 0 && planned.cells.every(c => c.config.connection === 'close'))
  const kept = await planSweep(file, { out: tmp(t), backend: 'local', dryRun: true })
  assert.ok(kept.cells.every(c => c.config.connection === 'keep-alive'), 'the file says nothing: keep-alive')
  const resume = await runCli('executor', ['sweep', '--resume', tmp(t), '--connection', 'close'])
  assert.equal(resume.code, 2)
  assert.match(resume.stderr, /--resume: takes the plan, seed, backend and connection from the sweep folder/)
})
