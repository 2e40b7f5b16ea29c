// What run.json says of a run that lost a node: which node, when, what the load saw meanwhile, where Swarm put its
// tasks.
import { scanJtl } from '../analyzer/samples/jtl-reader.js'
import { readLatencyFile } from '../analyzer/samples/latency-file.js'
import { LatencyHistogram } from '../analyzer/samples/latency-histogram.js'

const iso = (ms) => (Number.isFinite(ms) ? new Date(/** @type {number} */ (ms)).toISOString() : null)

/**
 * The window in which the load may have felt the losses: from the last time a lost node was seen well (requests in
 * flight then may fail) to when the last one came back, within the steady window.
 * @param {import('./docker/node-watch.js').LossEpisode[]} episodes
 * @param {{ steadyStart: number, steadyEnd: number }} load
 */
export function lossWindow (episodes, { steadyStart, steadyEnd }) {
  const from = Math.min(...episodes.map(e => e.lastSeenAt ?? e.lostAt))
  const open = episodes.some(e => e.recoveredAt === null)
  const to = open ? steadyEnd : Math.max(...episodes.map(e => /** @type {number} */ (e.recoveredAt)))
  return { from: Math.max(steadyStart, Math.min(from, steadyEnd)), to: Math.max(steadyStart, Math.min(to, steadyEnd)) }
}

/**
 * Requests and errors that ended before the loss window and in it (by end time: a request in flight when the node went
 * fails when its timeout ends, whenever it started), with their rate per second of each span.
 * @param {string} jtl
 * @param {{ steadyStart: number }} load
 * @param {{ from: number, to: number }} window
 */
export async function countAroundLoss (jtl, { steadyStart }, { from, to }) {
  const before = { requests: 0, errors: 0 }
  const during = { requests: 0, errors: 0 }
  const counter = {
    add (ts, elapsed, ok) {
      const end = ts + elapsed
      const span = end >= from && end < to ? during : end >= steadyStart && end < from ? before : null
      if (!span) return
      span.requests++
      if (!ok) span.errors++
    }
  }
  await scanJtl(jtl, { record: () => counter, controller: () => null })
  const rate = (c, ms) => ({ ...c, throughput: ms > 0 ? c.requests / ms * 1000 : 0 })
  return { before: from > steadyStart ? rate(before, from - steadyStart) : null, during: rate(during, to - from) }
}

/**
 * The same counts from a run's latency histograms (a run without a samples file): completions and failed ones by the
 * tenth of a second they ended in, so the spans' edges are a tenth of a second apart at most.
 * @param {string} histogramFile latency.json
 * @param {{ steadyStart: number }} load
 * @param {{ from: number, to: number }} window
 */
export async function countAroundLossFromHistogram (histogramFile, { steadyStart }, { from, to }) {
  const { plain } = await readLatencyFile(histogramFile)
  const all = new LatencyHistogram()
  for (const h of plain.values()) all.merge(h)
  const rate = (c, ms) => ({ ...c, throughput: ms > 0 ? c.requests / ms * 1000 : 0 })
  return { before: from > steadyStart ? rate(all.endedIn(steadyStart, from), from - steadyStart) : null, during: rate(all.endedIn(from, to), to - from) }
}

/**
 * run.json's `degraded`: the lost nodes, the errors and throughput during the loss against before it, and the tasks
 * Swarm rescheduled (present at the end of the load, not at deploy) or could not place.
 * @param {import('./docker/node-watch.js').LossEpisode[]} episodes
 * @param {{ jtl: string | null, histogram?: string, load: { steadyStart: number, steadyEnd: number }, before: any[],
 *   after: any[] | null }} opts jtl: the run's samples file (plain or gzip), or null when it kept none: then its
 *   latency histograms (histogram) are counted; before/after: run.json placement rows at deploy and at the end of the
 *   load (after is null when it could not be read)
 */
export async function describeLoss (episodes, { jtl, histogram, load, before, after }) {
  const window = lossWindow(episodes, load)
  const counted = jtl
    ? countAroundLoss(jtl, load, window)
    : histogram ? countAroundLossFromHistogram(histogram, load, window) : Promise.reject(new Error('no samples'))
  const counts = await counted.catch(() => null)
  const known = new Set(before.map(p => p.task))
  const isApp = (p) => p.service.endsWith('_app')
  const nodes = episodes.map(e => ({
    ...(e.generator ? { generator: e.generator } : {}),
    node: e.node,
    nodeId: e.nodeId,
    label: e.label,
    why: e.why,
    lastSeenAt: iso(e.lastSeenAt),
    lostAt: iso(e.lostAt),
    lostAfterMs: e.lostAt - load.steadyStart,
    swarmDownAt: iso(e.swarmDownAt),
    recoveredAt: iso(e.recoveredAt),
    tasksLost: before.filter(p => isApp(p) && p.nodeId === e.nodeId).length
  }))
  return {
    nodes,
    window: { from: iso(window.from), to: iso(window.to), ms: window.to - window.from },
    duringLoss: counts?.during ?? null,
    beforeLoss: counts?.before ?? null,
    errorsDuringLoss: counts?.during.errors ?? null,
    rescheduled: after
      ? after.filter(p => isApp(p) && !known.has(p.task))
        .map(p => ({ instance: p.instance, task: p.task, nodeLabel: p.nodeLabel, node: p.node, state: p.state }))
      : null,
    notRunning: after ? after.filter(p => isApp(p) && p.state !== 'running').length : null,
    placementAfter: after
  }
}

/**
 * One line per lost node for the end-of-run summary.
 * @param {any} degraded run.json's degraded
 */
export function formatLoss (degraded) {
  const lines = degraded.nodes.map(n => `  degraded: ${n.generator ? `generator ${n.generator} on ` : ''}node ${n.label ?? n.node} ` +
    `lost ${(n.lostAfterMs / 1000).toFixed(1)} s into the steady window (${n.why})` +
    `${n.recoveredAt ? `, back at ${n.recoveredAt}` : ', not back by the end'}; ${n.tasksLost} task${n.tasksLost === 1 ? '' : 's'} were on it`)
  const d = degraded.duringLoss
  if (d) {
    const before = degraded.beforeLoss ? ` (before: ${Math.round(degraded.beforeLoss.throughput)} req/s)` : ''
    lines.push(`  during the loss (${(degraded.window.ms / 1000).toFixed(1)} s): ` +
      `${d.errors} errors of ${d.requests} requests, ${Math.round(d.throughput)} req/s${before}`)
  }
  if (degraded.rescheduled?.length) {
    const where = [...new Set(degraded.rescheduled.map(r => r.nodeLabel ?? r.node))].join(', ')
    lines.push(`  Swarm rescheduled ${degraded.rescheduled.length} task${degraded.rescheduled.length === 1 ? '' : 's'} to ${where}` +
      `${degraded.notRunning ? `; ${degraded.notRunning} not running at the end` : ''}`)
  } else if (degraded.rescheduled) {
    lines.push('  Swarm had rescheduled no task by the end of the load' +
      `${degraded.nodes.some(n => !n.swarmDownAt) ? ' (the manager had not yet marked the node down)' : ''}`)
  }
  return lines.join('\n')
}
