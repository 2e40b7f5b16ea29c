// Several load generators for one run, on this machine (--load-procs): the split, the merge of their samples (time
// order, clock offsets, the steady window), real runs with both drivers whose summary is the sum of the generators'
// parts, and the refusals. The swarm's load nodes: test/load-nodes.test.js.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { splitLoad } from '../executor/generators/split.js'
import { mergeSamples } from '../executor/generators/merge.js'
import { generatorCores } from '../executor/generators/local.js'
import { settleLoadProcs, SETTLE_SHARE } from '../executor/generators/auto.js'
import { freeCores } from '../executor/generators/index.js'
import { JTL_HEADER } from '../executor/jtl-writer.js'
import { parse } from 'csv-parse/sync'
import { runCli, readRun } from './helpers/cli.js'
import { ROOT } from '../lib/paths.js'

test('the load splits into whole connections that differ by one at most, or equal rates; too few connections is exit 2', () => {
  assert.deepEqual(splitLoad({ concurrency: 10 }, 3), [{ concurrency: 4 }, { concurrency: 3 }, { concurrency: 3 }])
  assert.deepEqual(splitLoad({ concurrency: 4 }, 4), [{ concurrency: 1 }, { concurrency: 1 }, { concurrency: 1 }, { concurrency: 1 }])
  assert.deepEqual(splitLoad({ rate: 300 }, 2), [{ rate: 150 }, { rate: 150 }])
  assert.throws(() => splitLoad({ concurrency: 2 }, 3, { flag: '--load-procs' }),
    (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FLAG' && /--load-procs/.test(e.message) && /raise --concurrency to 3/.test(e.message))
})

test('generator processes are pinned to the cores the server is not pinned to, in turn; all cores when it holds them all', () => {
  assert.deepEqual(generatorCores(3, { cpus: 4, serverCores: 2 }), { cores: [[3], [2], [3]], shared: false })
  assert.deepEqual(generatorCores(2, { cpus: 2, serverCores: 0 }), { cores: [[1], [0]], shared: false })
  assert.deepEqual(generatorCores(2, { cpus: 2, serverCores: 2 }), { cores: [[1], [0]], shared: true })
})

test('--load-procs auto settles: while the busiest of a probe passes 60% of its core, as many as its share asks for, up to ' +
  'the free cores and the connections', async () => {
  // a load that needs `need` cores of generator CPU: each of k generators gets need/k of it, at most its one core
  const load = (need) => {
    const asked = []
    const probe = async (k) => {
      asked.push(k)
      return { procs: k, shares: Array.from({ length: k }, () => Math.min(1, need / k)), throughput: 1000 * Math.min(k, need) }
    }
    return { asked, probe }
  }
  const light = load(0.5)
  const one = await settleLoadProcs({ free: [3, 2, 1], probe: light.probe })
  assert.deepEqual([one.count, one.cores, light.asked, one.settle, one.threshold], [1, [3], [1], 0.6, 0.9],
    'a generator under 60%: one, one probe')
  assert.match(one.why, /the busiest at 50% of its core, under the 60% a probe settles at \(the run's flag: 90%\)/)
  // the 16-core machine's case: 77% of a core in the probe (94% in the run, flagged): two
  const seen = load(0.77)
  const two77 = await settleLoadProcs({ free: [15, 14, 13], probe: seen.probe })
  assert.deepEqual([two77.count, two77.cores, seen.asked], [2, [15, 14], [1, 2]], '0.77 cores of load: 2 generators at 39% each')
  // as many as the busiest's share asks for at once, not one more a probe: 1 at 100% -> 2 (1 / 0.6 = 1.7); 2 at 100% ->
  // 4 (3.3); 4 at 68% -> 5 (4 x 0.675 / 0.6 = 4.5); 5 at 54%: settled
  const heavy = load(2.7)
  const five = await settleLoadProcs({ free: [6, 5, 4, 3, 2, 1], probe: heavy.probe })
  assert.deepEqual([five.count, five.cores, heavy.asked], [5, [6, 5, 4, 3, 2], [1, 2, 4, 5]], '2.7 cores of load: 5 generators at 54% each')
  assert.deepEqual(five.probes.map(p => p.shares.length), [1, 2, 4, 5], 'every probe kept')
  const capped = load(4)
  const two = await settleLoadProcs({ free: [3, 2], probe: capped.probe })
  assert.deepEqual([two.count, capped.asked], [2, [1, 2]], 'no core left for a third: two, said')
  assert.match(two.why, /over the 60% a probe settles at, but no free core left \(2 free of the server\): /)
  assert.match(two.why, /the run may be flagged generator-saturated \(at 90%\)$/)
  const conns = await settleLoadProcs({ free: [3, 2, 1], most: 2, probe: load(4).probe })
  assert.equal(conns.count, 2, 'a connection for each')
  assert.match(conns.why, /no connection left for another \(2\)/)
})

test('the cores left to --load-procs auto: the load\'s of --server-cpus, those above up\'s pinned cores, none when the server may use every core', () => {
  assert.deepEqual(freeCores({ partition: { load: [2, 3] }, pinnedCores: 0 }, 4), [3, 2])
  assert.deepEqual(freeCores({ partition: null, pinnedCores: 1 }, 4), [3, 2, 1])
  assert.deepEqual(freeCores({ partition: null, pinnedCores: 0 }, 4), [], 'cm, pm2, hs, up --affinity none: no core is the load\'s')
})

test('--load-procs auto is the default; a fast server on core 0 (--server-cpus 0) keeps its one generator within core 1', { timeout: 60000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), 'ns-procs-auto-'))
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '1', '--server-cpus', '0', '--backend', 'local', '--benchmark', 'baseline',
    '--duration', '2', '--warmup', '1', '--concurrency', '4', '--quiet', '--out', out])
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  assert.equal(run.config.loadProcs, 'auto')
  assert.deepEqual({ ...run.load.procs, why: undefined }, { mode: 'auto', count: 1, cores: [1], why: undefined, probes: [], threshold: 0.9 })
  assert.match(run.load.procs.why, /one core free of the server \(1\)/)
  assert.deepEqual(run.load.generators.map(g => g.cpus), [[1]])
  assert.deepEqual(run.load.sharing.generator, [1])
})

/** A JTL row: start, elapsed, thread, success. */
const row = (ts, elapsed, thread, ok = true) => `${ts},${elapsed},x,${ok ? 200 : 500},${ok ? 'OK' : 'Err'},${thread},text,${ok},` +
  `${ok ? '' : '"boom, with a comma\nand a newline"'},10,10,1,1,http://h/,${elapsed},0,0\n`

test('the merge: rows of every part in the order they ended, timestamps moved by each clock offset, the window kept, counts per part', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-merge-'))
  // part 1 on our clock (plain); part 2 gzipped in two members, its clock 5 ms ahead of ours
  writeFileSync(join(dir, 'a.jtl'),
    JTL_HEADER + row(990, 5, 'x 1-1') + row(1000, 10, 'x 1-1') + row(1005, 20, 'x 1-2', false) + row(1030, 1, 'x 1-1') + row(2000, 1, 'x 1-1'))
  writeFileSync(join(dir, 'b.jtl.gz'), Buffer.concat([gzipSync(JTL_HEADER + row(1008, 2, 'x 2-1')), gzipSync(row(1015, 3, 'x 2-1') + row(1040, 1, 'x 2-1'))]))
  const out = join(dir, 'samples.jtl')
  const merged = await mergeSamples([{ path: join(dir, 'a.jtl') }, { path: join(dir, 'b.jtl.gz'), offsetMs: 5 }],
    { jtlPath: out, samples: 'jtl', histogramPath: join(dir, 'latency.json'), steadyStart: 1000, steadyEnd: 1100 })
  assert.deepEqual(merged.parts, [{ requests: 3, errors: 1 }, { requests: 3, errors: 0 }], '990 and 2000 are outside the window')
  const rows = /** @type {any[]} */ (parse(readFileSync(out), { columns: true }))
    .map(r => ({ ...r, timeStamp: Number(r.timeStamp), elapsed: Number(r.elapsed) }))
  assert.deepEqual(rows.map(r => [r.timeStamp, r.threadName]),
    [[1003, 'x 2-1'], [1000, 'x 1-1'], [1010, 'x 2-1'], [1005, 'x 1-2'], [1030, 'x 1-1'], [1035, 'x 2-1']])
  const ends = rows.map(r => r.timeStamp + r.elapsed)
  assert.deepEqual(ends, [...ends].sort((a, b) => a - b), 'in the order they ended')
  assert.equal(rows.find(r => r.success === 'false').failureMessage, 'boom, with a comma\nand a newline', 'a quoted newline survives')
  assert.ok(existsSync(join(dir, 'latency.json')))
})

test('executor run --load-procs 2 (autocannon): two pinned generators, one shared start, the summary the sum ' +
  'of their parts', { timeout: 120_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), 'ns-procs-'))
  const r = await runCli('executor', ['run', '--backend', 'local', '--strategy', 'cm', '--instances', '1', '--benchmark', 'baseline', '--load-procs', '2',
    '--concurrency', '5', '--duration', '3', '--warmup', '1', '--out', out, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const { run, dir } = readRun(out)
  const gens = run.load.generators
  assert.equal(gens.length, 2)
  assert.deepEqual(gens.map(g => g.load.concurrency), [3, 2])
  assert.notDeepEqual(gens[0].cpus, gens[1].cpus, 'each on a core of its own')
  assert.equal(run.summary.requests, gens[0].requests + gens[1].requests)
  assert.equal(run.summary.errors, gens[0].errors + gens[1].errors)
  assert.ok(gens.every(g => g.requests > 0 && Math.abs(g.startSkewMs) < 50 && g.cpu.share !== null && g.validity.checked.includes('generator-saturated')),
    JSON.stringify(gens))
  assert.equal(run.load.steadyStart, run.load.startAt + 1000)
  // a local child has no agent to answer the start; the run checked that both began within the warm-up
  assert.ok(gens.every(g => g.startAnsweredMs === null), JSON.stringify(gens))
  assert.ok(run.validity.checked.includes('late-start'))
  const threads = new Set(readFileSync(join(dir, 'samples.jtl'), 'utf8').split('\n').slice(1, -1).map(l => l.split(',')[5].split(' ').pop().split('-')[0]))
  assert.deepEqual([...threads].sort(), ['1', '2'], 'each generator names its threads after itself')
  assert.ok(run.validity.unchecked.some(u => u.name === 'clock-offset'), 'one clock: nothing to check')
})

test('executor run --load-procs 2 --driver jmeter: two JMeters share the rate and the window', { timeout: 180_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), 'ns-procs-jm-'))
  const r = await runCli('executor', ['run', '--backend', 'local', '--strategy', 'cm', '--instances', '1', '--benchmark', 'baseline', '--load-procs', '2',
    '--driver', 'jmeter', '--rate', '200', '--duration', '3', '--warmup', '1', '--samples', 'gz', '--out', out], { timeoutMs: 170_000 })
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  const gens = run.load.generators
  assert.deepEqual(gens.map(g => g.load.rate), [100, 100])
  assert.equal(run.summary.requests, gens[0].requests + gens[1].requests)
  // 200 req/s over 3 s, give or take the edges
  assert.ok(run.summary.requests > 500 && run.summary.requests < 700, String(run.summary.requests))
  assert.ok(gens.every(g => g.version.startsWith('JMeter') && g.startSkewMs !== null), JSON.stringify(gens))
  assert.equal(run.files.samples, 'samples.jtl.gz')
  assert.match(r.stdout + r.stderr, /generator g1 on \S+ cpu \d \(r=100\.0\/s\) {2}\d+ req\/s · \d+% of its core[\s\S]*generator g2 on /)
})

test('bad combinations of generators are exit 2 naming the flag, before anything starts', async () => {
  const base = ['run', '--backend', 'local', '--strategy', 'cm', '--instances', '1', '--out', mkdtempSync(join(tmpdir(), 'ns-procs-bad-'))]
  /** @type {[string[], RegExp][]} */
  const cases = [
    [['--load-procs', '3', '--concurrency', '2'], /--load-procs: 3 generators cannot share --concurrency 2/],
    [['--load-procs', '2', '--duration', 'auto'], /--duration: auto cannot end the load of 2 generators together/],
    [['--load-placement', 'free'], /--load-placement: only applies/],
    [['--load-nodes', '1'], /--load-nodes: only applies to Swarm runs/],
    [['--load-procs', '0'], /--load-procs/]
  ]
  for (const [args, message] of cases) {
    const r = await runCli('executor', [...base, ...args])
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, message)
  }
})

/**
 * --load-procs auto's probes for real against `url`, the load's cores 1 and 0 (a machine with two free of the server
 * is what this stands for; the server is on core 0): the decision, the places made and the lines logged.
 * @param {string} url @param {string} label
 */
async function probeAuto (url, label) {
  const { generatorPlaces } = await import('../executor/generators/index.js')
  const { runGenerators } = await import('../executor/generators/run-generators.js')
  const { PROBE } = await import('../executor/generators/auto.js')
  const dir = mkdtempSync(join(tmpdir(), 'ns-probe-'))
  const load = { driver: 'autocannon', url, method: 'GET', concurrency: 8, connection: 'keep-alive', label }
  /** @type {any} */
  let procs = null
  /** @type {string[]} */
  const lines = []
  const made = await generatorPlaces(/** @type {any} */ ({ loadProcs: 'auto', duration: 2, driver: 'autocannon', concurrency: 8 }), {
    deployment: { pinnedCores: 0, partition: { server: [0], load: [0, 1], lb: null, derived: [] } },
    dir,
    log: (l) => lines.push(l),
    probeLoad: (places, where) => runGenerators(places, { ...load, ...PROBE }, { jtlPath: join(where, 'samples.jtl'), samples: 'none', partsDir: where }),
    onProcs: (p) => { procs = p }
  })
  return { procs, made, lines }
}

test('--load-procs auto probes for real where two cores are the load\'s: each probe\'s generators measured, the count what the rule ' +
  'makes of them', { timeout: 60000 }, async () => {
  const { launch } = await import('../register/launch.js')
  const server = await launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [0] })
  try {
    const { procs, made, lines } = await probeAuto(`${server.url}/baseline/`, 'baseline')
    assert.ok(procs && procs.mode === 'auto' && procs.probes.length >= 1, JSON.stringify(procs))
    assert.equal(procs.probes.at(-1).procs, procs.count, 'the last probe is of the count kept')
    for (const p of procs.probes) {
      assert.equal(p.shares.length, p.procs)
      for (const s of p.shares) assert.ok(typeof s === 'number' && s >= 0 && s <= 1.5, `a measured share: ${s}`)
      assert.ok(p.throughput > 0, 'the probe drove real load')
    }
    const first = Math.max(...procs.probes[0].shares)
    assert.equal(procs.count, first < SETTLE_SHARE ? 1 : 2, `the rule on the first probe's busiest (${first})`)
    assert.equal(procs.probes.length, procs.count, 'one probe, or two where the first asked for another generator')
    assert.deepEqual(made.places.map(p => p.where.cpus), procs.cores.map(c => [c]))
    assert.deepEqual(procs.cores, [1, 0].slice(0, procs.count))
    assert.ok(lines.some(l => /generator process(es)? \(--load-procs auto\)/.test(l)), lines.join('\n'))
  } finally {
    await server.stop()
  }
})

test('--load-procs auto adds a generator for real: against a server faster than one generator, the probe asks for a second',
  { timeout: 60000 }, async (t) => {
    // perf/canned-server.js on core 0 answers every read at once: one generator on core 1 fills its core against it
    const server = spawn('taskset', ['-c', '0', process.execPath, join(ROOT, 'perf', 'canned-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.after(() => server.kill())
    const [port] = await once(server.stdout.setEncoding('utf8'), 'data')
    const { procs, made } = await probeAuto(`http://127.0.0.1:${Number(port)}/`, 'fast')
    const first = Math.max(...procs.probes[0].shares)
    // the premise, from the probe's own figure: a host busy with other work may not let the generator fill its core
    if (first < SETTLE_SHARE) return t.skip(`the probe's generator used ${Math.round(first * 100)}% of its core: the host did not let it fill`)
    assert.deepEqual([procs.count, procs.probes.map(p => p.procs), procs.cores], [2, [1, 2], [1, 0]], JSON.stringify(procs))
    assert.equal(procs.probes[1].shares.length, 2)
    assert.ok(procs.probes[1].throughput > 0, 'the second probe drove load from both')
    // two kept either way: settled under 60%, or over it with no third core free
    assert.match(procs.why, /^the probe of 2( generators)?: the busiest at \d+% of its core, (under|over) the 60% a probe settles at/)
    assert.deepEqual(made.places.map(p => p.where.cpus), [[1], [0]])
  })
