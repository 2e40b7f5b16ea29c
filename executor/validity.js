// How far a run can be trusted: one row per way a measurement goes wrong (the load generator or the host saturated,
// something else busy on the host, the CPU quota throttling, a drifting throughput or a warm-up left in the window, a
// mean known too loosely, errors over the objective), each with its figure and threshold.
import { sloText } from '../lib/slo.js'

/**
 * @typedef {{ name: string, value: number, threshold: number, severity: 'invalid'|'warning', message: string }} Flag
 * @typedef {{ ok: boolean, flags: Flag[], checked: string[], unchecked: { name: string, why: string }[] }} Validity
 *   ok: no flag makes the run invalid; checked: what could be measured; unchecked: what could not, and why
 */

/** The thresholds, one place: the generator's share of the cores it may use, the host's idle floor, and so on. */
export const THRESHOLDS = Object.freeze({
  generatorBusy: 0.9,
  lateSends: 0.01,
  hostIdle: 5,
  throttledShare: 0.1,
  throttleStallOfP99: 0.1,
  drift: 0.05,
  relHalfWidth: 0.05,
  otherCores: 0.3,
  otherShare: 0.15,
  clockOfP50: 0.1
})

const pct = (x, d = 1) => `${Math.round(x * 100 * 10 ** d) / 10 ** d}%`

/**
 * Each check: what it reads from the run (null: not measured, with why), when that is a problem, and how it is said.
 * A check returns null when the run is fine on it, or its flag.
 * @type {{ name: string, severity: 'invalid'|'warning', check: (run: any) => Omit<Flag, 'name'|'severity'> | null |
 *   { unchecked: string } }[]}
 */
export const VALIDITY_CHECKS = [
  {
    name: 'generator-saturated',
    severity: 'invalid',
    check ({ generator, schedule }) {
      if (schedule?.sent > 0 && schedule.late / schedule.sent > THRESHOLDS.lateSends) {
        const late = schedule.late / schedule.sent
        return {
          value: late,
          threshold: THRESHOLDS.lateSends,
          message: `the generator sent ${pct(late)} of its requests more than 10 ms late (up to ${schedule.maxLagMs} ms): it fell behind its own schedule`
        }
      }
      if (generator?.share === null || generator?.share === undefined) return { unchecked: 'the generator ran in this process: its CPU is not told apart' }
      if (generator.share < THRESHOLDS.generatorBusy) return null
      return {
        value: generator.share,
        threshold: THRESHOLDS.generatorBusy,
        message: `the load generator used ${pct(generator.share, 0)} of the cores it may use (${generator.cores} cores): it, not the server, may set the pace`
      }
    }
  },
  {
    name: 'host-saturated',
    severity: 'invalid',
    check ({ generator }) {
      if (generator?.hostIdle === null || generator?.hostIdle === undefined) return { unchecked: 'no host CPU sample in the steady window' }
      if (generator.hostIdle >= THRESHOLDS.hostIdle) return null
      return {
        value: generator.hostIdle,
        threshold: THRESHOLDS.hostIdle,
        message: `the host was ${generator.hostIdle}% idle (under ${THRESHOLDS.hostIdle}%): the server and the generator starved each other`
      }
    }
  },
  {
    name: 'disturbed',
    severity: 'invalid',
    check ({ roles }) {
      if (!roles?.roles) return { unchecked: 'no CPU by role in the steady window' }
      const other = roles.roles.other ?? 0
      const bound = Math.max(THRESHOLDS.otherCores, THRESHOLDS.otherShare * roles.hostCores)
      if (other < bound) return null
      return {
        value: other,
        threshold: bound,
        message: 'processes outside the run (not the server, the generator, the balancer, Docker\'s proxy or the RC; not the kernel\'s interrupts) ' +
          `used ${other.toFixed(2)} cores of the host's ${roles.hostCores}: something else competed with the measurement`
      }
    }
  },
  {
    name: 'throttled',
    severity: 'warning',
    check ({ cpu, summary }) {
      const t = cpu?.throttling
      if (!t) return { unchecked: 'no CPU quota on the server' }
      const stall = t.throttledPeriods ? t.throttledMs / t.throttledPeriods : 0
      const p99 = summary?.latency?.p99 ?? 0
      if (t.share < THRESHOLDS.throttledShare || stall < THRESHOLDS.throttleStallOfP99 * p99) return null
      return {
        value: t.share,
        threshold: THRESHOLDS.throttledShare,
        message: `the CPU quota held the server back in ${pct(t.share, 0)} of its periods, ${Math.round(stall)} ms each (p99 ${Math.round(p99)} ms): ` +
          'latency shows the quota\'s on/off cycle'
      }
    }
  },
  {
    name: 'unstable',
    severity: 'invalid',
    // the throughput per tenth of a second (analyzer/samples/steady-state.js): a drift over the window, or a warm-up
    // left in
    // it that moves the window's mean, each more than the seconds' own (autocorrelated) noise explains and over
    // THRESHOLDS.drift; a window too short to judge is neither (unchecked, with why) unless its drift is significant
    check ({ summary }) {
      const s = summary?.stability
      if (!s) return { unchecked: 'no throughput per tenth of a second' }
      if (s.driftSignificant && Math.abs(s.drift) > THRESHOLDS.drift) {
        return {
          value: Math.abs(s.drift),
          threshold: THRESHOLDS.drift,
          message: `the throughput ${s.drift > 0 ? 'rose' : 'fell'} by ${pct(Math.abs(s.drift))} over the ${s.seconds + s.warmup.cut} s judged ` +
            `(Theil–Sen; p = ${s.driftP}): not steady, or not warmed up`
        }
      }
      if (!s.judged) return { unchecked: `too short to judge: ${s.why}` }
      if (s.warmup.significant && Math.abs(s.warmup.bias) > THRESHOLDS.drift) {
        return {
          value: Math.abs(s.warmup.bias),
          threshold: THRESHOLDS.drift,
          message: `the first ${s.warmup.cut} s of the steady window were still warming up (MSER-5): ` +
            `they move the window's throughput by ${pct(Math.abs(s.warmup.bias))} from the ${s.mean} req/s after them; lengthen --warmup`
        }
      }
      return null
    }
  },
  {
    name: 'imprecise',
    severity: 'warning',
    check ({ summary }) {
      const s = summary?.stability
      if (!s?.judged) return { unchecked: s ? `too short to judge: ${s.why}` : 'no throughput per tenth of a second' }
      if (s.relHalfWidth <= THRESHOLDS.relHalfWidth) return null
      return {
        value: s.relHalfWidth,
        threshold: THRESHOLDS.relHalfWidth,
        message: `the mean throughput is known to ±${pct(s.relHalfWidth)} only (95%, ${s.batches} batches of ${s.batch / 10} s over ${s.seconds} s): run longer`
      }
    }
  },
  {
    name: 'clock-offset',
    severity: 'warning',
    check ({ generators, summary }) {
      const clocks = (generators ?? []).filter(g => g.clock)
      if (!clocks.length) return { unchecked: 'every generator ran on the executor\'s clock' }
      const p50 = summary?.latency?.p50
      if (!p50) return { unchecked: 'no median latency to hold the clocks\' offsets against' }
      // the timestamps are corrected by each offset; what is left is how well it was measured (half the round trip)
      const worst = clocks.reduce((a, g) => (g.clock.rttMs / 2 + Math.abs(g.clock.offsetMs) > a.clock.rttMs / 2 + Math.abs(a.clock.offsetMs) ? g : a))
      const error = worst.clock.rttMs / 2
      const offset = Math.abs(worst.clock.offsetMs)
      // a JTL's timestamps are whole ms: an error within that is no error
      if (error <= Math.max(1, THRESHOLDS.clockOfP50 * p50) && offset <= Math.max(1, p50)) return null
      return {
        value: Math.max(error, offset) / p50,
        threshold: THRESHOLDS.clockOfP50,
        message: `generator ${worst.name}'s clock is ${worst.clock.offsetMs.toFixed(2)} ms off the executor's, known to ±${error.toFixed(2)} ms, ` +
          `against a median latency of ${p50} ms: ` +
          'its samples were shifted by it, but their place in the windows is that uncertain (sync the nodes\' clocks, NTP)'
      }
    }
  },
  {
    name: 'late-start',
    severity: 'invalid',
    // several generators start together at one shared time (executor/generators/run-generators.js); each says how late
    // it began (startSkewMs): one that began after the warm-up had ended left the steady window's first part without
    // its share of the load
    check ({ generators, warmupMs }) {
      const timed = (generators ?? []).filter(g => typeof g.startSkewMs === 'number')
      if (timed.length < 2 || typeof warmupMs !== 'number') return { unchecked: 'one generator: no shared start to keep' }
      const last = timed.reduce((a, g) => (g.startSkewMs > a.startSkewMs ? g : a))
      if (last.startSkewMs <= warmupMs) return null
      const s = (ms) => `${Math.round(ms / 100) / 10} s`
      const heard = last.startAnsweredMs > 0 ? ` (its agent answered the start ${s(last.startAnsweredMs)} after that time: it heard of it late)` : ''
      return {
        value: last.startSkewMs / 1000,
        threshold: warmupMs / 1000,
        message: `generator ${last.name} began its load ${s(last.startSkewMs)} after the generators' shared start${heard}, ` +
          `when the ${s(warmupMs)} warm-up had ended: the steady window began without its share of the load; a longer --warmup gives it the time`
      }
    }
  },
  {
    name: 'errors',
    severity: 'invalid',
    check ({ summary, slo }) {
      if (!summary) return { unchecked: 'no summary' }
      if (summary.errorRate <= slo.errors) return null
      return {
        value: summary.errorRate,
        threshold: slo.errors,
        message: `${pct(summary.errorRate, 2)} of the requests failed, over the objective (${sloText(slo)})`
      }
    }
  }
]

/**
 * Judges a run's measurements: every check of VALIDITY_CHECKS that flags makes a flag; a run is ok when none of its
 * flags is of the invalid kind (a warning says something to keep in mind).
 * @param {{ summary?: any, cpu?: any, generator: any, generators?: any[], warmupMs?: number, schedule?: any,
 *   roles?: { roles: Record<string, number>, hostCores: number } | null, slo?: import('../lib/slo.js').Slo }} run
 *   roles: the CPU by role (analyzer/diagnosis/diagnosis-figures.js); generators: run.json's load.generators (a run's
 *   several); warmupMs: from their shared start to the steady window's
 * @param {{ only?: string[] }} [opts] only these checks (a generator of several: GENERATOR_CHECKS)
 * @returns {Validity}
 */
export function judgeRun (run, { only } = {}) {
  const flags = []
  const checked = []
  const unchecked = []
  for (const { name, severity, check } of VALIDITY_CHECKS) {
    if (only && !only.includes(name)) continue
    const out = /** @type {any} */ (check(run))
    if (out?.unchecked) { unchecked.push({ name, why: out.unchecked }); continue }
    checked.push(name)
    if (out) flags.push({ name, severity, value: Math.round(out.value * 1000) / 1000, threshold: out.threshold, message: out.message })
  }
  return { ok: !flags.some(f => f.severity === 'invalid'), flags, checked, unchecked }
}

/** The checks that judge one generator of a run's several on its own: its CPU, its host's, its schedule. */
export const GENERATOR_CHECKS = Object.freeze(['generator-saturated', 'host-saturated'])

/** The flags that make a run not valid (run.json's validity), by name; none for a valid run or one without validity. */
export const invalidFlags = (run) => (run?.validity?.flags ?? []).filter(f => f.severity === 'invalid').map(f => f.name)
