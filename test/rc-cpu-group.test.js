// rc/cpu-group.js with rc/sampler.js on the real kernel: the server's own cgroup, its per-core CPU, and clean removal.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCpuGroup } from '../rc/cpu-group.js'
import { detectCgroup } from '../rc/cgroup.js'
import { createSampler } from '../rc/sampler.js'
import { summarizeCpu } from '../rc/cpu-summary.js'

const isRoot = process.getuid?.() === 0
const uniq = () => `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

/** Seconds of CPU a live process used, from its own /proc accounting (independent of cgroups). */
function cpuSeconds (pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}

/** The cgroup paths a process is in, one per hierarchy line of /proc/<pid>/cgroup. */
const cgroupsOf = (pid) => readFileSync(`/proc/${pid}/cgroup`, 'utf8')

const killAll = (pids) => { for (const pid of pids) try { if (pid) process.kill(pid, 'SIGKILL') } catch {} }

/** A group of the wanted kind, or a skip reason. */
async function groupOrSkip (t, cgroupRoot, want) {
  if (!isRoot) return t.skip('needs root to create cgroups')
  if (detectCgroup(cgroupRoot) !== want) return t.skip(`${cgroupRoot} is not cgroup ${want} on this host`)
  const group = await createCpuGroup({ name: uniq(), cgroupRoot })
  t.after(() => group.remove())
  if (group.kind === 'threads') return t.skip(`${cgroupRoot} is not writable here`)
  return group
}

/**
 * Runs a server stand-in through group.wrap, pinned to core 1: a node process that forks a grandchild AFTER it joined,
 * both spin, then idle until killed. Samples it and returns what the sampler saw and what the processes really used.
 */
async function pinnedTree (t, group, { spinMs = 1200, intervalMs = 250 } = {}) {
  const spin = `const e = Date.now() + ${spinMs}; while (Date.now() < e); console.log('done'); setTimeout(() => {}, 20000)`
  const js = `
    const kid = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(spin)}], { stdio: ['ignore', 'pipe', 'inherit'] })
    console.log('kid ' + kid.pid)
    kid.stdout.once('data', () => console.log('kid-done'))
    ${spin}`
  const pids = []
  t.after(() => killAll(pids))
  const sampler = createSampler({ group, pids: () => pids.slice(0, 1), intervalMs })
  const t0 = Date.now()
  sampler.start()
  const w = group.wrap('taskset', ['-c', '1', process.execPath, '-e', js])
  const child = spawn(w.cmd, w.args, { stdio: ['ignore', 'pipe', 'inherit'] })
  pids.push(child.pid)
  let out = ''
  await new Promise((resolve, reject) => {
    child.on('exit', code => reject(new Error(`exited ${code}: ${out}`)))
    child.stdout.setEncoding('utf8').on('data', d => {
      out += d
      const kid = Number(/kid (\d+)/.exec(out)?.[1] ?? 0)
      if (kid && !pids.includes(kid)) pids.push(kid)
      if (/\bdone\b/.test(out) && /kid-done/.test(out)) resolve(undefined)
    })
  })
  await new Promise(resolve => setTimeout(resolve, 300))
  const timeline = await sampler.stop()
  const used = cpuSeconds(pids[0]) + cpuSeconds(pids[1])
  // CPU seconds the sampler saw, per core and in total: each sample covers (previous t, t]
  let prev = t0
  let total = 0
  const perCore = new Array(timeline.cpus).fill(0)
  for (const s of timeline.samples) {
    const dt = (s.t - prev) / 1000
    total += s.serverTotal * dt
    s.server.forEach((p, i) => { perCore[i] += p / 100 * dt })
    prev = s.t
  }
  return { timeline, used, total, perCore, pids }
}

function assertCore1 ({ timeline, used, total, perCore }, source) {
  assert.equal(timeline.source, source)
  assert.ok(timeline.samples.length >= 4, `${timeline.samples.length} samples`)
  assert.ok(Math.abs(total - used) <= 0.15 * used + 0.05, `sampler saw ${total.toFixed(2)} CPU s, the processes used ${used.toFixed(2)} s`)
  assert.ok(perCore[1] >= 0.9 * total, `core 1: ${perCore[1].toFixed(2)} of ${total.toFixed(2)} s`)
  const table = summarizeCpu(timeline)
  assert.ok(table.cores[0].usage < 10, `core 0 at ${table.cores[0].usage}%`)
  assert.equal(table.highestCore, 1)
  // two spinning processes on one core: while they spin, core 1 is busy for the server (other work on this shared host
  // may take a share)
  const peak = Math.max(...timeline.samples.map(s => s.server[1]))
  assert.ok(peak > 40, `core 1 peaked at ${peak}%`)
  for (const s of timeline.samples) assert.equal(s.host.length, timeline.cpus)
}

test('cgroup v1: the wrapped server and the child it forks later are in the group; the sampler puts their CPU on core 1', { timeout: 20000 }, async (t) => {
  const group = await groupOrSkip(t, '/sys/fs/cgroup', 'v1')
  if (!group) return
  assert.equal(group.kind, 'cgroup-v1')
  assert.ok(existsSync(join(group.path, 'cpuacct.usage_percpu')))
  const r = await pinnedTree(t, group)
  const rel = group.path.slice(group.path.indexOf('/nodescale/'))
  for (const pid of r.pids) assert.match(cgroupsOf(pid), new RegExp(`cpuacct:${rel}\\n`), `pid ${pid}`)
  assert.deepEqual(group.pids().sort(), r.pids.slice().sort())
  assertCore1(r, 'cgroup-v1')
})

test('cgroup v2 (the unified hierarchy of this hybrid host): cpu.stat total, split per core by thread attribution', { timeout: 20000 }, async (t) => {
  const root = detectCgroup() === 'v2' ? '/sys/fs/cgroup' : '/sys/fs/cgroup/unified'
  const group = await groupOrSkip(t, root, 'v2')
  if (!group) return
  assert.equal(group.kind, 'cgroup-v2')
  const r = await pinnedTree(t, group)
  for (const pid of r.pids) assert.match(cgroupsOf(pid), new RegExp(`^0::${group.path.slice(root.length)}$`, 'm'), `pid ${pid}`)
  assertCore1(r, 'cgroup-v2')
})

test('remove() cleans the group after its processes exited, and is a no-op the second time', { timeout: 10000 }, async (t) => {
  const group = await groupOrSkip(t, '/sys/fs/cgroup', detectCgroup())
  if (!group) return
  const w = group.wrap(process.execPath, ['-e', 'require("node:child_process").spawn(process.execPath, ["-e", ""]).on("exit", () => {})'])
  const child = spawn(w.cmd, w.args, { stdio: 'ignore' })
  const code = await new Promise(resolve => child.on('exit', resolve))
  assert.equal(code, 0)
  assert.ok(existsSync(group.path))
  await group.remove()
  assert.equal(existsSync(group.path), false)
  await group.remove()
})

test('remove() with processes still inside moves them out (they keep running) and removes the group', { timeout: 10000 }, async (t) => {
  const group = await groupOrSkip(t, '/sys/fs/cgroup', detectCgroup())
  if (!group) return
  const w = group.wrap(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'])
  const child = spawn(w.cmd, w.args, { stdio: 'ignore' })
  t.after(() => killAll([child.pid]))
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.ok(cgroupsOf(child.pid).includes(group.path.slice(group.path.indexOf('/nodescale/'))))
  await group.remove()
  assert.equal(existsSync(group.path), false)
  assert.equal(child.exitCode, null, 'still running')
  assert.ok(!cgroupsOf(child.pid).includes('/nodescale/'), cgroupsOf(child.pid))
})

test('addPid moves a running process and its existing children into the group', { timeout: 10000 }, async (t) => {
  const group = await groupOrSkip(t, '/sys/fs/cgroup', detectCgroup())
  if (!group) return
  const child = spawn(process.execPath, ['-e', 'const k = require("node:child_process").spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"]); ' +
    'console.log(k.pid); setTimeout(() => {}, 20000)'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const kid = Number(await new Promise(resolve => child.stdout.setEncoding('utf8').once('data', resolve)))
  t.after(() => killAll([kid, child.pid]))
  group.addPid(child.pid)
  assert.deepEqual(group.pids().sort(), [child.pid, kid].sort())
  group.addPid(999999999) // gone or never existed: not an error
})

test('where no cgroup can be written the group is kind "threads": wrap changes nothing, addPid feeds the sampler', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'ns-nocg-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const group = await createCpuGroup({ name: uniq(), cgroupRoot: root })
  assert.equal(group.kind, 'threads')
  assert.equal(group.path, undefined)
  assert.deepEqual(group.wrap('node', ['a.js']), { cmd: 'node', args: ['a.js'] })
  group.addPid(process.pid)
  assert.deepEqual(group.pids(), [process.pid])
  await group.remove()
  assert.deepEqual(group.pids(), [])
})

test('a group name that could escape its folder is refused before anything is created', async () => {
  for (const name of ['../x', 'a/b', '', '.hidden', 'x'.repeat(200)]) {
    await assert.rejects(createCpuGroup({ name, cgroupRoot: '/nonexistent' }), /CPU group name/)
  }
})
