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

/** Descendants via a scan of every /proc/<pid>/stat: the fallback when the kernel has no children files. */
function descendantsByScan (procRoot, roots) {
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

/**
 * Whether the kernel has /proc/<pid>/task/<tid>/children files (CONFIG_PROC_CHILDREN), read on the first of the pids
 * alive; null when none is.
 */
function childrenFilesOf (procRoot, pids) {
  for (const pid of pids) {
    const main = join(procRoot, String(pid), 'task', String(pid))
    if (existsSync(main)) return existsSync(join(main, 'children'))
  }
  return null
}

/**
 * The CPU ticks a thread used since it was last seen, which it is now (at `gen`). The same thread is the same tid and
 * start time (tids are reused, start times are not); a thread not seen before counts in full when it started at or
 * after `countFrom`, else from now on.
 * @param {Map<number, { ticks: number, start: number, gen: number }>} threads
 * @param {number} tid @param {{ ticks: number, start: number }} s @param {number} gen @param {number} countFrom
 */
function ticksSince (threads, tid, s, gen, countFrom) {
  const known = threads.get(tid)
  if (known && known.start === s.start) {
    const delta = s.ticks - known.ticks
    known.ticks = s.ticks
    known.gen = gen
    return delta
  }
  threads.set(tid, { ticks: s.ticks, start: s.start, gen })
  return s.start >= countFrom ? s.ticks : 0
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

  /**
   * Every thread of a process, its ticks since last seen added to `counts` on the core it last ran on (in ticks,
   * integers, converted once at the end); its children queued when the kernel lists them.
   */
  function countThreads (pid, counts, countFrom, queue, descendants) {
    const taskDir = `${procRoot}/${pid}/task`
    for (const t of tryList(taskDir) ?? []) {
      const text = tryRead(`${taskDir}/${t}/stat`)
      if (!text) continue
      const s = parseTaskStat(text)
      counts.threads++
      const delta = ticksSince(threads, Number(t), s, gen, countFrom)
      if (delta > 0) {
        counts.perCore[s.processor] = (counts.perCore[s.processor] ?? 0) + delta
        counts.total += delta
      }
      if (descendants && childrenFile) {
        const kids = tryRead(`${taskDir}/${t}/children`)
        if (kids) for (const k of kids.split(' ')) if (k) queue.push(Number(k))
      }
    }
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
      const queue = [...new Set(rootPids)]
      if (descendants && childrenFile === null) childrenFile = childrenFilesOf(procRoot, queue)
      if (descendants && childrenFile === false) queue.push(...descendantsByScan(procRoot, queue))
      // the first call is the baseline: no thread counts in full
      const countFrom = first ? Infinity : baselineTicks
      /** @type {{ perCore: number[], total: number, threads: number }} */
      const counts = { perCore: [], total: 0, threads: 0 }
      const seen = new Set()
      while (queue.length) {
        const pid = queue.pop()
        if (seen.has(pid)) continue
        seen.add(pid)
        countThreads(pid, counts, countFrom, queue, descendants)
      }
      for (const [tid, v] of threads) if (v.gen !== gen) threads.delete(tid)
      const perCore = counts.perCore
      for (let i = 0; i < perCore.length; i++) perCore[i] = (perCore[i] ?? 0) / clockTicks
      return { perCore, total: counts.total / clockTicks, processes: seen.size, threads: counts.threads }
    }
  }
}
