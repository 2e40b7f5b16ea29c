// Experiment files are checked before anything runs: every bad key or value names the file, the line and what is
// allowed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readdirSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseExperiment, EXPERIMENT_KEYS } from '../executor/sweep/experiment.js'
import { buildCells, checkBenchmarks } from '../executor/sweep/sweep-plan.js'
import { NsError } from '../lib/errors.js'
import { validateRunConfig } from '../lib/run-options.js'
import { runCli } from './helpers/cli.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-exp-'))

/** Parses (and expands into validated cells, as a sweep does) a YAML text; returns the NsError it throws. */
async function errorOf (text, { profile } = /** @type {{ profile?: string }} */ ({})) {
  try {
    const exp = parseExperiment(text, { file: 'study.yml', path: join(tmp(), 'study.yml'), profile })
    await checkBenchmarks(exp)
    buildCells(exp, { out: tmp() })
  } catch (err) {
    assert.ok(err instanceof NsError, `not an NsError: ${err.stack}`)
    assert.equal(err.exitCode, 2, err.message)
    return err
  }
  assert.fail('no error for:\n' + text)
}

const base = 'backend: local\nstrategies: [cm, hs]\ninstances: [1, 2]\nconcurrency: [2, 4]\nduration: 1\n'

test('a valid file with every key parses into the grid it describes', () => {
  const text = `name: every-key
description: all the keys at once
backend: local
benchmarks: [baseline, cpu]
params: { cpu: { n: 1000003 } }
strategies: [up, cm, pm2, hs]
instances: { up: [1, 2], cm: 1..3, pm2: 2, hs: "1..2" }
concurrency: [relaxed, relaxed*cores, exhausted, 16]
connection: close
duration: 2
warmup: 1
repeats: 2
cpus-per-instance: 0.5
affinity: none
server-cpus: "0"
load-cpus: "1"
lb-cpus: "1"
driver: autocannon
samples: none
load-procs: 1
lb: auto
ready-timeout: 20
slo: p99=500ms,errors=1%
order: blocks
calibration: cal.json
calibrate: { strategy: up, instances: 1, duration: 1, warmup: 0.5, confirm: 2, max-concurrency: 64, max-probes: 10 }
analysis: { fit: both, x: instances, cpu-table: true }
question: { compare: [cm, up], quantity: speedup, at: 2, from: 1, margin: 5%, spending: pocock }
tag: kernel 6.8, THP off
profiles:
  smoke: { repeats: 1, duration: 1 }
`
  // every documented key is used above, but those that exclude one used there (benchmark/benchmarks,
  // rate/load/concurrency, instances-per-node/instances), app, nodes and load nodes (a swarm's; this file is local) and
  // the bounds of duration: auto, checked below and in their own tests (duration-auto.test.js), and a whole server's
  // keys, which replace the benchmarks (whole-server.test.js)
  const elsewhere = ['benchmark', 'rate', 'load', 'app', 'instances-per-node', 'nodes', 'load-nodes', 'load-placement', 'min-duration', 'max-duration',
    'server', 'server-args', 'path', 'method', 'body', 'health', 'image', 'container-port']
  for (const key of Object.keys(EXPERIMENT_KEYS).filter(k => !elsewhere.includes(k))) assert.match(text, new RegExp(`^${key}:`, 'm'), key)
  const open = parseExperiment('strategies: [cm]\nbenchmark: greeter\napp: ../apps/bench-object.js\nrate: [100, 200.5]\n',
    { file: 'o.yml', path: '/x/y/o.yml' })
  assert.equal(open.loadKey, 'rate')
  assert.deepEqual(open.loads.cm.map(l => l.value), [100, 200.5])
  assert.equal(open.app, '/x/apps/bench-object.js')
  const searched = parseExperiment('strategies: [cm]\nload: { capacity: { boundary-probes: 8, max-probes: 12 } }\n', { file: 'c.yml', path: '/x/c.yml' })
  assert.equal(searched.loadKey, 'capacity')
  assert.deepEqual(searched.capacity, { boundary: 8, maxProbes: 12 })
  assert.deepEqual(parseExperiment('load: capacity\n', { file: 'c.yml' }).capacity, {})
  const exp = parseExperiment(text, { file: 'every.yml', path: '/x/every.yml' })
  assert.equal(exp.settings.tag, 'kernel 6.8, THP off', 'tag: a run flag\'s row, an experiment key by it')
  assert.deepEqual(exp.instances.cm.map(i => i.value), [1, 2, 3])
  assert.deepEqual(exp.instances.hs.map(i => i.value), [1, 2])
  assert.deepEqual(exp.instances.pm2.map(i => i.value), [2])
  assert.equal(exp.repeats, 2)
  assert.equal(exp.calibration, '/x/cal.json')
  assert.equal(exp.params.cpu.n, '1000003')
  assert.deepEqual(exp.question, { compare: ['cm', 'up'], quantity: 'speedup', at: 2, from: 1, margin: 0.05, spending: 'pocock' })
  assert.ok(exp.usesLevels)
  const cells = buildCells(exp, { out: tmp(), calibration: { relaxed: { concurrency: 3 }, exhausted: { concurrency: 100 }, cores: 2 } })
  assert.equal(cells.length, 2 * (2 + 3 + 1 + 2) * 4)
  const levels = cells.filter(c => c.config.strategy === 'up' && c.config.instances === 1 && c.config.benchmark === 'cpu')
    .map(c => [c.level, c.config.concurrency])
  assert.deepEqual(levels, [['relaxed', 3], ['relaxed*cores', 6], ['exhausted', 100], [null, 16]])
  assert.ok(cells.every(c => c.config.samples === 'none'), 'the file\'s samples: none reaches every run')
  assert.ok(cells.every(c => c.config.connection === 'close'), 'the file\'s connection: close reaches every run')
  assert.ok(cells.every(c => c.config.affinity === (c.config.strategy === 'up' ? 'none' : undefined)), 'affinity: up\'s runs only')
  assert.ok(cells.every(c => c.config.serverCpus === '0' && c.config.lbCpus === (c.config.strategy === 'hs' ? '1' : undefined)),
    'the partition; lb-cpus: hs\'s runs only')
  const smoke = parseExperiment(text, { file: 'every.yml', path: '/x/every.yml', profile: 'smoke' })
  assert.equal(smoke.repeats, 1)
  assert.equal(smoke.duration, 1)
})

test('a sweep keeps its samples gzipped unless the file says which; executor run keeps the plain JTL', () => {
  const cellsOf = text => buildCells(parseExperiment(text, { file: 's.yml', path: join(tmp(), 's.yml') }), { out: tmp() })
  const base = 'backend: local\nstrategies: [up]\ninstances: [1, 2]\nconcurrency: 4\n'
  assert.deepEqual(cellsOf(base).map(c => c.config.samples), ['gz', 'gz'])
  assert.deepEqual(cellsOf(base + 'samples: jtl\n').map(c => c.config.samples), ['jtl', 'jtl'])
  assert.deepEqual(cellsOf(base + 'profiles: { default: { samples: none } }\n').map(c => c.config.samples), ['none', 'none'])
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1 }).samples, 'jtl')
  assert.throws(() => cellsOf(base + 'samples: zip\n'), /s\.yml:5: samples: "zip" is not allowed; one of: jtl, gz, none/)
})

test('an unknown key: its line, and the keys that are allowed', async () => {
  const err = await errorOf(base + 'repeat: 3\n')
  assert.match(err.message, /^study\.yml:6: repeat: unknown key \(did you mean repeats\?\); allowed: name, description, backend,/)
})

test('a bad strategy in a list names the line of that item', async () => {
  const err = await errorOf('backend: local\nstrategies:\n  - cm\n  - cluster\ninstances: 1\n')
  assert.match(err.message, /^study\.yml:4: strategies: "cluster" is not a strategy; allowed: up, cm, pm2, hs/)
})

test('instances: a bad range, a non-number, and a map without every strategy', async () => {
  assert.match((await errorOf(base.replace('[1, 2]', '"4..2"'))).message, /^study\.yml:3: instances: "4\.\.2" is not a range/)
  assert.match((await errorOf(base.replace('[1, 2]', '[1, two]'))).message, /^study\.yml:3: instances: "two" is not allowed; a whole number, a list, a range/)
  assert.match((await errorOf(base.replace('[1, 2]', '\n  cm: [1, 2]'))).message, /^study\.yml:3: instances: no value for strategy hs/)
})

test('concurrency: a misspelt calibration level, and levels without a calibration file', async () => {
  const text = 'backend: local\nstrategies: [up]\nconcurrency:\n  - 4\n  - relaxd\n'
  assert.match((await errorOf(text)).message, /^study\.yml:5: concurrency: "relaxd" is not allowed; connections: a number, a list, relaxed \| relaxed\*cores/)
  assert.match((await errorOf(text.replace('relaxd', 'relaxed'))).message, /^study\.yml:3: concurrency: relaxed and exhausted levels need a calibration file/)
})

test('a value only the run validation knows is bad reads like the flag error, with the line', async () => {
  const err = await errorOf(base.replace('duration: 1', 'duration: -5'))
  assert.match(err.message, /^study\.yml:5: duration \(--duration\) \(strategy cm\): -5 is out of range; allowed: a number > 0 and <= 86400/)
  const big = await errorOf(base + 'concurrency: [2, 99999]\n'.replace('concurrency', 'rate'))
  assert.match(big.message, /^study\.yml:6: rate: cannot be combined with concurrency/)
  assert.match((await errorOf(base + 'load: capacity\n')).message,
    /^study\.yml:6: load: cannot be combined with concurrency: a capacity search chooses its rates/)
  const noLoad = base.replace(/^concurrency:.*\n/m, '')
  assert.match((await errorOf(noLoad + 'load:\n  capacity:\n    boundary-probes: 2\n')).message,
    /^study\.yml:7: load: capacity\.boundary-probes: 2 is out of range; allowed: a whole number >= 4 and <= 100/)
  assert.match((await errorOf(noLoad + 'load: { capacity: { precise: 2 } }\n')).message,
    /^study\.yml:5: load: "precise" is not a setting of the search; allowed: boundary-probes, max-probes/)
  assert.match((await errorOf(noLoad + 'load: closed\n')).message, /^study\.yml:5: load: "closed" is not allowed; instead of concurrency or rate: capacity/)
  const huge = await errorOf(base.replace('[2, 4]', '[2, 99999]'))
  assert.match(huge.message, /^study\.yml:4: concurrency \(--concurrency\) \(strategy cm\): 99999 is out of range/)
})

test('a profile overrides keys; its bad value names the profile\'s line', async () => {
  const text = base + 'profiles:\n  smoke:\n    repeats: 0\n'
  assert.match((await errorOf(text, { profile: 'smoke' })).message, /^study\.yml:8: repeats: 0 is not allowed; allowed: a whole number >= 1/)
  // the default profile does not apply smoke's keys
  parseExperiment(text, { file: 'study.yml' })
  assert.match((await errorOf(base + 'profiles:\n  quick: {}\n')).message, /^study\.yml:7: profiles: "quick" is not a profile; allowed: smoke, default, full/)
  assert.match((await errorOf(base, { profile: 'full' })).message, /--profile: study\.yml has no "full" profile/)
  assert.match((await errorOf(base + 'profiles:\n  smoke:\n    name: other\n', { profile: 'smoke' })).message, /^study\.yml:8: name: unknown key/)
})

test('params for a benchmark that is not in the experiment, and a param the benchmark refuses', async () => {
  assert.match((await errorOf(base + 'benchmark: cpu\nparams:\n  page: { n: 5 }\n')).message,
    /^study\.yml:8: params: "page" is not one of this experiment's benchmarks/)
  assert.match((await errorOf(base + 'benchmark: cpu\nparams:\n  n: -4\n')).message, /^study\.yml:8: params \(--param\): n: must be an integer/)
  assert.match((await errorOf(base + 'benchmark: nosuch\n')).message, /^study\.yml:6: benchmark \(--benchmark\): unknown "nosuch"/)
})

test('analysis, order and a YAML syntax error', async () => {
  assert.match((await errorOf(base + 'analysis: { fit: gauss }\n')).message,
    /^study\.yml:6: analysis: fit "gauss" is not allowed; one of: usl, amdahl, both, none/)
  assert.match((await errorOf(base + 'order: random\n')).message, /^study\.yml:6: order: "random" is not allowed; one of: shapes, blocks/)
  assert.match((await errorOf('strategies: [cm\ninstances: 1\n')).message, /^study\.yml:2: not valid YAML/)
  assert.match((await errorOf('- just\n- a list\n')).message, /^study\.yml:1: an experiment file is a YAML mapping/)
})

test('executor sweep with a bad file: exit 2, file and line on stderr, nothing written', async () => {
  const dir = tmp()
  const file = join(dir, 'bad.yml')
  writeFileSync(file, base + 'warmup: soon\n')
  const out = join(dir, 'out')
  const r = await runCli('executor', ['sweep', file, '--out', out])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /NS_ERR_BAD_FILE: .*bad\.yml:6: warmup: "soon" is not a number/)
  assert.ok(!existsSync(out) || readdirSync(out).length === 0)
  const flag = await runCli('executor', ['sweep', file, '--seed', 'x'])
  assert.equal(flag.code, 2)
  assert.match(flag.stderr, /--seed: "x" is not a whole number; allowed: a whole number >= 1/)
})

const swarm = 'backend: swarm\nstrategies: [hs]\nbenchmark: baseline\n'

test('nodes and instances-per-node: a number, a list, a range or a map; total instances = per node x nodes', () => {
  const cellsOf = text => buildCells(parseExperiment(text, { file: 's.yml', path: join(tmp(), 's.yml') }), { out: tmp() })
  const shape = c => [c.config.nodes, c.config.instances]
  assert.deepEqual(cellsOf(swarm + 'nodes: 1..3\ninstances-per-node: [1, 2]\n').map(shape), [[1, 1], [1, 2], [2, 2], [2, 4], [3, 3], [3, 6]])
  assert.deepEqual(cellsOf(swarm + 'nodes: [2, 4]\ninstances: 4\n').map(shape), [[2, 4], [4, 4]])
  assert.deepEqual(cellsOf(swarm + 'nodes: 2\ninstances-per-node: "1..2"\n').map(shape), [[2, 2], [2, 4]])
  // a map: cm runs one replica, on one node; hs spreads over 1..2
  const mixed = cellsOf('backend: auto\nbenchmark: baseline\nstrategies: [hs, cm]\nnodes: { hs: 1..2, cm: 1 }\ninstances-per-node: { hs: [2], cm: [1, 2] }\n')
  assert.deepEqual(mixed.map(c => [c.config.strategy, ...shape(c)]), [['hs', 1, 2], ['hs', 2, 4], ['cm', 1, 1], ['cm', 1, 2]])
  // without nodes, no run names any
  assert.ok(cellsOf(swarm + 'instances: [1, 2]\n').every(c => c.config.nodes === undefined))
  // analysis over nodes, with the correlations
  const exp = parseExperiment(swarm + 'nodes: 1..2\nanalysis: { x: nodes, correlations: true }\n', { file: 's.yml' })
  assert.deepEqual(exp.analysis, { fit: 'usl', x: 'nodes', cpuTable: false, correlations: true })
  assert.deepEqual(parseExperiment(swarm, { file: 's.yml' }).analysis, { fit: 'usl', x: 'instances', cpuTable: false, correlations: false })
})

test('a profile overrides nodes; instances in a profile replaces the file\'s instances-per-node (and the other way round)', () => {
  const text = swarm + 'nodes: 1..4\ninstances-per-node: [1, 2, 4]\nprofiles:\n  smoke:\n    nodes: 1..2\n    instances: [3]\n' +
    '  full:\n    instances-per-node: 1..5\n'
  const smoke = parseExperiment(text, { file: 's.yml', profile: 'smoke' })
  assert.deepEqual(smoke.nodes.hs.map(n => n.value), [1, 2])
  assert.equal(smoke.perNode, false)
  assert.deepEqual(smoke.instances.hs.map(i => i.value), [3])
  const full = parseExperiment(text, { file: 's.yml', profile: 'full' })
  assert.equal(full.perNode, true)
  assert.deepEqual(full.instances.hs.map(i => i.value), [1, 2, 3, 4, 5])
  assert.deepEqual(full.nodes.hs.map(n => n.value), [1, 2, 3, 4])
  const both = parseExperiment('backend: swarm\nstrategies: [hs]\ninstances: 2\nnodes: 1\nprofiles:\n  smoke: { instances-per-node: 2 }\n',
    { file: 's.yml', profile: 'smoke' })
  assert.equal(both.instancesKey, 'instances-per-node')
})

test('nodes and instances-per-node: bad forms name their line and what is allowed', async () => {
  assert.match((await errorOf(swarm + 'nodes: "3..1"\n')).message, /^study\.yml:4: nodes: "3\.\.1" is not a range; write "first\.\.last"/)
  assert.match((await errorOf(swarm + 'nodes:\n  - 1\n  - two\n')).message,
    /^study\.yml:6: nodes: "two" is not allowed; Swarm worker nodes, each value a run with --nodes K: a whole number, a list, a range/)
  assert.match((await errorOf(swarm + 'nodes: [1, 1]\n')).message, /^study\.yml:4: nodes: 1 is listed twice/)
  assert.match((await errorOf(swarm + 'nodes: [1, 0]\n')).message,
    /^study\.yml:4: nodes \(--nodes\) \(strategy hs\): 0 is out of range; allowed: a whole number >= 1 and <= 64/)
  assert.match((await errorOf(swarm + 'nodez: 2\n')).message, /^study\.yml:4: nodez: unknown key \(did you mean nodes\?\)/)
  assert.match((await errorOf(swarm + 'instances-per-nod: 2\nnodes: 2\n')).message,
    /^study\.yml:4: instances-per-nod: unknown key \(did you mean instances-per-node\?\)/)
  assert.match((await errorOf(swarm + 'instances-per-node: [1, 2]\n')).message,
    /^study\.yml:4: instances-per-node: needs nodes \(e\.g\. nodes: 1\.\.4\): the total is instances-per-node x nodes/)
  assert.match((await errorOf(swarm + 'nodes: 2\ninstances: 2\ninstances-per-node: 1\n')).message,
    /^study\.yml:6: instances-per-node: give instances \(the total\) or instances-per-node \(times nodes\), not both/)
  assert.match((await errorOf(swarm + 'nodes: [1, 2]\ninstances-per-node:\n  - 1\n  - 40\n')).message,
    new RegExp(/^study\.yml:7: instances-per-node \(--instances\) \(strategy hs\): 80 is out of range; /.source +
      /allowed: a whole number >= 1 and <= 64 \(the run's instances = instances-per-node x nodes\)/.source))
  assert.match((await errorOf(swarm + 'instances-per-node: [1, x]\nnodes: 1\n')).message,
    /^study\.yml:4: instances-per-node: "x" is not allowed; instead of instances: instances per worker node/)
})

test('nodes need a swarm and hs: backend local, --backend local and cm over several nodes are refused', async () => {
  const local = await errorOf('backend: local\nstrategies: [hs]\nnodes: 1..2\n')
  assert.match(local.message,
    /^study\.yml:3: nodes: needs a swarm \(its worker nodes\), and this file says backend: local \(line 1\); write backend: swarm \(or auto\), or drop nodes/)
  const cm = await errorOf('backend: auto\nstrategies: [hs, cm]\nnodes:\n  hs: 1..4\n  cm: [1, 2]\n')
  assert.match(cm.message, /^study\.yml:5: nodes: 2 nodes for cm: cm runs in one replica, on one node, so only hs spreads over nodes; give cm one node/)
  const exp = parseExperiment(swarm + 'nodes: 1..2\n', { file: 's.yml' })
  assert.throws(() => buildCells(exp, { out: tmp(), backend: 'local' }), (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FLAG' &&
    /^--backend: local cannot run s\.yml: its nodes \(line 4\) are Swarm worker nodes; use --backend swarm or auto$/.test(e.message))
})

test('analysis: x nodes needs a nodes axis; correlations is true or false; a misspelt analysis key', async () => {
  assert.match((await errorOf(swarm + 'analysis: { x: nodes }\n')).message,
    /^study\.yml:4: analysis: x nodes needs a nodes axis in the grid \(e\.g\. nodes: 1\.\.4\)/)
  assert.match((await errorOf(swarm + 'nodes: 2\nanalysis:\n  x: racks\n')).message,
    /^study\.yml:6: analysis: x "racks" is not allowed; one of: instances, concurrency, nodes/)
  assert.match((await errorOf(swarm + 'nodes: 2\nanalysis:\n  correlations: yes please\n')).message, /^study\.yml:6: analysis: correlations: true or false/)
  assert.match((await errorOf(swarm + 'analysis:\n  corelations: true\n')).message,
    /^study\.yml:5: analysis: corelations: unknown key \(did you mean correlations\?\); allowed: fit, x, cpu-table, correlations/)
})
