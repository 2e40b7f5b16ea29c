// Every built-in benchmark app answers correctly when mounted by the register app, with its options validated.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILTIN_BENCHMARKS, loadBenchmark } from '../benchmarks/index.js'
import { createApp } from '../register/app.js'
import { diskDir } from '../benchmarks/disk.js'

/** Mounts one benchmark in a register app on a free loopback port. */
async function serve (t, name, params = {}, instanceId = 'test-1') {
  const benchmark = await loadBenchmark({ benchmark: name })
  const options = benchmark.options(params)
  const tmpDir = mkdtempSync(join(tmpdir(), 'ns-bench-test-'))
  const ctx = { tmpDir, instanceId }
  const app = await createApp({ benchmark, options, instanceId, tmpDir, log: () => {} })
  const server = createServer(app)
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const url = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}`
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise(resolve => server.close(() => resolve(undefined)))
    await benchmark.teardown?.(ctx)
  }
  t.after(async () => { await close(); rmSync(tmpDir, { recursive: true, force: true }) })
  return { url, benchmark, options, ctx, close }
}

test('the built-in list names a module for each benchmark, each with the contract\'s fields', async () => {
  assert.deepEqual([...BUILTIN_BENCHMARKS].sort(), ['baseline', 'cpu', 'disk', 'mem', 'net-in', 'net-out', 'page'])
  for (const name of BUILTIN_BENCHMARKS) {
    const b = await loadBenchmark({ benchmark: name })
    assert.equal(b.name, name)
    assert.equal(typeof b.description, 'string')
    assert.equal(typeof b.defaults, 'object')
    for (const fn of ['options', 'request', 'create']) assert.equal(typeof b[fn], 'function', `${name}.${fn}`)
    const req = b.request(b.options({}))
    assert.ok(['GET', 'POST'].includes(req.method))
    assert.ok(req.path.startsWith('/'))
  }
})

test('an unknown built-in without --app is NS_ERR_BAD_FLAG naming --benchmark and the choices', async () => {
  await assert.rejects(loadBenchmark({ benchmark: 'nope' }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && /--benchmark: unknown "nope"; one of baseline, page, cpu/.test(err.message))
})

test('bad --param values and unknown keys are NS_ERR_BAD_FLAG naming the key', async () => {
  /** @type {Array<[string, Record<string, string>, RegExp]>} */
  const cases = [
    ['cpu', { n: '1' }, /--param n: must be an integer/],
    ['cpu', { n: 'abc' }, /--param n/],
    ['cpu', { size: '1' }, /--param size: unknown for benchmark cpu; allowed: n/],
    ['net-out', { kb: '7' }, /--param kb: must be one of 1, 4, 10, 30, 52/],
    ['net-in', { bodyKb: '20', maxKb: '10' }, /--param bodyKb/],
    ['mem', { objects: '0' }, /--param objects/],
    ['disk', { sync: 'maybe' }, /--param sync/],
    ['baseline', { x: '1' }, /takes no parameters/]
  ]
  for (const [name, params, re] of cases) {
    const b = await loadBenchmark({ benchmark: name })
    assert.throws(() => b.options(params), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && re.test(err.message),
      `${name} ${JSON.stringify(params)}`)
  }
})

test('baseline answers OK with the instance header; healthz answers JSON; unknown paths get the 404 page', async (t) => {
  const { url } = await serve(t, 'baseline', {}, 'inst-7')
  const res = await fetch(`${url}/baseline`)
  assert.equal(res.status, 200)
  assert.equal(await res.text(), 'OK')
  assert.equal(res.headers.get('x-nodescale-instance'), 'inst-7')
  const h = await fetch(`${url}/healthz`)
  assert.deepEqual(await h.json(), { status: 'ok', instance: 'inst-7', pid: process.pid, benchmark: 'baseline' })
  assert.equal(h.headers.get('x-nodescale-instance'), 'inst-7')
  const nf = await fetch(`${url}/nothing-here`)
  assert.equal(nf.status, 404)
  assert.match(nf.headers.get('content-type'), /html/)
  assert.match(await nf.text(), /<h1>404 Not Found<\/h1>/)
  assert.equal(nf.headers.get('x-nodescale-instance'), 'inst-7')
})

test('page answers the study\'s HTML page with a random number', async (t) => {
  const { url } = await serve(t, 'page')
  const seen = new Set()
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${url}/page/`)
    const m = /<h1>200 OK Random=\[(\d+)\]<\/h1>/.exec(await res.text())
    assert.equal(res.status, 200)
    assert.ok(m, 'page body')
    assert.ok(Number(m[1]) >= 0 && Number(m[1]) < 1000)
    seen.add(m[1])
  }
  assert.ok(seen.size > 1, 'random numbers vary')
})

test('cpu finds the smallest divisor by trial division (default n = 104743²; a prime with --param n)', async (t) => {
  const { url } = await serve(t, 'cpu')
  assert.deepEqual(await (await fetch(`${url}/cpu`)).json(), { n: 10971096049, prime: false, divisor: 104743 })
  const other = await serve(t, 'cpu', { n: '104729' })
  assert.deepEqual(await (await fetch(`${other.url}/cpu`)).json(), { n: 104729, prime: true, divisor: null })
})

test('net-out sends exactly 1, 4, 10, 30 and 52 KiB by ?kb=, the option size by default, 400 otherwise', async (t) => {
  const { url } = await serve(t, 'net-out', { kb: '4' })
  for (const kb of [1, 4, 10, 30, 52]) {
    const res = await fetch(`${url}/net-out?kb=${kb}`)
    assert.equal(res.status, 200)
    assert.equal((await res.arrayBuffer()).byteLength, kb * 1024, `${kb} KiB`)
  }
  assert.equal((await (await fetch(`${url}/net-out`)).arrayBuffer()).byteLength, 4 * 1024)
  assert.equal((await fetch(`${url}/net-out?kb=3`)).status, 400)
})

test('net-in drains POST bodies, says how many bytes it got, and answers 413 above maxKb', async (t) => {
  const { url, benchmark, options } = await serve(t, 'net-in', { maxKb: '8', bodyKb: '2' })
  assert.deepEqual(benchmark.request(options), { method: 'POST', path: '/', bodyBytes: 2048, headers: { 'content-type': 'text/plain' } })
  const ok = await fetch(`${url}/net-in`, { method: 'POST', body: 'x'.repeat(5000), headers: { 'content-type': 'text/plain' } })
  assert.equal(ok.status, 200)
  assert.equal(await ok.text(), 'received 5000 bytes\n')
  const big = await fetch(`${url}/net-in`, { method: 'POST', body: 'x'.repeat(9 * 1024), headers: { 'content-type': 'text/plain' } })
  assert.equal(big.status, 413)
  await big.arrayBuffer()
  // A chunked body (no Content-Length) is counted as it arrives.
  const chunks = new ReadableStream({ start (c) { for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('y'.repeat(1024))); c.close() } })
  const chunked = await fetch(`${url}/net-in`, /** @type {any} */ ({ method: 'POST', body: chunks, duplex: 'half' }))
  assert.equal(chunked.status, 413)
  const get = await fetch(`${url}/net-in`)
  assert.equal(get.status, 404)
})

test('disk writes one new file per request holding the time, and teardown removes them', async (t) => {
  const { url, ctx, close } = await serve(t, 'disk')
  const before = Date.now()
  for (let i = 0; i < 3; i++) assert.equal((await fetch(`${url}/disk`)).status, 200)
  const dir = diskDir(ctx)
  const files = readdirSync(dir)
  assert.equal(files.length, 3)
  for (const f of files) {
    const ms = Number(readFileSync(join(dir, f), 'utf8'))
    assert.ok(ms >= before && ms <= Date.now(), `time in ${f}`)
  }
  await close()
  assert.equal(existsSync(dir), false)
})

test('mem builds the configured number of objects per request and answers after its sleep', async (t) => {
  const { url } = await serve(t, 'mem', { objects: '5000', sleepMs: '30' })
  const start = Date.now()
  const res = await fetch(`${url}/mem`)
  assert.equal(await res.text(), 'built 5000 objects\n')
  assert.ok(Date.now() - start >= 29, 'answer waits for the sleep')
})

test('an error in a benchmark handler answers the 500 page and the server keeps serving', async (t) => {
  const benchmark = {
    name: 'boom',
    create: () => (req, res) => { if (req.url === '/fail') throw new Error('kaput'); res.end('fine') }
  }
  const lines = []
  const app = await createApp({ benchmark, options: {}, instanceId: 'b1', tmpDir: tmpdir(), log: l => lines.push(l) })
  const server = createServer(app)
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { server.closeAllConnections(); server.close() })
  const url = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}`
  const res = await fetch(`${url}/boom/fail`)
  assert.equal(res.status, 500)
  assert.match(await res.text(), /<h1>500 Internal Server Error<\/h1>/)
  assert.equal(res.headers.get('x-nodescale-instance'), 'b1')
  assert.match(lines.join('\n'), /kaput/)
  assert.equal(await (await fetch(`${url}/boom`)).text(), 'fine')
})
