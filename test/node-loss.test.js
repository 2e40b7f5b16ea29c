// A node lost while the load runs: the watch's rules, the watch over real HTTP RCs, the loss window and what run.json
// says of it (errors counted from a real JTL), and a merged CPU timeline whose lost node ends early. No swarm needed
// here: test/cluster-run.test.js stops and cuts off real worker engines.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import Docker from 'dockerode'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createLossTracker, createNodeWatch, createOutageTracker } from '../executor/docker/node-watch.js'
import { lossWindow, describeLoss, formatLoss } from '../executor/degraded.js'
import { mergeTimelines, createRcSampler } from '../executor/docker/rc-client.js'
import { summarizeCpu } from '../rc/cpu-summary.js'
import { createRcApp } from '../rc/service.js'

const w1 = { id: 'w1id', hostname: 'nodescale-w1', label: 'nodescale-w1', rcUrl: null }
const w2 = { id: 'w2id', hostname: 'nodescale-w2', label: 'nodescale-w2', rcUrl: null }
const ok = (at) => ({ at, swarmState: 'ready', rcOk: true })
const noRc = (at) => ({ at, swarmState: 'ready', rcOk: false, rcError: 'ECONNREFUSED' })

test('a node is lost after two failed RC probes in a row, from the first of them; one blip is not a loss', () => {
  const lines = []
  const t = createLossTracker([w1, w2], { log: l => lines.push(l) })
  t.observe('w2id', ok(1000))
  t.observe('w2id', noRc(2000))
  t.observe('w2id', ok(3000))
  assert.deepEqual(t.episodes(), [], 'one failed probe between good ones')
  t.observe('w2id', noRc(4000))
  t.observe('w2id', noRc(5000))
  const [e] = t.episodes()
  assert.deepEqual({ ...e }, {
    nodeId: 'w2id',
    node: 'nodescale-w2',
    label: 'nodescale-w2',
    lastSeenAt: 3000,
    lostAt: 4000,
    swarmDownAt: null,
    recoveredAt: null,
    why: 'its RC does not answer (ECONNREFUSED)'
  })
  assert.deepEqual(t.lostNow(), ['w2id'])
  t.observe('w2id', { at: 9000, swarmState: 'down', rcOk: false })
  t.observe('w2id', { at: 10000, swarmState: 'down', rcOk: false })
  assert.equal(t.episodes()[0].swarmDownAt, 9000, 'the first time the manager says down')
  t.observe('w2id', ok(12000))
  assert.equal(t.episodes()[0].recoveredAt, 12000)
  assert.deepEqual(t.lostNow(), [])
  assert.match(lines.join('\n'),
    /node nodescale-w2 lost \(its RC does not answer \(ECONNREFUSED\)\)[\s\S]*marks node nodescale-w2 down[\s\S]*is back .* after 8\.0 s/)
})

test('the manager saying down is a loss at once; a manager that does not answer is no verdict', () => {
  const t = createLossTracker([w1, w2])
  t.observe('w1id', { at: 1000, swarmState: null, rcOk: true })
  t.observe('w1id', { at: 2000, swarmState: null, rcOk: true })
  assert.deepEqual(t.episodes(), [])
  t.observe('w2id', { at: 1000, swarmState: 'down', rcOk: true })
  assert.equal(t.episodes().length, 1)
  assert.equal(t.episodes()[0].why, 'the manager marks it down')
  assert.equal(t.episodes()[0].swarmDownAt, 1000)
  assert.equal(t.episodes()[0].lastSeenAt, null, 'never seen well during the watch')
})

test('the watch over real RC servers: a closed RC is lost within a few ticks, back when it answers again', async () => {
  const rc = () => createServer((req, res) => { res.writeHead(req.url === '/healthz' ? 200 : 404).end('{}') })
  const a = rc().listen(0, '127.0.0.1')
  let b = rc().listen(0, '127.0.0.1')
  await Promise.all([a, b].map(s => new Promise(resolve => s.on('listening', resolve))))
  const portB = /** @type {any} */ (b.address()).port
  const nodes = [{ ...w1, rcUrl: `http://127.0.0.1:${/** @type {any} */ (a.address()).port}` }, { ...w2, rcUrl: `http://127.0.0.1:${portB}` }]
  let listCalls = 0
  // the manager's node list is the one part not run for real here: it says both nodes are ready throughout
  const docker = /** @type {any} */ ({
    listNodes: async () => { listCalls++; return [{ ID: 'w1id', Status: { State: 'ready' } }, { ID: 'w2id', Status: { State: 'ready' } }] }
  })
  const watch = createNodeWatch({ docker, nodes, intervalMs: 100, probeTimeoutMs: 300 })
  watch.start()
  await sleep(350)
  const closedAt = Date.now()
  b.closeAllConnections()
  await new Promise(resolve => b.close(resolve))
  const deadline = Date.now() + 3000
  while (!watch.tracker.lostNow().length && Date.now() < deadline) await sleep(20)
  assert.deepEqual(watch.tracker.lostNow(), ['w2id'], 'the closed RC is lost')
  b = rc().listen(portB, '127.0.0.1')
  while (watch.tracker.lostNow().length && Date.now() < deadline + 3000) await sleep(20)
  const episodes = await watch.stop()
  a.close()
  b.close()
  assert.equal(episodes.length, 1)
  const [e] = episodes
  assert.equal(e.nodeId, 'w2id')
  assert.ok(e.lastSeenAt <= closedAt + 100 && e.lostAt >= closedAt - 100, `lost between ${e.lastSeenAt} and ${e.lostAt}, closed at ${closedAt}`)
  assert.ok(e.recoveredAt > e.lostAt)
  assert.ok(listCalls >= 3, 'the manager was asked every tick')
})

test('a manager that refuses twice in a row is a daemon outage, from the first refusal to its first answer; one blip is not', () => {
  const t = createOutageTracker()
  t.observe({ at: 0, ok: true })
  t.observe({ at: 1000, ok: false, why: 'ECONNREFUSED' })
  t.observe({ at: 2000, ok: true })
  assert.deepEqual(t.outages(), [], 'one refusal is no outage')
  t.observe({ at: 3000, ok: false, why: 'ENOENT' })
  t.observe({ at: 4000, ok: false, why: 'ENOENT' })
  t.observe({ at: 5000, ok: false, why: 'ECONNREFUSED' })
  assert.deepEqual(t.outages(), [{ from: 3000, to: null, why: 'ENOENT' }])
  t.observe({ at: 6000, ok: true })
  assert.deepEqual(t.outages(), [{ from: 3000, to: 6000, why: 'ENOENT' }])
})

test('the watch through a real Docker client: the engine\'s socket gone and back is a daemon outage, not a lost node', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-daemon-'))
  const socketPath = join(dir, 'docker.sock')
  // an engine's node list on a unix socket, as dockerd serves it: stopped (socket removed) and started again
  const engine = () => createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ ID: 'w1id', Status: { State: 'ready' } }]))
  })
  let server = engine().listen(socketPath)
  await new Promise(resolve => server.on('listening', resolve))
  const watch = createNodeWatch({ docker: new Docker({ socketPath }), nodes: [w1], intervalMs: 100, probeTimeoutMs: 300 })
  watch.start()
  await sleep(250)
  const stoppedAt = Date.now()
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
  await sleep(600)
  assert.equal(watch.outages().length, 1, 'the refused calls are an outage')
  assert.equal(watch.outages()[0].to, null)
  server = engine().listen(socketPath)
  await new Promise(resolve => server.on('listening', resolve))
  await sleep(400)
  const episodes = await watch.stop()
  server.close()
  rmSync(dir, { recursive: true, force: true })
  const [o] = watch.outages()
  assert.ok(o.from >= stoppedAt - 100 && o.to > o.from, JSON.stringify(o))
  assert.match(o.why, /ENOENT|ECONNREFUSED/)
  assert.deepEqual(episodes, [], 'no node was lost: the manager said nothing about them while it was away')
})

/** A JMeter CSV JTL: one row per [timeStamp, success, elapsed]. */
function writeJtl (rows) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-loss-'))
  const file = join(dir, 'samples.jtl')
  const head = 'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,' +
    'allThreads,URL,Latency,IdleTime,Connect'
  writeFileSync(file, [head, ...rows.map(([ts, good, ms]) =>
    `${ts},${ms},baseline,${good ? '200,OK' : '502,Bad Gateway'},t 1-1,text,${good},,152,74,4,4,http://127.0.0.1/,2,0,0`)].join('\n') + '\n')
  return file
}

test('run.json degraded: the window from the last good sight to the end (or the return), errors and throughput in and before it, ' +
  'the rescheduled tasks', async () => {
  const steadyStart = 1_000_000
  const steadyEnd = steadyStart + 10_000
  // 10 requests/s for 10 s, 2 ms each; the four just after the loss fail, and one started before the last good sight
  // fails when its 10 s timeout ends: it counts in the loss window, by its end
  const rows = Array.from({ length: 100 }, (_, i) => [steadyStart + i * 100, !(i >= 41 && i <= 44), 2])
  rows[35] = [steadyStart + 3500, false, 5000]
  const jtl = writeJtl(rows)
  const episode = {
    nodeId: 'w2id',
    node: 'nodescale-w2',
    label: 'nodescale-w2',
    lastSeenAt: steadyStart + 4000,
    lostAt: steadyStart + 5000,
    swarmDownAt: null,
    recoveredAt: null,
    why: 'its RC does not answer (ETIMEDOUT)'
  }
  assert.deepEqual(lossWindow([episode], { steadyStart, steadyEnd }), { from: steadyStart + 4000, to: steadyEnd })
  assert.deepEqual(lossWindow([{ ...episode, lastSeenAt: steadyStart - 500, recoveredAt: steadyStart + 7000 }], { steadyStart, steadyEnd }),
    { from: steadyStart, to: steadyStart + 7000 }, 'clamped to the steady window')

  const place = (task, nodeId, nodeLabel, service = 'ns-x_app') =>
    ({ instance: `${service}.1`, service, task, node: nodeLabel, nodeId, nodeLabel, nodeAddr: null, container: null })
  const before = [place('t1', 'w1id', 'nodescale-w1'), place('t2', 'w2id', 'nodescale-w2'), place('t3', 'w2id', 'nodescale-w2'),
    place('lb', 'm', 'm0', 'ns-x_lb')]
  const after = [{ ...place('t1', 'w1id', 'nodescale-w1'), state: 'running' }, { ...place('t4', 'w1id', 'nodescale-w1'), state: 'running' },
    { ...place('t5', 'w1id', 'nodescale-w1'), state: 'ready' }, { ...place('lb', 'm', 'm0', 'ns-x_lb'), state: 'running' }]
  const d = await describeLoss([episode], { jtl, load: { steadyStart, steadyEnd }, before, after })
  assert.equal(d.nodes[0].tasksLost, 2)
  assert.equal(d.nodes[0].lostAfterMs, 5000)
  assert.equal(d.nodes[0].lostAt, new Date(steadyStart + 5000).toISOString())
  // ended in [+4000, +10000): rows 40-99 and row 35 (started before the window, failed in it)
  assert.deepEqual(d.duringLoss, { requests: 61, errors: 5, throughput: 61 / 6000 * 1000 })
  assert.equal(d.errorsDuringLoss, 5)
  assert.deepEqual(d.beforeLoss, { requests: 39, errors: 0, throughput: 39 / 4000 * 1000 })
  assert.deepEqual(d.rescheduled.map(r => r.task), ['t4', 't5'])
  assert.equal(d.notRunning, 1)
  assert.equal(d.window.ms, 6000)
  const text = formatLoss(d)
  assert.match(text, /node nodescale-w2 lost 5\.0 s into the steady window \(its RC does not answer \(ETIMEDOUT\)\), not back by the end; 2 tasks were on it/)
  assert.match(text, /during the loss \(6\.0 s\): 5 errors of 61 requests/)
  assert.match(text, /Swarm rescheduled 2 tasks to nodescale-w1; 1 not running at the end/)
  assert.match(formatLoss({ ...d, rescheduled: [] }), /Swarm had rescheduled no task by the end of the load \(the manager had not yet marked the node down\)/)
})

test('a merged timeline keeps the samples of every node; a node that ended early has null cores and its own table', () => {
  const sample = (t, server, host) => ({ t, server, serverTotal: server.reduce((a, b) => a + b, 0) / 100, host, containers: {} })
  const full = { intervalMs: 1000, cpus: 2, source: 'cgroup-v1', samples: [1, 2, 3, 4].map(i => sample(i * 1000, [50, 10], [60, 20])) }
  const short = { intervalMs: 1000, cpus: 2, source: 'cgroup-v1', samples: [1, 2].map(i => sample(i * 1000, [20, 20], [30, 30])) }
  const merged = mergeTimelines([{ node: 'a', timeline: full }, { node: 'b', timeline: short, partial: true }])
  assert.equal(merged.samples.length, 4, 'not cut to the shortest node')
  assert.deepEqual(merged.samples[3].server, [50, 10, null, null])
  assert.deepEqual(merged.nodes.map(n => [n.node, n.firstCore, n.partial ?? false]), [['a', 0, false], ['b', 2, true]])
  const cpu = summarizeCpu(merged)
  assert.deepEqual(cpu.nodes.map(n => [n.node, n.samples, n.partial ?? false, n.cores.map(c => c.usage)]),
    [['a', 4, false, [50, 10]], ['b', 2, true, [20, 20]]])
  assert.equal(cpu.total, 0.6 + 0.2, 'the cluster total counts the lost node as idle where it has no samples: 0.6 + 0.4 x 2/4')
})

test('a node that runs only the load balancer adds its roles and busy cores to the merge, not cores of the server', () => {
  const sample = (t, server, host, roles) => ({ t, server, serverTotal: server.reduce((a, b) => a + b, 0) / 100, host, containers: {}, roles })
  const worker = {
    intervalMs: 1000, cpus: 2, source: 'cgroup-v1', samples: [1, 2, 3].map(i => sample(i * 1000, [50, 50], [60, 60], { rc: 0.01, kernel: 0.05 }))
  }
  const manager = {
    intervalMs: 1000,
    cpus: 2,
    source: 'cgroup-v1',
    samples: [1, 2, 3].map(i => sample(i * 1000, [0, 0], [20, 10], { rc: 0.01, kernel: 0.02, 'load-balancer': 0.2 }))
  }
  const merged = mergeTimelines([{ node: 'w1', timeline: worker }, { node: 'm0', timeline: manager, rolesOnly: true }])
  assert.equal(merged.cpus, 2, 'the server\'s cores are the worker\'s')
  assert.deepEqual(merged.nodes.map(n => n.node), ['w1'])
  assert.deepEqual(merged.samples[0].roles, { rc: 0.02, kernel: 0.07, 'load-balancer': 0.2 })
  assert.equal(merged.samples[0].apartBusy, 0.3)
  assert.equal(merged.apartCpus, 2)
  assert.equal(summarizeCpu(merged).cores.length, 2)
})

test('the printed summary of a multi-node run: a line per node, the lost one marked, and the degraded lines', async () => {
  const { formatRunSummary } = await import('../executor/run-text.js')
  const node = (label, usage, extra = {}) =>
    ({ label, cores: usage.map((u, core) => ({ core, usage: u })), total: usage.reduce((a, b) => a + b, 0) / 100, host: { overall: 50 }, ...extra })
  const run = {
    id: 'r1',
    status: 'degraded',
    dir: '/tmp/r1',
    config: { strategy: 'hs', instances: 4, benchmark: 'baseline', concurrency: 4, duration: 16, warmup: 1, driver: 'autocannon' },
    environment: { backend: 'swarm' },
    summary: { requests: 100, errors: 4, errorRate: 0.04, throughput: 10, latency: { mean: 1, p50: 1, p90: 1, p95: 1, p99: 1, max: 1 } },
    cpu: {
      samples: 16,
      source: 'cgroup-v1',
      cores: [],
      total: 0.5,
      spread: 0,
      host: null,
      nodes: [node('nodescale-w1', [20, 10]), node('nodescale-w2', [15, 5], { partial: true, samples: 3 })]
    },
    degraded: {
      nodes: [
        { label: 'nodescale-w2', node: 'nodescale-w2', lostAfterMs: 2800, why: 'its RC does not answer (ECONNREFUSED)', recoveredAt: null, tasksLost: 2 }
      ],
      window: { ms: 14000 },
      duringLoss: { requests: 60, errors: 4, throughput: 4.3 },
      beforeLoss: { requests: 40, errors: 0, throughput: 14.3 },
      rescheduled: [{ nodeLabel: 'nodescale-w1' }],
      notRunning: 0
    }
  }
  const text = formatRunSummary(run)
  assert.match(text, /^run r1: degraded$/m)
  assert.match(text, /node nodescale-w1 {2}server core0 20\.0% {2}core1 10\.0% {2}· 0\.30 cores · host 50\.0%$/m)
  assert.match(text, /node nodescale-w2 .* \(3 samples: lost during the run\)$/m)
  assert.match(text, /degraded: node nodescale-w2 lost 2\.8 s into the steady window/)
  assert.match(text, /Swarm rescheduled 1 task to nodescale-w1$/m)
})

test('a lost node keeps the samples its RC gave before the loss, each once, though its RC answers slower than the checkpoints', async (t) => {
  // a real RC over a recorded cgroup v2 layout, reached through a proxy that holds every answer 300 ms
  const root = mkdtempSync(join(tmpdir(), 'nodescale-cg2-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const id = 'c'.repeat(64)
  const dir = join(root, 'system.slice', `docker-${id}.scope`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n')
  writeFileSync(join(dir, 'cpu.stat'), 'usage_usec 1000\nuser_usec 1000\nsystem_usec 0\n')
  const token = 'test-token-0123456789abcdef'
  const rc = createRcApp({ token, intervalMs: 50, cgroupRoot: root, pidOf: async () => null })
  const rcServer = await new Promise(resolve => { const s = rc.app.listen(0, '127.0.0.1', () => resolve(s)) })
  const proxy = createServer((req, res) => {
    const up = request({ host: '127.0.0.1', port: rcServer.address().port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      const chunks = []
      r.on('data', c => chunks.push(c))
      r.on('end', () => setTimeout(() => { res.writeHead(r.statusCode, r.headers); res.end(Buffer.concat(chunks)) }, 300))
    })
    up.on('error', () => { res.destroy() })
    req.pipe(up)
  })
  await new Promise(resolve => proxy.listen(0, '127.0.0.1', () => resolve(null)))
  const lose = () => { rc.close(); rcServer.closeAllConnections(); rcServer.close(); proxy.closeAllConnections(); proxy.close() }
  t.after(lose)

  const sampler = createRcSampler({
    rcs: [{ node: 'n1', url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (proxy.address()).port}` }],
    token,
    containers: [{ node: 'n1', containerId: id }],
    checkpointMs: 60
  })
  await sampler.start()
  await sleep(1500)
  lose()
  const timeline = await sampler.stop()
  assert.equal(timeline.nodes[0].partial, true, 'the RC is gone: the timeline is the last checkpoint')
  const ts = timeline.samples.map(x => x.t)
  assert.ok(ts.length >= 5, `${ts.length} samples kept`)
  assert.ok(ts.every((x, i) => i === 0 || x > ts[i - 1]), `each sample once, in order: ${ts.join(',')}`)
})
