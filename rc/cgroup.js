// Readers for cgroup CPU accounting: v1 cpuacct (ns per CPU), v2 cpu.stat (total usec), and which of them a host
// mounts.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { readText } from './read-text.js'
import { NsError } from '../lib/errors.js'

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
    throw new NsError('NS_ERR_BAD_FILE', `${path}: expected ns per CPU separated by spaces, got ${JSON.stringify(text.slice(0, 80))}`)
  }
  return out
}

const USAGE = /^usage_usec (\d+)$/m
const USER = /^user_usec (\d+)$/m
const SYSTEM = /^system_usec (\d+)$/m

/**
 * Total, user and system CPU time of a v2 group from its cpu.stat (present whether or not the cpu controller is
 * enabled).
 * @param {string} dir the group's folder, e.g. /sys/fs/cgroup/system.slice/docker-<id>.scope
 * @returns {{ usageUsec: number, userUsec: number, systemUsec: number }}
 */
export function readCpuStat (dir) {
  const path = join(dir, 'cpu.stat')
  const text = readText(path)
  const get = (re) => { const m = re.exec(text); return m ? Number(m[1]) : NaN }
  const out = { usageUsec: get(USAGE), userUsec: get(USER), systemUsec: get(SYSTEM) }
  if (!Number.isFinite(out.usageUsec)) {
    throw new NsError('NS_ERR_BAD_FILE', `${path}: no usage_usec line (is this a cgroup v2 cpu.stat?)`)
  }
  return out
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
