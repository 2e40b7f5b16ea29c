// Finding 6 of docs/SECURITY.md (signals): a local hs run (two replicas behind HAProxy, the load running) whose
// executor is killed with -9 leaves no process, no listening port and no cgroup folder of the run within a few seconds
// (HAProxy by its parent-death signal, the rest by the run's watchdog, executor/run-watchdog.js), and neither does a
// run whose load JMeter drives; SIGHUP (a closed SSH session) is cleaned up as SIGTERM is.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConnection } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { listeningPorts } from '../register/proc-tree.js'
import { descendantsOf, procStat } from '../executor/run-watchdog.js'
import { ROOT, readRun } from './helpers/cli.js'

const haproxy = spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0
const skip = !haproxy && 'haproxy is not installed (npm run setup installs it)'
const GONE_WITHIN_MS = 8000

/** Starts `executor run` for a local run of 60 s (hs x2 unless told); resolves once its load runs. */
async function startRun (t, args = ['--strategy', 'hs', '--instances', '2']) {
  const out = mkdtempSync(join(tmpdir(), 'ns-watchdog-'))
  t.after(() => rmSync(out, { recursive: true, force: true }))
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'executor.js'), 'run', ...args, '--backend', 'local',
    '--benchmark', 'baseline', '--concurrency', '2', '--duration', '60', '--warmup', '1', '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
  const exited = new Promise(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => { try { child.kill('SIGKILL') } catch {} })
  for (const end = Date.now() + 90_000; !/\bload: /.test(stderr);) {
    if (Date.now() > end) throw new Error(`the load did not start in 90 s:\n${stderr}`)
    if (child.exitCode !== null) throw new Error(`the run ended before its load:\n${stderr}`)
    await sleep(100)
  }
  await sleep(1500)
  return { child, out, exited, stderr: () => stderr }
}

/** What a run has now: its processes (with start times), their listening ports and their cgroup folders of the run. */
function snapshot (pid) {
  const procs = descendantsOf(pid, { allThreads: true }).map(p => ({ pid: p, stat: procStat(p), comm: readText(`/proc/${p}/comm`).trim() })).filter(p => p.stat)
  const ports = listeningPorts(procs.map(p => p.pid))
  const folders = new Set()
  for (const { pid: p } of procs) {
    for (const line of readText(`/proc/${p}/cgroup`).split('\n')) {
      const m = /^\d+:([^:]*):(\/nodescale(-quota)?\/[^/]+)$/.exec(line)
      if (!m) continue
      for (const dir of m[1] ? [join('/sys/fs/cgroup', m[1], m[2])] : [join('/sys/fs/cgroup', m[2]), join('/sys/fs/cgroup/unified', m[2])]) {
        if (existsSync(dir)) folders.add(dir)
      }
    }
  }
  return { procs, ports, folders: [...folders] }
}

function readText (file) {
  try { return readFileSync(file, 'utf8') } catch { return '' }
}

const refused = (port) => new Promise(resolve => {
  const s = createConnection({ port, host: '127.0.0.1' })
  s.once('connect', () => { s.destroy(); resolve(false) })
  s.once('error', () => resolve(true))
})

/** What of a snapshot is still there: live processes (the same start time, not a zombie), open ports, folders. */
async function leftOf (before) {
  const procs = before.procs.filter(p => { const st = procStat(p.pid); return st && st.state !== 'Z' && st.start === p.stat.start })
  const ports = []
  for (const port of before.ports) if (!await refused(port)) ports.push(port)
  return { procs: procs.map(p => `${p.pid} ${p.comm}`), ports, folders: before.folders.filter(d => existsSync(d)) }
}

/** Waits until nothing of the snapshot is left, or the time is up; returns what is left and after how long. */
async function waitGone (before, from) {
  for (;;) {
    const left = await leftOf(before)
    const none = !left.procs.length && !left.ports.length && !left.folders.length
    if (none || Date.now() - from > GONE_WITHIN_MS) return { left, none, ms: Date.now() - from }
    await sleep(100)
  }
}

/** Kills what a failed test left, so that it does not disturb the tests after it. */
function killLeft (before) {
  for (const p of before.procs) { if (procStat(p.pid)?.start === p.stat.start) { try { process.kill(p.pid, 'SIGKILL') } catch {} } }
}

test('kill -9 of the executor mid-run: no process, port or cgroup folder of the run is left', { skip, timeout: 150_000 }, async (t) => {
  const run = await startRun(t)
  const before = snapshot(/** @type {number} */ (run.child.pid))
  t.after(() => killLeft(before))
  const comms = before.procs.map(p => p.comm)
  assert.ok(comms.includes('haproxy'), `HAProxy runs: ${comms.join(', ')}`)
  assert.ok(before.procs.length >= 4, `the replicas, HAProxy and the load: ${comms.join(', ')}`)
  assert.ok(before.ports.length >= 3, `HAProxy's port and the replicas' listen: ${before.ports.join(', ')}`)
  const cgroups = spawnSync('sh', ['-c', 'test -w /sys/fs/cgroup/cpuacct || test -w /sys/fs/cgroup/cgroup.procs']).status === 0
  if (cgroups) assert.ok(before.folders.length >= 1, 'the replicas run in the run\'s cgroup folder')
  run.child.kill('SIGKILL')
  const killedAt = Date.now()
  await run.exited
  const { left, none, ms } = await waitGone(before, killedAt)
  assert.ok(none, `left ${ms} ms after kill -9: ${JSON.stringify(left)}`)
})

test('SIGHUP (a closed SSH session) stops the load and cleans up as SIGTERM does', { skip, timeout: 150_000 }, async (t) => {
  const run = await startRun(t)
  const before = snapshot(/** @type {number} */ (run.child.pid))
  t.after(() => killLeft(before))
  run.child.kill('SIGHUP')
  const signalledAt = Date.now()
  const { code, signal } = /** @type {{ code: number | null, signal: string | null }} */ (await run.exited)
  assert.equal(signal, null, 'the executor handled SIGHUP instead of dying of it')
  assert.equal(code, 1, run.stderr())
  assert.match(run.stderr(), /SIGHUP: stopping the load and cleaning up/)
  assert.equal(readRun(run.out).run.status, 'interrupted')
  const { left, none, ms } = await waitGone(before, signalledAt)
  assert.ok(none, `left ${ms} ms after SIGHUP: ${JSON.stringify(left)}`)
})

test('kill -9 of the executor while JMeter drives the load: the JVM goes too', {
  skip: skip || (spawnSync('java', ['-version'], { stdio: 'ignore' }).status !== 0 && 'no java'), timeout: 150_000
}, async (t) => {
  const run = await startRun(t, ['--strategy', 'up', '--instances', '1', '--driver', 'jmeter'])
  const before = snapshot(/** @type {number} */ (run.child.pid))
  t.after(() => killLeft(before))
  assert.ok(before.procs.some(p => p.comm === 'java'), `JMeter's JVM runs: ${before.procs.map(p => p.comm).join(', ')}`)
  run.child.kill('SIGKILL')
  const killedAt = Date.now()
  await run.exited
  const { left, none, ms } = await waitGone(before, killedAt)
  assert.ok(none, `left ${ms} ms after kill -9: ${JSON.stringify(left)}`)
})
