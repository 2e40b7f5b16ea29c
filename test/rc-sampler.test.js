// rc/sampler.js: which source feeds the timeline, how v2 and thread CPU are split per core, and that the timer never
// holds the process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createSampler, capPerCore, splitTotal } from '../rc/sampler.js'
import { readCgroupProcs } from '../rc/cgroup.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

/** /proc/stat text for 4 cores with the given busy ticks out of `total` each (idle fills the rest). */
const procStat = (busy, total) => 'cpu  0 0 0 0 0 0 0 0 0 0\n' + busy.map((b, i) => `cpu${i} ${b} 0 0 ${total - b} 0 0 0 0 0 0\n`).join('') + 'intr 0\n'

function statLine (pid, ticks, processor) {
  const f = new Array(53).fill('0')
  f[1] = String(pid); f[2] = '(node)'; f[3] = 'S'; f[4] = '1'; f[14] = String(ticks); f[22] = '50000'; f[39] = String(processor)
  return f.slice(1).join(' ') + '\n'
}

/** A fake /proc (4 cores, one process 100 with threads 100 and 101) and a fake cgroup folder. */
function fakeHost (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-sampler-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const proc = join(dir, 'proc')
  const cg = join(dir, 'cg')
  mkdirSync(cg)
  const host = {
    proc,
    cg,
    setHost (busy, total = 10000) { mkdirSync(proc, { recursive: true }); writeFileSync(join(proc, 'stat'), procStat(busy, total)) },
    setThread (tid, ticks, processor) {
      mkdirSync(join(proc, '100', 'task', String(tid)), { recursive: true })
      writeFileSync(join(proc, '100', 'task', String(tid), 'stat'), statLine(tid, ticks, processor))
      writeFileSync(join(proc, '100', 'task', String(tid), 'children'), '')
    },
    setV2 (usec) { writeFileSync(join(cg, 'cpu.stat'), `usage_usec ${usec}\nuser_usec ${usec}\nsystem_usec 0\nnice_usec 0\n`) },
    setV1 (ns) { writeFileSync(join(cg, 'cpuacct.usage_percpu'), ns.join(' ') + ' \n') }
  }
  host.setHost([0, 0, 0, 0])
  writeFileSync(join(proc, 'uptime'), '1000.00 1900.00\n')
  host.setThread(100, 0, 0)
  host.setThread(101, 0, 1)
  writeFileSync(join(cg, 'cgroup.procs'), '100\n')
  return host
}

const fakeGroup = (kind, path) => ({
  kind, path, wrap: (cmd, args) => ({ cmd, args }), addPid () {}, pids: () => readCgroupProcs(path), remove: async () => {}
})

/** Starts the sampler, changes the counters once, and stops it: the changes land in exactly one sample. */
async function oneChange (sampler, change) {
  const t0 = Date.now()
  sampler.start()
  change()
  await sleep(100)
  const timeline = await sampler.stop()
  const elapsedSec = (Date.now() - t0) / 1000
  const moved = timeline.samples.filter(s => s.serverTotal > 0)
  assert.equal(moved.length, 1, JSON.stringify(timeline.samples))
  return { timeline, s: moved[0], elapsedSec }
}

/**
 * cpuSec of CPU seen in a sample that covered between 0.1 s and elapsedSec: its total in cores is within these bounds.
 */
function assertTotal (s, cpuSec, elapsedSec) {
  assert.ok(s.serverTotal >= cpuSec / elapsedSec - 0.002 && s.serverTotal <= cpuSec / 0.095, `${s.serverTotal} cores for ${cpuSec} s in <= ${elapsedSec} s`)
  const sum = s.server.reduce((a, b) => a + b, 0)
  assert.ok(Math.abs(sum - s.serverTotal * 100) <= 0.3, `per-core sum ${sum} vs total ${s.serverTotal}`)
}

test('cgroup-v1 source: usage_percpu deltas per core', async (t) => {
  const h = fakeHost(t)
  h.setV1([5e9, 7e9, 0, 1e9])
  const sampler = createSampler({ group: fakeGroup('cgroup-v1', h.cg), procRoot: h.proc, intervalMs: 200 })
  const { timeline, s, elapsedSec } = await oneChange(sampler, () => h.setV1([5e9 + 1e6, 7e9 + 3e6, 0, 1e9]))
  assert.equal(timeline.source, 'cgroup-v1')
  assert.equal(timeline.cpus, 4)
  assert.deepEqual([s.server[2], s.server[3]], [0, 0])
  assert.ok(Math.abs(s.server[1] / s.server[0] - 3) < 0.2, String(s.server))
  assertTotal(s, 0.004, elapsedSec)
})

test('cgroup-v2 source: the cpu.stat total, split over cores like the group\'s threads ran', async (t) => {
  const h = fakeHost(t)
  h.setV2(1000000)
  const sampler = createSampler({ group: fakeGroup('cgroup-v2', h.cg), procRoot: h.proc, intervalMs: 200 })
  const { timeline, s, elapsedSec } = await oneChange(sampler, () => {
    h.setV2(1000000 + 8000) // 8 ms in the cgroup; the threads saw 1 tick on core 0 and 3 on core 1
    h.setThread(100, 1, 0)
    h.setThread(101, 3, 1)
  })
  assert.equal(timeline.source, 'cgroup-v2')
  assert.deepEqual([s.server[2], s.server[3]], [0, 0])
  assert.ok(Math.abs(s.server[1] / s.server[0] - 3) < 0.2, String(s.server))
  assertTotal(s, 0.008, elapsedSec)
})

test('cgroup-v2 source: CPU no thread accounts for (short-lived processes) is split like the host\'s busy cores', async (t) => {
  const h = fakeHost(t)
  h.setV2(0)
  const sampler = createSampler({ group: fakeGroup('cgroup-v2', h.cg), procRoot: h.proc, intervalMs: 200 })
  const { s, elapsedSec } = await oneChange(sampler, () => {
    h.setV2(6000)
    h.setHost([0, 0, 20, 40], 10100) // 100 ticks later: cores 2 and 3 were 20% and 40% busy
  })
  assert.deepEqual([s.server[0], s.server[1]], [0, 0])
  assert.ok(Math.abs(s.server[3] / s.server[2] - 2) < 0.2, String(s.server))
  assertTotal(s, 0.006, elapsedSec)
  assert.deepEqual(s.host, [0, 0, 20, 40])
})

test('threads source: pids() and their threads, when the group cannot account CPU', async (t) => {
  const h = fakeHost(t)
  const sampler = createSampler({ pids: () => [100], procRoot: h.proc, intervalMs: 200 })
  const { timeline, s, elapsedSec } = await oneChange(sampler, () => {
    h.setThread(100, 2, 3)
    h.setThread(101, 1, 0)
  })
  assert.equal(timeline.source, 'threads')
  assert.ok(Math.abs(s.server[3] / s.server[0] - 2) < 0.2, String(s.server))
  assertTotal(s, 0.03, elapsedSec)
})

test('capPerCore keeps attributed totals but no core above 100; splitTotal falls back to host weights, then evenly', () => {
  // 30 over the cap goes to the others in proportion to their headroom (30 and 60)
  const capped = capPerCore([130, 70, 40])
  assert.deepEqual(capped.map(x => Math.round(x * 1e9) / 1e9), [100, 80, 60])
  assert.deepEqual(capPerCore([30, 20]), [30, 20])
  assert.deepEqual(capPerCore([300, 0]), [100, 100])
  assert.deepEqual(splitTotal(8, [1, 3], [5, 5], 2), [2, 6])
  assert.deepEqual(splitTotal(8, [0, 0], [1, 0], 2), [8, 0])
  assert.deepEqual(splitTotal(8, [], [0, 0], 2), [4, 4])
})

test('a real sampler: one sample per interval with every field, a frozen timeline after stop, stop twice is fine', { timeout: 10000 }, async () => {
  const sampler = createSampler({ pids: () => [process.pid], intervalMs: 100 })
  assert.deepEqual((await createSampler({ intervalMs: 100 }).stop()).samples, [], 'stop before start')
  sampler.start()
  const spinUntil = Date.now() + 500
  while (Date.now() < spinUntil) { // our own CPU, in slices so the sampler's timer still fires
    const slice = Date.now() + 20
    while (Date.now() < slice);
    await new Promise(resolve => setImmediate(resolve))
  }
  await sleep(200)
  const mid = sampler.timeline()
  const tl = await sampler.stop()
  assert.ok(tl.samples.length >= 3 && tl.samples.length <= 10, `${tl.samples.length} samples`)
  assert.ok(mid.samples.length <= tl.samples.length)
  for (const s of tl.samples) {
    assert.equal(s.server.length, tl.cpus)
    assert.equal(s.host.length, tl.cpus)
    assert.ok(Number.isFinite(s.serverTotal) && Number.isFinite(s.t))
  }
  assert.ok(tl.samples.every((s, i) => i === 0 || s.t >= tl.samples[i - 1].t))
  assert.ok(Math.max(...tl.samples.map(s => s.serverTotal)) > 0.2, 'the spin shows up as our CPU')
  await sleep(250)
  assert.deepEqual((await sampler.stop()).samples, tl.samples)
})

test('the sampler\'s timer does not keep a process alive', { timeout: 10000 }, async () => {
  const js = `import { createSampler } from ${JSON.stringify(join(ROOT, 'rc', 'sampler.js'))}; createSampler({ intervalMs: 50 }).start()`
  const child = spawn(process.execPath, ['--input-type=module', '-e', js], { stdio: 'inherit' })
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
  const [code, signal] = await new Promise(resolve => child.on('exit', (c, s) => resolve([c, s])))
  clearTimeout(timer)
  assert.deepEqual([code, signal], [0, null])
})
