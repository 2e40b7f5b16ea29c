// Was the host busy with work the test does not own? Read before a test holds a run to a bottleneck kind, a core count
// or a rate that a host shared with other work would change: on a busy host such a test skips with the reason (the
// figures it would assert on measured the other work too), never passes by a looser assertion.
// Two sources of evidence: a run's own run.json (its validity flags and CPU by role), and, for a test that drives load
// from its own process, /proc/stat beside this process's own CPU over the test's span.
import { readFileSync } from 'node:fs'
import { readProcStat, interruptCores } from '../../rc/proc-stat.js'
import { THRESHOLDS } from '../../executor/validity.js'

/**
 * Cores outside the run above which the host counts as busy: the bound of the `disturbed` flag
 * (`executor/validity.js`), the same for a run.json and for a span this process measured.
 * @param {number} hostCores
 */
export const busyBound = (hostCores) => Math.max(THRESHOLDS.otherCores, THRESHOLDS.otherShare * hostCores)

/** What a quiet host's kernel and engine use besides a run (test/run-validity.test.js: 0.09 cores is no disturbance) */
const USUAL_REST = 0.1

/**
 * The reason a run's host was busy with work outside the run, from its run.json, or null when it was not.
 * `disturbed`: processes outside the run over the flag's bound; `host-saturated` (a second with the host under 5%
 * idle) counts only when processes outside the run used more than a quiet host's rest: a run that fills the host
 * by itself is the run's own doing, and the test's assertion stands.
 * @param {any} run a parsed run.json
 * @returns {string|null}
 */
export function hostWasBusy (run) {
  const flags = run?.validity?.flags ?? []
  const cores = run?.diagnosis?.host?.cores ?? run?.environment?.cpus
  const disturbed = flags.find(f => f.name === 'disturbed')
  if (disturbed) return `host busy: processes outside the run used ${disturbed.value} cores of ${cores} (disturbed)`
  const saturated = flags.find(f => f.name === 'host-saturated')
  const other = run?.diagnosis?.roles?.other ?? 0
  if (saturated && other > USUAL_REST) {
    return `host busy: ${saturated.value}% idle at its busiest, processes outside the run ${other} cores of ${cores} (host-saturated)`
  }
  return null
}

/** The first reason among several runs' (a sweep's, a search's probes'), or null. @param {any[]} runs */
export const hostsWereBusy = (runs) => runs.map(hostWasBusy).find(Boolean) ?? null

/** This process's CPU ticks and its reaped children's (utime, stime, cutime, cstime of /proc/self/stat). */
function ownTicks () {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
}

/**
 * Starts measuring the host around work this process does itself (a server in it, a generator it spawns and waits
 * for); `stop()` says what the rest of the host used meanwhile. The children must have exited (been reaped) by then.
 * @returns {{ stop: () => { cores: number, busy: number, own: number, other: number, reason: string|null } }}
 */
export function watchHost () {
  const before = readProcStat()
  const own0 = ownTicks()
  return {
    stop () {
      const after = readProcStat()
      const prev = new Map(before.map(c => [c.core, c]))
      let busy = 0
      let wall = 0
      for (const c of after) {
        const p = prev.get(c.core)
        if (!p || c.total <= p.total) continue
        busy += (c.busy - p.busy) / (c.total - p.total)
        wall += c.total - p.total
      }
      const cores = after.length
      const perCore = wall / cores // ticks of one core: the span in the same USER_HZ as /proc/self/stat
      const own = perCore > 0 ? (ownTicks() - own0) / perCore : 0
      const other = Math.max(0, busy - own - interruptCores(before, after))
      const r2 = (x) => Math.round(x * 100) / 100
      const reason = other >= busyBound(cores)
        ? `host busy: processes outside this test used ${r2(other)} cores of ${cores} (this test ${r2(own)})`
        : null
      return { cores, busy: r2(busy), own: r2(own), other: r2(other), reason }
    }
  }
}
