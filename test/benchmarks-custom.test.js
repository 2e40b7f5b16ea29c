// Custom apps: every form a user module may export, the cmd: console wrapper, and every bad module case
// (NS_ERR_BAD_APP).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadBenchmark } from '../benchmarks/index.js'
import { splitCommandLine } from '../benchmarks/command-line.js'
import { createApp } from '../register/app.js'

const APPS = 'test/fixtures/apps'

async function serve (t, benchmark, params = {}) {
  const options = benchmark.options(params)
  const tmpDir = mkdtempSync(join(tmpdir(), 'ns-custom-test-'))
  const app = await createApp({ benchmark, options, instanceId: 'c1', tmpDir, log: () => {} })
  const server = createServer(app)
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(() => resolve(undefined)))
    rmSync(tmpDir, { recursive: true, force: true })
  })
  return { url: `http://127.0.0.1:${/** @type {any} */ (server.address()).port}/${benchmark.name}`, tmpDir, options }
}

test('a handler module is mounted under --benchmark, else under its file name, with GET / by default', async (t) => {
  const named = await loadBenchmark({ benchmark: 'mine', app: `${APPS}/handler.js` })
  assert.equal(named.name, 'mine')
  assert.deepEqual(named.request(named.options({})), { method: 'GET', path: '/' })
  assert.throws(() => named.options({ x: '1' }), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && /--param x/.test(err.message))
  const { url } = await serve(t, named)
  assert.equal(await (await fetch(`${url}/a?b=1`)).text(), 'handler saw GET /a?b=1')
  const unnamed = await loadBenchmark({ app: `${APPS}/handler.js` })
  assert.equal(unnamed.name, 'handler')
})

test('a Router module serves its routes under the mount', async (t) => {
  const b = await loadBenchmark({ benchmark: 'shop', app: `${APPS}/router.js` })
  const { url } = await serve(t, b)
  assert.equal(await (await fetch(url)).text(), 'router root')
  assert.deepEqual(await (await fetch(`${url}/items/42`)).json(), { id: '42' })
  assert.equal((await fetch(`${url}/missing`)).status, 404)
})

test('a Benchmark object keeps its own name, options, request, ctx and teardown; missing fields get defaults', async (t) => {
  const b = await loadBenchmark({ benchmark: 'ignored', app: `${APPS}/bench-object.js` })
  assert.equal(b.name, 'greeter')
  assert.throws(() => b.options({ times: '0' }), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && /times must be/.test(err.message))
  const opts = b.options({ times: '2' })
  assert.deepEqual(opts, { greeting: 'hello', times: 2 })
  assert.deepEqual(b.request(opts), { method: 'GET', path: '/?times=2' })
  const { url, tmpDir } = await serve(t, b, { times: '2', greeting: 'hi' })
  assert.equal(await (await fetch(url)).text(), 'hi from c1\nhi from c1')
  assert.ok(existsSync(join(tmpDir, 'greeter-c1.created')))
  await b.teardown({ tmpDir, instanceId: 'c1' })
  assert.ok(existsSync(join(tmpDir, 'greeter-c1.teardown')))

  const m = await loadBenchmark({ app: `${APPS}/minimal-object.js` })
  assert.equal(m.name, 'minimal-object')
  assert.deepEqual(m.options({}), {})
  assert.deepEqual(m.request({}), { method: 'GET', path: '/' })
  const served = await serve(t, m)
  assert.equal(await (await fetch(served.url)).text(), 'minimal')
})

test('bad modules are NS_ERR_BAD_APP naming --app, the file and what is wrong', async () => {
  /** @type {Array<[string, RegExp]>} */
  const cases = [
    ['missing.js', /no such file/],
    ['syntax-error.js', /cannot be loaded: SyntaxError/],
    ['throws-on-load.js', /cannot be loaded: Error: cannot connect to the database/],
    ['wrong-export.js', /default export is a number/],
    ['no-default.js', /has no default export/],
    ['object-no-create.js', /default export is an object without create\(\)/],
    ['builtin-name.js', /"cpu" is a built-in benchmark/]
  ]
  for (const [file, re] of cases) {
    await assert.rejects(loadBenchmark({ benchmark: 'x', app: `${APPS}/${file}` }), (/** @type {any} */ err) => {
      assert.equal(err.code, 'NS_ERR_BAD_APP', file)
      assert.equal(err.exitCode, 2)
      assert.match(err.message, /--app /)
      assert.ok(err.message.includes(file), `${file} named in: ${err.message}`)
      assert.match(err.message, re)
      return true
    })
  }
  await assert.rejects(loadBenchmark({ benchmark: 'page', app: `${APPS}/handler.js` }), /"page" is a built-in benchmark/)
})

test('command lines split like a shell would quote them, without expansion', () => {
  assert.deepEqual(splitCommandLine('printf "%s|%s" \'a b\' c\\ d "x\\"y" $HOME'), ['printf', '%s|%s', 'a b', 'c d', 'x"y', '$HOME'])
  assert.deepEqual(splitCommandLine('  a   ""  b '), ['a', '', 'b'])
  assert.throws(() => splitCommandLine('a "b'), /unterminated "/)
  assert.throws(() => splitCommandLine("a 'b"), /unterminated '/)
})

test('cmd: runs the program per request: body to stdin, stdout to the response, quoted arguments kept', async (t) => {
  const b = await loadBenchmark({ benchmark: 'upper', app: `cmd:${APPS}/upper.sh 'one two' three` })
  assert.equal(b.name, 'upper')
  assert.deepEqual(b.request(b.options({})), { method: 'GET', path: '/' })
  assert.deepEqual(b.request(b.options({ bodyBytes: '100' })),
    { method: 'POST', path: '/', bodyBytes: 100, headers: { 'content-type': 'application/octet-stream' } })
  const { url } = await serve(t, b)
  const res = await fetch(url, { method: 'POST', body: 'hello world' })
  assert.equal(res.status, 200)
  assert.equal(await res.text(), 'args:one two three\nHELLO WORLD')
  assert.equal(await (await fetch(url)).text(), 'args:one two three\n')
  const fromPath = await loadBenchmark({ app: 'cmd:printf "%s" ok' })
  assert.equal(fromPath.name, 'printf')
})

test('cmd: opt-in ?args= appends arguments; off by default', async (t) => {
  const b = await loadBenchmark({ benchmark: 'echo', app: 'cmd:echo base' })
  const off = await serve(t, b)
  assert.equal(await (await fetch(`${off.url}?args=extra`)).text(), 'base\n')
  const on = await serve(t, b, { queryArgs: 'true' })
  assert.equal(await (await fetch(`${on.url}?args=${encodeURIComponent('"a b" c')}`)).text(), 'base a b c\n')
})

test('cmd: a non-zero exit is a 500 with the tail of stderr; a program over timeoutMs is killed with a 504', async (t) => {
  const failing = await loadBenchmark({ benchmark: 'fails', app: 'cmd:sh -c "echo went wrong >&2; exit 3"' })
  const f = await serve(t, failing)
  const res = await fetch(f.url)
  assert.equal(res.status, 500)
  assert.match(await res.text(), /exited with code 3\nwent wrong/)

  const slow = await loadBenchmark({ benchmark: 'slow', app: 'cmd:sleep 30' })
  const s = await serve(t, slow, { timeoutMs: '300' })
  const start = Date.now()
  const r = await fetch(s.url)
  assert.equal(r.status, 504)
  assert.match(await r.text(), /timed out after 300 ms/)
  assert.ok(Date.now() - start < 5000, 'killed, not waited for')

  const chatty = await loadBenchmark({ benchmark: 'chatty', app: 'cmd:head -c 5000 /dev/zero' })
  const c = await serve(t, chatty, { maxOutputKb: '1' })
  const big = await fetch(c.url)
  assert.equal(big.status, 500)
  assert.match(await big.text(), /more than 1 KiB/)
})

test('cmd: a program that does not exist or an empty or broken command line is NS_ERR_BAD_APP before anything starts', async () => {
  /** @type {Array<[string, RegExp]>} */
  const bad = [['cmd:no-such-program-xyz --x', /"no-such-program-xyz" is not an executable on PATH/],
    ['cmd:./nope/prog', /"\.\/nope\/prog" is not an executable file/], ['cmd:', /no program/], ['cmd:echo "open', /unterminated/]]
  for (const [app, re] of bad) {
    await assert.rejects(loadBenchmark({ benchmark: 'x', app }),
      (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_APP' && /--app "cmd:/.test(err.message) && re.test(err.message), app)
  }
})

test('a CommonJS module loads too (module.exports is the default export)', async (t) => {
  const b = await loadBenchmark({ app: `${APPS}/commonjs.cjs` })
  assert.equal(b.name, 'commonjs')
  const { url } = await serve(t, b)
  assert.equal(await (await fetch(url)).text(), 'from commonjs')
})

test('the documented examples load and answer what their request() sends', async (t) => {
  const echo = await loadBenchmark({ app: 'benchmarks/examples/json-echo.js' })
  const opts = echo.options({ items: '3' })
  const req = echo.request(opts)
  const { url } = await serve(t, echo, { items: '3' })
  const body = JSON.stringify([{ a: 1 }, { a: 2 }, { a: 3 }])
  const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body })
  const json = await res.json()
  assert.equal(json.length, 3)
  assert.equal(json.bytes, body.length)
  assert.match(json.sha1, /^[0-9a-f]{40}$/)
  assert.throws(() => echo.options({ items: '0' }), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG')
  const hello = await loadBenchmark({ benchmark: 'hello', app: 'benchmarks/examples/hello-handler.js' })
  const h = await serve(t, hello)
  assert.equal(await (await fetch(h.url)).text(), 'hello\n')
})
