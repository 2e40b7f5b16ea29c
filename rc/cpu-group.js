// Puts the server under test's processes in a CPU accounting group of their own (cgroup v1 cpuacct, v2, or thread
// tracking).
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { cpuacctRoot, detectCgroup, readCgroupProcs } from './cgroup.js'
import { readText } from './read-text.js'
import { fail } from '../lib/messages.js'

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
const REMOVE_TRIES = 50
const REMOVE_WAIT_MS = 100

/**
 * @typedef {{ kind: 'cgroup-v1'|'cgroup-v2'|'threads', path?: string,
 *   wrap(cmd: string, args: string[]): { cmd: string, args: string[] },
 *   addPid(pid: number): void, pids(): number[], remove(): Promise<void> }} CpuGroup
 */

/** The pid and its current descendants (children files; a process forked later joins by inheritance). */
function withDescendants (pid) {
  const out = [pid]
  for (let i = 0; i < out.length; i++) {
    try {
      for (const t of readText(`/proc/${out[i]}/task/${out[i]}/children`).split(' ')) if (t) out.push(Number(t))
    } catch {}
  }
  return out
}

/** Moves one pid into a group's cgroup.procs; a pid that is gone already is not an error. */
function movePid (procsFile, pid) {
  try { writeFileSync(procsFile, String(pid)) } catch (err) {
    if (err.code !== 'ESRCH') throw err
  }
}

/**
 * Whether a process can join the group: mkdir may succeed where moving a process is refused (v2 delegation rules).
 * One short-lived shell, once per group, joins exactly as wrap() will.
 */
function canJoin (procsFile) {
  const r = spawnSync('sh', ['-c', 'echo $$ > "$1"', 'sh', procsFile], { stdio: 'ignore', timeout: 5000 })
  return r.status === 0
}

/** A group that only remembers pids: the sampler attributes their threads' CPU per core. */
function threadsGroup () {
  const added = new Set()
  return {
    kind: /** @type {const} */ ('threads'),
    path: undefined,
    wrap: (cmd, args) => ({ cmd, args }),
    addPid (pid) { added.add(pid) },
    pids: () => [...added],
    async remove () { added.clear() }
  }
}

/**
 * A CPU accounting group for the server under test. As root on cgroup v1 it is `<root>/cpuacct/nodescale/<name>`
 * (per-CPU ns from cpuacct.usage_percpu); on cgroup v2 `<root>/nodescale/<name>` (total CPU from cpu.stat); where
 * neither can be written (not root, read-only /sys in a container) it is kind 'threads' and wrap() changes nothing.
 * @param {{ name: string, cgroupRoot?: string }} opts name: letters, digits, . _ - (a run id)
 * @returns {Promise<CpuGroup>}
 */
export async function createCpuGroup ({ name, cgroupRoot = '/sys/fs/cgroup' }) {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw fail('CPU_GROUP_NAME_INVALID', { name: JSON.stringify(name) })
  }
  const version = detectCgroup(cgroupRoot)
  if (version === 'none') return threadsGroup()
  const hierarchy = version === 'v1' ? cpuacctRoot(cgroupRoot) : cgroupRoot
  const dir = join(hierarchy, 'nodescale', name)
  const procs = join(dir, 'cgroup.procs')
  // where the remaining processes go at remove(): the hierarchy's root, so nodescale/ itself stays empty
  const rootProcs = join(hierarchy, 'cgroup.procs')
  try {
    mkdirSync(dir, { recursive: true })
  } catch {
    return threadsGroup()
  }
  if (!canJoin(procs)) {
    try { rmdirSync(dir) } catch {}
    return threadsGroup()
  }
  let removed = false
  return {
    kind: version === 'v1' ? 'cgroup-v1' : 'cgroup-v2',
    path: dir,
    wrap (cmd, args) {
      // the shell joins, then execs: the server and everything it forks later are inside from their first instruction
      return { cmd: 'sh', args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', cmd, ...args] }
    },
    addPid (pid) {
      for (const p of withDescendants(pid)) movePid(procs, p)
    },
    pids () {
      try { return readCgroupProcs(dir) } catch { return [] }
    },
    async remove () {
      if (removed) return
      let lastErr = null
      for (let i = 0; i < REMOVE_TRIES; i++) {
        // processes still inside (alive, or exiting): move them out first
        let left = []
        try { left = readCgroupProcs(dir) } catch {}
        for (const pid of left) {
          try { movePid(rootProcs, pid) } catch {}
        }
        try {
          rmdirSync(dir)
          removed = true
          return
        } catch (err) {
          if (err.code === 'ENOENT') { removed = true; return }
          if (err.code !== 'EBUSY' && err.code !== 'ENOTEMPTY') throw err
          lastErr = err
        }
        await sleep(REMOVE_WAIT_MS)
      }
      throw fail('CPU_GROUP_NOT_REMOVED', { dir, errno: lastErr?.code }, { cause: lastErr })
    }
  }
}
