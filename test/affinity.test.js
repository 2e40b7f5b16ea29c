// --affinity: raw Node (up) pinned to cores 0..N-1 (the local default) or on every core as the OS schedules it, the
// cores the server may use read from /proc into run.json beside the load generator's, and the multicore experiment
// running raw Node unpinned, as the thesis did.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { allowedCpus, cpuListText, onlineCpus, parseCpuList } from '../rc/cpu-affinity.js'
import { loadSharing } from '../executor/load-cpus.js'
import { validateRunConfig } from '../lib/run-options.js'
import { deploymentShape, serverAllowance } from '../lib/strategies.js'
import { loadExperiment } from '../executor/sweep/experiment.js'
import { buildCells } from '../executor/sweep/sweep-plan.js'
import { ROOT, commandLine, descendants, readRun, runCli } from './helpers/cli.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-affinity-'))
const short = ['--backend', 'local', '--benchmark', 'baseline', '--duration', '1', '--warmup', '0', '--concurrency', '2']
/** The cores any process of this machine may use here (the test's own affinity, which a child inherits). */
const ours = allowedCpus(process.pid)

test('CPU lists read and written the kernel\'s way', () => {
  assert.deepEqual(parseCpuList('0-3,6,8-9\n'), [0, 1, 2, 3, 6, 8, 9])
  assert.deepEqual(parseCpuList('1'), [1])
  for (const bad of ['', 'x', '3-1', '0,,1']) assert.equal(parseCpuList(bad), null, bad)
  assert.equal(cpuListText([5, 0, 1, 2]), '0-2,5')
  assert.equal(cpuListText([1]), '1')
  assert.ok(ours && ours.length >= 1, 'this process\'s Cpus_allowed_list reads')
  assert.equal(allowedCpus(2 ** 22 + 7), null, 'no such process')
})

test('--affinity: up only, exit 2 naming the flag for cm, pm2, hs and for pin on Swarm; none unpins the shape', async () => {
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1 }).affinity, undefined, 'not given: the backend\'s way')
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1, affinity: 'none' }).affinity, 'none')
  assert.equal(validateRunConfig({ strategy: 'up', instances: 1, affinity: 'none', backend: 'swarm' }).affinity, 'none')
  assert.equal(deploymentShape({ strategy: 'up', instances: 1 }).pinnedCores, 1)
  assert.equal(deploymentShape({ strategy: 'up', instances: 1, affinity: 'none' }).pinnedCores, 0)
  assert.equal(serverAllowance({ strategy: 'up', instances: 1, affinity: 'none' }, 2), 2, 'unpinned, raw Node is given every core')
  const refused = await Promise.all([
    ...['cm', 'pm2', 'hs'].map(s => runCli('executor', ['run', '--strategy', s, '--instances', '2', '--affinity', 'none', '--out', tmp()])),
    runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--affinity', 'pin', '--backend', 'swarm', '--out', tmp()]),
    runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--affinity', 'all', '--out', tmp()])
  ])
  for (const r of refused) assert.equal(r.code, 2, r.stderr)
  for (const r of refused.slice(0, 3)) assert.match(r.stderr, /--affinity: only applies to --strategy up \(got --strategy (cm|pm2|hs)\)/)
  assert.match(refused[3].stderr, /--affinity: pin is not possible on Swarm: a container there has no cpuset/)
  assert.match(refused[4].stderr, /--affinity: "all" is not allowed; one of: pin, none/)
})

test('up --affinity none: the server process may use every core (seen in /proc during the run, and in run.json); ' +
  'the generator shares them, said', { timeout: 60000 }, async () => {
  const out = tmp()
  let during = null
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--affinity', 'none', '--out', out, ...short], {
    onStderr: (text, child) => {
      if (during || !/load: autocannon/.test(text)) return
      const server = descendants(child.pid).find(pid => commandLine(pid).includes('register/serve.js'))
      during = allowedCpus(server)
    }
  })
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  assert.equal(run.status, 'done', JSON.stringify(run.error))
  assert.equal(run.config.affinity, 'none')
  assert.deepEqual(during, ours, 'the live server process, read while the load ran')
  assert.deepEqual(run.placement[0].cpus, ours, 'recorded from /proc once it answered')
  const online = onlineCpus()
  if (online && cpuListText(ours) === cpuListText(online)) assert.deepEqual(run.placement[0].cpus, online, 'every online core of the machine')
  assert.equal(run.load.cpus, null, 'the one generator is not pinned')
  assert.deepEqual(run.load.sharing.server, ours)
  assert.deepEqual(run.load.sharing.shared, ours)
  assert.equal(run.load.sharing.apart, false)
  assert.match(run.load.sharing.why, /the server may use every core .*cannot be kept off/)
  assert.match(r.stderr, /cores: --affinity none: the server may use every core/)
})

test('up without --affinity stays pinned to core 0 as before, and --load-procs auto (the default) pins its one generator ' +
  'to the core left, apart', { timeout: 60000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--out', out, '--quiet', ...short])
  assert.equal(r.code, 0, r.stderr)
  const { run } = readRun(out)
  assert.equal(run.status, 'done', JSON.stringify(run.error))
  assert.equal(run.config.affinity, undefined)
  assert.deepEqual(run.placement[0].cpus, [0])
  // before --load-procs auto the one generator was unpinned and might share core 0 (generator null, shared [0])
  const left = (ours ?? []).filter(c => c !== 0)
  if (left.length === 1) assert.deepEqual(run.load.sharing, { ...run.load.sharing, server: [0], generator: left, shared: [], apart: true })
  else assert.equal(run.load.sharing.apart, true, JSON.stringify(run.load.sharing))
})

test('the generators\' cores against the server\'s: apart when the machine allows, shared and said when it does not', () => {
  const row = (cpus) => ({ instance: 'single', node: 'h', pid: 1, port: 1, cpus })
  const proc = (cpus) => ({ where: { kind: 'process', host: 'h', cpus } })
  const apart = loadSharing({ placement: [row([0])], places: [proc([1])], machine: [0, 1] })
  assert.deepEqual({ ...apart, why: undefined }, { server: [0], generator: [1], shared: [], apart: true, why: undefined })
  assert.equal(apart.why, 'the load generator, pinned to core 1, kept off the server\'s core 0')
  const all = loadSharing({ placement: [row([0, 1])], places: [proc([1]), proc([0])], machine: [0, 1] })
  assert.deepEqual([all.generator, all.shared, all.apart], [[0, 1], [0, 1], false])
  assert.match(all.why,
    /^the server may use every core \(0-1\): the 2 load generators cannot be kept off its cores and, pinned to cores 0-1, share cores 0-1 with it$/)
  const one = loadSharing({ placement: [row([0])], machine: [0, 1, 2, 3] })
  assert.match(one.why, /is not pinned .*--load-procs P pins generators off the server's cores\): it may share the server's core 0$/)
  // Swarm: no cores in the placement, or generators on load nodes: not this machine's to say
  assert.equal(loadSharing({ placement: [{ node: 'w1' }] }), null)
  assert.equal(loadSharing({ placement: [row([0])], places: [{ where: { kind: 'agent', node: 'w2' } }] }), null)
})

test('experiments/multicore.yml runs raw Node unpinned and only raw Node; it still plans locally and on Swarm', async () => {
  const exp = await loadExperiment(join(ROOT, 'experiments', 'multicore.yml'))
  assert.equal(exp.settings.affinity, 'none')
  for (const backend of ['local', 'swarm']) {
    const cells = buildCells(exp, { out: tmp(), backend })
    const by = (s) => cells.filter(c => c.config.strategy === s).map(c => c.config.affinity)
    assert.ok(by('up').length > 0 && by('up').every(a => a === 'none'), backend)
    for (const s of ['cm', 'pm2']) assert.ok(by(s).length > 0 && by(s).every(a => a === undefined), `${s} ${backend}`)
  }
})
