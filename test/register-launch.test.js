// Launchers with real processes: single, cluster, PM2, affinity, the wrap hook, failures, and no process left after
// stop().
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { launch } from '../register/launch.js'
import { probe } from '../lib/net.js'
import { deploymentShape } from '../lib/strategies.js'
import { isAlive } from '../register/proc-tree.js'

const quiet = { readyTimeoutMs: 20000 }

/** Launches and always stops, also when the test fails. */
async function start (t, opts) {
  const h = await launch({ ...quiet, ...opts })
  t.after(() => h.stop())
  return h
}

/** Instance ids seen over `count` fresh connections. */
async function instancesSeen (url, count = 12) {
  const ids = new Set()
  for (let i = 0; i < count; i++) ids.add((await probe(`${url}/healthz`)).instance)
  return ids
}

const cpusAllowed = (pid) => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]
const environOf = (pid) => { try { return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0') } catch { return [] } }

test('the strategy table maps up, cm and pm2 to one replica of their process shape, hs to N single replicas; an unknown strategy is a bug', () => {
  const shape = (strategy) => { const s = deploymentShape({ strategy, instances: 3 }); return [s.replicas, s.process, s.workers, s.balanced] }
  assert.deepEqual(shape('up'), [1, 'single', 1, false])
  assert.deepEqual(shape('cm'), [1, 'cluster', 3, false])
  assert.deepEqual(shape('pm2'), [1, 'pm2', 3, false])
  assert.deepEqual(shape('hs'), [3, 'single', 1, true])
  assert.throws(() => deploymentShape({ strategy: 'xx', instances: 1 }), (/** @type {any} */ err) => err.code === 'NS_ERR_INTERNAL' && err.exitCode === 1)
})

test('single: one process serves the benchmark; stop() leaves no pid alive', async (t) => {
  const h = await start(t, { shape: 'single', instances: 1, benchmark: 'cpu', params: { n: '104729' }, port: 0, instanceIdPrefix: 'solo' })
  assert.match(h.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.deepEqual(h.instanceIds, ['solo'])
  const res = await fetch(`${h.url}/cpu`)
  assert.deepEqual(await res.json(), { n: 104729, prime: true, divisor: null })
  assert.equal(res.headers.get('x-nodescale-instance'), 'solo')
  const pids = h.pids()
  assert.deepEqual(pids, [h.rootPid])
  await h.stop()
  assert.deepEqual(pids.filter(isAlive), [])
  assert.deepEqual(await h.exited, { code: 0, signal: null })
  assert.equal(existsSync(h.tmpDir), false, 'the launch temp folder is removed')
})

test('cluster x2: both workers serve; a worker killed with SIGKILL is replaced and the service keeps answering', async (t) => {
  const h = await start(t, { shape: 'cluster', instances: 2, benchmark: 'page', port: 0 })
  assert.equal(h.instanceIds.length, 2)
  assert.equal((await instancesSeen(h.url)).size, 2, 'two distinct instance headers')
  const before = h.pids()
  assert.equal(before.length, 3, 'primary + 2 workers')
  const victim = before.find(p => p !== h.rootPid)
  process.kill(victim, 'SIGKILL')
  const deadline = Date.now() + 10000
  let ids = new Set()
  while (Date.now() < deadline) {
    ids = await instancesSeen(h.url, 6).catch(() => new Set())
    if (ids.size === 2 && ![...ids].every(id => h.instanceIds.includes(id))) break
    await sleep(100)
  }
  assert.equal(ids.size, 2, 'two workers answer again')
  assert.ok([...ids].some(id => !h.instanceIds.includes(id)), `a new worker id among ${[...ids]}`)
  assert.match(h.output(), /exited with signal SIGKILL; restarting/)
  const all = h.pids()
  assert.equal(all.length, 3)
  await h.stop()
  assert.deepEqual([...before, ...all].filter(isAlive), [])
})

test('pm2 x2: two PM2 instances serve; stop() leaves neither PM2 nor a worker, and no PM2 home behind', async (t) => {
  const h = await start(t, { shape: 'pm2', instances: 2, benchmark: 'baseline', port: 0 })
  assert.deepEqual([...h.instanceIds].sort(), ['pm2-0', 'pm2-1'])
  assert.equal((await instancesSeen(h.url)).size, 2)
  const res = await fetch(`${h.url}/baseline`)
  assert.equal(await res.text(), 'OK')
  const pids = h.pids()
  assert.ok(pids.length >= 3, `pm2-runtime + 2 workers: ${pids}`)
  const home = `PM2_HOME=${h.tmpDir}/pm2`
  assert.ok(pids.every(p => environOf(p).includes(home)), 'every PM2 process uses the private PM2_HOME')
  await h.stop()
  assert.deepEqual(pids.filter(isAlive), [])
  const leftovers = readdirSync('/proc').filter(d => /^\d+$/.test(d) && environOf(Number(d)).includes(home))
  assert.deepEqual(leftovers.filter(p => isAlive(Number(p))), [], 'no process with our PM2_HOME anywhere')
  assert.equal(existsSync(`${h.tmpDir}/pm2`), false)
})

test('affinity: the server runs on the listed cores only (taskset), and a core outside the machine is a bug of the caller', async (t) => {
  const h = await start(t, { shape: 'single', instances: 1, benchmark: 'baseline', port: 0, affinity: [0] })
  assert.equal(cpusAllowed(h.rootPid), '0')
  await assert.rejects(launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [0, 999] }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_INTERNAL' && /999/.test(err.message))
  await assert.rejects(launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [0, 0] }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_INTERNAL')
})

test('the wrap hook starts the process through the given command (as the RC does to join a cgroup)', async (t) => {
  const wrap = (cmd, args) => ({ cmd: 'env', args: ['NS_WRAPPED=yes', cmd, ...args] })
  const h = await start(t, { shape: 'cluster', instances: 1, benchmark: 'baseline', port: 0, wrap, affinity: [0] })
  for (const pid of h.pids()) {
    assert.ok(environOf(pid).includes('NS_WRAPPED=yes'), `pid ${pid} went through the wrap`)
    assert.equal(cpusAllowed(pid), '0', 'workers inherit the affinity')
  }
})

/** Live pids whose environment holds the marker: what a launch left behind. */
function processesWith (marker) {
  return readdirSync('/proc').filter(d => /^\d+$/.test(d) && environOf(Number(d)).includes(marker)).map(Number).filter(isAlive)
}

const marked = (marker) => (cmd, args) => ({ cmd: 'env', args: [marker, cmd, ...args] })

test('a server that exits early is NS_ERR_DEPLOY with its output; nothing is left running', async (t) => {
  const blocker = createServer()
  await new Promise(resolve => blocker.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => blocker.close())
  const port = /** @type {any} */ (blocker.address()).port
  for (const shape of ['single', 'cluster', 'pm2']) {
    const marker = `NS_TEST_MARK=early-${shape}-${process.pid}`
    await assert.rejects(launch({
      shape: /** @type {any} */ (shape), instances: 1, benchmark: 'baseline', port, wrap: marked(marker), readyTimeoutMs: 8000
    }), (/** @type {any} */ err) => {
      assert.equal(err.code, 'NS_ERR_DEPLOY', shape)
      assert.match(err.message, /could not start|exited before it was ready/)
      assert.match(err.message, /EADDRINUSE/)
      return true
    })
    assert.deepEqual(processesWith(marker), [], `${shape}: no process left`)
  }
})

test('a server that never answers times out as NS_ERR_DEPLOY and is killed', async () => {
  const marker = `NS_TEST_MARK=silent-${process.pid}`
  const wrap = () => ({ cmd: 'env', args: [marker, process.execPath, '-e', 'console.log("started-but-silent"); setInterval(() => {}, 1000)'] })
  const started = Date.now()
  await assert.rejects(launch({ shape: 'single', instances: 1, benchmark: 'baseline', port: 0, wrap, readyTimeoutMs: 800 }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_DEPLOY')
    assert.match(err.message, /not ready after 800 ms: 0 of 1 instances/)
    assert.match(err.message, /started-but-silent/)
    return true
  })
  assert.ok(Date.now() - started < 8000)
  assert.deepEqual(processesWith(marker), [])
})

test('a bad app or bad params fail before any process starts; a shape the caller should not ask for is a bug', async () => {
  await assert.rejects(launch({ shape: 'single', instances: 1, benchmark: 'x', app: 'test/fixtures/apps/syntax-error.js' }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_APP')
  await assert.rejects(launch({ shape: 'single', instances: 1, benchmark: 'cpu', params: { n: 'x' } }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && /--param n/.test(err.message))
  await assert.rejects(launch({ shape: 'single', instances: 2, benchmark: 'cpu' }), (/** @type {any} */ err) => err.code === 'NS_ERR_INTERNAL')
  await assert.rejects(launch({ shape: /** @type {any} */ ('swarm'), instances: 1, benchmark: 'cpu' }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_INTERNAL')
})

test('custom apps run in launched servers: a Benchmark object in a cluster, the cmd: wrapper in a single process', async (t) => {
  const c = await start(t, { shape: 'cluster', instances: 2, benchmark: 'g', app: 'test/fixtures/apps/bench-object.js', params: { greeting: 'hey' }, port: 0 })
  const text = await (await fetch(`${c.url}/greeter`)).text()
  assert.match(text, /^hey from w\d+$/)
  const s = await start(t, { shape: 'single', instances: 1, benchmark: 'up', app: 'cmd:tr a-z A-Z', port: 0 })
  assert.equal(await (await fetch(`${s.url}/up`, { method: 'POST', body: 'shout' })).text(), 'SHOUT')
})
