// `executor run` end to end on the local backend: real servers, real drivers, real HAProxy and PM2.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, existsSync, readdirSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, readRun, descendants, alive, jtlRows, assertCompleteRun, commandLine, parentOf } from './helpers/cli.js'
import { hostsWereBusy } from './helpers/host.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-run-'))
const short = ['--backend', 'local', '--duration', '2', '--warmup', '1', '--concurrency', '4', '--quiet']

for (const [strategy, instances] of /** @type {Array<[string, number]>} */ ([['up', 1], ['cm', 2], ['pm2', 2], ['hs', 2]])) {
  test(`run --strategy ${strategy} --instances ${instances} with autocannon writes a complete run folder`, { timeout: 90000 }, async () => {
    const out = tmp()
    // --tag: a row of the options' table and nothing else (issue 28): kept in config, printed beside the status
    const r = await runCli('executor', ['run', '--strategy', strategy, '--instances', String(instances), '--benchmark', 'baseline', '--out', out,
      '--tag', `nightly ${strategy}`, ...short])
    assert.equal(r.code, 0, r.stderr)
    const { run } = assertCompleteRun(out, { strategy, instances })
    assert.match(r.stdout, /throughput [\d,]+ req\/s/)
    assert.equal(run.config.tag, `nightly ${strategy}`)
    assert.match(r.stdout, new RegExp(`^run ${run.id}: done · nightly ${strategy}$`, 'm'))
    // the environment's fingerprint (test/environment-fingerprint.test.js checks its machine facts): the run's quota
    // and where its one generator ran, as the run recorded them
    const fp = run.environment.fingerprint
    assert.deepEqual([fp.version, fp.node, fp.v8, fp.quota.strategy, fp.quota.instances], [1, process.version, process.versions.v8, strategy, instances])
    assert.deepEqual([fp.load.generators, fp.load.where, fp.load.sharesServerHost, fp.load.driver], [1, 'this host', true, 'autocannon'])
    assert.equal(typeof fp.load.generatorCores, 'number', 'the generator\'s CPU, from load.generator')
  })
}

test('run --driver jmeter records the same format and --json prints only run.json', { timeout: 120000 }, async () => {
  const out = tmp()
  const r = await runCli('executor',
    ['run', '--strategy', 'cm', '--instances', '2', '--benchmark', 'page', '--driver', 'jmeter', '--out', out, '--json', ...short])
  assert.equal(r.code, 0, r.stderr)
  const printed = JSON.parse(r.stdout)
  const { run } = assertCompleteRun(out, { strategy: 'cm', instances: 2 })
  assert.deepEqual(printed.summary, run.summary)
  assert.equal(run.config.driver, 'jmeter')
})

test('up keeps the server to about one core while cm with 2 workers uses more (the multi-core study)', { timeout: 90000 }, async (t) => {
  // autocannon, the lighter generator: on two cores JMeter's own CPU leaves cm too little room to show its second core.
  const load = ['--backend', 'local', '--benchmark', 'cpu', '--param', 'n=1000003', '--concurrency', '8', '--duration', '3', '--warmup', '1',
    '--driver', 'autocannon', '--quiet', '--json']
  const upOut = tmp()
  const up = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--out', upOut, ...load])
  assert.equal(up.code, 0, up.stderr)
  const cmOut = tmp()
  const cm = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--out', cmOut, ...load])
  assert.equal(cm.code, 0, cm.stderr)
  const upCpu = JSON.parse(up.stdout).cpu
  const cmCpu = JSON.parse(cm.stdout).cpu
  // cores another process took are cores cm's workers could not use
  const busy = hostsWereBusy([readRun(upOut).run, readRun(cmOut).run])
  if (busy) return t.skip(busy)
  assert.ok(upCpu.total < 1.1, `up used ${upCpu.total} cores`)
  // More than one core is what up cannot reach, however busy the generator keeps the machine.
  assert.ok(cmCpu.total > 1.15, `cm used ${cmCpu.total} cores, up ${upCpu.total}`)
})

test('a cluster worker killed during the run: the run completes and its errors are counted', { timeout: 90000 }, async () => {
  const out = tmp()
  let killed = null
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '2', '--benchmark', 'baseline', '--out', out, '--backend', 'local',
    '--duration', '4', '--warmup', '1', '--concurrency', '8'], {
    onStderr (text, child) {
      if (killed || !/load: /.test(text)) return
      // the primary's children are the workers; kill one hard while the load runs (not the load generator's process,
      // nor a launcher that has not exec'd yet: a worker is a register process whose parent is the primary)
      setTimeout(() => {
        const cluster = descendants(child.pid).filter(pid => /^\S*node \S*register\/(cluster|serve)\.js/.test(commandLine(pid)))
        const workers = cluster.filter(pid => cluster.includes(parentOf(pid)))
        killed = workers.at(-1)
        if (killed) process.kill(killed, 'SIGKILL')
      }, 1500)
    }
  })
  assert.ok(killed, 'a worker was killed')
  assert.equal(r.code, 0, r.stderr)
  const { dir, run } = readRun(out)
  assert.equal(run.status, 'done')
  const rows = jtlRows(join(dir, 'samples.jtl'))
  assert.equal(run.summary.errors, rows.filter(r => r.success !== 'true').length)
  assert.ok(run.summary.requests > 0)
})

test('Ctrl-C during load: exit 1, no process of the run survives, run.json says interrupted', { timeout: 90000 }, async () => {
  const out = tmp()
  let tree = []
  let armed = false
  const r = await runCli('executor', ['run', '--strategy', 'pm2', '--instances', '2', '--benchmark', 'baseline', '--out', out, '--backend', 'local',
    '--duration', '60', '--warmup', '1'], {
    onStderr (text, child) {
      if (armed || !/load: /.test(text)) return
      armed = true // one Ctrl-C: a second one means "exit now"
      setTimeout(() => { tree = descendants(child.pid); child.kill('SIGINT') }, 1500)
    }
  })
  assert.equal(r.code, 1, r.stderr)
  assert.ok(tree.length >= 3, `the run had processes (${tree.length})`)
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.deepEqual(alive(tree), [], 'every process of the run is gone')
  const { dir, run } = readRun(out)
  assert.equal(run.status, 'interrupted')
  assert.ok(existsSync(join(dir, 'samples.jtl')))
  assert.equal(run.summary.requests, jtlRows(join(dir, 'samples.jtl')).length)
})

test('missing HAProxy for hs: exit 3 naming the install command, nothing started', async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--backend', 'local', '--out', out], { env: { PATH: '/usr/bin:/bin' } })
  assert.equal(r.code, 3, r.stderr)
  assert.match(r.stderr, /NS_ERR_MISSING_HAPROXY[\s\S]*apt-get install -y haproxy/)
  assert.equal(existsSync(out) && readdirSync(out).length, 0)
})

test('missing JMeter install: exit 3 with the fix', async () => {
  const empty = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '1', '--driver', 'jmeter', '--backend', 'local', '--out', tmp()],
    { env: { NODESCALE_JMETER_HOME: empty } })
  assert.equal(r.code, 3, r.stderr)
  assert.match(r.stderr, /NS_ERR_MISSING_JMETER[\s\S]*fix:/)
})

test('missing java for the JMeter driver: exit 3 with the fix', async () => {
  const bin = tmp()
  mkdirSync(join(bin, 'empty'))
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', '1', '--driver', 'jmeter', '--backend', 'local', '--out', tmp()],
    { env: { PATH: join(bin, 'empty') } })
  assert.equal(r.code, 3, r.stderr)
  assert.match(r.stderr, /NS_ERR_MISSING_JAVA[\s\S]*fix: apt-get install/)
})

test('a custom app with a syntax error: exit 2 before anything starts', async () => {
  const out = tmp()
  const r = await runCli('executor',
    ['run', '--strategy', 'cm', '--instances', '1', '--app', 'test/fixtures/apps/syntax-error.js', '--benchmark', 'broken', '--backend', 'local', '--out', out])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /--app/)
  assert.equal(existsSync(out) && readdirSync(out).length, 0)
})

test('a bad flag: exit 2 and the message names the flag', async () => {
  const r = await runCli('executor', ['run', '--strategy', 'cm', '--instances', 'many'])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /--instances: "many" is not a whole number/)
})

test('--help teaches the flags and the exit codes', async () => {
  const r = await runCli('executor', ['run', '--help'])
  assert.equal(r.code, 0)
  for (const flag of ['--strategy', '--instances', '--benchmark', '--concurrency', '--rate', '--duration', '--warmup', '--driver', '--backend',
    '--cpus-per-instance', '--app', '--out', '--json']) {
    assert.ok(r.stdout.includes(flag), flag)
  }
  assert.match(r.stdout, /Exit codes/)
})

test('local up beyond the core count: refused without a quota (exit 2 naming --instances), measured within one with it', { timeout: 60000 }, async () => {
  const refused = await runCli('executor', ['run', '--strategy', 'up', '--instances', '4', '--out', tmp(), ...short])
  assert.equal(refused.code, 2, refused.stderr)
  assert.match(refused.stderr, /--instances[\s\S]*--cpus-per-instance/)
  const out = tmp()
  const r = await runCli('executor',
    ['run', '--strategy', 'up', '--instances', '4', '--cpus-per-instance', '0.25', '--benchmark', 'cpu', '--out', out, ...short])
  assert.equal(r.code, 0, r.stderr)
  const { run } = assertCompleteRun(out, { strategy: 'up', instances: 4 })
  assert.ok(run.cpu.total <= 1.1, `the server stays within its quota of 4 x 0.25 = 1 CPU (${run.cpu.total})`)
})
