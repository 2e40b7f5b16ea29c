// How far a run can be trusted: each validity check on figures made up to cross its threshold, and on real runs that
// provoke it (a generator starved by a CPU quota, a server held back by its quota, one that warms up slowly), the
// open model's audit of its own schedule, and the throughput's stability per second.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, writeFileSync, rmdirSync, existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, readRun, ROOT } from './helpers/cli.js'
import { hostWasBusy } from './helpers/host.js'
import { judgeRun, THRESHOLDS } from '../executor/validity.js'
import { runLoad } from '../executor/drivers/index.js'
import { stabilityOf } from '../analyzer/samples/summary.js'
import { cpuRoot } from '../rc/cgroup.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-validity-'))
const SLO = { errors: 0.001 }
const steady = Object.assign({ judged: true, why: null, seconds: 8, mean: 1000, halfWidth: 10, relHalfWidth: 0.01, se: 4.6, df: 13.5 },
  { batch: 8, batches: 10, needed: 2, warmup: { cut: 0, settled: true, bias: 0, significant: false }, drift: 0.001, driftP: 0.9, driftSignificant: false })
const fine = {
  summary: { errorRate: 0, latency: { p99: 20 }, stability: steady },
  cpu: { throttling: { periods: 100, throttledPeriods: 0, share: 0, throttledMs: 0, msPerSecond: 0 } },
  generator: { share: 0.3, cores: 0.3, hostIdle: 40 },
  roles: { roles: { workers: 0.9, 'load-generator': 0.3, other: 0.05 }, hostCores: 2 },
  slo: SLO
}
const names = (v) => v.flags.map(f => f.name)

test('a run whose figures are all within bounds is valid, and says what it checked', () => {
  const v = judgeRun(fine)
  assert.equal(v.ok, true)
  assert.deepEqual(v.flags, [])
  assert.deepEqual(v.checked, ['generator-saturated', 'host-saturated', 'disturbed', 'throttled', 'unstable', 'imprecise', 'errors'])
})

test('each check flags its own figure with the threshold it crossed; only warnings keep a run valid', () => {
  const cases = [
    [{ generator: { share: 0.95, cores: 0.95, hostIdle: 30 } }, 'generator-saturated', 0.95, THRESHOLDS.generatorBusy],
    [{ generator: { share: 0.2, cores: 0.2, hostIdle: 30 }, schedule: { sent: 1000, late: 50, maxLagMs: 120 } }, 'generator-saturated', 0.05,
      THRESHOLDS.lateSends],
    [{ generator: { share: 0.5, cores: 0.5, hostIdle: 2 } }, 'host-saturated', 2, THRESHOLDS.hostIdle],
    [{ roles: { roles: { workers: 0.6, other: 1.08 }, hostCores: 2 } }, 'disturbed', 1.08, THRESHOLDS.otherCores],
    [{ roles: { roles: { workers: 4, other: 2.5 }, hostCores: 16 } }, 'disturbed', 2.5, THRESHOLDS.otherShare * 16],
    [{ summary: { ...fine.summary, stability: { ...steady, drift: 0.4, driftP: 0.0001, driftSignificant: true } } }, 'unstable', 0.4, THRESHOLDS.drift],
    [{ summary: { ...fine.summary, stability: { ...steady, drift: -0.3, driftP: 0.0001, driftSignificant: true } } }, 'unstable', 0.3, THRESHOLDS.drift],
    [{ summary: { ...fine.summary, stability: { ...steady, warmup: { cut: 1.5, settled: true, bias: -0.08, significant: true } } } }, 'unstable', 0.08,
      THRESHOLDS.drift],
    [{ summary: { ...fine.summary, errorRate: 0.02 } }, 'errors', 0.02, SLO.errors]
  ]
  for (const [over, name, value, threshold] of /** @type {[object, string, number, number][]} */ (cases)) {
    const v = judgeRun({ ...fine, ...over })
    assert.deepEqual(names(v), [name], JSON.stringify(over))
    assert.equal(v.flags[0].value, value)
    assert.equal(v.flags[0].threshold, threshold)
    assert.equal(v.ok, false)
    assert.ok(v.flags[0].message.length > 20)
  }
  // a drift the seconds' own noise explains is no drift; a significant one under the threshold is none either
  assert.equal(judgeRun({ ...fine, summary: { ...fine.summary, stability: { ...steady, drift: 0.08, driftSignificant: false } } }).ok, true)
  assert.equal(judgeRun({ ...fine, summary: { ...fine.summary, stability: { ...steady, drift: 0.03, driftSignificant: true } } }).ok, true)
  // a mean known loosely is said (a warning: the run measured the server, it was too short for the precision)
  const loose = judgeRun({ ...fine, summary: { ...fine.summary, stability: { ...steady, relHalfWidth: 0.09 } } })
  assert.deepEqual(names(loose), ['imprecise'])
  assert.equal(loose.flags[0].severity, 'warning')
  assert.equal(loose.flags[0].value, 0.09)
  assert.equal(loose.ok, true)
  assert.match(loose.flags[0].message, /known to ±9% only \(95%, 10 batches of 0\.8 s over 8 s\)/)
  // too short to judge: neither valid on it nor flagged, and said so
  const short = judgeRun({
    ...fine,
    summary: {
      ...fine.summary,
      stability: {
        ...steady,
        judged: false,
        why: '2.0 s judged (the first second left out): the rule needs 3 s at least',
        relHalfWidth: null,
        drift: null,
        driftSignificant: null
      }
    }
  })
  assert.deepEqual(names(short), [])
  assert.deepEqual(short.unchecked.filter(u => u.name === 'unstable' || u.name === 'imprecise').map(u => u.why), [
    'too short to judge: 2.0 s judged (the first second left out): the rule needs 3 s at least',
    'too short to judge: 2.0 s judged (the first second left out): the rule needs 3 s at least'
  ])
  assert.ok(!short.checked.includes('unstable'))
  // the quota throttling the server shapes its latency: reported, and the run stays valid (the quota is the design)
  const throttled = judgeRun({ ...fine, cpu: { throttling: { periods: 100, throttledPeriods: 90, share: 0.9, throttledMs: 6300, msPerSecond: 630 } } })
  assert.deepEqual(names(throttled), ['throttled'])
  assert.equal(throttled.flags[0].severity, 'warning')
  assert.equal(throttled.ok, true)
  // no quota, no generator process: not measured, and said so
  const unmeasured = judgeRun({ ...fine, cpu: { throttling: null }, generator: { share: null, cores: null, hostIdle: null }, roles: null })
  assert.deepEqual(unmeasured.unchecked.map(u => u.name), ['generator-saturated', 'host-saturated', 'disturbed', 'throttled', 'clock-offset', 'late-start'])
  // generators on other nodes: a clock known to within a JTL's ms is fine; one off by more than the median latency is
  // said, and the run stays valid (its timestamps were corrected)
  const p50 = 2
  const withClock = (clock) => judgeRun({
    ...fine,
    summary: { ...fine.summary, latency: { ...fine.summary.latency, p50 } },
    generators: [{ name: 'g1', clock: { offsetMs: 0.1, rttMs: 0.8 } }, { name: 'g2', clock }]
  })
  assert.equal(withClock({ offsetMs: -0.3, rttMs: 0.9 }).flags.length, 0)
  const off = withClock({ offsetMs: -5, rttMs: 0.6 })
  assert.deepEqual(names(off), ['clock-offset'])
  assert.equal(off.flags[0].value, 2.5)
  assert.equal(off.flags[0].severity, 'warning')
  assert.match(off.flags[0].message, /generator g2's clock is -5\.00 ms off the executor's, known to ±0\.30 ms/)
  assert.equal(off.ok, true)
  assert.deepEqual(names(withClock({ offsetMs: 0, rttMs: 8 })), ['clock-offset'], 'an offset known to ±4 ms only')
  // generators that start together: one that began after the 1 s warm-up left the steady window's start without its
  // load (not valid), with what its agent said of the start; one that began within the warm-up is fine
  const started = (g2) => judgeRun({ ...fine, warmupMs: 1000, generators: [{ name: 'g1', startSkewMs: 3 }, { name: 'g2', ...g2 }] })
  assert.deepEqual(names(started({ startSkewMs: 990 })), [])
  assert.ok(started({ startSkewMs: 990 }).checked.includes('late-start'))
  const late = started({ startSkewMs: 1650, startAnsweredMs: 1210 })
  assert.deepEqual([names(late), late.ok, late.flags[0].value, late.flags[0].threshold], [['late-start'], false, 1.65, 1])
  assert.match(late.flags[0].message, new RegExp('^generator g2 began its load 1\\.7 s after the generators\' shared start ' +
    '\\(its agent answered the start 1\\.2 s after that time: it heard of it late\\), when the 1 s warm-up had ended'))
  assert.doesNotMatch(started({ startSkewMs: 1650, startAnsweredMs: -1400 }).flags[0].message, /heard/)
  const one = judgeRun({ ...fine, warmupMs: 1000, generators: [{ name: 'g1', startSkewMs: 5000 }] })
  assert.deepEqual([one.ok, one.unchecked.find(u => u.name === 'late-start')?.why], [true, 'one generator: no shared start to keep'])
  // the usual rest of the host (the kernel, the engine): not a disturbance
  assert.equal(judgeRun({ ...fine, roles: { roles: { workers: 1, other: 0.09 }, hostCores: 2 } }).ok, true)
})

// the statistics changed (issue 25): the stability is judged on completions per tenth of a second, with a robust
// drift test; the fixtures are tenths now (analyzer/samples/steady-state.js; its estimators in
// test/steady-state.test.js)
test('stability: a steady throughput is steady; a climbing one drifts significantly; 3 seconds are too short', () => {
  const wiggle = [0, 3, -2, 1, -1, 2, -3, 0, 1, -1]
  const flat = stabilityOf(Array.from({ length: 110 }, (_, i) => 100 + wiggle[(i * 7) % 10]))
  assert.equal(flat.judged, true)
  assert.equal(flat.seconds, 10)
  assert.equal(flat.driftSignificant, false)
  assert.ok(flat.relHalfWidth < 0.01, String(flat.relHalfWidth))
  const climbing = stabilityOf(Array.from({ length: 110 }, (_, i) => 10 + i + wiggle[i % 10]))
  assert.equal(climbing.driftSignificant, true)
  assert.ok(climbing.drift > 0.5, String(climbing.drift))
  const short = stabilityOf(Array.from({ length: 30 }, () => 100))
  assert.equal(short.judged, false)
  assert.equal(short.drift, null)
})

test('the open model audits its schedule: sends the generator made late (its event loop blocked) are counted', async () => {
  const server = createServer((req, res) => res.end('ok'))
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const url = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}/`
  const dir = tmp()
  try {
    // block this process's event loop for 300 ms in the steady window: the in-process scheduler falls behind
    setTimeout(() => { const until = Date.now() + 300; while (Date.now() < until) { /* busy */ } }, 1500)
    const load = /** @type {any} */ (await runLoad({
      driver: 'autocannon', url, rate: 200, duration: 2, warmup: 0.5, jtlPath: join(dir, 's.jtl'), inProcess: true
    }))
    assert.ok(load.schedule.late >= 20, `late sends: ${JSON.stringify(load.schedule)}`)
    assert.ok(load.schedule.maxLagMs >= 200, `${load.schedule.maxLagMs} ms`)
    assert.equal(load.schedule.queued, 0, 'a fast server: nothing waited for a socket')
    assert.ok(Math.abs(load.schedule.planned - 400) <= 2, String(load.schedule.planned))
    const v = judgeRun({ ...fine, schedule: load.schedule })
    assert.deepEqual(names(v), ['generator-saturated'])
  } finally {
    server.close()
  }
})

const short = ['--backend', 'local', '--warmup', '1']

test('a server held back by a tiny CPU quota: the run measures the throttling and warns', { timeout: 60000 }, async (t) => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--cpus-per-instance', '0.1', '--benchmark', 'cpu', '--param', 'n=1000003',
    '--concurrency', '4', '--duration', '5', '--out', out, ...short])
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  const busy = hostWasBusy(run)
  if (busy) return t.skip(busy)
  assert.ok(run.cpu.throttling.share > 0.5, JSON.stringify(run.cpu.throttling))
  assert.ok(run.cpu.throttling.msPerSecond > 400, JSON.stringify(run.cpu.throttling))
  assert.ok(names(run.validity).includes('throttled'), JSON.stringify(run.validity))
  assert.match(r.stdout, /warning throttled: the CPU quota held the server back in \d+% of its periods/)
  assert.equal(run.diagnosis.bottleneck.kind, 'cpu-quota', JSON.stringify(run.diagnosis.bottleneck))
  assert.match(r.stdout, /bottleneck: cpu-quota — throttled in \d+% of CFS periods/)
})

// issue 25: 12 s, not 6: the drift test allows for a per-second correlation 5 s cannot rule out (5 s of this warm-up
// read as too short to judge; docs/statistics/validity.md)
test('a server that warms up slowly, measured for 12 s: flagged unstable, and the summary says so', { timeout: 60000 }, async (t) => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--app', join(ROOT, 'test/fixtures/apps/warms-up.js'),
    '--concurrency', '4', '--duration', '12', '--out', out, '--backend', 'local', '--warmup', '0'])
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  // a host starved by other work stalls the server at random: its warm-up is not what is measured (CI must be calm)
  if (!names(run.validity).includes('unstable') && names(run.validity).includes('disturbed') && process.env.CI !== 'true') {
    t.skip(`the host was busy with other work (${run.validity.flags.map(f => f.name).join(', ')}): the warm-up is not what was measured`)
    return
  }
  assert.equal(run.validity.ok, false)
  assert.ok(names(run.validity).includes('unstable'), JSON.stringify(run.validity))
  const s = run.summary.stability
  assert.ok(s.drift > 0.3 || s.warmup.bias < -0.05, JSON.stringify(s))
  // the flags in VALIDITY_CHECKS' order: a busy host's come first
  assert.match(r.stdout, /validity: NOT VALID: (host-saturated, )?(disturbed, )?unstable/)
})

test('a load generator starved by its own CPU quota is flagged generator-saturated', { timeout: 60000 }, async (t) => {
  const root = cpuRoot()
  const group = root && join(root, `nodescale-test-generator-${process.pid}`)
  try {
    mkdirSync(group)
    writeFileSync(join(group, 'cpu.cfs_period_us'), '100000')
    writeFileSync(join(group, 'cpu.cfs_quota_us'), '20000')
  } catch (err) {
    if (process.env.CI === 'true') throw err
    t.skip(`no writable cgroup v1 cpu hierarchy here (${err.message})`)
    return
  }
  const out = tmp()
  try {
    // the executor (and so its generator) in a group of 0.2 CPU; the server in a quota group of its own
    const r = spawnSync('sh', ['-c', `echo $$ > ${join(group, 'cgroup.procs')} && exec "$@"`, 'sh', process.execPath, join(ROOT, 'bin', 'executor.js'),
      'run', '--strategy', 'cm', '--instances', '2', '--cpus-per-instance', '0.5', '--benchmark', 'baseline', '--concurrency', '20', '--duration', '4',
      '--out', out, ...short], { encoding: 'utf8', timeout: 50000 })
    assert.equal(r.status, 0, r.stderr)
    const { run } = readRun(out)
    const busy = hostWasBusy(run)
    if (busy) return t.skip(busy)
    assert.equal(run.load.generator.processes[0].usable, 0.2)
    assert.ok(run.load.generator.share >= THRESHOLDS.generatorBusy, JSON.stringify(run.load.generator))
    assert.ok(names(run.validity).includes('generator-saturated'), JSON.stringify(run.validity))
    assert.equal(run.validity.ok, false)
    assert.equal(run.diagnosis.bottleneck.kind, 'load-generator', JSON.stringify(run.diagnosis.bottleneck))
  } finally {
    if (existsSync(group)) rmdirSync(group)
  }
})
