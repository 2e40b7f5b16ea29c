// rc/thread-cpu.js: per-thread CPU attribution to cores, on a fake /proc with known counters and on a real process
// tree.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createThreadCpu, parseTaskStat } from '../rc/thread-cpu.js'

/** A /proc/<pid>/stat line: comm with a space and a ')' to check fields are counted from the last ')'. */
function statLine ({ pid, ppid = 1, utime = 0, stime = 0, start = 0, processor = 0 }) {
  const f = new Array(53).fill('0')
  f[1] = String(pid); f[2] = '(node (w) x)'; f[3] = 'S'; f[4] = String(ppid)
  f[14] = String(utime); f[15] = String(stime); f[22] = String(start); f[39] = String(processor)
  return f.slice(1).join(' ') + '\n'
}

/** A fake /proc: uptime 1000.00 s (= 100000 ticks at the baseline), processes with threads. */
function fakeProc (t, { childrenFiles = true } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'ns-fakeproc-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'uptime'), '1000.00 1900.00\n')
  return {
    root,
    /** @param {number} pid @param {number} tid @param {object} s @param {number[]} [children] */
    thread (pid, tid, s, children = []) {
      const dir = join(root, String(pid), 'task', String(tid))
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'stat'), statLine({ pid: tid, ...s }))
      if (tid === pid) writeFileSync(join(root, String(pid), 'stat'), statLine({ pid, ...s }))
      if (childrenFiles) writeFileSync(join(dir, 'children'), children.map(c => c + ' ').join(''))
    },
    gone (pid, tid) { rmSync(join(root, String(pid), 'task', String(tid)), { recursive: true, force: true }) }
  }
}

const OLD = 50000 // started before the baseline (100000 ticks)
const NEW = 100500 // started after it

test('parseTaskStat counts fields after the last ")" (comm may hold spaces and parentheses)', () => {
  assert.deepEqual(parseTaskStat(statLine({ pid: 7, ppid: 3, utime: 11, stime: 4, start: 99, processor: 1 })), { ppid: 3, ticks: 15, start: 99, processor: 1 })
  const real = readFileSync('/proc/self/stat', 'utf8')
  const p = parseTaskStat(real)
  assert.equal(p.ppid, process.ppid)
  assert.ok(p.processor >= 0 && p.start > 0 && p.ticks >= 0)
})

test('each thread\'s CPU delta goes to the core it last ran on; children and new threads count, baselines do not', (t) => {
  const p = fakeProc(t)
  p.thread(100, 100, { utime: 1000, stime: 200, start: OLD, processor: 0 }, [200])
  p.thread(100, 101, { utime: 400, start: OLD, processor: 1 })
  p.thread(200, 200, { ppid: 100, utime: 700, start: OLD, processor: 1 })
  p.thread(300, 300, { utime: 5000, start: OLD, processor: 0 }) // not in the tree yet
  const cpu = createThreadCpu({ procRoot: p.root })
  const base = cpu.sample([100])
  assert.deepEqual(base, { perCore: [], total: 0, processes: 2, threads: 3 })

  p.thread(100, 100, { utime: 1005, stime: 205, start: OLD, processor: 1 }, [200]) // +10 ticks, now on core 1
  p.thread(100, 101, { utime: 420, start: OLD, processor: 0 }) // +20, core 0
  p.thread(100, 102, { utime: 30, start: NEW, processor: 1 }) // new thread: all 30 are ours
  p.thread(200, 200, { ppid: 100, utime: 740, start: OLD, processor: 0 }) // child: +40, core 0
  const s1 = cpu.sample([100, 300]) // 300 is a root added late: only its CPU from now on counts
  assert.deepEqual(s1.perCore, [(20 + 40) / 100, (10 + 30) / 100])
  assert.equal(s1.total, 1)
  assert.equal(s1.processes, 3)

  p.gone(100, 101)
  p.thread(300, 300, { utime: 5050, start: OLD, processor: 0 }) // +50
  p.thread(200, 201, { utime: 8, start: NEW + 10, processor: 1 }) // a new thread in the child
  const s2 = cpu.sample([100, 300])
  assert.deepEqual(s2.perCore, [0.5, 0.08])
  assert.equal(s2.threads, 5)

  p.thread(100, 101, { utime: 7, start: NEW + 90, processor: 1 }) // tid 101 reused by a new thread
  const s3 = cpu.sample([100, 300])
  assert.deepEqual(s3.perCore, [0, 0.07])
})

test('without children files (CONFIG_PROC_CHILDREN off) descendants come from the ppid in /proc/<pid>/stat', (t) => {
  const p = fakeProc(t, { childrenFiles: false })
  p.thread(100, 100, { utime: 10, start: OLD })
  p.thread(200, 200, { ppid: 100, utime: 10, start: OLD })
  p.thread(300, 300, { ppid: 200, utime: 10, start: OLD }) // grandchild
  p.thread(400, 400, { ppid: 1, utime: 10, start: OLD }) // unrelated
  const cpu = createThreadCpu({ procRoot: p.root })
  cpu.sample([100])
  for (const pid of [100, 200, 300, 400]) p.thread(pid, pid, { ppid: { 100: 1, 200: 100, 300: 200, 400: 1 }[pid], utime: 30, start: OLD, processor: 1 })
  const s = cpu.sample([100])
  assert.equal(s.processes, 3)
  assert.deepEqual(s.perCore, [0, 0.6])
  assert.deepEqual(cpu.sample([100], { descendants: false }).perCore, [])
})

/** Seconds of CPU a live process used, from its own /proc accounting. */
function cpuSeconds (pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}

test('a real process tree pinned to core 1: child and grandchild both counted, on core 1', { timeout: 20000 }, async (t) => {
  const spinMs = 1200
  const spin = `const e = Date.now() + ${spinMs}; while (Date.now() < e); console.log('done'); setTimeout(() => {}, 20000)`
  // the child spawns the grandchild, then both spin on core 1 and idle (so their CPU can be read) until killed
  const childJs = `
    const kid = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(spin)}], { stdio: ['ignore', 'pipe', 'inherit'] })
    console.log('kid ' + kid.pid)
    kid.stdout.once('data', () => console.log('kid-done'))
    ${spin}`
  const child = spawn('taskset', ['-c', '1', process.execPath, '-e', childJs], { stdio: ['ignore', 'pipe', 'inherit'] })
  let kid = 0
  t.after(() => { for (const pid of [kid, child.pid]) try { if (pid) process.kill(pid, 'SIGKILL') } catch {} })
  let out = ''
  const lines = new Promise((resolve, reject) => {
    child.on('exit', code => reject(new Error(`child exited ${code}: ${out}`)))
    child.stdout.setEncoding('utf8').on('data', d => {
      out += d
      kid ||= Number(/kid (\d+)/.exec(out)?.[1] ?? 0)
      if (/\bdone\b/.test(out) && /kid-done/.test(out)) resolve(undefined)
    })
  })
  const cpu = createThreadCpu()
  cpu.sample([child.pid]) // baseline right after fork: the tree's CPU so far is ~0
  const perCore = []
  let total = 0
  const add = (s) => { s.perCore.forEach((x, i) => { perCore[i] = (perCore[i] ?? 0) + x }); total += s.total }
  const timer = setInterval(() => add(cpu.sample([child.pid])), 200)
  await lines
  await new Promise(resolve => setTimeout(resolve, 250))
  clearInterval(timer)
  add(cpu.sample([child.pid]))
  const actual = cpuSeconds(child.pid) + cpuSeconds(kid)
  assert.ok(cpuSeconds(kid) > 0.2, 'the grandchild really spun')
  assert.ok(Math.abs(total - actual) <= 0.15 * actual + 0.05, `attributed ${total.toFixed(2)} s, the processes used ${actual.toFixed(2)} s`)
  assert.ok((perCore[1] ?? 0) >= 0.9 * total, `core 1 got ${perCore[1]} of ${total} s`)
  assert.ok((perCore[0] ?? 0) <= 0.05 + 0.05 * total, `core 0 got ${perCore[0]} s`)
})
