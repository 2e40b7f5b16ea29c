// The entry scripts as processes: serve.js and cluster.js read their env, report readiness, tear down on SIGTERM, die
// with their launcher.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../lib/net.js'
import { instanceIdFromEnv, parseParamsEnv } from '../register/server.js'
import { isAlive } from '../register/proc-tree.js'
import { INSTANCES } from '../lib/strategies.js'

const SERVE = 'register/serve.js'
const CLUSTER = 'register/cluster.js'

/** Spawns an entry script with IPC; resolves with the child and its first message. Killed after the test. */
function run (t, script, env, { ipc = true } = {}) {
  const child = spawn(process.execPath, [script],
    { env: { ...process.env, HOST: '127.0.0.1', ...env }, stdio: /** @type {any} */ (['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])]) })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', d => { output += d })
  child.stderr.setEncoding('utf8').on('data', d => { output += d })
  const exited = new Promise(resolve => child.on('exit', (code, signal) => resolve({ code, signal })))
  const message = new Promise(resolve => child.on('message', resolve))
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return { child, exited, message, output: () => output }
}

async function waitGone (pids, ms = 8000) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline && pids.some(isAlive)) await sleep(50)
  return pids.filter(isAlive)
}

test('instance ids: NODESCALE_INSTANCE, else host-pid; cluster workers w<id>; PM2 pm2-<n>; the variable prefixes workers', () => {
  assert.equal(instanceIdFromEnv({ NODESCALE_INSTANCE: 'r2' }, { workerId: undefined }), 'r2')
  assert.equal(instanceIdFromEnv({}, { workerId: undefined, pid: 42, host: 'box' }), 'box-42')
  assert.equal(instanceIdFromEnv({}, { workerId: 3 }), 'w3')
  assert.equal(instanceIdFromEnv({ NODESCALE_INSTANCE: 'c' }, { workerId: 3 }), 'c-w3')
  assert.equal(instanceIdFromEnv({ pm_id: '5', NODE_APP_INSTANCE: '1' }, { workerId: 7 }), 'pm2-1')
  assert.deepEqual(parseParamsEnv('{"n":"7"}'), { n: '7' })
  assert.deepEqual(parseParamsEnv(undefined), {})
  for (const bad of ['[1]', '{"n":7}', 'nope']) {
    assert.throws(() => parseParamsEnv(bad),
      (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_ENV' && err.exitCode === 2 && /NODESCALE_PARAMS/.test(err.message))
  }
})

test('serve.js listens, logs one line, sends nodescale:ready, and on SIGTERM runs teardown and removes its own temp folder', async (t) => {
  const port = await freePort()
  const tmp = mkdtempSync(join(tmpdir(), 'ns-serve-test-'))
  t.after(() => rmSync(tmp, { recursive: true, force: true }))
  // TMPDIR is where serve.js makes its own temp folder when NODESCALE_TMPDIR is not given.
  const s = run(t, SERVE, { PORT: String(port), NODESCALE_BENCHMARK: 'disk', TMPDIR: tmp })
  const msg = await s.message
  assert.deepEqual(msg, { type: 'nodescale:ready', port, instance: `${hostname()}-${s.child.pid}` })
  assert.match(s.output(), new RegExp(`instance ${hostname()}-${s.child.pid} serving disk on http://127.0.0.1:${port}`))
  const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()
  assert.deepEqual(health, { status: 'ok', instance: msg.instance, pid: s.child.pid, benchmark: 'disk' })
  for (let i = 0; i < 2; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/disk`)).status, 200)
  assert.equal(readdirSync(tmp).length, 1, 'one temp folder while it runs')
  s.child.kill('SIGTERM')
  assert.deepEqual(await s.exited, { code: 0, signal: null })
  assert.deepEqual(readdirSync(tmp), [], 'temp folder and files removed')
})

test('serve.js with bad env exits 2 with a message naming what is wrong', async (t) => {
  /** @type {Array<[Record<string, string>, RegExp]>} */
  const cases = [
    [{ NODESCALE_BENCHMARK: 'nope' }, /--benchmark: unknown "nope"/],
    [{ NODESCALE_BENCHMARK: 'cpu', NODESCALE_PARAMS: '{"n":"1"}' }, /--param n/],
    [{ NODESCALE_BENCHMARK: 'cpu', PORT: 'abc' }, /PORT: "abc"/],
    [{ NODESCALE_BENCHMARK: 'x', NODESCALE_APP: 'test/fixtures/apps/wrong-export.js' }, /NS_ERR_BAD_APP/]
  ]
  for (const [env, re] of cases) {
    const s = run(t, SERVE, env, { ipc: false })
    assert.deepEqual(await s.exited, { code: 2, signal: null }, JSON.stringify(env))
    assert.match(s.output(), /nodescale: cannot start/)
    assert.match(s.output(), re)
  }
})

test('cluster.js: readiness after all workers listen; SIGTERM stops the workers, which tear down in the shared temp folder', async (t) => {
  const port = await freePort()
  const tmp = mkdtempSync(join(tmpdir(), 'ns-cluster-test-'))
  t.after(() => rmSync(tmp, { recursive: true, force: true }))
  const s = run(t, CLUSTER, { PORT: String(port), NODESCALE_BENCHMARK: 'disk', NODESCALE_WORKERS: '2', NODESCALE_TMPDIR: tmp })
  assert.deepEqual(await s.message, { type: 'nodescale:ready', port, instance: 'primary', workers: 2 })
  assert.match(s.output(), /ready: 2 workers listening/)
  for (let i = 0; i < 4; i++) await fetch(`http://127.0.0.1:${port}/disk`, { headers: { connection: 'close' } })
  assert.deepEqual(readdirSync(tmp).sort(), ['disk-w1', 'disk-w2'])
  s.child.kill('SIGTERM')
  assert.deepEqual(await s.exited, { code: 0, signal: null })
  assert.deepEqual(readdirSync(tmp), [], 'each worker removed its files')
  assert.ok(existsSync(tmp), 'a given NODESCALE_TMPDIR is not removed')
})

test('cluster.js without a valid NODESCALE_WORKERS exits 2; a worker that cannot start stops the cluster', async (t) => {
  const a = run(t, CLUSTER, { NODESCALE_BENCHMARK: 'page' }, { ipc: false })
  assert.equal((await a.exited).code, 2)
  assert.match(a.output(), /NODESCALE_WORKERS/)
  // the primaries accept what --instances does, no more (one range: INSTANCES in lib/strategies.js)
  for (const [script, who] of [[CLUSTER, 'cluster'], ['register/pm2-start.js', 'pm2']]) {
    const over = run(t, script, { NODESCALE_BENCHMARK: 'page', NODESCALE_WORKERS: String(INSTANCES.max + 1) }, { ipc: false })
    assert.equal((await over.exited).code, 2)
    assert.match(over.output(), new RegExp(`nodescale ${who}: NODESCALE_WORKERS="${INSTANCES.max + 1}" must be a whole number ` +
      `from 1 to ${INSTANCES.max} \\(--instances\\)`))
  }
  const b = run(t, CLUSTER, { NODESCALE_BENCHMARK: 'nope', NODESCALE_WORKERS: '2' }, { ipc: false })
  assert.equal((await b.exited).code, 2)
  assert.match(b.output(), /before the cluster was ready; stopping/)
})

test('servers die with their launcher: a launching process killed with SIGKILL leaves no single, cluster or PM2 process', async (t) => {
  const script = `
    import { launch } from './register/launch.js'
    const a = await launch({ shape: 'single', instances: 1, benchmark: 'baseline', port: 0 })
    const b = await launch({ shape: 'cluster', instances: 2, benchmark: 'baseline', port: 0 })
    const c = await launch({ shape: 'pm2', instances: 2, benchmark: 'baseline', port: 0 })
    console.log(JSON.stringify({ pids: [...a.pids(), ...b.pids(), ...c.pids()], dirs: [a.tmpDir, b.tmpDir], pm2Dir: c.tmpDir }))
    setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  const { pids, dirs, pm2Dir } = await new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', d => { out += d; if (out.includes('\n')) resolve(JSON.parse(out)) })
    child.on('exit', () => reject(new Error(`launcher exited: ${out}`)))
  })
  // PM2 keeps its home until it is gone; nobody is left to remove it when the launcher was killed.
  t.after(() => rmSync(pm2Dir, { recursive: true, force: true }))
  assert.ok(pids.length >= 7, `1 + 3 + at least 3 pids: ${pids}`)
  child.kill('SIGKILL')
  assert.deepEqual(await waitGone(pids), [])
  assert.deepEqual(dirs.filter(d => existsSync(d)), [], 'the launch temp folders are removed by the servers themselves')
})
