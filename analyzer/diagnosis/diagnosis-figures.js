// The figures a bottleneck is judged by, over a run's steady window: each instance's event loop, GC and CPU (from its
// telemetry), CPU by role (the sampler's roles, the generator's meter, the rest of the host), HAProxy's queue.
import { samplesInWindow as inWindow } from '../../rc/cpu-summary.js'

const round3 = (x) => Math.round(x * 1000) / 1000
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)

/** The roles a run's CPU is split into, in the order tables show them. */
export const ROLES = Object.freeze(['workers', 'primary', 'pm2-daemon', 'load-balancer', 'docker-proxy', 'rc', 'load-generator', 'kernel', 'other'])

/**
 * Per instance (one process of the server: a worker, a PM2 instance, a replica, a cluster's primary), its telemetry
 * over the window: mean event-loop utilisation and CPU, event-loop delay (mean of the per-second p50 and p99, the
 * highest max), the share of its time in GC, its heap at the end.
 * @param {import('../../lib/telemetry.js').TelemetryRecord[]} records
 */
export function summarizeInstances (records) {
  /** @type {Map<string, import('../../lib/telemetry.js').TelemetryRecord[]>} */
  const byId = new Map()
  for (const r of records) {
    const key = `${r.id}@${r.pid}`
    if (!byId.has(key)) byId.set(key, [])
    byId.get(key).push(r)
  }
  return [...byId.values()].map(rs => {
    rs.sort((a, b) => a.t - b.t)
    const ms = rs.reduce((s, r) => s + r.ms, 0)
    return {
      id: rs[0].id,
      pid: rs[0].pid,
      role: rs[0].role,
      samples: rs.length,
      elu: round3(mean(rs.map(r => r.elu))),
      cpu: round3(mean(rs.map(r => r.cpu))),
      delay: {
        p50: round3(mean(rs.map(r => r.delay.p50))),
        p99: round3(mean(rs.map(r => r.delay.p99))),
        max: round3(Math.max(...rs.map(r => r.delay.max)))
      },
      gcShare: ms > 0 ? round3(rs.reduce((s, r) => s + r.gcMs, 0) / ms) : 0,
      heapMB: rs.at(-1).heapMB
    }
  }).sort((a, b) => (a.role === b.role ? a.id.localeCompare(b.id, 'en', { numeric: true }) : a.role === 'primary' ? -1 : 1))
}

/**
 * Where the host's cores went over the window, in cores, role by role; `kernel` is the kernel's interrupt work (the
 * network's packets), `other` the rest of the host's busy time (Docker, whatever else runs), so the roles sum to the
 * host's busy cores. The server's CPU (its cgroup or its containers) is split by the instances' telemetry: a cluster's
 * primary says its own, PM2's daemon is what the server used beyond its instances, the workers the rest.
 * @param {{ timeline: any, window: { from: number, to: number }, instances: ReturnType<typeof summarizeInstances>,
 *   processShape: string, generatorCores: number | null }} input
 */
export function summarizeRoles ({ timeline, window, instances, processShape, generatorCores }) {
  const samples = inWindow(timeline, window)
  if (!samples.length) return null
  // a node that runs only a role's containers (HAProxy on the manager) adds its busy cores (see mergeTimelines)
  const hostBusy = mean(samples.map(s => s.host.filter(x => x !== null).reduce((a, b) => a + b, 0) / 100 + (s.apartBusy ?? 0)))
  const server = mean(samples.map(s => s.serverTotal ?? 0))
  const sumOf = (role) => instances.filter(i => i.role === role).reduce((s, i) => s + i.cpu, 0)
  /** @type {Record<string, number>} */
  const roles = {}
  const primary = sumOf('primary')
  if (processShape === 'cluster') roles.primary = primary
  if (processShape === 'pm2' && instances.length) {
    roles.workers = Math.min(server, sumOf('worker'))
    roles['pm2-daemon'] = Math.max(0, server - roles.workers)
  } else {
    roles.workers = Math.max(0, server - (roles.primary ?? 0))
  }
  const others = new Set(samples.flatMap(s => Object.keys(s.roles ?? {})))
  for (const role of others) roles[role] = mean(samples.map(s => s.roles?.[role] ?? 0))
  // roles sampled apart from the server, on the executor's host (Docker's proxy of a Swarm run's published port)
  const apart = inWindow(timeline.roleSamples, window)
  for (const role of new Set(apart.flatMap(s => Object.keys(s.roles)))) roles[role] = mean(apart.map(s => s.roles[role] ?? 0))
  if (generatorCores !== null) roles['load-generator'] = generatorCores
  const known = Object.values(roles).reduce((a, b) => a + b, 0)
  roles.other = Math.max(0, hostBusy - known)
  const ordered = Object.fromEntries([...ROLES, ...Object.keys(roles).filter(r => !ROLES.includes(r))].filter(r => r in roles).map(r => [r, round3(roles[r])]))
  return { roles: ordered, hostBusy: round3(hostBusy), hostCores: timeline.cpus + (timeline.apartCpus ?? 0), server: round3(server) }
}

/**
 * HAProxy's figures over the window (a local run's `lb` series): mean sessions, queue and its highest, request rate;
 * where the samples carry HAProxy's counters (`parseHaproxyStat` in executor/haproxy.js), also the requests it
 * received in the window, the 5xx it answered itself (`errors`: no replica's answer), and each replica it held down
 * in the window (`down`, see serversDown).
 * @param {{ intervalMs: number, samples: { t: number, sessions: number, queue: number, rate: number, requests?: number,
 *   lbErrors?: number, servers?: LbServer[] }[] } | undefined} lb
 * @param {{ from: number, to: number }} window
 */
export function summarizeLb (lb, window) {
  const s = inWindow(lb, window)
  if (!s.length) return null
  const figures = {
    samples: s.length,
    sessions: round3(mean(s.map(x => x.sessions))),
    queue: round3(mean(s.map(x => x.queue))),
    maxQueue: Math.max(...s.map(x => x.queue)),
    rate: round3(mean(s.map(x => x.rate)))
  }
  const last = s.at(-1)
  if (!last.servers) return figures
  // the counters are totals: the window's are the last sample's less the one just before the window's first
  const before = lb?.samples[lb.samples.indexOf(s[0]) - 1] ?? s[0]
  return {
    ...figures,
    requests: last.requests - before.requests,
    errors: last.lbErrors - before.lbErrors,
    down: serversDown(before === s[0] ? s : [before, ...s], window)
  }
}

/**
 * @typedef {{ name: string, up: boolean, downs: number, downtimeS: number, lastChangeS: number }} LbServer
 */

/**
 * The replicas HAProxy held down in a series (its first sample the baseline): for each, how many times it was marked
 * down, when first (seconds from the window's start, from the seconds since its state last changed, which HAProxy
 * gives rounded down: within a second; negative when it was down already before the window), how many seconds it was
 * down in all, and whether it was still down at the end.
 * @param {{ t: number, servers?: LbServer[] }[]} samples
 * @param {{ from: number }} window
 */
function serversDown (samples, window) {
  const out = []
  const first = samples[0].servers ?? []
  const last = samples.at(-1).servers ?? []
  for (const end of last) {
    const start = first.find(v => v.name === end.name) ?? { ...end, downs: 0, downtimeS: 0 }
    const series = samples.map(x => ({ t: x.t, v: x.servers?.find(w => w.name === end.name) })).filter(x => x.v)
    let at = null
    for (let i = 0; i < series.length && at === null; i++) {
      const { t, v } = series[i]
      const prev = series[i - 1]
      if (!v.up) at = Math.max(prev?.t ?? -Infinity, t - v.lastChangeS * 1000)
      else if (prev && v.downs > prev.v.downs) at = prev.t
    }
    if (at === null) continue
    out.push({
      server: end.name,
      times: end.downs - start.downs,
      firstAfterS: Math.round((at - window.from) / 100) / 10,
      downS: end.downtimeS - start.downtimeS,
      downAtEnd: !end.up
    })
  }
  return out
}

/**
 * Each container's network over the window, in bytes per second received and sent (the RC reads its network
 * namespace's counters on Swarm); null where no sample carries them (locally the server shares the host's network).
 * @param {any} timeline
 * @param {{ from: number, to: number }} window
 * @returns {{ container: string, rxBytesPerSec: number, txBytesPerSec: number }[] | null}
 */
export function summarizeNetwork (timeline, window) {
  const all = timeline?.samples ?? []
  const samples = inWindow(timeline, window)
  if (!samples.length) return null
  // the counters are totals: the window's rate is the last sample's minus the one just before the window's first
  const before = all[all.indexOf(samples[0]) - 1] ?? samples[0]
  const last = samples.at(-1)
  const seconds = (last.t - before.t) / 1000
  const out = []
  for (const [id, c] of Object.entries(last.containers ?? {})) {
    const a = before.containers?.[id]?.net
    const b = /** @type {any} */ (c).net
    if (!a || !b || seconds <= 0) continue
    out.push({ container: id, rxBytesPerSec: Math.round((b.rx - a.rx) / seconds), txBytesPerSec: Math.round((b.tx - a.tx) / seconds) })
  }
  return out.length ? out : null
}
