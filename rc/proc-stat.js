// Host CPU per core from /proc/stat: jiffy counters and the busy percent between two readings (what htop shows).
import { join } from 'node:path'
import { readText } from './read-text.js'

/**
 * @typedef {{ core: number, user: number, nice: number, system: number, idle: number, iowait: number, irq: number,
 *   softirq: number, steal: number, busy: number, total: number }} CoreTicks
 */

/**
 * Parses the per-core `cpuN` lines of a /proc/stat text.
 * guest and guest_nice are already part of user and nice, so they are left out of total (as the kernel docs say).
 * @param {string} text
 * @returns {CoreTicks[]}
 */
export function parseProcStat (text) {
  const cores = []
  let at = 0
  while (at < text.length) {
    const end = text.indexOf('\n', at)
    const line = text.slice(at, end === -1 ? text.length : end)
    at = end === -1 ? text.length : end + 1
    if (!line.startsWith('cpu')) {
      if (cores.length) break // the cpu lines come first; nothing after them is needed
      continue
    }
    const c = line.charCodeAt(3)
    if (c < 48 || c > 57) continue // the aggregate "cpu " line
    const f = line.split(/\s+/)
    const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = f.slice(1, 9).map(Number)
    // iowait is idle time spent waiting: not busy
    const total = user + nice + system + idle + iowait + irq + softirq + steal
    cores.push({ core: Number(f[0].slice(3)), user, nice, system, idle, iowait, irq, softirq, steal, busy: total - idle - iowait, total })
  }
  return cores
}

/**
 * Per-core jiffy counters of this host (or of the /proc mounted at procRoot, e.g. the host's inside a container).
 * @param {string} [procRoot]
 * @returns {CoreTicks[]}
 */
export function readProcStat (procRoot = '/proc') {
  return parseProcStat(readText(join(procRoot, 'stat')))
}

/**
 * Busy percent (0-100) of each core between two readings, indexed by core number.
 * A core missing from either reading (offline) or without elapsed ticks reads 0; counters that went back are clamped.
 * @param {CoreTicks[]} prev
 * @param {CoreTicks[]} cur
 * @returns {number[]}
 */
export function coreUsage (prev, cur) {
  const size = Math.max(0, ...cur.map(c => c.core + 1))
  const out = new Array(size).fill(0)
  const before = new Map(prev.map(c => [c.core, c]))
  for (const c of cur) {
    const p = before.get(c.core)
    if (!p) continue
    const dt = c.total - p.total
    if (dt <= 0) continue
    out[c.core] = Math.min(100, Math.max(0, (c.busy - p.busy) / dt * 100))
  }
  return out
}

/**
 * The cores the kernel spent on interrupts between two readings (irq and softirq time, summed over cores): work no
 * process is charged for, such as receiving and sending network packets.
 * @param {CoreTicks[]} prev
 * @param {CoreTicks[]} cur
 * @returns {number}
 */
export function interruptCores (prev, cur) {
  const before = new Map(prev.map(c => [c.core, c]))
  let cores = 0
  for (const c of cur) {
    const p = before.get(c.core)
    const dt = p ? c.total - p.total : 0
    if (dt > 0) cores += Math.max(0, c.irq + c.softirq - p.irq - p.softirq) / dt
  }
  return Math.round(cores * 1000) / 1000
}
