// The load generator's own CPU while it runs: how busy its processes were against the cores they may use (one for a
// Node generator: its JavaScript thread; its affinity for a JVM), and how busy the machine they run on was.
import { join } from 'node:path'
import { readText } from './read-text.js'
import { CLOCK_TICKS, parseTaskStat } from './thread-cpu.js'
import { readProcStat, coreUsage } from './proc-stat.js'
import { cpuQuotaOf } from './cgroup.js'
import { samplesInWindow } from './cpu-summary.js'

/**
 * @typedef {'node'|'java'} Engine
 * @typedef {{ t: number, host: number[], cores: number, share: number }} GeneratorSample cores: the generator's CPU in
 *   cores over the interval; share: its busiest process's use of the cores it may use (0..1)
 * @typedef {{ intervalMs: number, cpus: number, processes: { pid: number, engine: Engine, usable: number }[],
 *   samples: GeneratorSample[] }} GeneratorTimeline
 */

const round3 = (x) => Math.round(x * 1000) / 1000

/** The number of CPUs in a list like "0-3,6" (a process's Cpus_allowed_list). */
export function countCpuList (list) {
  let n = 0
  for (const part of String(list).trim().split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number)
    n += Number.isFinite(b) ? b - a + 1 : 1
  }
  return n
}

/**
 * The CPU ticks of a process (all its threads) and of its main thread, or null when it is gone.
 * @param {number} pid
 * @param {string} procRoot
 */
function readTicks (pid, procRoot) {
  try {
    const total = parseTaskStat(readText(join(procRoot, String(pid), 'stat'))).ticks
    const main = parseTaskStat(readText(join(procRoot, String(pid), 'task', String(pid), 'stat'))).ticks
    return { total, main }
  } catch {
    return null
  }
}

/**
 * How many cores a generator process can keep busy: a Node generator's load runs on its one JavaScript thread; a JVM's
 * threads on every CPU its affinity allows. A CPU quota over it (its container's, its cgroup's) lowers either; it is
 * returned too, as all the process's threads spend it.
 * @param {number} pid
 * @param {Engine} engine
 * @param {string} procRoot
 */
function usableCores (pid, engine, procRoot) {
  let cores = 1
  if (engine === 'java') {
    try {
      const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readText(join(procRoot, String(pid), 'status')))
      if (m) cores = countCpuList(m[1])
    } catch {}
  }
  const quota = cpuQuotaOf(pid, { procRoot })
  return { usable: quota === null ? cores : Math.min(cores, quota), quota }
}

/**
 * Samples the generator processes added to it (and the host's cores) every interval. A process added while it runs is
 * measured from its next sample on; one that exits counts nothing from then on. The timer is unref'd.
 * @param {{ procRoot?: string, intervalMs?: number, now?: () => number }} [opts]
 */
export function createGeneratorMeter ({ procRoot = '/proc', intervalMs = 1000, now = Date.now } = {}) {
  /** @type {Map<number, { engine: Engine, usable: number, quota: number|null, prev: { total: number, main: number } |
   *   null }>} */
  const procs = new Map()
  /** @type {GeneratorSample[]} */
  const samples = []
  let hostPrev = readProcStat(procRoot)
  const cpus = Math.max(1, ...hostPrev.map(c => c.core + 1))
  let wallPrev = process.hrtime.bigint()
  let timer = null

  function tick () {
    try {
      const wall = process.hrtime.bigint()
      const seconds = Number(wall - wallPrev) / 1e9
      wallPrev = wall
      const hostCur = readProcStat(procRoot)
      const host = coreUsage(hostPrev, hostCur)
      hostPrev = hostCur
      let cores = 0
      let share = 0
      for (const [pid, p] of procs) {
        const cur = readTicks(pid, procRoot)
        if (cur && p.prev && seconds > 0) {
          const total = (cur.total - p.prev.total) / CLOCK_TICKS / seconds
          // a Node generator is as busy as its JavaScript thread; a JVM as all its threads over its CPUs
          const busy = p.engine === 'node' ? (cur.main - p.prev.main) / CLOCK_TICKS / seconds : total
          cores += total
          // under a quota every thread (a Node process's GC and I/O threads too) spends the same allowance
          share = Math.max(share, busy / p.usable, p.quota === null ? 0 : total / p.quota)
        }
        p.prev = cur
      }
      if (seconds > 0) samples.push({ t: now(), host: host.map(x => Math.round(x * 10) / 10), cores: round3(cores), share: round3(Math.min(1, share)) })
    } catch {
      // a sample the kernel files could not give is skipped; the timeline goes on
    }
  }

  return {
    /**
     * @param {number} pid
     * @param {{ engine: Engine }} what
     */
    add (pid, { engine }) {
      if (!pid || procs.has(pid)) return
      procs.set(pid, { engine, ...usableCores(pid, engine, procRoot), prev: readTicks(pid, procRoot) })
    },
    start () {
      hostPrev = readProcStat(procRoot)
      wallPrev = process.hrtime.bigint()
      timer = setInterval(tick, intervalMs)
      timer.unref()
    },
    /** @returns {GeneratorTimeline} */
    stop () {
      clearInterval(timer)
      return { intervalMs, cpus, processes: [...procs].map(([pid, p]) => ({ pid, engine: p.engine, usable: p.usable })), samples: samples.slice() }
    }
  }
}

/**
 * The generator over a window (ms epoch; a sample counts when its interval's midpoint is inside): its mean CPU in
 * cores, the mean share of the cores it may use, and how idle the host was; nulls where nothing was measured.
 * @param {GeneratorTimeline | null} timeline
 * @param {{ from?: number, to?: number }} [window]
 */
export function summarizeGenerator (timeline, { from = -Infinity, to = Infinity } = {}) {
  const inWindow = samplesInWindow(timeline, { from, to })
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)
  const measured = Boolean(timeline?.processes.length) && inWindow.length > 0
  const hostBusy = mean(inWindow.map(s => mean(s.host)))
  return {
    processes: timeline?.processes ?? [],
    samples: inWindow.length,
    cores: measured ? round3(mean(inWindow.map(s => s.cores))) : null,
    share: measured ? round3(mean(inWindow.map(s => s.share))) : null,
    hostIdle: hostBusy === null ? null : Math.round((100 - hostBusy) * 10) / 10
  }
}
