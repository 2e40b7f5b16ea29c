// Readers for cgroup CPU accounting: v1 cpuacct (ns per CPU), v2 cpu.stat (total usec), and which of them a host
// mounts.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readText } from './read-text.js'
import { fail } from '../lib/messages.js'

// Distros mount the v1 cpuacct controller alone or co-mounted with cpu; the RC container sees whichever the host has.
const V1_MOUNTS = ['cpuacct', 'cpu,cpuacct', 'cpuacct,cpu']

/**
 * The v1 cpuacct hierarchy under a cgroup root, or null when there is none.
 * @param {string} [root]
 * @returns {string|null}
 */
export function cpuacctRoot (root = '/sys/fs/cgroup') {
  for (const m of V1_MOUNTS) {
    const dir = join(root, m)
    if (existsSync(join(dir, 'cpuacct.usage_percpu'))) return dir
  }
  return null
}

/**
 * Which cgroup CPU accounting a host offers. v1 wins on hybrid hosts: only it has a per-CPU file.
 * @param {string} [root] where the cgroup filesystems are mounted
 * @returns {'v1'|'v2'|'none'}
 */
export function detectCgroup (root = '/sys/fs/cgroup') {
  if (cpuacctRoot(root)) return 'v1'
  if (existsSync(join(root, 'cgroup.controllers'))) return 'v2'
  return 'none'
}

/**
 * CPU time per CPU of a v1 cpuacct group, in ns (index = CPU number, possible CPUs included).
 * Numbers are exact up to 2^53 ns (104 days of CPU time per CPU), far beyond one group's life.
 * @param {string} dir the group's folder, e.g. /sys/fs/cgroup/cpuacct/docker/<id>
 * @returns {number[]}
 */
export function readUsagePercpu (dir) {
  const path = join(dir, 'cpuacct.usage_percpu')
  const text = readText(path).trim()
  const out = text === '' ? [] : text.split(/\s+/).map(Number)
  if (!out.length || out.some(n => !Number.isFinite(n))) {
    throw fail('CPUACCT_USAGE_INVALID', { path, got: JSON.stringify(text.slice(0, 80)) })
  }
  return out
}

const USAGE = /^usage_usec (\d+)$/m
const USER = /^user_usec (\d+)$/m
const SYSTEM = /^system_usec (\d+)$/m

/**
 * A group's cpu.stat: its path, its text, and `get(re)`: the number a line's pattern captures (NaN when none matches).
 * @param {string} dir
 */
function cpuStatOf (dir) {
  const path = join(dir, 'cpu.stat')
  const text = readText(path)
  return { path, text, get: (/** @type {RegExp} */ re) => { const m = re.exec(text); return m ? Number(m[1]) : NaN } }
}

/**
 * Total, user and system CPU time of a v2 group from its cpu.stat (present whether or not the cpu controller is
 * enabled).
 * @param {string} dir the group's folder, e.g. /sys/fs/cgroup/system.slice/docker-<id>.scope
 * @returns {{ usageUsec: number, userUsec: number, systemUsec: number }}
 */
export function readCpuStat (dir) {
  const { path, get } = cpuStatOf(dir)
  const out = { usageUsec: get(USAGE), userUsec: get(USER), systemUsec: get(SYSTEM) }
  if (!Number.isFinite(out.usageUsec)) {
    throw fail('CPU_STAT_WITHOUT_USAGE', { path })
  }
  return out
}

/** Distros mount the v1 cpu controller alone or co-mounted with cpuacct: where CFS quotas and their throttling live. */
const V1_CPU_MOUNTS = ['cpu', 'cpu,cpuacct', 'cpuacct,cpu']

/**
 * The v1 cpu (CFS bandwidth) hierarchy under a cgroup root, or null when there is none.
 * @param {string} [root]
 * @returns {string|null}
 */
export function cpuRoot (root = '/sys/fs/cgroup') {
  for (const m of V1_CPU_MOUNTS) {
    const dir = join(root, m)
    if (existsSync(join(dir, 'cpu.cfs_quota_us'))) return dir
  }
  return null
}

const PERIODS = /^nr_periods (\d+)$/m
const THROTTLED = /^nr_throttled (\d+)$/m
const THROTTLED_NS = /^throttled_time (\d+)$/m
const THROTTLED_US = /^throttled_usec (\d+)$/m

/**
 * A group's CFS throttling counters from its cpu.stat (v1: throttled_time in ns; v2: throttled_usec): how many
 * enforcement periods passed, in how many the group was throttled, and for how long in all. Counters only grow.
 * @param {string} dir the group's folder in the cpu hierarchy (v1) or the unified one (v2)
 * @returns {{ periods: number, throttled: number, throttledMs: number }}
 */
export function readThrottling (dir) {
  const { path, text, get } = cpuStatOf(dir)
  const periods = get(PERIODS)
  const ns = THROTTLED_NS.test(text) ? get(THROTTLED_NS) : get(THROTTLED_US) * 1000
  const out = { periods, throttled: get(THROTTLED), throttledMs: ns / 1e6 }
  if (!Object.values(out).every(Number.isFinite)) {
    throw fail('CPU_STAT_WITHOUT_THROTTLING', { path })
  }
  return out
}

/**
 * The CPU quota a process runs under, in cores (0.25 = a quarter of one), or null when none limits it: the tightest
 * CFS quota of its cpu cgroup and the groups above it (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max).
 * @param {number} pid
 * @param {{ procRoot?: string, cgroupRoot?: string }} [roots]
 * @returns {number | null}
 */
export function cpuQuotaOf (pid, { procRoot = '/proc', cgroupRoot = '/sys/fs/cgroup' } = {}) {
  let lines
  try { lines = readText(join(procRoot, String(pid), 'cgroup')).split('\n') } catch { return null }
  const v1 = cpuRoot(cgroupRoot)
  const entry = v1
    ? lines.map(l => l.split(':')).find(f => f[1]?.split(',').includes('cpu'))
    : lines.map(l => l.split(':')).find(f => f[0] === '0' && f[1] === '')
  if (!entry) return null
  const root = v1 ?? cgroupRoot
  let least = null
  for (let dir = join(root, entry.slice(2).join(':')); dir.startsWith(root); dir = dirname(dir)) {
    const cores = quotaIn(dir, Boolean(v1))
    if (cores !== null) least = least === null ? cores : Math.min(least, cores)
    if (dir === root) break
  }
  return least
}

/** One group's quota in cores, or null when it has none (or no such file). */
function quotaIn (dir, v1) {
  try {
    if (v1) {
      const quota = Number(readText(join(dir, 'cpu.cfs_quota_us')).trim())
      const period = Number(readText(join(dir, 'cpu.cfs_period_us')).trim())
      return quota > 0 && period > 0 ? quota / period : null
    }
    const [quota, period] = readText(join(dir, 'cpu.max')).trim().split(/\s+/)
    return quota !== 'max' && Number(period) > 0 ? Number(quota) / Number(period) : null
  } catch {
    return null
  }
}

/**
 * Where Docker puts a container's group, relative to a hierarchy (v1: each controller's folder; v2: the unified root):
 * the cgroupfs driver's docker/<id>, the systemd driver's system.slice/docker-<id>.scope.
 * @param {string} id a 64-hex container id (the caller has checked it)
 * @returns {string[]}
 */
export const dockerGroups = (id) => [join('docker', id), join('system.slice', `docker-${id}.scope`)]

/**
 * The one of a container's possible groups (dockerGroups) that exists under a hierarchy, or null.
 * @param {string} base a hierarchy's folder, e.g. /sys/fs/cgroup/cpuacct (v1) or /sys/fs/cgroup (v2)
 * @param {string} id
 * @param {string} [file] a file the group must hold (v2: cpu.stat; a bare folder is not yet a live group's)
 * @returns {string | null} the group's path relative to base
 */
export function dockerGroupOf (base, id, file = '') {
  return dockerGroups(id).find(g => existsSync(join(base, g, file))) ?? null
}

/**
 * The pids in a group (v1 or v2 cgroup.procs). Processes that exit while it is read are simply missing.
 * @param {string} dir
 * @returns {number[]}
 */
export function readCgroupProcs (dir) {
  const text = readText(join(dir, 'cgroup.procs'))
  const out = []
  for (const s of text.split('\n')) if (s) out.push(Number(s))
  return out
}
