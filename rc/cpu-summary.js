// The per-core CPU table of the multi-core study (highest, lowest, spread, overall) over a run's steady window, and how
// much the CPU quota throttled the server meanwhile.
import { summarizeThrottle } from './throttle.js'

/**
 * @typedef {{ core: number, usage: number }} CoreUsage
 * @typedef {{ cores: CoreUsage[], highest: number, highestCore: number, lowest: number, lowestCore: number, spread:
 *   number, overall: number }} CoreTable
 */

const round1 = (x) => Math.round(x * 10) / 10
const round2 = (x) => Math.round(x * 100) / 100

/**
 * Mean per core of the rows' arrays, and the table of it: highest, lowest and overall over `over` (the cores the
 * server was given; every core when not said), `cores` and `sum` over every core.
 * @param {any[]} rows @param {number} cpus @param {readonly number[] | null} [over]
 */
function table (rows, cpus, over = null) {
  const sums = new Array(cpus).fill(0)
  for (const r of rows) for (let i = 0; i < cpus; i++) sums[i] += Number.isFinite(r?.[i]) ? r[i] : 0
  const means = sums.map(s => rows.length ? s / rows.length : 0)
  const ranked = over?.length ? over.filter(i => i >= 0 && i < cpus) : means.map((_, i) => i)
  let hi = ranked[0] ?? 0
  let lo = ranked[0] ?? 0
  for (const i of ranked) {
    if (means[i] > means[hi]) hi = i
    if (means[i] < means[lo]) lo = i
  }
  const sum = means.reduce((a, b) => a + b, 0)
  const rankedSum = ranked.reduce((a, i) => a + means[i], 0)
  return {
    means,
    sum,
    /** @type {CoreTable} */
    out: {
      cores: means.map((m, core) => ({ core, usage: round1(m) })),
      highest: round1(means[hi] ?? 0),
      highestCore: hi,
      lowest: round1(means[lo] ?? 0),
      lowestCore: lo,
      spread: round1((means[hi] ?? 0) - (means[lo] ?? 0)),
      overall: round1(ranked.length ? rankedSum / ranked.length : 0)
    }
  }
}

/**
 * The samples of a timeline that lie in a window (ms epoch): a sample covers (t - intervalMs, t] and is in the window
 * when its midpoint is. Every summary of a run's steady window takes its samples by this rule.
 * @param {{ intervalMs?: number, samples?: any[] } | null | undefined} timeline
 * @param {{ from?: number, to?: number }} [window] open on a side that is not given (or not finite)
 * @returns {any[]}
 */
export function samplesInWindow (timeline, { from = -Infinity, to = Infinity } = {}) {
  const half = (timeline?.intervalMs ?? 0) / 2
  const lo = Number.isFinite(from) ? from : -Infinity
  const hi = Number.isFinite(to) ? to : Infinity
  return (timeline?.samples ?? []).filter(s => s.t - half >= lo && s.t - half <= hi)
}

/**
 * The per-core table of the multi-core study (thesis Table 4.3.1: highest core, lowest core, their difference, overall)
 * for the server's own CPU over [from, to] (ms epoch, the steady window), and the same for the whole host.
 * A sample covers (t - intervalMs, t]; it is in the window when its midpoint is. Usage is the mean percent of that core
 * (0-100, 1 decimal), overall the mean over cores, spread = highest - lowest, total = the server's CPU in cores.
 * An empty window gives zeros and samples: 0, never NaN. Where the server was given some of the cores (`serverCores`,
 * the local backend's pinned or partitioned server), highest, lowest, spread and overall are over those (the table of
 * the machine it was given, as the thesis's dual-core server), `cores` and `total` over every core, and the output
 * says which (`serverCores`).
 * @param {import('./sampler.js').Timeline & { nodes?: any[] }} timeline a sampler's timeline; a merged Swarm one also
 *   has `nodes`
 * @param {{ from?: number, to?: number }} [window]
 * @param {{ serverCores?: readonly number[] | null }} [opts]
 * @returns {CoreTable & { source: string, total: number, samples: number, host: { cores: CoreUsage[], highest: number,
 *   lowest: number, spread: number, overall: number }, containers: any[], nodes?: any[], throttling: ReturnType<typeof
 *   summarizeThrottle>, serverCores?: number[] }}
 */
export function summarizeCpu (timeline, window = {}, { serverCores = null } = {}) {
  const all = timeline?.samples ?? []
  const cpus = timeline?.cpus ?? Math.max(0, ...all.map(s => s.server?.length ?? 0))
  const inWindow = samplesInWindow(timeline, window)
  const given = serverCores?.length && serverCores.length < cpus ? [...serverCores].sort((a, b) => a - b) : null
  const server = table(inWindow.map(s => s.server), cpus, given)
  const host = table(inWindow.map(s => s.host), cpus)
  const seconds = inWindow.length * (timeline?.intervalMs ?? 1000) / 1000
  return {
    source: timeline?.source ?? 'threads',
    ...server.out,
    ...(given && { serverCores: given }),
    total: round2(server.sum / 100),
    samples: inWindow.length,
    throttling: summarizeThrottle(inWindow, seconds),
    host: { cores: host.out.cores, highest: host.out.highest, lowest: host.out.lowest, spread: host.out.spread, overall: host.out.overall },
    containers: containerTables(inWindow, cpus, timeline?.intervalMs),
    ...(Array.isArray(timeline?.nodes) ? { nodes: nodeTables(inWindow, timeline.nodes) } : {})
  }
}

/**
 * Per Swarm node of a merged RC timeline (rc-client mergeTimelines: node i's cores are [firstCore, firstCore + cpus)):
 * the same per-core table for the server's containers on that node, and for that node's host cores.
 * @param {any[]} samples
 * @param {{ node: string, hostname?: string | null, label?: string | null, firstCore: number, cpus: number, source?:
 *   string, partial?: boolean }[]} nodes
 */
function nodeTables (samples, nodes) {
  return nodes.map(n => {
    // a node lost mid-run has null cores where it has no samples: its table is over the samples it has
    const own = samples.filter(s => s.server?.[n.firstCore] !== null)
    const slice = (key) => own.map(s => (s[key] ?? []).slice(n.firstCore, n.firstCore + n.cpus))
    const server = table(slice('server'), n.cpus)
    const host = table(slice('host'), n.cpus)
    return {
      node: n.node,
      hostname: n.hostname ?? null,
      label: n.label ?? null,
      firstCore: n.firstCore,
      ...server.out,
      total: round2(server.sum / 100),
      samples: own.length,
      ...(n.partial ? { partial: true } : {}),
      host: { cores: host.out.cores, highest: host.out.highest, lowest: host.out.lowest, spread: host.out.spread, overall: host.out.overall }
    }
  })
}

/**
 * Per container (samples from the RC carry `containers: { id: { cores, total, memoryBytes } }`): its mean per-core
 * usage, mean CPU in cores and peak memory over the window. Containers seen in fewer samples (a replica restarted) say
 * so in `samples`.
 * @param {any[]} samples
 * @param {number} cpus
 * @param {number} [intervalMs]
 * @returns {{ id: string, cores: CoreUsage[], total: number, memoryBytes: number | null, throttling: any, samples:
 *   number }[]}
 */
function containerTables (samples, cpus, intervalMs) {
  const byId = new Map()
  for (const s of samples) {
    for (const [id, c] of Object.entries(s.containers ?? {})) {
      if (!byId.has(id)) byId.set(id, [])
      byId.get(id).push(c)
    }
  }
  return [...byId].map(([id, rows]) => {
    const memory = rows.map(r => r.memoryBytes).filter(Number.isFinite)
    return {
      id,
      cores: table(rows.map(r => r.cores), cpus).out.cores,
      total: round2(rows.reduce((a, r) => a + (Number.isFinite(r.total) ? r.total : 0), 0) / rows.length),
      memoryBytes: memory.length ? Math.max(...memory) : null,
      throttling: summarizeThrottle(rows, rows.length * (intervalMs ?? 1000) / 1000),
      samples: rows.length
    }
  })
}
