// The JMeter driver against real local servers with the real JMeter 5.6.3: GET, POST bodies, rate, abort, missing java
// or JMeter.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { mkdtempSync, readFileSync, rmSync, existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { parse } from 'csv-parse/sync'
import { runLoad } from '../executor/drivers/index.js'
import { buildJmx, xmlEscape } from '../executor/drivers/jmeter-plan.js'
import { JTL_FIELDS } from '../executor/jtl-writer.js'
import { watchHost } from './helpers/host.js'

const now = () => performance.timeOrigin + performance.now()

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-jm-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function server (t, handler = (req, res) => { req.resume(); req.on('end', () => res.end('OK')) }) {
  const arrivals = []
  const s = http.createServer((req, res) => { arrivals.push(now()); handler(req, res) })
  await new Promise(resolve => s.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { s.closeAllConnections(); s.close() })
  // @ts-ignore TCP address
  return { url: `http://127.0.0.1:${s.address().port}/page/?a=1&b=<2>`, arrivals }
}

function readJtl (path) {
  const rows = parse(readFileSync(path, 'utf8'))
  assert.deepEqual(rows[0], [...JTL_FIELDS], 'columns in JTL_FIELDS order')
  return rows.slice(1).map(r => {
    assert.equal(r.length, JTL_FIELDS.length)
    return Object.fromEntries(JTL_FIELDS.map((f, i) => [f, r[i]]))
  })
}

/** Runs fn with environment variables changed, restoring them afterwards. */
async function withEnv (vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map(k => [k, process.env[k]]))
  Object.assign(process.env, vars)
  try { return await fn() } finally {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v }
  }
}

test('the plan XML-escapes everything from the user', () => {
  const jmx = buildJmx({
    url: 'http://127.0.0.1:9/x?a=1&b=<2>',
    method: 'GET',
    headers: { 'x-h': 'a"b<c>&' },
    concurrency: 2,
    warmup: 1,
    duration: 2,
    label: 'l<&>"\'',
    timeoutSec: 10
  })
  assert.ok(!/<2>|a"b<c>|l<&>/.test(jmx), 'no raw user text')
  assert.ok(jmx.includes(xmlEscape('a"b<c>&')) && jmx.includes('l&lt;&amp;&gt;&quot;&apos;'))
  assert.match(jmx, /<intProp name="ThreadGroup.num_threads">2<\/intProp>/)
  assert.match(jmx, /<stringProp name="ThreadGroup.duration">3<\/stringProp>/, 'scheduler runs warm-up + duration')
  assert.match(jmx, /use_keepalive">true/)
})

test('jmeter GET: a valid JTL of the steady window only, in JTL_FIELDS order', { timeout: 60000 }, async (t) => {
  const srv = await server(t)
  const jtlPath = join(tmp(t), 'run', 'samples.jtl')
  const phases = new Set()
  const host = watchHost()
  const r = await runLoad({
    driver: 'jmeter', url: srv.url, concurrency: 4, duration: 2, warmup: 1, jtlPath, label: 'page, "GET"', onProgress: p => phases.add(p.phase)
  })
  // JMeter and the server are this test's processes; what else ran on the host took their cores
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  assert.equal(r.driver, 'jmeter')
  assert.equal(r.interrupted, false)
  assert.match(r.version, /JMeter 5\.6\.3/)
  assert.equal(r.steadyEnd - r.steadyStart, 2000)
  const rows = readJtl(jtlPath)
  assert.equal(rows.length, r.requests)
  assert.ok(r.requests > 50, `load ran: ${r.requests}`)
  assert.ok(r.warmupRequests > 0, 'warm-up rows were left out')
  assert.equal(r.errors, 0)
  for (const row of rows) {
    const ts = Number(row.timeStamp)
    assert.ok(ts >= r.steadyStart && ts < r.steadyEnd)
    assert.equal(row.label, 'page, "GET"')
    assert.equal(row.responseCode, '200')
    assert.equal(row.success, 'true')
    assert.equal(row.URL, new URL(srv.url).href.replace('<', '%3C').replace('>', '%3E'))
  }
  // JMeter's rows are what the server saw in the window, give or take the 4 in flight at each edge and a few ms of
  // clock
  const served = srv.arrivals.filter(a => a >= r.steadyStart && a < r.steadyEnd).length
  assert.ok(Math.abs(served - rows.length) <= 8 + served * 0.01, `served ${served}, rows ${rows.length}`)
  const dir = dirname(jtlPath)
  assert.ok(existsSync(join(dir, 'jmeter.log')), "JMeter's log sits next to the JTL")
  assert.ok(existsSync(join(dir, 'jmeter-plan.jmx')))
  assert.ok(!existsSync(join(dir, 'jmeter-raw.jtl')), 'the raw file with warm-up rows is gone')
  assert.ok(phases.has('steady'))
})

test('jmeter told a shared start: its threads stop at the shared window\'s end however late its JVM started; no idling out', {
  timeout: 60000
}, async (t) => {
  const srv = await server(t)
  const jtlPath = join(tmp(t), 'run', 'samples.jtl')
  // a start sooner than a JVM comes up: its threads begin late, inside the warm-up; before, the plan then ran warm-up +
  // lead + duration from there, 5.3 s past the window of a 7 s plan
  const startAt = Math.ceil(now()) + 300
  const endAt = startAt + 3000
  const r = await runLoad({ driver: 'jmeter', url: srv.url, concurrency: 2, duration: 1, warmup: 2, jtlPath, label: 'page', startAt })
  const returned = now()
  assert.equal(r.interrupted, false)
  assert.equal(r.steadyEnd, endAt)
  assert.ok(r.requests > 20, `load ran: ${r.requests}`)
  const skew = /** @type {any} */ (r).startSkewMs
  assert.ok(skew > 0, `the JVM came up after the shared start (${skew} ms)`)
  // JMeter counts whole seconds to the end's second: its last request is sent before the second after endAt's
  const last = Math.max(...srv.arrivals)
  assert.ok(last < Math.ceil(endAt / 1000) * 1000 + 1000 + 50, `last request ${Math.round(last - endAt)} ms after the window's end`)
  // and the run returns soon after: JMeter is stopped once it says "... end of run", not left to idle ~1.3 s
  assert.ok(returned - last < 1200, `returned ${Math.round(returned - last)} ms after the last request`)
  assert.match(readFileSync(join(dirname(jtlPath), 'jmeter-plan.jmx'), 'utf8'), /ThreadGroup\.duration">\$\{__jexl3\(\d+ - \$\{__time\(\/1000,\)\}/)
})

test('jmeter POST: the body file arrives intact on every request', { timeout: 60000 }, async (t) => {
  const body = Buffer.concat([Buffer.from('{"k":"v,\\"q\\""}'), Buffer.alloc(2048, 0x61), Buffer.from([0, 1, 2, 255])])
  let intact = 0
  let broken = 0
  const srv = await server(t, (req, res) => {
    const parts = []
    req.on('data', c => parts.push(c))
    req.on('end', () => {
      if (req.method === 'POST' && Buffer.concat(parts).equals(body)) intact++
      else broken++
      res.end('got')
    })
  })
  const jtlPath = join(tmp(t), 'samples.jtl')
  const host = watchHost()
  const r = await runLoad({
    driver: 'jmeter',
    url: srv.url,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/octet-stream' },
    concurrency: 2,
    duration: 1,
    warmup: 1,
    jtlPath,
    label: 'net-in'
  })
  assert.equal(broken, 0)
  // a starved JMeter sends few requests in its one second: the count below is this test's only if the host was its
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  assert.ok(r.requests > 10 && intact >= r.requests, `intact ${intact}, rows ${r.requests}`)
  const rows = readJtl(jtlPath)
  assert.ok(rows.every(x => x.success === 'true' && Number(x.sentBytes) > body.length))
})

test('jmeter rate: the Precise Throughput Timer holds the requested rate', { timeout: 60000 }, async (t) => {
  const srv = await server(t)
  const jtlPath = join(tmp(t), 'samples.jtl')
  const R = 200
  const host = watchHost()
  const r = await runLoad({ driver: 'jmeter', url: srv.url, rate: R, duration: 2, warmup: 2, jtlPath })
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  const served = srv.arrivals.filter(a => a >= r.steadyStart && a < r.steadyEnd).length
  assert.ok(Math.abs(served - 2 * R) <= 2 * R * 0.15, `${served} arrivals in 2 s at ${R}/s`)
  assert.ok(Math.abs(r.requests - 2 * R) <= 2 * R * 0.15, `${r.requests} rows`)
})

test('jmeter abort: JMeter stops through its shutdown port, the JTL is valid, interrupted is set', { timeout: 60000 }, async (t) => {
  const srv = await server(t)
  const jtlPath = join(tmp(t), 'samples.jtl')
  const ac = new AbortController()
  const lines = []
  let steadyAt = 0
  const run = runLoad({
    driver: 'jmeter',
    url: srv.url,
    concurrency: 2,
    duration: 60,
    warmup: 1,
    jtlPath,
    signal: ac.signal,
    log: l => lines.push(l),
    onProgress: p => { if (p.phase === 'steady' && p.requests > 0 && !steadyAt) { steadyAt = Date.now(); setTimeout(() => ac.abort(), 500) } }
  })
  const r = await run
  const took = Date.now() - steadyAt
  assert.equal(r.interrupted, true)
  assert.ok(lines.some(l => /StopTestNow on udp port \d+/.test(l)), lines.join('\n'))
  assert.ok(took < 8000, `ended ${took} ms after the steady phase began (abort after 500 ms)`)
  const rows = readJtl(jtlPath)
  assert.equal(rows.length, r.requests)
  assert.ok(r.requests > 0)
  assert.ok(r.steadyEnd - r.steadyStart < 10000)
  const later = srv.arrivals.filter(a => a > Date.now() + 100)
  assert.equal(later.length, 0)
})

test('NODESCALE_JMETER_HOME pointing to an empty folder: NS_ERR_MISSING_JMETER, exit 3, with the fix', async (t) => {
  const empty = join(tmp(t), 'empty')
  mkdirSync(empty)
  await withEnv({ NODESCALE_JMETER_HOME: empty }, () => assert.rejects(
    runLoad({ driver: 'jmeter', url: 'http://127.0.0.1:9/', concurrency: 1, duration: 1, jtlPath: join(empty, 's.jtl') }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_MISSING_JMETER' && err.exitCode === 3 && /NODESCALE_JMETER_HOME/.test(err.message) &&
      /jmeter-install/.test(err.hint)))
})

test('no java on PATH: NS_ERR_MISSING_JAVA, exit 3, with the fix', async (t) => {
  const dir = tmp(t)
  await withEnv({ PATH: join(dir, 'no-bin') }, () => assert.rejects(
    runLoad({ driver: 'jmeter', url: 'http://127.0.0.1:9/', concurrency: 1, duration: 1, jtlPath: join(dir, 's.jtl') }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_MISSING_JAVA' && err.exitCode === 3 && /java/.test(err.message) && /apt-get install/.test(err.hint)))
})
