// The autocannon driver's closed model against real local servers: JTL rows vs what the server saw, POST bodies,
// errors, abort.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { runLoad, DRIVERS } from '../executor/drivers/index.js'
import { JTL_FIELDS } from '../executor/jtl-writer.js'
import { watchHost } from './helpers/host.js'

const now = () => performance.timeOrigin + performance.now()

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-drv-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A server that remembers when each request arrived; `handler` may answer differently.
 * @param {any} t
 * @param {(req: http.IncomingMessage, res: http.ServerResponse, n: number) => void} [handler]
 */
async function countingServer (t, handler = (req, res) => { res.end('OK') }) {
  const arrivals = []
  const server = http.createServer((req, res) => {
    arrivals.push(now())
    handler(req, res, arrivals.length)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { server.closeAllConnections(); server.close() })
  // @ts-ignore listening on TCP
  return { url: `http://127.0.0.1:${server.address().port}/bench/x`, arrivals, server }
}

/** Reads a JTL: header check, then rows as objects keyed by JTL_FIELDS. */
function readJtl (path) {
  const rows = parse(readFileSync(path, 'utf8'))
  assert.deepEqual(rows[0], [...JTL_FIELDS], 'header is JTL_FIELDS')
  return rows.slice(1).map(r => {
    assert.equal(r.length, JTL_FIELDS.length)
    return Object.fromEntries(JTL_FIELDS.map((f, i) => [f, r[i]]))
  })
}

test('DRIVERS lists both drivers', () => {
  assert.deepEqual([...DRIVERS], ['autocannon', 'jmeter'])
})

for (const inProcess of [false, true]) {
  test(`closed model (${inProcess ? 'in process' : 'child process'}): JTL rows = requests the server saw in the steady window, ` +
    'warm-up excluded', { timeout: 30000 }, async (t) => {
    const srv = await countingServer(t)
    const jtlPath = join(tmp(t), 'run', 'samples.jtl')
    const C = 8
    const progress = []
    const r = await runLoad({
      driver: 'autocannon', url: srv.url, concurrency: C, duration: 2, warmup: 1, jtlPath, label: 'baseline', inProcess, onProgress: p => progress.push(p)
    })
    assert.equal(r.driver, 'autocannon')
    assert.equal(r.interrupted, false)
    assert.equal(r.jtlPath, jtlPath)
    assert.match(r.version, /^nodescale closed-model clients \(raw sockets, node v\d+/)
    assert.ok(Math.abs(r.steadyEnd - r.steadyStart - 2000) <= 2, `steady window is 2 s: ${r.steadyEnd - r.steadyStart}`)
    const rows = readJtl(jtlPath)
    assert.equal(rows.length, r.requests)
    assert.ok(r.requests > 100, `some load: ${r.requests}`)
    assert.ok(r.warmupRequests > 50, `warm-up ran: ${r.warmupRequests}`)
    assert.equal(r.errors, 0)
    // A row is a request SENT in [steadyStart, steadyEnd) and answered before steadyEnd. The server counts arrivals in
    // the same window. They differ by the requests in flight at each edge: at most C sent before steadyStart and
    // arriving after it, at most C arriving before steadyEnd but unanswered then. 0.3% slack covers the two processes'
    // clocks (performance.timeOrigin) disagreeing by a fraction of a ms.
    const served = srv.arrivals.filter(a => a >= r.steadyStart && a < r.steadyEnd).length
    const slack = Math.ceil(served * 0.003)
    assert.ok(rows.length <= served + slack, `rows ${rows.length} <= served ${served} (+${slack})`)
    assert.ok(served - rows.length <= 2 * C + slack, `served ${served} - rows ${rows.length} <= 2C (+${slack})`)
    // nothing from the warm-up, nothing after the window; columns hold what they should
    for (const row of rows) {
      const ts = Number(row.timeStamp)
      assert.ok(ts >= r.steadyStart && ts < r.steadyEnd, `timeStamp ${ts} in [${r.steadyStart}, ${r.steadyEnd})`)
    }
    const one = rows[rows.length >> 1]
    assert.equal(one.label, 'baseline')
    assert.equal(one.responseCode, '200')
    assert.equal(one.responseMessage, 'OK')
    assert.equal(one.success, 'true')
    assert.equal(one.URL, srv.url)
    assert.match(one.threadName, /^baseline 1-[1-8]$/)
    assert.equal(one.grpThreads, String(C))
    assert.ok(Number(one.bytes) > 2, 'bytes counts headers and body')
    assert.ok(Number(one.sentBytes) > 20)
    for (const f of ['elapsed', 'Latency', 'IdleTime', 'Connect']) assert.match(one[f], /^\d+$/, `${f} is a whole number of ms`)
    assert.ok(Number(one.Latency) <= Number(one.elapsed))
    assert.equal(new Set(rows.map(x => x.threadName)).size, C, 'every connection recorded rows')
    assert.ok(progress.some(p => p.phase === 'steady' && p.requests > 0), 'progress reported the steady phase')
  })
}

test('closed model POST: every body arrives intact', { timeout: 30000 }, async (t) => {
  const body = Buffer.from(JSON.stringify({ text: 'ä,"quoted"\n', pad: 'x'.repeat(3000) }))
  let intact = 0
  let broken = 0
  const srv = await countingServer(t, (req, res) => {
    const parts = []
    req.on('data', c => parts.push(c))
    req.on('end', () => {
      if (req.method === 'POST' && Buffer.concat(parts).equals(body) && req.headers['content-type'] === 'application/json') intact++
      else broken++
      res.end('got it')
    })
  })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const r = await runLoad({
    driver: 'autocannon',
    url: srv.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    concurrency: 4,
    duration: 1,
    warmup: 0,
    jtlPath,
    label: 'net-in'
  })
  assert.equal(broken, 0)
  assert.ok(intact >= r.requests && r.requests > 10, `intact ${intact}, requests ${r.requests}`)
  const rows = readJtl(jtlPath)
  assert.ok(Number(rows[0].sentBytes) > body.length, 'sentBytes includes the body')
})

test('closed model errors: 500 answers and a refused connection are failed rows with a message', { timeout: 30000 }, async (t) => {
  let fails = 0
  const srv = await countingServer(t, (req, res, n) => {
    if (n % 4 === 0) { fails++; res.statusCode = 500; res.end('<h1>boom</h1>') } else res.end('OK')
  })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const r = await runLoad({ driver: 'autocannon', url: srv.url, concurrency: 4, duration: 1, warmup: 0, jtlPath })
  const rows = readJtl(jtlPath)
  const failed = rows.filter(x => x.success === 'false')
  assert.equal(r.errors, failed.length)
  assert.ok(Math.abs(failed.length - rows.length / 4) <= 4 + rows.length * 0.01, `a quarter failed: ${failed.length} of ${rows.length}`)
  assert.ok(Math.abs(fails - failed.length) <= 8, `server sent ${fails} 500s, JTL has ${failed.length}`)
  assert.ok(failed.every(x => x.responseCode === '500' && /500/.test(x.failureMessage)))
  assert.ok(rows.filter(x => x.success === 'true').every(x => x.responseCode === '200'))

  // a port nobody listens on
  const gone = http.createServer()
  await new Promise(resolve => gone.listen(0, '127.0.0.1', () => resolve(undefined)))
  // @ts-ignore TCP address
  const port = gone.address().port
  await new Promise(resolve => gone.close(resolve))
  const refusedPath = join(tmp(t), 'refused.jtl')
  const rr = await runLoad({ driver: 'autocannon', url: `http://127.0.0.1:${port}/`, concurrency: 2, duration: 0.5, warmup: 0, jtlPath: refusedPath })
  const refused = readJtl(refusedPath)
  assert.ok(rr.requests > 0 && rr.errors === rr.requests, `every row failed: ${rr.errors}/${rr.requests}`)
  assert.equal(refused.length, rr.requests)
  assert.ok(refused.every(x => x.success === 'false' && /ECONNREFUSED/.test(x.failureMessage) && /^Non HTTP response code/.test(x.responseCode)))
})

for (const model of [{ concurrency: 4 }, { rate: 200 }]) {
  test(`abort through the AbortSignal (${model.rate ? 'open' : 'closed'} model): ends promptly, valid JTL, interrupted`, { timeout: 30000 }, async (t) => {
    const srv = await countingServer(t)
    const jtlPath = join(tmp(t), 'samples.jtl')
    const ac = new AbortController()
    const started = Date.now()
    setTimeout(() => ac.abort(), 1500)
    const host = watchHost()
    const r = await runLoad({ driver: 'autocannon', url: srv.url, ...model, duration: 30, warmup: 0.5, jtlPath, signal: ac.signal })
    const took = Date.now() - started
    // a generator starved by other work may not reach its window in the 1.5 s before the abort, nor stop promptly
    const { reason } = host.stop()
    if (reason) return t.skip(reason)
    assert.equal(r.interrupted, true)
    assert.ok(took < 4000, `stopped within seconds of the abort: ${took} ms`)
    assert.ok(r.steadyEnd - r.steadyStart < 2000, 'the window ends at the abort')
    assert.equal(existsSync(`${jtlPath}.tmp`), false)
    const rows = readJtl(jtlPath)
    assert.equal(rows.length, r.requests)
    assert.ok(r.requests > 0)
    const arrivalsAfter = srv.arrivals.filter(a => a > started + took + 200).length
    assert.equal(arrivalsAfter, 0, 'no load after runLoad resolved')
  })
}

test('bad options are NS_ERR_BAD_FLAG naming the option', async () => {
  const base = { driver: 'autocannon', url: 'http://127.0.0.1:1/', duration: 1, jtlPath: '/tmp/never.jtl' }
  const cases = [
    [{ ...base, concurrency: 2, rate: 10 }, /--concurrency\/--rate/],
    [{ ...base }, /--concurrency\/--rate/],
    [{ ...base, concurrency: 0 }, /--concurrency/],
    [{ ...base, rate: -1 }, /--rate/],
    [{ ...base, concurrency: 1, duration: 0 }, /--duration/],
    [{ ...base, concurrency: 1, warmup: -2 }, /--warmup/],
    [{ ...base, concurrency: 1, driver: 'ab' }, /--driver/],
    [{ ...base, concurrency: 1, method: 'TRACE' }, /--method: "TRACE" is not allowed; one of: GET, POST, PUT, PATCH, DELETE/],
    [{ ...base, concurrency: 1, url: 'ftp://x/' }, /url/]
  ]
  for (const [opts, re] of cases) {
    // @ts-ignore deliberately wrong options
    await assert.rejects(runLoad(opts), (err) => err.code === 'NS_ERR_BAD_FLAG' && err.exitCode === 2 && re.test(err.message))
  }
})
