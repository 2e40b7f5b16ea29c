// The autocannon driver's open model (--rate): the schedule holds, and latency counts from the intended send time.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { runLoad } from '../executor/drivers/index.js'
import { JTL_FIELDS } from '../executor/jtl-writer.js'
import { watchHost } from './helpers/host.js'

const now = () => performance.timeOrigin + performance.now()

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-open-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function server (t, handler) {
  const s = http.createServer(handler)
  await new Promise(resolve => s.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { s.closeAllConnections(); s.close() })
  // @ts-ignore TCP address
  return `http://127.0.0.1:${s.address().port}/`
}

function readJtl (path) {
  const rows = parse(readFileSync(path, 'utf8'))
  assert.deepEqual(rows[0], [...JTL_FIELDS])
  return rows.slice(1).map(r => Object.fromEntries(JTL_FIELDS.map((f, i) => [f, r[i]])))
}

test('open model: the server receives the requested rate, second by second', { timeout: 30000 }, async (t) => {
  const arrivals = []
  const url = await server(t, (req, res) => { arrivals.push(now()); res.end('OK') })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const R = 400
  const host = watchHost()
  const r = await runLoad({ driver: 'autocannon', url, rate: R, duration: 3, warmup: 0.5, jtlPath, label: 'rate' })
  // the generator and the server are this test's; other work on the host takes the cores that keep the rate
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  assert.equal(r.interrupted, false)
  assert.match(r.version, /open-model/)
  const rows = readJtl(jtlPath)
  assert.equal(rows.length, r.requests)
  assert.equal(r.requests, 3 * R, 'one row per scheduled request of the window')
  assert.equal(r.warmupRequests, 0.5 * R)
  assert.equal(r.errors, 0)
  // the window is the duration asked, to the ms: a shorter one loses a whole second of the steadiness check
  assert.equal(r.steadyEnd - r.steadyStart, 3000)
  // what the server saw, per second of the steady window
  for (let s = 0; s < 3; s++) {
    const from = r.steadyStart + s * 1000
    const got = arrivals.filter(a => a >= from && a < from + 1000).length
    assert.ok(Math.abs(got - R) <= R * 0.1, `second ${s}: ${got} arrivals for ${R} req/s`)
  }
  // intended send times are evenly spaced: i / R apart
  const ts = rows.map(x => Number(x.timeStamp)).sort((a, b) => a - b)
  assert.ok(ts[0] >= r.steadyStart && ts.at(-1) < r.steadyEnd)
  assert.ok(ts.at(-1) - ts[0] >= 2990, 'the schedule spans the window')
})

test('open model: a server stall shows in the latency of every request scheduled during it, sent or not', { timeout: 30000 }, async (t) => {
  // The server holds each request that ARRIVES in [stallFrom, stallFrom + 500 ms) for 300 ms. With at most 4 sockets,
  // only a handful of requests reach the server during the stall; the others scheduled then wait for a socket and are
  // answered at once after it. Timed from their actual send they would look fast; timed from their intended send
  // time (what the driver must do) each of them shows the stall.
  let stallFrom = Infinity
  let stalled = 0
  const url = await server(t, (req, res) => {
    const at = now()
    if (at >= stallFrom && at < stallFrom + 500) { stalled++; setTimeout(() => res.end('slow'), 300) } else res.end('OK')
  })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const R = 100
  const run = runLoad({ driver: 'autocannon', url, rate: R, duration: 3, warmup: 0.5, jtlPath, maxSockets: 4, inProcess: true })
  const t0 = now()
  stallFrom = t0 + 1500
  const r = await run
  const rows = readJtl(jtlPath).map(x => ({ ts: Number(x.timeStamp), elapsed: Number(x.elapsed), ok: x.success }))
  assert.equal(rows.length, 3 * R)
  assert.equal(r.errors, 0)
  const during = rows.filter(x => x.ts >= stallFrom + 5 && x.ts < stallFrom + 495)
  const before = rows.filter(x => x.ts < stallFrom - 50)
  const after = rows.filter(x => x.ts > stallFrom + 1200)
  assert.ok(during.length >= 45, `about 50 requests were scheduled during the stall: ${during.length}`)
  assert.ok(stalled <= 12, `only a few reached the server during the stall: ${stalled}`)
  const slow = during.filter(x => x.elapsed >= 100)
  assert.equal(slow.length, during.length, `every request scheduled during the stall shows it: ${during.map(x => x.elapsed).join(' ')}`)
  const median = (xs) => xs.map(x => x.elapsed).sort((a, b) => a - b)[xs.length >> 1]
  assert.ok(median(before) < 50, `before the stall requests are fast: median ${median(before)} ms`)
  assert.ok(median(after) < 50, `after the backlog drained requests are fast again: median ${median(after)} ms`)
  assert.ok(Math.max(...during.map(x => x.elapsed)) >= 290, 'the stalled ones took the full 300 ms')
})

test('open model: requests not answered within the timeout of their intended time are failed rows, and the run still ends', { timeout: 30000 }, async (t) => {
  const silent = await server(t, () => {}) // never answers
  const jtlPath = join(tmp(t), 'silent.jtl')
  let started = Date.now()
  const r = await runLoad({ driver: 'autocannon', url: silent, rate: 50, duration: 1, warmup: 0, jtlPath, timeoutSec: 0.5, maxSockets: 8, inProcess: true })
  assert.ok(Date.now() - started < 3500, 'the drain after the window is bounded by the timeout')
  const rows = readJtl(jtlPath)
  assert.equal(rows.length, 50)
  assert.equal(r.errors, 50)
  assert.ok(rows.every(x => x.success === 'false' && x.responseCode === 'Non HTTP response code: SocketTimeout'))
  assert.ok(rows.every(x => Number(x.elapsed) >= 490), 'timed from the intended send time')

  // a slow server and 2 sockets: the queue grows until its head is older than the timeout; those are never sent
  let received = 0
  const slow = await server(t, (req, res) => { received++; setTimeout(() => res.end('late'), 300) })
  const slowPath = join(tmp(t), 'slow.jtl')
  started = Date.now()
  const q = await runLoad({
    driver: 'autocannon', url: slow, rate: 50, duration: 1, warmup: 0, jtlPath: slowPath, timeoutSec: 0.5, maxSockets: 2, inProcess: true
  })
  assert.ok(Date.now() - started < 3500)
  const slowRows = readJtl(slowPath)
  assert.equal(slowRows.length, 50, 'every scheduled request has a row')
  const queued = slowRows.filter(x => x.responseCode === 'Non HTTP response code: QueueTimeout')
  assert.ok(queued.length >= 20, `many waited too long for a socket: ${queued.length}`)
  assert.ok(received <= 50 - queued.length, `those were never sent: server got ${received}`)
  assert.ok(slowRows.filter(x => x.success === 'true').length >= 2, 'the first ones were answered')
  assert.equal(q.errors, slowRows.filter(x => x.success === 'false').length)
  assert.ok(queued.every(x => Number(x.elapsed) >= 490 && /waited 0.5 s for one of 2 connections/.test(x.failureMessage)))
})

test('open model: after a stall opened many connections, the load goes back to the few last freed (LIFO, as node:http\'s agent)', {
  timeout: 30000
}, async (t) => {
  // The first 40 requests the server receives wait until the 40th has come (~200 ms at 200 req/s): 40 are in flight
  // at once, each on a connection of its own. Afterwards each is answered at once and one or two are in flight: the
  // connection freed last is the one reused, so the last second's requests go over a few connections, not a rotation
  // over the 40 (each kept warm by a request every 40, as a FIFO pool did).
  const held = []
  const url = await server(t, (req, res) => {
    if (held.length < 40) {
      held.push(res)
      if (held.length === 40) for (const r of held) r.end('late')
    } else res.end('OK')
  })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const host = watchHost()
  const r = await runLoad({ driver: 'autocannon', url, rate: 200, duration: 2.5, warmup: 0, jtlPath, inProcess: true })
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  assert.equal(r.errors, 0)
  const rows = readJtl(jtlPath)
  const conns = (xs) => new Set(xs.map(x => x.threadName))
  assert.ok(conns(rows).size >= 40, `the stall opened a connection for each held request: ${conns(rows).size}`)
  const last = rows.filter(x => Number(x.timeStamp) >= r.steadyEnd - 1000)
  assert.ok(last.length >= 190, `the last second's requests: ${last.length}`)
  assert.ok(conns(last).size <= 4, `the last second's ${last.length} requests went over ${conns(last).size} connections`)
})
