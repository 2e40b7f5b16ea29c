// Finding 1 of docs/SECURITY.md: JMeter evaluates `${...}` in its plan, so nothing a user, a file or a signed request
// supplies reaches a plan with one. The CLI and experiment files refuse it (exit 2, naming the flag or the line), the
// load agent's /start refuses it, the plan writer percent-encodes a URL's braces and refuses it elsewhere, and the real
// JMeter sends the payload as text instead of running it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildJmx, untilEnd } from '../executor/drivers/jmeter-plan.js'
import { runLoad } from '../executor/drivers/index.js'
import { createAgent } from '../executor/load-agent/agent.js'
import { parseExperiment } from '../executor/sweep/experiment.js'
import { buildCells } from '../executor/sweep/sweep-plan.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'
import { NsError } from '../lib/errors.js'
import { runCli } from './helpers/cli.js'

// eslint-disable-next-line no-template-curly-in-string
const PAYLOAD = '${__groovy(System.exit(3))}'
const TOKEN = 'agent-token-0123456789abcdef'
const RECEIVER = '0123456789abcdef0123456789abcdef'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-jmlit-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('executor run refuses --path with ${ (exit 2, naming --path) before anything starts', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'server.js'), 'require("http").createServer((q, s) => s.end("ok")).listen(process.env.PORT)\n')
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--backend', 'local', '--server', join(dir, 'server.js'),
    '--path', `/?x=${PAYLOAD}`, '--driver', 'jmeter', '--duration', '1', '--out', join(dir, 'out')])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /NS_ERR_BAD_FLAG: --path: .*contains "\$\{", which JMeter evaluates/)
  // a health path is refused alike, and so is a run folder JMeter's plan would name
  const health = await runCli('executor',
    ['run', '--strategy', 'up', '--instances', '1', '--backend', 'local', '--server', join(dir, 'server.js'), '--health', `/h${PAYLOAD}`])
  assert.equal(health.code, 2, health.stderr)
  assert.match(health.stderr, /--health: /)
  const out = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--backend', 'local', '--driver', 'jmeter', '--out', join(dir, PAYLOAD)])
  assert.equal(out.code, 2, out.stderr)
  assert.match(out.stderr, /--out: .*JMeter evaluates/)
})

test('an experiment file with a path JMeter would evaluate is refused naming the file, the line and the key', () => {
  const text = 'backend: local\nstrategies: [up]\nserver: server.js\ndriver: jmeter\npath: "/?x=' + PAYLOAD + '"\nduration: 1\n'
  const dir = mkdtempSync(join(tmpdir(), 'ns-jmlit-'))
  try {
    writeFileSync(join(dir, 'server.js'), '')
    assert.throws(() => buildCells(parseExperiment(text, { file: 'study.yml', path: join(dir, 'study.yml') }), { out: dir }), (/** @type {any} */ err) => {
      assert.ok(err instanceof NsError, err.stack)
      assert.equal(err.exitCode, 2)
      assert.match(err.message, /^study\.yml:5: path \(--path\).*JMeter evaluates/)
      return true
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the load agent refuses a signed /start whose label, headers or URL carry ${', async (t) => {
  const handle = createAgent({ token: TOKEN, dir: tmp(t), receiverId: RECEIVER })
  const server = http.createServer((req, res) => { handle(req, res).catch(err => { res.statusCode = 500; res.end(err.message) }) })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => server.close())
  // @ts-ignore TCP address
  const base = `http://127.0.0.1:${server.address().port}`
  const start = async (load) => {
    const text = JSON.stringify({ driver: 'jmeter', startAt: Date.now() + 60_000, load })
    const res = await fetch(`${base}/start`, {
      method: 'POST',
      body: text,
      headers: { 'content-type': 'application/json', [AUTH_HEADER]: signRequest(TOKEN, { receiver: RECEIVER, method: 'POST', path: '/start', body: text }) }
    })
    return { status: res.status, body: await res.json() }
  }
  const ok = { url: 'http://127.0.0.1:9/', method: 'GET', concurrency: 1, duration: 1, warmup: 0, label: 'page' }
  for (const [load, field] of [
    [{ ...ok, label: PAYLOAD }, 'load.label'],
    [{ ...ok, headers: { 'x-a': PAYLOAD } }, 'load.headers["x-a"]'],
    [{ ...ok, headers: { [PAYLOAD]: 'v' } }, 'load.headers'],
    [{ ...ok, url: `http://127.0.0.1:9/?x=${PAYLOAD}` }, 'load.url']
  ]) {
    const r = await start(load)
    assert.equal(r.status, 400, JSON.stringify(r.body))
    assert.ok(r.body.error.startsWith(field) && r.body.error.includes('JMeter evaluates'), r.body.error)
  }
  assert.equal((await start({ ...ok, headers: { 'x-a': 1 } })).status, 400, 'a header value that is not text')
  assert.equal((await start(null)).status, 400, 'no load')
  const status = await fetch(`${base}/status`, { headers: { [AUTH_HEADER]: signRequest(TOKEN, { receiver: RECEIVER, method: 'GET', path: '/status' }) } })
  assert.equal((await status.json()).state, 'idle', 'no refused load started')
})

test('the plan writer never emits ${ from user text: a URL\'s braces are percent-encoded, the rest is refused', () => {
  const base = { method: 'GET', concurrency: 1, warmup: 1, duration: 1, label: 'page', timeoutSec: 10 }
  const jmx = buildJmx({ ...base, url: `http://127.0.0.1:9/a?x=${PAYLOAD}&y=$1` })
  assert.ok(!jmx.includes('${'), 'no ${ in the plan')
  assert.match(jmx, /<stringProp name="HTTPSampler.path">\/a\?x=\$%7B__groovy\(System.exit\(3\)\)%7D&amp;y=\$1<\/stringProp>/)
  /** @type {[Record<string, any>, string][]} */
  const refused = [
    [{ label: PAYLOAD }, 'label'],
    [{ headers: { 'x-a': `a${PAYLOAD}` } }, 'header "x-a"'],
    [{ headers: { [PAYLOAD]: 'v' } }, 'header'],
    [{ method: PAYLOAD }, '--method'],
    [{ bodyPath: `/tmp/${PAYLOAD}/body.bin` }, '--body']
  ]
  // a generator's plan counts to the shared end: nodescale's one expression, of integers, and nothing else evaluated
  const timed = buildJmx({ ...base, url: `http://127.0.0.1:9/a?x=${PAYLOAD}`, endAt: 1795768209001 })
  assert.equal(timed.split('${').length - 1, 3, 'the end-time expression only')
  assert.ok(timed.includes(untilEnd(1795768209001)))
  assert.match(untilEnd(1795768209001), /^\$\{__jexl3\(1795768210 - \$\{__time\(\/1000,\)\} &gt; 0 \? 1795768210 - \$\{__time\(\/1000,\)\} : 1,\)\}$/)
  assert.throws(() => untilEnd(Number.NaN), /whole number of ms/)
  for (const [over, flag] of refused) {
    assert.throws(() => buildJmx({ ...base, url: 'http://127.0.0.1:9/', endAt: 1795768209001, ...over }), (/** @type {any} */ err) => {
      assert.equal(err.code, 'NS_ERR_BAD_FLAG')
      assert.ok(err.message.startsWith(flag) && err.message.includes('JMeter evaluates'), err.message)
      return true
    })
  }
})

test('the real JMeter sends the payload as text: the server sees $%7B...%7D and JMeter does not exit 3', { timeout: 90000 }, async (t) => {
  const seen = new Set()
  const srv = http.createServer((req, res) => { seen.add(req.url); req.resume(); req.on('end', () => res.end('OK')) })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { srv.closeAllConnections(); srv.close() })
  // @ts-ignore TCP address
  const url = `http://127.0.0.1:${srv.address().port}/?x=${PAYLOAD}`
  const r = await runLoad({ driver: 'jmeter', url, concurrency: 1, duration: 1, warmup: 1, jtlPath: join(tmp(t), 'samples.jtl') })
  assert.equal(r.interrupted, false)
  assert.ok(r.requests > 0, `the load ran: ${r.requests} requests`)
  assert.deepEqual([...seen], ['/?x=$%7B__groovy(System.exit(3))%7D'])
  assert.equal(new URL([...seen][0], 'http://x').searchParams.get('x'), PAYLOAD, 'which the server reads as the text given')
})
