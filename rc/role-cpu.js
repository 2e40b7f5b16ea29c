// CPU by role between readings: the processes that play a part in a run besides the server's own (the load balancer,
// the sampler itself), each a list of pids, answered in cores.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { readText } from './read-text.js'
import { CLOCK_TICKS, parseTaskStat } from './thread-cpu.js'
import { withSamples } from './with-samples.js'

/** A role's name as it appears in timelines and run.json: lower case words joined by dashes. */
export const ROLE_NAME = /^[a-z][a-z0-9-]{0,30}$/

const round3 = (x) => Math.round(x * 1000) / 1000

/**
 * A process's CPU ticks, all its threads (utime + stime of /proc/<pid>/stat), or null when it is gone.
 * @param {number} pid
 * @param {string} procRoot
 */
export function readProcessTicks (pid, procRoot) {
  try {
    return parseTaskStat(readText(join(procRoot, String(pid), 'stat'))).ticks
  } catch {
    return null
  }
}

/**
 * At each call, the cores each role's processes used since the previous call (the first call sets the baselines; a
 * process seen for the first time counts from its next reading). `self` names the role of the calling process itself,
 * read from process.cpuUsage (the sampler's own cost).
 * @param {{ roles?: () => Record<string, number[]>, self?: string, procRoot?: string }} opts
 * @returns {{ read: (seconds: number) => Record<string, number> }}
 */
export function createRoleCpu ({ roles = () => ({}), self, procRoot = '/proc' }) {
  /** @type {Map<number, number>} */
  const prev = new Map()
  let own = process.cpuUsage()
  return {
    read (seconds) {
      /** @type {Record<string, number>} */
      const out = {}
      const seen = new Set()
      let byRole = {}
      try { byRole = roles() } catch {}
      for (const [role, pids] of Object.entries(byRole)) {
        let ticks = 0
        for (const pid of pids) {
          if (seen.has(pid)) continue
          seen.add(pid)
          const cur = readProcessTicks(pid, procRoot)
          const before = prev.get(pid)
          if (cur === null) { prev.delete(pid); continue }
          prev.set(pid, cur)
          if (before !== undefined) ticks += Math.max(0, cur - before)
        }
        out[role] = seconds > 0 ? round3(ticks / CLOCK_TICKS / seconds) : 0
      }
      for (const pid of prev.keys()) if (!seen.has(pid)) prev.delete(pid)
      if (self) {
        const now = process.cpuUsage()
        const us = now.user - own.user + now.system - own.system
        own = now
        out[self] = seconds > 0 ? round3(us / 1e6 / seconds) : 0
      }
      return out
    }
  }
}

/**
 * The pids of Docker's userland proxy for a published port on this host (`docker-proxy ... -host-port <port>`): it
 * relays every connection made to the port through the loopback interface (a run's load is sent to docker_gwbridge's
 * address instead, where the kernel's NAT carries it: executor/docker/stack-deploy.js localAddress; what the proxy
 * still relays is measured as its role).
 * @param {number} port
 * @param {string} [procRoot]
 * @returns {number[]}
 */
export function dockerProxyPids (port, procRoot = '/proc') {
  const out = []
  let names = []
  try { names = readdirSync(procRoot) } catch { return out }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readText(join(procRoot, name, 'comm')).trim() !== 'docker-proxy') continue
      const args = readText(join(procRoot, name, 'cmdline')).split('\0')
      if (args[args.indexOf('-host-port') + 1] === String(port)) out.push(Number(name))
    } catch {}
  }
  return out
}

/**
 * Wraps a sampler so that its timeline also holds the CPU of some roles' processes on this host, every interval, as
 * `roleSamples` ({ intervalMs, samples: [{ t, roles }] }): for a sampler whose own samples come from elsewhere, such
 * as the RCs of a swarm.
 * @template {{ start(): any, stop(): Promise<any> }} S
 * @param {S} sampler
 * @param {() => Record<string, number[]>} roles
 * @param {{ intervalMs?: number, procRoot?: string }} [opts]
 * @returns {S}
 */
export function withLocalRoles (sampler, roles, { intervalMs = 1000, procRoot = '/proc' } = {}) {
  const meter = createRoleCpu({ roles, procRoot })
  return withSamples(sampler, 'roleSamples', (seconds) => ({ roles: meter.read(seconds) }), { intervalMs })
}
