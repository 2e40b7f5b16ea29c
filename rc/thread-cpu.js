// Per-core CPU of a process tree without a per-CPU cgroup file: each thread's CPU-time delta goes to the core it last
// ran on.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { readText } from './read-text.js'

// USER_HZ: the unit of utime/stime/starttime in /proc; 100 on every Linux architecture Node runs on.
export const CLOCK_TICKS = 100

/**
 * The fields of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line that attribution needs.
 * comm may hold spaces and parentheses, so fields are counted from the last ')'.
 * @param {string} text
 * @returns {{ ppid: number, ticks: number, start: number, processor: number }}
 */
export function parseTaskStat (text) {
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ') // f[0] is field 3 (state)
  return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), start: Number(f[19]), processor: Number(f[36]) }
}

/** Reads a file or answers null when the task is gone (processes exit while we walk). */
function tryRead (path) {
  try { return readText(path) } catch { return null }
}

/** @param {string} dir */
function tryList (dir) {
  try { return readdirSync(dir) } catch { return null }
}

/**
 * A tracker that answers, at each call, the CPU seconds per core that a set of processes (and, optionally, all their
 * descendants) used since the previous call.
 * The first call is the baseline and answers zeros. A thread seen for the first time later counts in full when it was
 * born after the baseline (a worker forked mid-run), and from now on when it is older (a root pid added late).
 * Cost per call: one readdir per process and one small read per thread (plus one per thread for its children).
 * @param {{ procRoot?: string, clockTicks?: number }} [opts]
 */
export function createThreadCpu ({ procRoot = '/proc', clockTicks = CLOCK_TICKS } = {}) {
  /** @type {Map<number, { ticks: number, start: number, gen: number }>} */
  const threads = new Map()
  let gen = 0
  let baselineTicks = -1 // boot-relative clock ticks at the first call
  let childrenFile = null // whether /proc/<pid>/task/<tid>/children exists (CONFIG_PROC_CHILDREN)

  /** Descendants via a scan of every /proc/<pid>/stat: the fallback when the kernel has no children files. */
  function descendantsByScan (roots) {
    const kids = new Map()
    for (const d of tryList(procRoot) ?? []) {
      const c = d.charCodeAt(0)
      if (c < 48 || c > 57) continue
      const text = tryRead(join(procRoot, d, 'stat'))
      if (!text) continue
      const { ppid } = parseTaskStat(text)
      if (!kids.has(ppid)) kids.set(ppid, [])
      kids.get(ppid).push(Number(d))
    }
    const out = []
    const stack = [...roots]
    while (stack.length) {
      for (const k of kids.get(stack.pop()) ?? []) { out.push(k); stack.push(k) }
    }
    return out
  }

  return {
    /**
     * @param {number[]} rootPids
     * @param {{ descendants?: boolean }} [opts] false when the set is already complete (e.g. a cgroup's cgroup.procs)
     * @returns {{ perCore: number[], total: number, processes: number, threads: number }} CPU seconds since the last
     *   call
     */
    sample (rootPids, { descendants = true } = {}) {
      gen++
      const first = baselineTicks < 0
      if (first) {
        const up = tryRead(join(procRoot, 'uptime'))
        baselineTicks = up ? Number(up.slice(0, up.indexOf(' '))) * clockTicks : 0
      }
      /** @type {number[]} */
      const perCore = []
      let total = 0
      let nThreads = 0
      const seen = new Set()
      const queue = [...new Set(rootPids)]
      if (descendants && childrenFile === null) {
        // decided once, on the first root that is alive
        for (const pid of queue) {
          const main = join(procRoot, String(pid), 'task', String(pid))
          if (existsSync(main)) { childrenFile = existsSync(join(main, 'children')); break }
        }
      }
      if (descendants && childrenFile === false) queue.push(...descendantsByScan(queue))
      while (queue.length) {
        const pid = queue.pop()
        if (seen.has(pid)) continue
        seen.add(pid)
        const taskDir = `${procRoot}/${pid}/task`
        for (const t of tryList(taskDir) ?? []) {
          const text = tryRead(`${taskDir}/${t}/stat`)
          if (!text) continue
          const tid = Number(t)
          const s = parseTaskStat(text)
          nThreads++
          const known = threads.get(tid)
          let delta = 0
          if (known && known.start === s.start) { // the same thread (tids are reused, start times are not)
            delta = s.ticks - known.ticks
            known.ticks = s.ticks
            known.gen = gen
          } else {
            if (!first && s.start >= baselineTicks) delta = s.ticks // born after the baseline: all its CPU is ours
            threads.set(tid, { ticks: s.ticks, start: s.start, gen })
          }
          if (delta > 0) { // summed in ticks (integers), converted once at the end
            perCore[s.processor] = (perCore[s.processor] ?? 0) + delta
            total += delta
          }
          if (descendants && childrenFile) {
            const kids = tryRead(`${taskDir}/${t}/children`)
            if (kids) for (const k of kids.split(' ')) if (k) queue.push(Number(k))
          }
        }
      }
      for (const [tid, v] of threads) if (v.gen !== gen) threads.delete(tid)
      for (let i = 0; i < perCore.length; i++) perCore[i] = (perCore[i] ?? 0) / clockTicks
      return { perCore, total: total / clockTicks, processes: seen.size, threads: nThreads }
    }
  }
}
