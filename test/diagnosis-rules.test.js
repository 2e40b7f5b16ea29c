// What limited a run, judged from its figures: each rule on figures made to cross its threshold (and only its own),
// their order when several hold, `none` when nothing is at its limit; the figures themselves from telemetry and
// timelines (roles summing to the host's busy cores); the telemetry line and the monitor that writes it, measured on
// this process's own event loop; HAProxy's `show stat`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { judgeBottleneck, BOTTLENECK_THRESHOLDS as T, BOTTLENECK_RULES } from '../analyzer/bottleneck.js'
import { summarizeInstances, summarizeRoles } from '../analyzer/diagnosis-figures.js'
import { whyCurvesBend } from '../analyzer/why-bends.js'
import { formatTelemetry, parseTelemetry } from '../lib/telemetry.js'
import { startTelemetry } from '../register/telemetry.js'
import { parseHaproxyStat } from '../executor/haproxy.js'

const worker = (over = {}) => ({ id: 'w1', pid: 1, role: 'worker', samples: 5, elu: 0.5, cpu: 0.5, delay: { p50: 1, p99: 5, max: 9 }, gcShare: 0.01, heapMB: 20, ...over })
/** figures of a run that nothing limited: half-busy loops, an idle host, a quiet generator */
const calm = {
  instances: [worker()],
  workers: [worker()],
  roles: { workers: 0.5, rc: 0.01, 'load-generator': 0.2, other: 0.1 },
  hostIdle: 60,
  hostCores: 2,
  server: 0.5,
  allowance: 2,
  throttling: { share: 0, msPerSecond: 0 },
  generator: { share: 0.2, cores: 0.2 },
  generatorFlagged: false,
  lb: null,
  latencyMs: 2,
  throughput: 1000
}
const withWorker = (over) => ({ ...calm, instances: [worker(over)], workers: [worker(over)] })

test('each rule names its bottleneck from its own figure, with the figure and its threshold as evidence', () => {
  const cases = [
    ['load-generator', { ...calm, generator: { share: 0.97, cores: 0.97 } }, 'generator-share', 0.97],
    ['cpu-quota', { ...calm, throttling: { share: 0.8, msPerSecond: 600 } }, 'throttled-share', 0.8],
    ['host-cpu', { ...calm, hostIdle: 1.5 }, 'host-idle', 1.5],
    ['load-balancer', { ...calm, roles: { ...calm.roles, 'load-balancer': 0.95 } }, 'lb-cores', 0.95],
    ['load-balancer', { ...calm, lb: { queue: 12, maxQueue: 40, sessions: 50, rate: 900 } }, 'lb-queue', 12],
    ['gc', withWorker({ elu: 0.9, gcShare: 0.3 }), 'gc-share', 0.3],
    ['event-loop', withWorker({ elu: 0.99, cpu: 0.98 }), 'elu', 0.99],
    ['io', { ...withWorker({ elu: 0.1, cpu: 0.05 }), server: 0.05, throughput: 100, latencyMs: 40 }, 'mean-elu', 0.1],
    ['io', { ...withWorker({ elu: 0.58, cpu: 0.98 }), server: 0.98, allowance: 1, throughput: 1189, latencyMs: 13.4 }, 'mean-elu', 0.58]
  ]
  assert.deepEqual([...new Set(cases.map(c => c[0]))], BOTTLENECK_RULES.map(r => r.kind), 'every rule has a case')
  for (const [kind, facts, figure, value] of /** @type {[string, any, string, number][]} */ (cases)) {
    const b = judgeBottleneck(facts)
    assert.equal(b.kind, kind, JSON.stringify(b))
    assert.equal(b.confidence, 'high', kind)
    assert.equal(b.evidence[0].figure, figure)
    assert.equal(b.evidence[0].value, value)
    assert.ok(b.evidence[0].threshold !== undefined, `${kind}: the threshold is evidence too`)
    assert.ok(b.line.length > 10)
  }
})

test('the UP case reads as the issue says: the one loop saturated while the quota has CPU left', () => {
  const b = judgeBottleneck({ ...withWorker({ id: '1', elu: 0.99, cpu: 0.98 }), hostIdle: 61 })
  assert.equal(b.kind, 'event-loop')
  assert.equal(b.line, 'instance 1 ELU 0.99, 0.98 cores of 2.0 allowed, host 61% idle')
})

test('several rules hold: the first in order decides, the others are said beside it, confidence medium', () => {
  const b = judgeBottleneck({ ...withWorker({ elu: 0.99 }), throttling: { share: 0.9, msPerSecond: 700 }, hostIdle: 2 })
  assert.equal(b.kind, 'cpu-quota')
  assert.equal(b.confidence, 'medium')
  assert.deepEqual(b.also.map(a => a.kind), ['host-cpu', 'event-loop'])
  // a saturated generator comes first: the server's figures do not count when the load side was the limit
  assert.equal(judgeBottleneck({ ...calm, generatorFlagged: true, hostIdle: 1 }).kind, 'load-generator')
})

test('nothing at its limit is `none`; near a threshold or without telemetry the confidence is low', () => {
  const b = judgeBottleneck(calm)
  assert.equal(b.kind, 'none')
  assert.equal(b.confidence, 'high')
  assert.match(b.line, /offered load was below the capacity/)
  assert.equal(judgeBottleneck(withWorker({ elu: T.elu - 0.05 })).confidence, 'low')
  // a quick request at low load waits on nothing: its fixed cost (the network, the generator) is not I/O
  assert.equal(judgeBottleneck({ ...withWorker({ elu: 0.05 }), throughput: 500, latencyMs: 1.2 }).kind, 'none')
  const blind = judgeBottleneck({ ...calm, instances: [], workers: [] })
  assert.equal(blind.kind, 'none')
  assert.equal(blind.confidence, 'low')
  assert.deepEqual(blind.unchecked, ['gc', 'event-loop', 'io'])
})

test('roles: the server split by its instances, the sampler\'s roles, the generator; other is the rest of the host', () => {
  const rec = (id, role, cpu, t) => ({ t, id, pid: id.length, role, ms: 1000, elu: 0.5, cpu, delay: { p50: 1, p99: 2, max: 3 }, gcMs: 10, heapMB: 9 })
  const telemetry = [1000, 2000, 3000].flatMap(t => [rec('primary', 'primary', 0.05, t), rec('w1', 'worker', 0.6, t), rec('w22', 'worker', 0.4, t)])
  const instances = summarizeInstances(telemetry)
  assert.deepEqual(instances.map(i => i.id), ['primary', 'w1', 'w22'])
  assert.equal(instances[1].gcShare, 0.01)
  const samples = [1000, 2000, 3000].map(t => ({ t, host: [80, 70], serverTotal: 1.1, roles: { rc: 0.01, 'load-balancer': 0.1 } }))
  const timeline = { intervalMs: 1000, cpus: 2, samples }
  const cluster = summarizeRoles({ timeline, window: { from: 0, to: 4000 }, instances, processShape: 'cluster', generatorCores: 0.2 })
  assert.deepEqual(cluster.roles, { workers: 1.05, primary: 0.05, 'load-balancer': 0.1, rc: 0.01, 'load-generator': 0.2, other: 0.09 })
  const sum = Object.values(cluster.roles).reduce((a, b) => a + b, 0)
  assert.ok(Math.abs(sum - cluster.hostBusy) < 0.005, `${sum} vs ${cluster.hostBusy}`)
  // PM2: the instances say their own CPU; the daemon is what the server used beyond them
  const pm2 = summarizeRoles({ timeline, window: { from: 0, to: 4000 }, instances: instances.slice(1), processShape: 'pm2', generatorCores: null })
  assert.equal(pm2.roles.workers, 1)
  assert.equal(pm2.roles['pm2-daemon'], 0.1)
  assert.equal(summarizeRoles({ timeline, window: { from: 9000, to: 9999 }, instances, processShape: 'single', generatorCores: null }), null)
})

test('the telemetry line: written with its prefix, found after any log prefix, nothing else taken for it', () => {
  const r = { t: 1, id: 'r1-w2', pid: 7, role: /** @type {'worker'} */ ('worker'), ms: 1000, elu: 0.5, cpu: 0.4, delay: { p50: 0.1, p99: 2, max: 3 }, gcMs: 4, heapMB: 10 }
  assert.deepEqual(parseTelemetry(formatTelemetry(r)), r)
  assert.deepEqual(parseTelemetry(`0|nodescale | ${formatTelemetry(r)}`), r)
  assert.equal(parseTelemetry('nodescale: instance w1 serving cpu'), null)
  assert.equal(parseTelemetry('@nodescale-telemetry {"t":1'), null)
  assert.equal(parseTelemetry('@nodescale-telemetry {"no":"fields"}'), null)
})

test('the monitor measures this process: a loop blocked most of an interval reads as busy, with its delay', async () => {
  const lines = []
  const m = startTelemetry({ id: 'me', role: 'worker', intervalMs: 400, write: (l) => lines.push(parseTelemetry(l)) })
  await new Promise(resolve => setTimeout(resolve, 420))
  const until = Date.now() + 330
  while (Date.now() < until) { /* the loop blocked */ }
  await new Promise(resolve => setTimeout(resolve, 500))
  m.stop()
  assert.ok(lines.length >= 2, JSON.stringify(lines))
  const busy = lines.reduce((a, b) => (b.elu > a.elu ? b : a))
  assert.ok(busy.elu >= 0.6, JSON.stringify(lines))
  assert.ok(busy.cpu >= 0.5, JSON.stringify(busy))
  assert.ok(busy.delay.max >= 250, JSON.stringify(busy))
  assert.ok(lines.every(l => l.id === 'me' && l.pid === process.pid && l.heapMB > 0))
})

test('HAProxy\'s show stat: the frontend\'s sessions and rate, the backend\'s queue, by the header\'s column names', () => {
  const csv = '# pxname,svname,qcur,qmax,scur,smax,rate\nbench,FRONTEND,,,12,30,950\napp,s0,0,0,6,9,\napp,BACKEND,3,7,12,30,900\n'
  assert.deepEqual(parseHaproxyStat(csv), { sessions: 12, rate: 950, queue: 3, backendSessions: 12 })
  assert.equal(parseHaproxyStat('Unknown command'), null)
})

test('why the curves bend: each N\'s bottleneck from its runs (by folder), the limit that holds to the largest N, the fit', () => {
  const diag = (kind, line, workers) => ({ bottleneck: { kind, line }, roles: { workers, 'load-generator': 0.1, other: 0.05 } })
  const runs = [
    { dir: '/s/a1', diagnosis: diag('cpu-quota', 'throttled in 80% of CFS periods', 0.5) },
    { dir: '/s/a2', diagnosis: diag('event-loop', 'instance r1 ELU 0.99', 1) },
    { dir: '/s/a3', diagnosis: diag('event-loop', 'instance r1 ELU 1.00', 1) },
    { dir: '/s/a4', diagnosis: diag('none', 'nothing at its limit', 0.9) },
    { dir: '/s/a5', diagnosis: diag('event-loop', 'instance r1 ELU 0.98', 1) }
  ]
  const group = { name: 'up/cpu', unit: 'cores', fits: { usl: { sigma: 0, lambda: 0.103 } }, observations: [[1, 'a1'], [2, 'a2'], [3, 'a3'], [3, 'a4'], [4, 'a5'], [4, null]].map(([n, r]) => ({ n: Number(n), run: r && `/s/${r}` })) }
  const [bend] = whyCurvesBend([group], runs)
  assert.deepEqual(bend.steps.map(s => [s.n, s.kind, s.runs]), [[1, 'cpu-quota', 1], [2, 'event-loop', 1], [3, 'event-loop', 2], [4, 'event-loop', 1]])
  assert.deepEqual(bend.steps[2].kinds, { 'event-loop': 1, none: 1 })
  assert.deepEqual(bend.steps[2].roles, { workers: 0.95, 'load-generator': 0.1, other: 0.05 })
  assert.equal(bend.from, 2)
  assert.equal(bend.sentence, 'up/cpu: from N = 2 the event loop is saturated: CPU given beyond its one thread goes unused; at N = 4: instance r1 ELU 0.98 — the ceiling the USL fit shows as coherency λ = 0.103')
  const [none] = whyCurvesBend([{ ...group, observations: [{ n: 1, run: '/other' }] }], runs)
  assert.equal(none.kind, null)
  assert.match(none.sentence, /no run of this group has a diagnosis/)
})
