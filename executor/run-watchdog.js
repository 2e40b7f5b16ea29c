// The watchdog of a command that starts processes (run, sweep, capacity, calibrate): a small process of its own, in
// its own session, that outlives the executor. While the executor lives, it notes the executor's descendants (each
// with its start time, process group and cgroup folders) every WATCH_MS. When the executor ends without releasing it
// (killed with -9, a crash), it stops what it noted (SIGTERM, then SIGKILL), whole process groups where one of them
// leads its group (a launch's, register/launch.js), removes the cgroup folders they ran in under nodescale/ and
// nodescale-quota/ (rc/cpu-group.js, executor/cpu-quota.js) and HAProxy's stats socket (executor/haproxy.js).
// docs/SECURITY.md, finding 6.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { waitAtMost } from '../lib/with-timeout.js'

/** How often the watchdog notes the executor's descendants. */
export const WATCH_MS = 200
/** How long the noted processes get to stop after SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 1500
/** How long a cgroup folder may stay busy (its last tasks exiting) before the watchdog gives up on it. */
const RMDIR_WAIT_MS = 3000
/** The cgroup folders of a run: nodescale's CPU group and quota groups, one level below their parent. */
const RUN_CGROUP = /^\/nodescale(-quota)?\/[A-Za-z0-9][A-Za-z0-9._-]*$/

/**
 * A process's state, parent, process group and start time (clock ticks since boot, which tells a reused pid apart), or
 * null when it is gone.
 * @param {number} pid
 * @returns {{ state: string, ppid: number, pgid: number, start: string } | null}
 */
export function procStat (pid) {
  let text
  try { text = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { return null }
  // the command name may hold spaces and parentheses: the fields start after its last ')'
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] }
}

/**
 * The pids below one, recursively, in the order found: the children of each process's main thread (where Node, the
 * shells and PM2 start theirs), or with `allThreads` those of every thread (a JVM has hundreds: a scan of them all
 * costs ~10 ms, too much to do five times a second beside a measurement).
 * @param {number} root
 * @param {{ allThreads?: boolean }} [opts]
 */
export function descendantsOf (root, { allThreads = false } = {}) {
  const out = []
  const todo = [root]
  while (todo.length) {
    const pid = todo.shift()
    let tasks = [String(pid)]
    if (allThreads) { try { tasks = readdirSync(`/proc/${pid}/task`) } catch {} }
    for (const task of tasks) {
      let kids = ''
      try { kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8') } catch {}
      for (const k of kids.split(' ').filter(Boolean).map(Number)) {
        if (!out.includes(k)) { out.push(k); todo.push(k) }
      }
    }
  }
  return out
}

/** Where each cgroup hierarchy is mounted: '' for the unified (v2) one, else its controllers joined by ','. */
function cgroupMounts () {
  /** @type {{ v2: string | null, v1: { options: string[], at: string }[] }} */
  const mounts = { v2: null, v1: [] }
  let text = ''
  try { text = readFileSync('/proc/self/mountinfo', 'utf8') } catch {}
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ')
    if (!right) continue
    const [type, , superOptions] = right.split(' ')
    const at = left.split(' ')[4]
    if (type === 'cgroup2') mounts.v2 = at
    else if (type === 'cgroup') mounts.v1.push({ options: superOptions.split(','), at })
  }
  return mounts
}

/**
 * The folders of a run's cgroups a process is in, from /proc/<pid>/cgroup (hierarchy:controllers:path lines).
 * @param {number} pid
 * @param {ReturnType<typeof cgroupMounts>} mounts
 */
function runCgroupsOf (pid, mounts) {
  let text = ''
  try { text = readFileSync(`/proc/${pid}/cgroup`, 'utf8') } catch { return [] }
  const out = []
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line)
    if (!m || !RUN_CGROUP.test(m[2])) continue
    const controllers = m[1].split(',').filter(Boolean)
    const at = controllers.length ? mounts.v1.find(x => controllers.every(c => x.options.includes(c)))?.at : mounts.v2
    if (at) out.push(join(at, m[2]))
  }
  return out
}

/**
 * The watchdog's own loop (this file run as a program, with the executor's pid): note, then clean up unless released.
 * @param {number} executor
 */
async function watch (executor) {
  const self = process.pid
  const mounts = cgroupMounts()
  const first = procStat(executor)
  if (!first) return
  /** @type {Map<number, { start: string, pgid: number }>} */
  const known = new Map()
  const folders = new Set()
  const pipe = { said: '', closed: false }
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (d) => { pipe.said += d })
  const released = () => pipe.said.includes('release') && !pipe.said.includes('reap')
  // released: the executor waits for this process to go (startRunWatchdog), so it goes at once
  process.stdin.on('end', () => { pipe.closed = true; if (released()) process.exit(0) })
  process.stdin.on('error', () => { pipe.closed = true })
  const alive = () => procStat(executor)?.start === first.start
  for (let round = 0; !pipe.closed && alive(); round++) {
    // every thread's children once in ten rounds (2 s); what has gone is forgotten now and then
    if (round % 10 === 0) forgetGone(known, folders)
    for (const pid of descendantsOf(executor, { allThreads: round % 10 === 0 })) {
      if (pid === self) continue
      const st = procStat(pid)
      if (!st || st.state === 'Z') continue
      if (known.get(pid)?.start !== st.start) known.set(pid, { start: st.start, pgid: st.pgid })
      for (const dir of runCgroupsOf(pid, mounts)) folders.add(dir)
    }
    await sleep(WATCH_MS)
  }
  // the executor said it cleaned up: nothing to do
  if (released()) return
  await reap(executor, known, folders)
}

/**
 * Forgets the noted processes that have gone and the folders that were removed: a sweep of many runs keeps no list of
 * them all.
 * @param {Map<number, { start: string, pgid: number }>} known
 * @param {Set<string>} folders
 */
function forgetGone (known, folders) {
  for (const [pid, k] of known) if (procStat(pid)?.start !== k.start) known.delete(pid)
  for (const dir of folders) if (!existsSync(dir)) folders.delete(dir)
}

/**
 * Stops the noted processes and their groups, removes their run cgroup folders and the executor's HAProxy sockets.
 * @param {number} executor
 * @param {Map<number, { start: string, pgid: number }>} known
 * @param {Set<string>} folders
 */
async function reap (executor, known, folders) {
  const ours = (pid) => { const st = procStat(pid); return Boolean(st && st.state !== 'Z' && st.start === known.get(pid)?.start) }
  const leaders = [...known].filter(([pid, k]) => k.pgid === pid).map(([pid]) => pid)
  const signal = (sig) => {
    // a group whose leader is still ours, or that a process of ours is still in
    for (const g of leaders) {
      if (ours(g) || [...known.keys()].some(p => ours(p) && procStat(p)?.pgid === g)) { try { process.kill(-g, sig) } catch {} }
    }
    for (const pid of known.keys()) if (ours(pid)) { try { process.kill(pid, sig) } catch {} }
  }
  const left = () => [...known.keys()].filter(ours)
  signal('SIGTERM')
  for (const end = Date.now() + TERM_GRACE_MS; left().length && Date.now() < end;) await sleep(50)
  if (left().length) signal('SIGKILL')
  for (const end = Date.now() + RMDIR_WAIT_MS; folders.size && Date.now() < end;) {
    for (const dir of folders) {
      try { rmdirSync(dir); folders.delete(dir) } catch (err) { if (/** @type {any} */ (err).code === 'ENOENT') folders.delete(dir) }
    }
    if (folders.size) await sleep(100)
  }
  let sockets = []
  try { sockets = readdirSync(tmpdir()).filter(f => f.startsWith(`nodescale-haproxy-${executor}-`) && f.endsWith('.sock')) } catch {}
  for (const f of sockets) rmSync(join(tmpdir(), f), { force: true })
}

/** How long release() waits for the watchdog to go. */
const RELEASE_WAIT_MS = 1000

/**
 * Starts the watchdog of this process. `release()` when the command has cleaned up after itself (the watchdog then
 * leaves without touching anything; it resolves once it is gone, so that the command leaves no process behind);
 * `reap()` when it gives up on its own cleanup (the watchdog then does it). Ending with neither (killed, crashed) is a
 * reap.
 * @returns {{ pid: number | undefined, release: () => Promise<void>, reap: () => void }}
 */
export function startRunWatchdog () {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(process.pid)], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] })
  child.on('error', () => {})
  const gone = new Promise(resolve => { child.once('exit', () => resolve(undefined)); child.once('error', () => resolve(undefined)) })
  const stdin = /** @type {import('node:net').Socket} */ (/** @type {unknown} */ (child.stdin))
  stdin.on('error', () => {})
  // neither the watchdog nor its pipe keeps this process running
  child.unref()
  stdin.unref()
  let told = false
  const tell = (word) => {
    if (told) return
    told = true
    // written at once to the pipe (libuv writes a small chunk right away), so process.exit right after is fine
    stdin.end(`${word}\n`)
  }
  return {
    pid: child.pid,
    async release () {
      tell('release')
      await waitAtMost(gone, RELEASE_WAIT_MS)
    },
    reap: () => tell('reap')
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const executor = Number(process.argv[2])
  // in a session of its own (detached): a closed terminal or a Ctrl-C in it does not reach it
  if (Number.isInteger(executor) && executor > 1) watch(executor).finally(() => process.exit(0))
}
