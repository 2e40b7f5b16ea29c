// What every run can rely on whatever the backend: bad output folders refused before anything starts, a backend chosen
// by auto checking its own flags, one rule for numbers in every command, the backend contract (signal, teardown), and a
// bound on the time a signal takes to end the executor.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { runCli, descendants, alive, readRun } from './helpers/cli.js'
import { validateRunConfig } from '../lib/run-options.js'
import { createLocalBackend } from '../executor/backends/local.js'
import { resolveBackend } from '../executor/backends/index.js'
import { detectCgroup, cpuacctRoot } from '../rc/cgroup.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-contract-'))
/** A Docker daemon nobody runs: `--backend auto` falls back to the local backend. */
const NO_DOCKER = { DOCKER_HOST: `unix://${join(tmpdir(), `nodescale-no-docker-${process.pid}.sock`)}` }
const quick = ['--benchmark', 'baseline', '--duration', '1', '--warmup', '0', '--concurrency', '2']

test('--out under /proc: exit 2 naming --out within seconds, before anything is deployed', { timeout: 30000 }, async () => {
  const started = Date.now()
  let tree = []
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--backend', 'local', '--out', '/proc/nope', ...quick], {
    onStderr (text, child) { tree = descendants(child.pid) }
  })
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /NS_ERR_BAD_FLAG: --out: \/proc\/nope cannot be made or written to \(ENOENT\)/)
  assert.ok(Date.now() - started < 10000, `answered in ${Date.now() - started} ms`)
  assert.doesNotMatch(r.stderr, /deploying|launch /, 'nothing was deployed')
  assert.deepEqual(alive(tree), [])
})

test('a file where --out wants a folder, and a folder that cannot be written: exit 2 naming --out', async () => {
  const dir = tmp()
  writeFileSync(join(dir, 'file'), '')
  const under = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--backend', 'local', '--out', join(dir, 'file', 'sub'), ...quick])
  assert.equal(under.code, 2, under.stderr)
  assert.match(under.stderr, /--out: .*file\/sub cannot be made or written to \(ENOTDIR\)/)
  const calibrate = await runCli('executor', ['calibrate', '--backend', 'local', '--runs', '/proc/nope/probes', '--max-probes', '3'])
  assert.equal(calibrate.code, 2, calibrate.stderr)
  assert.match(calibrate.stderr, /--runs: \/proc\/nope\/probes cannot be made/)
  const file = join(dir, 'grid.yml')
  writeFileSync(file, 'backend: local\nbenchmark: baseline\nstrategies: [up]\nduration: 1\nwarmup: 0\n')
  const sweep = await runCli('executor', ['sweep', file, '--out', '/proc/nope'])
  assert.equal(sweep.code, 2, sweep.stderr)
  assert.match(sweep.stderr, /--out: \/proc\/nope cannot be made/)
})

test('--backend auto that lands on local (no Docker daemon) refuses the Swarm-only flags: exit 2 naming the flag and why', async () => {
  const nodes = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--nodes', '2', '--out', tmp(), ...quick], { env: NO_DOCKER })
  assert.equal(nodes.code, 2, nodes.stderr)
  assert.match(nodes.stderr, new RegExp(/NS_ERR_BAD_FLAG: --nodes: only applies to Swarm runs \(--backend swarm or auto\), /.source +
    /not to the local backend \(--backend auto chose it: no Docker daemon answers/.source))
  const memory = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--memory-per-instance', '256M', '--out', tmp(), ...quick],
    { env: NO_DOCKER })
  assert.equal(memory.code, 2, memory.stderr)
  assert.match(memory.stderr, /--memory-per-instance: is a Swarm memory limit/)
  // the same flag given with --backend local is refused as it is parsed
  const local = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--registry', 'builtin', '--backend', 'local'])
  assert.equal(local.code, 2)
  assert.match(local.stderr, /--registry: only applies to Swarm runs/)
})

test('resolveBackend: auto without Docker gives the local backend, which has checked the config', async () => {
  const saved = process.env.DOCKER_HOST
  process.env.DOCKER_HOST = NO_DOCKER.DOCKER_HOST
  try {
    const lines = []
    const backend = await resolveBackend(validateRunConfig({ strategy: 'cm', instances: 2, out: tmp() }), { log: l => lines.push(l) })
    assert.equal(backend.name, 'local')
    assert.match(lines.join('\n'), /backend auto -> local \(no Docker daemon answers/)
    await assert.rejects(resolveBackend(validateRunConfig({ strategy: 'up', instances: 1, placement: 'pack', out: tmp() })),
      /--placement: only applies to Swarm runs/)
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST
    else process.env.DOCKER_HOST = saved
  }
})

test('one rule for whole numbers in every command: 1e1, 0x10 and 10.0 are not whole numbers', async () => {
  // each command refuses its flag before it starts anything: the nine run side by side
  const numbers = ['1e1', '0x10', '10.0', '']
  const [runs, [calibrate, confirm, sweep, analyzer, cluster]] = await Promise.all([
    Promise.all(numbers.map(n => runCli('executor', ['run', '--strategy', 'cm', '--instances', n]))),
    Promise.all([
      runCli('executor', ['calibrate', '--instances', '1e1']),
      runCli('executor', ['calibrate', '--confirm', '1e1']),
      runCli('executor', ['sweep', 'x.yml', '--seed', '1e1']),
      runCli('analyzer', ['fit', 'x', '--bootstrap', '1e1']),
      runCli('executor', ['cluster', 'up', '--nodes', '1e1'])
    ])
  ])
  numbers.forEach((n, i) => {
    assert.equal(runs[i].code, 2, `run --instances ${n}`)
    assert.match(runs[i].stderr, new RegExp(`--instances: "${n}" is not a whole number`))
  })
  assert.match(calibrate.stderr, /--instances: "1e1" is not a whole number/)
  assert.match(confirm.stderr, /--confirm: "1e1" is not a whole number/)
  assert.match(sweep.stderr, /--seed: "1e1" is not a whole number/)
  assert.match(analyzer.stderr, /--bootstrap: "1e1" is not a whole number/)
  assert.match(cluster.stderr, /--nodes: "1e1" is not a whole number/)
  for (const r of [calibrate, confirm, sweep, analyzer, cluster]) assert.equal(r.code, 2, r.stderr)
})

test('local backend contract: an abort during deploy rejects, and nothing of the deployment is left', { timeout: 60000 }, async () => {
  const backend = createLocalBackend()
  const config = validateRunConfig({ strategy: 'cm', instances: 2, benchmark: 'baseline', backend: 'local', out: tmp() })
  backend.checkConfig(config)
  await backend.prepare(config, { log: () => {} })
  const runId = `contract-${process.pid}`
  const before = new Set(descendants(process.pid))
  const ac = new AbortController()
  setTimeout(() => ac.abort(new Error('stop')), 150)
  const started = Date.now()
  await assert.rejects(backend.deploy(config, { runId, runDir: tmp(), log: () => {}, signal: ac.signal }), /^Error: stop$/)
  assert.ok(Date.now() - started < 10000, `rejected in ${Date.now() - started} ms`)
  await sleep(200)
  assert.deepEqual(alive(descendants(process.pid).filter(p => !before.has(p))), [], 'no process of the deployment is left')
  if (detectCgroup() === 'v1') assert.ok(!existsSync(join(cpuacctRoot(), 'nodescale', runId)), 'its CPU group is removed')
})

test('local backend contract: teardown removes every process and a second teardown does nothing', { timeout: 60000 }, async () => {
  const backend = createLocalBackend()
  const config = validateRunConfig({ strategy: 'hs', instances: 2, benchmark: 'baseline', backend: 'local', out: tmp() })
  const runDir = tmp()
  const before = new Set(descendants(process.pid))
  const deployment = await backend.deploy(config, { runId: `contract-td-${process.pid}`, runDir, log: () => {} })
  assert.equal(deployment.placement.length, 2)
  assert.ok(existsSync(join(runDir, 'haproxy.cfg')))
  const mine = descendants(process.pid).filter(p => !before.has(p))
  assert.ok(mine.length >= 3, 'two replicas and HAProxy')
  await deployment.teardown()
  await deployment.teardown()
  assert.deepEqual(alive(mine), [])
})

test('SIGTERM during load ends a run within seconds: cleaned up, run.json interrupted', { timeout: 60000 }, async () => {
  const out = tmp()
  let tree = []
  let sent = 0
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--benchmark', 'baseline', '--backend', 'local', '--out', out,
    '--duration', '60', '--warmup', '0'], {
    onStderr (text, child) {
      if (sent || !/load: /.test(text)) return
      sent = Date.now()
      setTimeout(() => { tree = descendants(child.pid); child.kill('SIGTERM') }, 1000)
    }
  })
  const took = Date.now() - sent - 1000
  assert.equal(r.code, 1, r.stderr)
  assert.ok(took < 10000, `ended ${took} ms after SIGTERM`)
  assert.deepEqual(alive(tree), [])
  assert.equal(readRun(out).run.status, 'interrupted')
})

test('SIGTERM while the executor waits on something that ignores it (an app whose import never ends): it exits anyway', { timeout: 60000 }, async () => {
  const dir = tmp()
  const app = join(dir, 'stuck.js')
  writeFileSync(app, 'await new Promise(() => setInterval(() => {}, 1000))\nexport default (req, res) => res.end()\n')
  let sent = 0
  // nothing is printed before the import: the signal goes once the executor had time to reach it
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--app', app, '--backend', 'local', '--out', join(dir, 'out')], {
    onStart (child) { setTimeout(() => { sent = Date.now(); child.kill('SIGTERM') }, 1500) }
  })
  const took = Date.now() - sent
  assert.equal(r.code, 130, r.stderr)
  assert.match(r.stderr, /SIGTERM: the cleanup did not finish within 15 s; exiting/)
  assert.ok(took < 20000, `exited ${took} ms after SIGTERM`)
  assert.ok(!existsSync(join(dir, 'out')) || readdirSync(join(dir, 'out')).length === 0, 'no run folder was made')
})
