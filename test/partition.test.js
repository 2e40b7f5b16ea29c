// --server-cpus: every process of every strategy held to the server's cores, the generator and HAProxy to the rest,
// read from /proc while the load runs; the partition in run.json; the lists checked (exit 2 naming the flag).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { allowedCpus } from '../rc/cpu-affinity.js'
import { validateRunConfig } from '../lib/run-options.js'
import { cpuPartition } from '../executor/load-cpus.js'
import { partitionLine } from '../executor/run-text.js'
import { ROOT, commandLine, descendants, readRun, runCli } from './helpers/cli.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-partition-'))
const cores = availableParallelism()
const run = (args) => runCli('executor', ['run', '--backend', 'local', '--benchmark', 'baseline', '--out', tmp(), ...args])

test('the lists: within the machine\'s cores, the load and HAProxy off the server\'s, local only; exit 2 naming the flag', async () => {
  const c = validateRunConfig({ strategy: 'cm', instances: 2, serverCpus: '0', loadCpus: String(cores - 1) })
  assert.deepEqual([c.serverCpus, c.loadCpus, c.lbCpus], ['0', String(cores - 1), undefined])
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1, serverCpus: '0,0' }).serverCpus, '0', 'written back the kernel\'s way')
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1, serverCpus: '0', affinity: 'none' }).affinity, 'none',
    'up unpinned within the server\'s cores')
  const refused = await Promise.all([
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', '0', '--backend', 'swarm']),
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', String(cores)]),
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', `0-${cores - 1}`]),
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', '0', '--load-cpus', '0']),
    run(['--strategy', 'cm', '--instances', '2', '--load-cpus', '1']),
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', '0', '--lb-cpus', '1']),
    run(['--strategy', 'up', '--instances', '2', '--server-cpus', '0']),
    run(['--strategy', 'cm', '--instances', '2', '--server-cpus', 'a-b'])
  ])
  for (const r of refused) assert.equal(r.code, 2, r.stderr)
  const said = (i) => refused[i].stderr
  assert.match(said(0), /--server-cpus: only applies to --backend local/)
  assert.match(said(1), new RegExp(`--server-cpus: names core ${cores}, but this machine has ${cores}`))
  assert.match(said(2), /--server-cpus: .* gives the server every core of this machine/)
  assert.match(said(3), /--load-cpus: 0 shares core 0 with --server-cpus 0/)
  assert.match(said(4), /--load-cpus: only applies with --server-cpus LIST/)
  assert.match(said(5), /--lb-cpus: only applies to --strategy hs \(got --strategy cm\)/)
  assert.match(said(6), /--instances: 2 vCPUs for --strategy up .* --server-cpus 0 gives the server 1/)
  assert.match(said(7), /--server-cpus: "a-b" is not a list of cores/)
})

test('the derived partition: the load and HAProxy on the cores the server is not given, unless given', () => {
  assert.equal(cpuPartition({}, 4), null)
  assert.deepEqual(cpuPartition({ serverCpus: '0-1' }, 4), { server: [0, 1], load: [2, 3], lb: [2, 3], derived: ['load', 'lb'] })
  assert.deepEqual(cpuPartition({ serverCpus: '0-1', loadCpus: '3', lbCpus: '2' }, 4), { server: [0, 1], load: [3], lb: [2], derived: [] })
  assert.deepEqual(cpuPartition({ serverCpus: '0' }, 2), { server: [0], load: [1], lb: [1], derived: ['load', 'lb'] })
  assert.equal(partitionLine({ server: [0], load: [1], lb: null, derived: ['load'] }), '  cores: server cpu 0 · load cpu 1 (the rest)')
})

/** The processes of a run, by what they are: the server's (our server, cluster, PM2), the generator, HAProxy. */
function roleOf (pid) {
  const cmd = commandLine(pid)
  // a launcher between its fork and its exec (sh writing the cgroup, taskset before it sets the affinity) names the
  // server in its arguments but is not yet the server: what it execs is read on the next look
  if (/^(\S*\/)?(sh|taskset|setpriv) /.test(cmd)) return null
  // the HAProxy that serves (-f its config); the run's `haproxy -v`, which reads the version for run.json, lives
  // milliseconds and serves nothing (a look that caught it counted two HAProxies)
  if (/(^|\/)haproxy .*-f /.test(cmd)) return 'lb'
  if (cmd.includes('load-child.js')) return 'load'
  if (/register\/(serve|cluster|pm2-start)\.js|pm2/.test(cmd)) return 'server'
  return null
}

// the shapes: up's one process; cm's primary and 2 workers; pm2-runtime and 2 instances; hs's 2 replicas and HAProxy
const EXPECTED = { up: { server: 1 }, cm: { server: 3 }, pm2: { server: 3 }, hs: { server: 2, lb: 1 } }

for (const strategy of ['up', 'cm', 'pm2', 'hs']) {
  test(`${strategy} --server-cpus 0 --load-cpus 1: every server process on core 0, the generator${strategy === 'hs' ? ' and HAProxy' : ''} ` +
    'on core 1, read from /proc while the load runs', { skip: cores < 2 && 'needs 2 cores', timeout: 90000 }, async () => {
    const out = tmp()
    /** @type {Map<number, { role: string, cpus: number[] | null }>} */
    const seen = new Map()
    let timer = null
    const look = (root) => {
      for (const pid of descendants(root)) {
        const role = roleOf(pid)
        const cpus = allowedCpus(pid)
        if (role && cpus) seen.set(pid, { role, cpus })
      }
    }
    const r = await runCli('executor', ['run', '--strategy', strategy, '--instances', strategy === 'up' ? '1' : '2', '--server-cpus', '0', '--load-cpus', '1',
      '--backend', 'local', '--benchmark', 'baseline', '--duration', '2', '--warmup', '1', '--concurrency', '4', '--quiet', '--out', out], {
      onStart: (child) => { timer = setInterval(() => look(child.pid), 250) }
    }).finally(() => clearInterval(timer))
    assert.equal(r.code, 0, r.stderr)
    const { run: rec } = readRun(out)
    assert.equal(rec.status, 'done', JSON.stringify(rec.error))
    const by = (role) => [...seen.values()].filter(p => p.role === role)
    assert.ok(by('server').length >= EXPECTED[strategy].server, `${by('server').length} server processes seen: ${JSON.stringify([...seen])}`)
    assert.ok(by('load').length >= 1, 'the generator was seen')
    assert.equal(by('lb').length, EXPECTED[strategy].lb ?? 0, 'HAProxy only for hs')
    for (const p of by('server')) assert.deepEqual(p.cpus, [0], `a server process: ${JSON.stringify(p)}`)
    for (const p of [...by('load'), ...by('lb')]) assert.deepEqual(p.cpus, [1], `${p.role}: ${JSON.stringify(p)}`)
    assert.deepEqual(rec.config.serverCpus, '0')
    assert.deepEqual(rec.partition,
      { server: [0], load: [1], lb: strategy === 'hs' ? [1] : null, derived: ['lb'], ...(strategy === 'hs' ? { lbAllowed: [1] } : {}) })
    assert.ok(rec.placement.every(p => p.cpus.join() === '0'), JSON.stringify(rec.placement))
    assert.deepEqual(rec.load.generators.map(g => g.cpus), [[1]])
    assert.deepEqual([rec.load.procs.mode, rec.load.procs.count, rec.load.procs.cores], ['auto', 1, [1]],
      'the default --load-procs auto: one core for the load')
    assert.equal(rec.load.sharing.apart, true)
  })
}

for (const profile of ['thesis-machine', 'adaptive-thesis-machine']) {
  test(`experiments/multicore.yml ${profile}: the server on cores 0-1, the load on the rest; refused where no core is left`, async () => {
    const { loadExperiment } = await import('../executor/sweep/experiment.js')
    const { buildCells } = await import('../executor/sweep/sweep-plan.js')
    const file = join(ROOT, 'experiments', 'multicore.yml')
    const exp = await loadExperiment(file, { profile })
    assert.equal(exp.settings.serverCpus, '0-1')
    assert.equal(exp.settings.loadCpus, undefined, 'the load\'s cores derived: the rest')
    if (cores < 3) {
      assert.throws(() => buildCells(exp, { out: tmp(), backend: 'local' }),
        /multicore\.yml:\d+: server-cpus .*0-1 gives the server every core of this machine/)
      return
    }
    const cells = buildCells(exp, { out: tmp(), backend: 'local' })
    assert.ok(cells.length > 0 && cells.every(c => c.config.serverCpus === '0-1'))
    assert.throws(() => buildCells(exp, { out: tmp(), backend: 'swarm' }), /--server-cpus: only applies to --backend local/)
  })
}
