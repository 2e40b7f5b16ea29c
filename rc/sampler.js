// Samples the server's CPU per core (its cgroup, or its threads) and the host's (/proc/stat) every interval into a
// timeline.
import { isAbsolute, join } from 'node:path'
import { readProcStat, coreUsage, interruptCores } from './proc-stat.js'
import { readUsagePercpu, readCpuStat } from './cgroup.js'
import { createThreadCpu } from './thread-cpu.js'
import { createThrottleMeter } from './throttle.js'
import { createRoleCpu } from './role-cpu.js'

/**
 * @typedef {import('./cpu-group.js').CpuGroup} CpuGroup
 * @typedef {{ t: number, server: number[], serverTotal: number, host: number[], throttle?:
 *   import('./throttle.js').Throttle | null, roles?: Record<string, number> }} Sample roles: the cores of the other
 *   processes that play a part (the load balancer, the sampler itself) and the kernel's interrupt work (`kernel`)
 * @typedef {{ intervalMs: number, cpus: number, source: 'cgroup-v1'|'cgroup-v2'|'threads', samples: Sample[] }}
 *   Timeline
 */

const round1 = (x) => Math.round(x * 10) / 10
const round3 = (x) => Math.round(x * 1000) / 1000

/**
 * Caps attributed per-core percents at 100 and moves the excess to cores with headroom, in proportion to it.
 * Attribution by "last core a thread ran on" can put 1.3 s on one core in a 1 s interval; the total is right, the split
 * is not.
 * @param {number[]} pct
 * @returns {number[]}
 */
export function capPerCore (pct) {
  let excess = 0
  let headroom = 0
  for (let i = 0; i < pct.length; i++) {
    if (pct[i] > 100) { excess += pct[i] - 100; pct[i] = 100 }
    headroom += 100 - pct[i]
  }
  if (excess > 0 && headroom > 0) {
    const share = Math.min(1, excess / headroom)
    for (let i = 0; i < pct.length; i++) pct[i] += (100 - pct[i]) * share
  }
  return pct
}

/**
 * Splits a total (any unit) over cores by weights; by fallback weights when the weights are all zero, evenly when both
 * are.
 * @param {number} total
 * @param {number[]} weights
 * @param {number[]} fallback
 * @param {number} cpus
 * @returns {number[]}
 */
export function splitTotal (total, weights, fallback, cpus) {
  const sum = (a) => a.reduce((s, x) => s + (x > 0 ? x : 0), 0)
  const w = sum(weights) > 0 ? weights : sum(fallback) > 0 ? fallback : new Array(cpus).fill(1)
  const ws = sum(w)
  return Array.from({ length: cpus }, (_, i) => total * (w[i] > 0 ? w[i] : 0) / ws)
}

/**
 * The server's CPU ns per core since the previous call (the first call only sets the baseline), from its source:
 * cgroup-v1 usage_percpu deltas; the cgroup-v2 cpu.stat total split like the group's threads ran (like the host's
 * busy cores, hostPct, where no thread accounts for it); else its threads' CPU (roots() and their descendants).
 * @param {{ source: Timeline['source'], dir: string | undefined, group: CpuGroup | undefined, cpus: number,
 *   threads: ReturnType<typeof createThreadCpu>, roots: () => number[] }} opts
 * @returns {(hostPct: number[]) => number[]}
 */
function createServerCpu ({ source, dir, group, cpus, threads, roots }) {
  let v1Prev = null
  let v2Prev = 0
  return function serverNs (hostPct) {
    if (source === 'cgroup-v1') {
      const cur = readUsagePercpu(dir)
      const out = new Array(cpus).fill(0)
      if (v1Prev) for (let i = 0; i < cpus; i++) out[i] = Math.max(0, (cur[i] ?? 0) - (v1Prev[i] ?? 0))
      v1Prev = cur
      return out
    }
    if (source === 'cgroup-v2') {
      const usec = readCpuStat(dir).usageUsec
      const total = Math.max(0, usec - v2Prev) * 1000
      v2Prev = usec
      // everything in the cgroup is ours, descendants included: its member list replaces a tree walk
      const members = group.pids()
      const shares = threads.sample(members.concat(roots()), { descendants: false }).perCore
      return splitTotal(total, shares, hostPct, cpus)
    }
    const sec = threads.sample(roots()).perCore
    return Array.from({ length: cpus }, (_, i) => (sec[i] ?? 0) * 1e9)
  }
}

/**
 * The pids whose threads are the server's: pids()'s (its error goes to onError, the list goes on without them) and
 * a threads group's members.
 * @param {() => number[]} pids @param {CpuGroup | undefined} group @param {(err: unknown) => void} onError
 * @returns {() => number[]}
 */
function serverRoots (pids, group, onError) {
  return () => {
    const list = []
    try { list.push(...pids()) } catch (err) { onError(err) }
    if (group?.kind === 'threads') list.push(...group.pids())
    return list
  }
}

/**
 * The counters a sample is made of, read in this order: the host's cores (/proc/stat) and the kernel's interrupt
 * work, the server's CPU (createServerCpu), its quota's throttling, the roles' cores. rebaseHost() and baseline()
 * take the first readings; read(dtNs) gives each one's change since the last.
 * @param {{ source: Timeline['source'], dir: string | undefined, group: CpuGroup | undefined, roots: () => number[],
 *   quotaDirs: () => string[], roles?: () => Record<string, number[]>, self?: string, procRoot: string }} opts
 */
function createCounters ({ source, dir, group, roots, quotaDirs, roles, self, procRoot }) {
  const threads = createThreadCpu({ procRoot })
  const quota = createThrottleMeter(quotaDirs)
  const others = roles || self ? createRoleCpu({ roles, self, procRoot }) : null
  let hostPrev = readProcStat(procRoot)
  const cpus = Math.max(1, ...hostPrev.map(c => c.core + 1))
  const serverNs = createServerCpu({ source, dir, group, cpus, threads, roots })
  return {
    cpus,
    rebaseHost () { hostPrev = readProcStat(procRoot) },
    baseline () {
      serverNs(new Array(cpus).fill(0))
      quota.read()
      others?.read(0)
    },
    /** @param {number} dtNs the wall time since the last read */
    read (dtNs) {
      const hostCur = readProcStat(procRoot)
      const host = coreUsage(hostPrev, hostCur)
      const kernel = interruptCores(hostPrev, hostCur)
      hostPrev = hostCur
      const ns = serverNs(host)
      const throttle = quota.read()
      const roleCores = others?.read(dtNs / 1e9)
      return { host, kernel, ns, throttle, roleCores }
    }
  }
}

/**
 * One interval's sample from its counters' changes: the server's per-core percents (a cgroup-v1 core's capped at
 * 100, an attributed split's excess moved by capPerCore), its total in cores, the host's cores, throttling, roles.
 * @param {{ t: number, source: Timeline['source'], cpus: number, dtNs: number, ns: number[], host: number[],
 *   throttle: import('./throttle.js').Throttle | null, roleCores: Record<string, number> | undefined,
 *   kernel: number }} c
 * @returns {Sample}
 */
function sampleOf ({ t, source, cpus, dtNs, ns, host, throttle, roleCores, kernel }) {
  const pct = ns.map(x => x / dtNs * 100)
  const server = (source === 'cgroup-v1' ? pct.map(x => Math.min(100, x)) : capPerCore(pct)).map(round1)
  return {
    t,
    server,
    serverTotal: round3(ns.reduce((s, x) => s + x, 0) / dtNs),
    host: Array.from({ length: cpus }, (_, i) => round1(host[i] ?? 0)),
    ...(throttle ? { throttle } : {}),
    roles: { ...roleCores, kernel }
  }
}

/**
 * A sampler of the server's CPU per core. Source: the group's kind — cgroup-v1 reads usage_percpu deltas; cgroup-v2
 * reads the cpu.stat total and splits it per core like its threads ran; otherwise thread attribution over pids() and
 * their descendants. The host array is always /proc/stat. With `quotaDirs` (the groups holding the server's CPU quota)
 * each sample also says how much the quota throttled it; with `roles` (pids by role) and `self` (this process's role)
 * it says their CPU too. Costs a few file reads per interval; the timer is unref'd.
 * @param {{ group?: CpuGroup, pids?: () => number[], quotaDirs?: () => string[], roles?: () => Record<string,
 *   number[]>, self?: string, intervalMs?: number, procRoot?: string, cgroupRoot?: string, now?: () => number }}
 *   [opts] cgroupRoot resolves a relative group.path
 * @returns {{ start(): void, stop(): Promise<Timeline>, timeline(): Timeline, lastError(): unknown }}
 */
export function createSampler ({
  group, pids = () => [], quotaDirs = () => [], roles, self, intervalMs = 1000,
  procRoot = '/proc', cgroupRoot = '/sys/fs/cgroup', now = Date.now
} = {}) {
  /** @type {Timeline['source']} */
  const source = group?.kind === 'cgroup-v1' || group?.kind === 'cgroup-v2' ? group.kind : 'threads'
  const dir = group?.path && !isAbsolute(group.path) ? join(cgroupRoot, group.path) : group?.path
  let lastError = null
  const roots = serverRoots(pids, group, (err) => { lastError = err })
  const counters = createCounters({ source, dir, group, roots, quotaDirs, roles, self, procRoot })
  const { cpus } = counters
  /** @type {Sample[]} */
  const samples = []
  let timer = null
  let started = false
  let stopped = false
  let lastWall = 0n
  let baselined = false // whether the server's counters have a first reading to take deltas from

  function tick (final = false) {
    try {
      const wall = process.hrtime.bigint()
      const dtNs = Number(wall - lastWall)
      const { host, kernel, ns, throttle, roleCores } = counters.read(dtNs)
      if (!baselined) { baselined = true; lastWall = wall; return }
      lastWall = wall
      if (dtNs <= 0 || (final && dtNs < intervalMs * 1e6 / 4)) return // a sliver at stop() says nothing
      samples.push(sampleOf({ t: now(), source, cpus, dtNs, ns, host, throttle, roleCores, kernel }))
    } catch (err) {
      lastError = err // e.g. the group was removed under us: skip this sample, keep the timeline
    }
  }

  const timeline = () => ({ intervalMs, cpus, source, samples: samples.slice() })

  return {
    start () {
      if (started) return
      started = true
      // baselines: host counters, cgroup counters, every thread's CPU time so far
      counters.rebaseHost()
      lastWall = process.hrtime.bigint()
      try {
        counters.baseline()
        baselined = true
      } catch (err) { lastError = err }
      timer = setInterval(tick, intervalMs)
      timer.unref()
    },
    async stop () {
      if (started && !stopped) {
        stopped = true
        clearInterval(timer)
        tick(true)
      }
      return timeline()
    },
    timeline,
    /** The last error a sample hit (skipped samples), for diagnostics. */
    lastError: () => lastError
  }
}
