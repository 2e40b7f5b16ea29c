// What limited a run: one row per kind of bottleneck, tried in order; the first whose figures are over their thresholds
// names the run's bottleneck, the others that also hold are said beside it, and every figure that decided is evidence.
import { deploymentShape, serverAllowance } from '../../lib/strategies.js'
import { SERVED_SHARE, missText, sloMisses } from '../../lib/slo.js'
import { summarizeInstances, summarizeLb, summarizeNetwork, summarizeRoles } from './diagnosis-figures.js'

/** The thresholds the rules read (a share is 0..1, cores are CPU cores, idle is a percent of the host). */
export const BOTTLENECK_THRESHOLDS = Object.freeze({
  generatorShare: 0.9, // the generator's busiest process at 90% of the cores it may use
  throttledShare: 0.5, // the server's groups throttled in half the CFS periods or more: held at the quota
  hostIdlePct: 5, // the host's cores all busy
  lbCores: 0.9, // HAProxy's CPU: about one core (it balances on one thread per core it is given)
  lbQueue: 1, // requests waiting in HAProxy for a server, on average
  lbErrors: 1, // a 5xx HAProxy answered itself in the window (no replica's answer): any
  lbDown: 1, // a replica HAProxy held down in the window (marked down by its checks or its connections' errors): any
  elu: 0.95, // an event loop busy 95% of the time or more: saturated
  gcShare: 0.2, // a fifth of an instance's time in GC pauses
  gcElu: 0.8, // ... while its loop is mostly busy
  ioElu: 0.7, // loops mostly idle
  ioWait: 5, // and a request's latency at least 5 times the loop time it costs: it waits on something else
  ioLatencyMs: 2 // ... and long enough not to be the network's and the generator's own fixed cost
})

const T = BOTTLENECK_THRESHOLDS
const pct = (x) => `${Math.round(x * 100)}%`
const fix = (x, d = 2) => Number(x).toFixed(d)

/**
 * @typedef {{ figure: string, value: number, threshold?: number, op?: string, says: string }} Evidence
 * @typedef {{ instances: any[], workers: any[], roles: Record<string, number> | null, hostIdle: number | null,
 *   hostCores: number | null, server: number | null, allowance: number, throttling: { share: number, msPerSecond:
 *   number } | null, generator: { share: number | null, cores: number | null } | null, generatorFlag: { value?:
 *   number, threshold?: number, message: string } | null, lb: any, latencyMs: number | null, throughput: number |
 *   null, behind?: Behind | null }} Facts
 * @typedef {{ offered: number, served: number, missed?: { name: string, value: number, threshold: number } }} Behind an
 *   open-model run that did not keep up: the rate offered, the throughput served, and the first latency bound of its
 *   objective it missed (lib/slo.js sloMisses)
 * @typedef {{ kind: string, needs: string, test: (f: Facts) => Evidence[] | null, line: (f: Facts, ev: Evidence[]) =>
 *   string }} Rule
 * @typedef {{ kind: string, confidence: 'high'|'medium'|'low', line: string, evidence: Evidence[], also: { kind:
 *   string, line: string }[], unchecked: string[] }} Bottleneck
 */

/**
 * A replica HAProxy held down, in words: when it was marked down (from the steady window's start), how often, how long.
 * @param {{ server: string, times: number, firstAfterS: number, downS: number, downAtEnd: boolean }} d
 */
const downSays = (d) => {
  const when = d.firstAfterS < 0 ? `${fix(-d.firstAfterS, 1)} s before` : `${fix(d.firstAfterS, 1)} s into`
  const times = d.times > 1 ? ` (${d.times} times)` : ''
  return `replica ${d.server} marked down by HAProxy ${when} the window${times}, down ${d.downS} s${d.downAtEnd ? ' to its end' : ''}`
}
const busiest = (list) => list.reduce((a, b) => (b.elu > (a?.elu ?? -1) ? b : a), null)
const hostIdleEvidence = (f) => (f.hostIdle === null ? [] : [{ figure: 'host-idle', value: f.hostIdle, says: `host ${Math.round(f.hostIdle)}% idle` }])

/** @type {Rule[]} */
export const BOTTLENECK_RULES = [
  {
    kind: 'load-generator',
    needs: 'the generator meter',
    test: (f) => {
      const share = f.generator?.share ?? null
      if (!(share !== null && share >= T.generatorShare) && !(f.generatorFlag && share === null)) return null
      return [{
        figure: 'generator-share',
        value: share ?? 1,
        threshold: T.generatorShare,
        op: '>=',
        says: share === null
          ? 'the run\'s validity flags the generator saturated'
          : `the load generator at ${pct(share)} of the cores it may use${f.generatorFlag ? ' (the run is flagged generator-saturated)' : ''}`
      }]
    },
    line: (f, ev) => `${ev[0].says}; the server was not the limit`
  },
  {
    kind: 'cpu-quota',
    needs: 'the quota groups\' cpu.stat',
    test: (f) => {
      if (!f.throttling || f.throttling.share < T.throttledShare) return null
      return [
        {
          figure: 'throttled-share',
          value: f.throttling.share,
          threshold: T.throttledShare,
          op: '>=',
          says: `throttled in ${pct(f.throttling.share)} of CFS periods (${Math.round(f.throttling.msPerSecond)} ms/s held back)`
        },
        ...(f.server === null
          ? []
          : [{ figure: 'server-cores', value: f.server, threshold: f.allowance, says: `${fix(f.server)} cores of ${fix(f.allowance, 1)} allowed` }])
      ]
    },
    line: (f, ev) => ev.map(e => e.says).join(', ')
  },
  {
    kind: 'host-cpu',
    needs: 'the host\'s /proc/stat',
    test: (f) => {
      if (f.hostIdle === null || f.hostIdle >= T.hostIdlePct) return null
      const top = Object.entries(f.roles ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([r, c]) => `${r} ${fix(c)}`).join(', ')
      return [{
        figure: 'host-idle',
        value: f.hostIdle,
        threshold: T.hostIdlePct,
        op: '<',
        says: `host ${fix(f.hostIdle, 1)}% idle of ${f.hostCores} cores${top ? ` (${top} cores)` : ''}`
      }]
    },
    line: (f, ev) => ev[0].says
  },
  {
    kind: 'load-balancer',
    needs: 'the load balancer\'s CPU or stats',
    test: (f) => {
      const cores = f.roles?.['load-balancer']
      const ev = []
      // what the balancer answered itself, and the replicas it took out, come first: the run's answers were not all the
      // server's
      if (f.lb?.errors >= T.lbErrors) {
        const x = f.lb.errors / Math.max(1, f.lb.requests)
        const share = `${(100 * x).toFixed(x < 0.01 ? 2 : 0)}%`
        const says = `HAProxy answered ${f.lb.errors} of ${f.lb.requests} requests (${share}) with a 5xx itself`
        ev.push({ figure: 'lb-errors', value: f.lb.errors, threshold: T.lbErrors, op: '>=', says })
      }
      const down = f.lb?.down ?? []
      if (down.length >= T.lbDown) ev.push({ figure: 'lb-down', value: down.length, threshold: T.lbDown, op: '>=', says: down.map(downSays).join('; ') })
      if (cores !== undefined && cores >= T.lbCores) {
        ev.push({
          figure: 'lb-cores',
          value: cores,
          threshold: T.lbCores,
          op: '>=',
          says: `HAProxy at ${fix(cores)} cores`
        })
      }
      if (f.lb && f.lb.queue >= T.lbQueue) {
        ev.push({
          figure: 'lb-queue',
          value: f.lb.queue,
          threshold: T.lbQueue,
          op: '>=',
          says: `${fix(f.lb.queue, 1)} requests queued in HAProxy on average (at most ${f.lb.maxQueue})`
        })
      }
      return ev.length ? ev : null
    },
    line: (f, ev) => ev.map(e => e.says).join(', ')
  },
  {
    kind: 'gc',
    needs: 'the instances\' telemetry',
    test: (f) => {
      const hit = f.workers.filter(i => i.gcShare >= T.gcShare && i.elu >= T.gcElu).sort((a, b) => b.gcShare - a.gcShare)[0]
      if (!hit) return null
      return [{
        figure: 'gc-share',
        value: hit.gcShare,
        threshold: T.gcShare,
        op: '>=',
        says: `instance ${hit.id} ${pct(hit.gcShare)} of its time in GC (ELU ${fix(hit.elu)}, heap ${hit.heapMB} MB)`
      }]
    },
    line: (f, ev) => ev[0].says
  },
  {
    kind: 'event-loop',
    needs: 'the instances\' telemetry',
    test: (f) => {
      const top = busiest(f.workers)
      if (!top || top.elu < T.elu) return null
      const saturated = f.workers.filter(i => i.elu >= T.elu).length
      return [
        {
          figure: 'elu',
          value: top.elu,
          threshold: T.elu,
          op: '>=',
          says: `instance ${top.id} ELU ${fix(top.elu)}${f.workers.length > 1 ? ` (${saturated} of ${f.workers.length} instances at ${T.elu} or more)` : ''}`
        },
        { figure: 'instance-cores', value: top.cpu, says: `${fix(top.cpu)} cores of ${fix(f.allowance, 1)} allowed` },
        ...hostIdleEvidence(f)
      ]
    },
    line: (f, ev) => ev.map(e => e.says).join(', ')
  },
  {
    kind: 'io',
    needs: 'the instances\' telemetry and the latency',
    test: (f) => {
      if (!f.workers.length || !f.latencyMs || !f.throughput) return null
      const elu = f.workers.reduce((s, i) => s + i.elu, 0) / f.workers.length
      // the loops' busy time a request costs, against how long a request takes: the rest is waiting elsewhere
      const loopMs = f.workers.reduce((s, i) => s + i.elu, 0) * 1000 / f.throughput
      const wait = loopMs > 0 ? f.latencyMs / loopMs : Infinity
      if (elu >= T.ioElu || wait < T.ioWait || f.latencyMs < T.ioLatencyMs) return null
      return [
        { figure: 'mean-elu', value: elu, threshold: T.ioElu, op: '<', says: `event loops ${pct(elu)} busy` },
        {
          figure: 'wait-ratio',
          value: wait,
          threshold: T.ioWait,
          op: '>=',
          says: `a request takes ${fix(f.latencyMs, 1)} ms for ${fix(loopMs, 2)} ms of its loop's time`
        },
        ...(f.server === null
          ? []
          : [{ figure: 'server-cores', value: f.server, says: `${fix(f.server)} cores of ${fix(f.allowance, 1)} allowed (the I/O threads' work included)` }])
      ]
    },
    line: (f, ev) => ev.map(e => e.says).join(', ')
  },
  {
    // last: a generator behind its schedule while its own CPU was low did not run out of CPU; its sends waited on
    // something else (another process on its core, a stalled loop). Where the server shows its limit, that names the
    // run's bottleneck and this is said beside it (a capacity probe above one loop's rate: ELU 0.99, 11% generator)
    kind: 'load-generator',
    needs: 'the open model\'s schedule',
    test: (f) => {
      const share = f.generator?.share ?? null
      if (!f.generatorFlag || share === null || share >= T.generatorShare) return null
      return [{
        figure: 'late-sends',
        value: f.generatorFlag.value ?? 1,
        ...(f.generatorFlag.threshold === undefined ? {} : { threshold: f.generatorFlag.threshold, op: '>' }),
        says: `${f.generatorFlag.message} while at ${pct(share)} of the cores it may use`
      }]
    },
    line: (f, ev) => `${ev[0].says}: its sends waited on something besides its own work; the server may not have been the limit`
  }
]

/**
 * Judges a run from its figures (analyzer/diagnosis/diagnosis-figures.js): the first rule that holds is the
 * bottleneck, with its evidence; `also` names the other rules that hold. When none does, `none`: nothing was at its
 * limit, the offered load was below the capacity; or, for an open-model run that fell behind (Facts.behind), the
 * server was at its capacity with no figure at its threshold to name the limit (confidence low). Confidence is `high`
 * when one rule holds, `medium` when several do, `low` when none does but a figure is near its threshold or a rule
 * could not be checked (no telemetry).
 * @param {Facts} f
 * @returns {Bottleneck}
 */
export function judgeBottleneck (f) {
  const held = []
  const unchecked = []
  for (const rule of BOTTLENECK_RULES) {
    if (rule.needs.includes('telemetry') && !f.instances.length) { unchecked.push(rule.kind); continue }
    const ev = rule.test(f)
    if (ev) held.push({ rule, ev })
  }
  if (held.length) {
    const [first, ...rest] = held
    return {
      kind: first.rule.kind,
      confidence: rest.length ? 'medium' : 'high',
      line: first.rule.line(f, first.ev),
      evidence: first.ev,
      also: rest.map(h => ({ kind: h.rule.kind, line: h.rule.line(f, h.ev) })),
      unchecked
    }
  }
  const top = busiest(f.workers)
  const near = (top && top.elu >= T.elu - 0.1) || (f.hostIdle !== null && f.hostIdle < 3 * T.hostIdlePct) || unchecked.length > 0
  /** @type {Evidence[]} */
  const evidence = [
    ...(top ? [{ figure: 'elu', value: top.elu, threshold: T.elu, op: '<', says: `busiest instance ${top.id} ELU ${fix(top.elu)}` }] : []),
    ...(f.server === null ? [] : [{ figure: 'server-cores', value: f.server, says: `${fix(f.server)} cores of ${fix(f.allowance, 1)} allowed` }]),
    ...hostIdleEvidence(f)
  ]
  const figures = evidence.map(e => e.says).join(', ') || 'no figures'
  // an open-model run that fell behind was at its capacity, whatever figure stayed under its threshold: say so, and
  // name no limit the figures did not show
  if (f.behind) {
    const b = f.behind
    const missed = b.missed ? `, ${missText(b.missed)}` : ''
    return {
      kind: 'none',
      confidence: 'low',
      line: `no figure at its threshold (${figures}), yet the server fell behind the ${fix(b.offered, 1)} req/s offered ` +
        `(${fix(b.served, 1)} served${missed}): it ran at its capacity, the limit unnamed; the figure nearest its threshold is the likeliest`,
      evidence,
      also: [],
      unchecked
    }
  }
  return {
    kind: 'none',
    confidence: near ? 'low' : 'high',
    line: `nothing at its limit: ${figures}; the offered load was below the capacity`,
    evidence,
    also: [],
    unchecked
  }
}

/**
 * The facts of a run for judgeBottleneck, from what run.json and the deployment hold.
 * @param {{ config: any, instances: any[], roles: ReturnType<typeof import('./diagnosis-figures.js').summarizeRoles>,
 *   lb: any, cpu: any, generator: any, validity: any, summary: any }} run
 * @returns {Facts}
 */
export function factsOf ({ config, instances, roles, lb, cpu, generator, validity, summary }) {
  const hostCores = roles?.hostCores ?? cpu?.host?.cores?.length ?? null
  const hostIdle = cpu?.host?.overall === undefined || cpu?.host?.overall === null ? null : 100 - cpu.host.overall
  return {
    instances,
    workers: instances.filter(i => i.role === 'worker'),
    roles: roles?.roles ?? null,
    hostIdle,
    hostCores,
    server: roles?.server ?? cpu?.total ?? null,
    allowance: serverAllowance(config, hostCores ?? 1),
    throttling: cpu?.throttling ?? null,
    generator: generator ?? null,
    generatorFlag: validity?.flags?.find(x => x.name === 'generator-saturated') ?? null,
    lb,
    latencyMs: summary?.latency?.mean ?? null,
    throughput: summary?.throughput ?? null,
    behind: behindOf(config, summary)
  }
}

/**
 * An open-model run (--rate) that did not keep up: it served less than SERVED_SHARE of the rate (lib/slo.js, as a
 * capacity probe is judged), or a latency bound of its objective (--slo) was missed; null for a closed-model run or
 * one that kept up.
 * @returns {Behind | null}
 */
function behindOf (config, summary) {
  if (!(config?.rate > 0) || !summary) return null
  const missed = config.slo ? sloMisses(summary, config.slo).find(m => m.name !== 'errors') : undefined
  if (summary.throughput >= SERVED_SHARE * config.rate && !missed) return null
  return { offered: config.rate, served: summary.throughput, ...(missed && { missed }) }
}

/**
 * The figures a run's diagnosis is made of, over the steady window: CPU by role (in cores, summing to the host's busy
 * cores), each instance's event loop, HAProxy's queue where it was read, each container's network on Swarm. The
 * run's validity reads the roles too (something else busy on the host), before the bottleneck is judged.
 * @param {{ config: any, timeline: any, telemetry: import('../../lib/telemetry.js').TelemetryRecord[], window: { from:
 *   number, to: number }, generator: any }} run
 */
export function diagnosisFigures ({ config, timeline, telemetry, window, generator }) {
  const instances = summarizeInstances(telemetry)
  return {
    instances,
    roles: summarizeRoles({ timeline, window, instances, processShape: deploymentShape(config).process, generatorCores: generator?.cores ?? null }),
    lb: summarizeLb(timeline?.lb, window),
    network: summarizeNetwork(timeline, window)
  }
}

/**
 * A run's `diagnosis`: its bottleneck judged from its figures (diagnosisFigures), with the figures.
 * @param {{ config: any, figures: ReturnType<typeof diagnosisFigures>, cpu: any, generator: any, validity: any,
 *   summary: any }} run
 */
export function diagnoseRun ({ config, figures, cpu, generator, validity, summary }) {
  const { instances, roles, lb, network } = figures
  const bottleneck = judgeBottleneck(factsOf({ config, instances, roles, lb, cpu, generator, validity, summary }))
  return {
    bottleneck,
    roles: roles?.roles ?? null,
    host: roles ? { cores: roles.hostCores, busy: roles.hostBusy } : null,
    instances,
    ...(lb ? { lb } : {}),
    ...(network ? { network } : {})
  }
}
