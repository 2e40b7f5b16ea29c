// What limited a run, judged from its figures: each rule on figures made to cross its threshold (and only its own),
// their order when several hold, `none` when nothing is at its limit; the figures themselves from telemetry and
// timelines (roles summing to the host's busy cores); the telemetry line and the monitor that writes it, measured on
// this process's own event loop; HAProxy's `show stat`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { judgeBottleneck, factsOf, BOTTLENECK_THRESHOLDS as T, BOTTLENECK_RULES } from '../analyzer/diagnosis/bottleneck.js'
import { summarizeInstances, summarizeLb, summarizeRoles } from '../analyzer/diagnosis/diagnosis-figures.js'
import { whyCurvesBend, storyOf, perCoreWhy } from '../analyzer/diagnosis/why-bends.js'
import { cpuTable } from '../analyzer/report/report-runs.js'
import { formatTelemetry, parseTelemetry } from '../lib/telemetry.js'
import { startTelemetry } from '../register/telemetry.js'
import { parseHaproxyStat } from '../executor/haproxy.js'
import { ROOT } from '../lib/paths.js'
import { watchHost } from './helpers/host.js'

const worker = (over = {}) =>
  ({ id: 'w1', pid: 1, role: 'worker', samples: 5, elu: 0.5, cpu: 0.5, delay: { p50: 1, p99: 5, max: 9 }, gcShare: 0.01, heapMB: 20, ...over })
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
  generatorFlag: null,
  lb: null,
  latencyMs: 2,
  throughput: 1000
}
/** HAProxy's figures of a run it balanced without trouble: nothing queued, no 5xx of its own, no replica down */
const quietLb = { samples: 5, sessions: 8, queue: 0, maxQueue: 0, rate: 900, requests: 5000, errors: 0, down: [] }
const withWorker = (over) => ({ ...calm, instances: [worker(over)], workers: [worker(over)] })

test('each rule names its bottleneck from its own figure, with the figure and its threshold as evidence', () => {
  const cases = [
    ['load-generator', { ...calm, generator: { share: 0.97, cores: 0.97 } }, 'generator-share', 0.97],
    ['cpu-quota', { ...calm, throttling: { share: 0.8, msPerSecond: 600 } }, 'throttled-share', 0.8],
    ['host-cpu', { ...calm, hostIdle: 1.5 }, 'host-idle', 1.5],
    ['load-balancer', { ...calm, roles: { ...calm.roles, 'load-balancer': 0.95 } }, 'lb-cores', 0.95],
    ['load-balancer', { ...calm, lb: { queue: 12, maxQueue: 40, sessions: 50, rate: 900 } }, 'lb-queue', 12],
    ['load-balancer', { ...calm, lb: { ...quietLb, requests: 5000, errors: 4950 } }, 'lb-errors', 4950],
    ['load-balancer', { ...calm, lb: { ...quietLb, down: [{ server: 'r2', times: 1, firstAfterS: 2.1, downS: 3, downAtEnd: true }] } }, 'lb-down', 1],
    ['gc', withWorker({ elu: 0.9, gcShare: 0.3 }), 'gc-share', 0.3],
    ['event-loop', withWorker({ elu: 0.99, cpu: 0.98 }), 'elu', 0.99],
    ['io', { ...withWorker({ elu: 0.1, cpu: 0.05 }), server: 0.05, throughput: 100, latencyMs: 40 }, 'mean-elu', 0.1],
    ['io', { ...withWorker({ elu: 0.58, cpu: 0.98 }), server: 0.98, allowance: 1, throughput: 1189, latencyMs: 13.4 }, 'mean-elu', 0.58],
    ['load-generator', { ...calm, generatorFlag: { message: 'the generator sent 3% of its requests late', value: 0.03, threshold: 0.01 } }, 'late-sends', 0.03]
  ]
  for (const [i, rule] of BOTTLENECK_RULES.entries()) {
    const holds = ([kind, facts, figure]) => kind === rule.kind && rule.test(/** @type {any} */ (facts))?.[0].figure === figure
    assert.ok(cases.some(holds), `rule ${i} (${rule.kind}) has a case`)
  }
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
  const busyGenerator = { message: 'the load generator used 95% of the cores it may use (0.95 cores)', value: 0.95, threshold: 0.9 }
  assert.equal(judgeBottleneck({ ...calm, generator: { share: 0.95, cores: 0.95 }, generatorFlag: busyGenerator, hostIdle: 1 }).kind, 'load-generator')
  // flagged without its CPU told apart: the flag decides
  assert.equal(judgeBottleneck({ ...calm, generator: null, generatorFlag: busyGenerator, hostIdle: 1 }).kind, 'load-generator')
})

test('a generator behind its schedule with its CPU low did not run out of it: the server\'s limit decides, the lateness said beside it', () => {
  // a capacity probe above what one loop serves (CI): the loop at 0.99, the generator at 11%, 2.3% of its sends late
  const message = 'the generator sent 2.3% of its requests more than 10 ms late (up to 41 ms): it fell behind its own schedule'
  const late = { message, value: 0.023, threshold: 0.01 }
  const facts = { ...withWorker({ elu: 0.99 }), generator: { share: 0.11, cores: 0.11 }, generatorFlag: late }
  const b = judgeBottleneck(facts)
  assert.equal(b.kind, 'event-loop')
  assert.equal(b.confidence, 'medium')
  assert.deepEqual(b.also.map(a => a.kind), ['load-generator'])
  assert.match(b.also[0].line, /2\.3% of its requests more than 10 ms late .* while at 11% of the cores it may use: its sends waited on something/)
  // nothing else holds: the lateness is the run's finding, its evidence the late share against its threshold
  const alone = judgeBottleneck({ ...calm, generatorFlag: late })
  assert.equal(alone.kind, 'load-generator')
  assert.deepEqual(alone.evidence.map(e => [e.figure, e.value, e.threshold, e.op]), [['late-sends', 0.023, 0.01, '>']])
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

test('an open-model run that fell behind with no figure at its threshold: at its capacity, the limit unnamed, never "below the capacity"', () => {
  const config = { strategy: 'up', instances: 1, rate: 102, slo: { errors: 0.001, p99: 100 } }
  const summary = (throughput, p99) => ({ throughput, errorRate: 0, latency: { mean: 5, p50: 2, p90: 8, p95: 20, p99 } })
  // the capacity search's probe (CI): 102 req/s offered to a loop that serves 100, busy 91% (under the 95% rule)
  const behindOf = (s) => factsOf({ config, instances: [], roles: null, lb: null, cpu: null, generator: null, validity: null, summary: s }).behind
  const facts = (s) => ({ ...withWorker({ elu: 0.91 }), throughput: s.throughput, latencyMs: s.latency.mean, behind: behindOf(s) })
  const slow = judgeBottleneck(facts(summary(101.5, 250)))
  assert.equal(slow.kind, 'none')
  assert.equal(slow.confidence, 'low')
  assert.doesNotMatch(slow.line, /below the capacity/)
  assert.match(slow.line, /fell behind the 102\.0 req\/s offered \(101\.5 served, p99 250 ms > 100 ms\): it ran at its capacity/)
  // short of the rate served, the objective kept
  assert.match(judgeBottleneck(facts(summary(95, 50))).line, /fell behind the 102\.0 req\/s offered \(95\.0 served\)/)
  // kept up: below the capacity, as before
  assert.match(judgeBottleneck(facts(summary(101.9, 50))).line, /offered load was below the capacity/)
  // a closed-model run has no offered rate to fall behind
  assert.equal(factsOf({
    config: { strategy: 'up', instances: 1, concurrency: 4, slo: config.slo },
    instances: [],
    roles: null,
    lb: null,
    cpu: null,
    generator: null,
    validity: null,
    summary: summary(50, 900)
  }).behind, null)
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
  const r = {
    t: 1, id: 'r1-w2', pid: 7, role: /** @type {'worker'} */ ('worker'), ms: 1000, elu: 0.5, cpu: 0.4, delay: { p50: 0.1, p99: 2, max: 3 }, gcMs: 4, heapMB: 10
  }
  assert.deepEqual(parseTelemetry(formatTelemetry(r)), r)
  assert.deepEqual(parseTelemetry(`0|nodescale | ${formatTelemetry(r)}`), r)
  assert.equal(parseTelemetry('nodescale: instance w1 serving cpu'), null)
  assert.equal(parseTelemetry('@nodescale-telemetry {"t":1'), null)
  assert.equal(parseTelemetry('@nodescale-telemetry {"no":"fields"}'), null)
})

test('the monitor measures this process: a loop blocked most of an interval reads as busy, with its delay', async (t) => {
  const lines = []
  const host = watchHost()
  const m = startTelemetry({ id: 'me', role: 'worker', intervalMs: 400, write: (l) => lines.push(parseTelemetry(l)) })
  await new Promise(resolve => setTimeout(resolve, 420))
  const until = Date.now() + 330
  while (Date.now() < until) { /* the loop blocked */ }
  await new Promise(resolve => setTimeout(resolve, 500))
  m.stop()
  // the blocked loop spends CPU only while the host gives it a core: other work taking the cores is not this process
  const { reason } = host.stop()
  if (reason) return t.skip(reason)
  assert.ok(lines.length >= 2, JSON.stringify(lines))
  const busy = lines.reduce((a, b) => (b.elu > a.elu ? b : a))
  assert.ok(busy.elu >= 0.6, JSON.stringify(lines))
  assert.ok(busy.cpu >= 0.5, JSON.stringify(busy))
  assert.ok(busy.delay.max >= 250, JSON.stringify(busy))
  assert.ok(lines.every(l => l.id === 'me' && l.pid === process.pid && l.heapMB > 0))
})

test('HAProxy\'s show stat: the frontend\'s sessions and rate, the backend\'s queue, by the header\'s column names', () => {
  const csv = '# pxname,svname,qcur,qmax,scur,smax,rate\nbench,FRONTEND,,,12,30,950\napp,r1,0,0,6,9,\napp,BACKEND,3,7,12,30,900\n'
  assert.deepEqual(parseHaproxyStat(csv), {
    sessions: 12,
    rate: 950,
    queue: 3,
    backendSessions: 12,
    requests: 0,
    lbErrors: 0,
    servers: [{ name: 'r1', up: true, downs: 0, downtimeS: 0, lastChangeS: 0 }]
  })
  assert.equal(parseHaproxyStat('Unknown command'), null)
  // the counters: the 5xx HAProxy answered itself are the backend's less its servers' own; a server DOWN is not up, one
  // in MAINT (a Swarm slot no task fills) is no replica
  const counted = '# pxname,svname,scur,req_tot,status,chkdown,downtime,lastchg,hrsp_5xx\nbench,FRONTEND,4,900,OPEN,,,,130\n' +
    'app,r1,2,,UP,0,0,40,30\napp,r2,0,,DOWN,2,7,3,0\napp,r3,0,,MAINT,0,0,40,0\napp,BACKEND,4,,UP,1,0,40,130\n'
  const stat = parseHaproxyStat(counted)
  assert.equal(stat.requests, 900)
  assert.equal(stat.lbErrors, 100)
  assert.deepEqual(stat.servers, [
    { name: 'r1', up: true, downs: 0, downtimeS: 0, lastChangeS: 40 },
    { name: 'r2', up: false, downs: 2, downtimeS: 7, lastChangeS: 3 }
  ])
})

test('HAProxy recorded taking a busy replica down (the old checks): its 503s and the replica marked down, and when, name `load-balancer`, not `none`', () => {
  const rec = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/haproxy/old-check-busy-replica.json'), 'utf8'))
  const series = { intervalMs: rec.intervalMs, samples: rec.dumps.map(d => ({ t: d.t, ...parseHaproxyStat(d.csv) })) }
  const window = { from: rec.steadyStart, to: rec.steadyEnd }
  const lb = summarizeLb(series, window)
  // the counters of the dumps, read by hand: 32,073 requests and 32,050 5xx of HAProxy's at the last one in the
  // window, 16 and 0 at the one before it; r1 DOWN from the dump 3.0 s into the window (its state had just changed)
  assert.deepEqual({ requests: lb.requests, errors: lb.errors }, { requests: 32057, errors: 32050 })
  assert.deepEqual(lb.down, [{ server: 'r1', times: 1, firstAfterS: 3, downS: 2, downAtEnd: true }])
  // the figures the run's diagnosis had: its loop half busy (the replica served few requests), the host idle
  const b = judgeBottleneck({ ...calm, lb })
  assert.equal(b.kind, 'load-balancer', JSON.stringify(b))
  assert.deepEqual(b.evidence.map(e => [e.figure, e.value]), [['lb-errors', 32050], ['lb-down', 1]])
  assert.equal(b.line,
    'HAProxy answered 32050 of 32057 requests (100%) with a 5xx itself, replica r1 marked down by HAProxy 3.0 s into the window, down 2 s to its end')
  // without the counters (a run recorded before they were read) the same figures judge as they did: none
  const { requests, errors, down, ...before } = lb
  assert.equal(judgeBottleneck({ ...calm, lb: before }).kind, 'none')
})

test('a replica HAProxy held down: when first, how often, how long; down before the window is said as before it', () => {
  const at = (t, up, downs, downtimeS, lastChangeS) =>
    ({ t, sessions: 1, queue: 0, rate: 1, requests: t, lbErrors: 0, servers: [{ name: 'r1', up, downs, downtimeS, lastChangeS }] })
  const window = { from: 10_000, to: 16_000 }
  // marked down between 11.5 and 12.5 s, back 2 s later, down again and back between two samples, at the end down
  const flapping = [at(9500, true, 0, 0, 9), at(10_500, true, 0, 0, 10), at(11_500, true, 0, 0, 11), at(12_500, false, 1, 0, 0),
    at(13_500, false, 1, 1, 1), at(14_500, true, 1, 2, 0), at(15_500, true, 2, 2, 0)]
  assert.deepEqual(summarizeLb({ intervalMs: 1000, samples: flapping }, window).down,
    [{ server: 'r1', times: 2, firstAfterS: 2.5, downS: 2, downAtEnd: false }])
  const gone = [at(9500, false, 1, 4, 4), at(10_500, false, 1, 5, 5), at(11_500, false, 1, 6, 6)]
  const [d] = summarizeLb({ intervalMs: 1000, samples: gone }, window).down
  assert.deepEqual(d, { server: 'r1', times: 0, firstAfterS: -4.5, downS: 2, downAtEnd: true })
  assert.match(judgeBottleneck({ ...calm, lb: { ...quietLb, down: [d] } }).line,
    /^replica r1 marked down by HAProxy 4\.5 s before the window, down 2 s to its end$/)
})

test('why the curves bend, told per strategy: up\'s one thread cannot use more cores; cm\'s full workers would use the idle ones', () => {
  // the 16-core case of issue 26: cm x12 with every worker's loop full and the host 23% idle (16 cores, 12.3 busy)
  const diag = (idlePct, busy) => ({
    bottleneck: {
      kind: 'event-loop', line: 'busiest instance w3 ELU 0.99', evidence: [{ figure: 'elu', value: 0.99 }, { figure: 'host-idle', value: idlePct }]
    },
    roles: { workers: busy - 0.3, 'load-generator': 0.3 }
  })
  const runs = [{ dir: '/s/c8', diagnosis: diag(45, 8.8), config: { strategy: 'cm' } },
    { dir: '/s/c12', diagnosis: diag(23, 12.32), config: { strategy: 'cm' } }]
  const cm = { name: 'cm/cpu', unit: 'workers', observations: [{ n: 8, run: '/s/c8' }, { n: 12, run: '/s/c12' }] }
  const [bend] = whyCurvesBend([cm], runs)
  assert.equal(bend.steps[1].idleCores, 3.68)
  assert.equal(bend.sentence, 'cm/cpu: at every N (8..12) each worker\'s event loop is full with 3.7 of the host\'s cores idle: ' +
    'more workers would use them; at N = 12: busiest instance w3 ELU 0.99')
  // the group's key names the strategy when the runs' configs are not at hand
  const [up] = whyCurvesBend([{ ...cm, name: 'up/cpu', key: { strategy: 'up' } }], runs.map(r => ({ ...r, config: undefined })))
  assert.match(up.sentence, /^up\/cpu: at every N \(8\.\.12\) its one thread uses one core's worth: more vCPUs go unused; /)
  assert.equal(storyOf('event-loop', 'pm2', 0.2),
    'each worker\'s event loop is full and none of the host\'s cores is idle: more workers would share the same cores')
  assert.equal(storyOf('cpu-quota', 'cm', 3), 'the instances are held at their CPU quota: throughput follows the quota')
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
  const group = {
    name: 'up/cpu',
    unit: 'cores',
    fits: { usl: { sigma: 0, lambda: 0.103 } },
    observations: [[1, 'a1'], [2, 'a2'], [3, 'a3'], [3, 'a4'], [4, 'a5'], [4, null]].map(([n, r]) => ({ n: Number(n), run: r && `/s/${r}` }))
  }
  const [bend] = whyCurvesBend([group], runs)
  assert.deepEqual(bend.steps.map(s => [s.n, s.kind, s.runs]), [[1, 'cpu-quota', 1], [2, 'event-loop', 1], [3, 'event-loop', 2], [4, 'event-loop', 1]])
  assert.deepEqual(bend.steps[2].kinds, { 'event-loop': 1, none: 1 })
  assert.deepEqual(bend.steps[2].roles, { workers: 0.95, 'load-generator': 0.1, other: 0.05 })
  assert.equal(bend.from, 2)
  assert.equal(bend.sentence, 'up/cpu: from N = 2 the event loop is saturated: CPU given beyond its one thread goes unused; ' +
    'at N = 4: instance r1 ELU 0.98 — the ceiling the USL fit shows as coherency λ = 0.103')
  const [none] = whyCurvesBend([{ ...group, observations: [{ n: 1, run: '/other' }] }], runs)
  assert.equal(none.kind, null)
  assert.match(none.sentence, /no run of this group has a diagnosis/)
})

test('the per-core table tells each strategy\'s story: up\'s one thread; cm\'s workers and the idle cores of those it was given', () => {
  // the thesis's machine on 16 cores (--server-cpus 0-1): both of cm's cores full, 14 others idle but not its own
  const cpu = (usage) => ({
    cores: usage.map((u, core) => ({ core, usage: core < 2 ? u : 0.1 })),
    highest: 99,
    lowest: 95,
    spread: 4,
    overall: 97,
    serverCores: [0, 1],
    host: { cores: usage.map((u, core) => ({ core, usage: u })), overall: 20 }
  })
  const busy = [99, 97, ...new Array(14).fill(5)]
  const diagnosis = { bottleneck: { kind: 'event-loop' }, instances: [{ elu: 1 }] }
  const entry = /** @type {any} */ ({ config: { benchmark: 'page', strategy: 'cm', instances: 2, concurrency: 2048 }, cpu: cpu(busy), diagnosis })
  const [row] = cpuTable([entry])
  assert.equal(row.given, true)
  assert.ok(Math.abs(row.idleCores - 0.04) < 1e-9, `${row.idleCores}: 1% and 3% of cores 0 and 1, not the 14 others`)
  assert.match(perCoreWhy(row), /^cm x2 at 2048 connections: event-loop \(busiest core 99%, idlest 95%.*\): /)
  assert.match(perCoreWhy(row), /: each worker's event loop is full and none of the cores it was given is idle: more workers would share the same cores$/)
  // the same on a host whose cores it may all use: the idle ones are the host's, which more workers would use
  const free = { ...row, given: false, idleCores: 13.2 }
  assert.match(perCoreWhy(free), /each worker's event loop is full with 13\.2 of the host's cores idle: more workers would use them$/)
  assert.match(perCoreWhy({ ...free, strategy: 'up', instances: 4 }), /: its one thread uses one core's worth: more vCPUs go unused$/)
})
