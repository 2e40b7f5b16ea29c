// Where a run's server tasks may go on a swarm: --nodes K workers, --placement spread|pack, --constraint, and the
// manager kept for the RC and the load balancer when workers exist (as in the Ibenchjs MIMN runs). Pure: nodes in,
// constraints out.
import { badFlag } from '../../lib/errors.js'
import { strategyOf } from '../../lib/strategies.js'

export const NODE_LABEL = 'io.nodescale.node'

/** A user constraint that already says which nodes: then nodescale adds no node choice of its own (unless --nodes). */
const CHOOSES_NODES = /^\s*node\.(role|id|hostname|labels\.io\.nodescale\.node)\s*(==|!=)/

/** A node as run.json names it. */
export const nodeRef = (n) => ({ id: n.ID, hostname: n.Description?.Hostname ?? '', label: n.Spec?.Labels?.[NODE_LABEL] ?? null, addr: n.Status?.Addr ?? '' })

const usable = (n) => n.Status?.State === 'ready' && n.Spec?.Availability === 'active'

/**
 * @typedef {{ constraints: string[], maxReplicasPerNode: number, chosen: ReturnType<typeof nodeRef>[] | null, skipped:
 *   { node: ReturnType<typeof nodeRef>, why: string }[], rule: string }} PlacementPlan
 */

/**
 * The placement of a run's server service over the swarm's nodes (as listNodes gives them).
 * - no workers (a single-node swarm): the manager runs everything; --nodes is an error (there are no workers to
 *   choose).
 * - workers: the first K ready workers by label (or hostname), K = --nodes or all; the others excluded by id; the
 *   manager excluded by `node.role == worker`. Workers that are down or drained are skipped and said so.
 * - pack (replicated strategies: hs): as few of the K nodes as the CPU quota allows, at most floor(node CPUs /
 *   cpus-per-instance) replicas each.
 * @param {any[]} nodes docker.listNodes()
 * @param {{ nodes?: number, placement?: string, constraints?: readonly string[], strategy: string, instances: number,
 *   cpusPerInstance?: number }} config
 * @returns {PlacementPlan}
 */
export function planPlacement (nodes, config) {
  const user = [...(config.constraints ?? [])]
  const placement = config.placement ?? 'spread'
  const byName = (a, b) => (nodeRef(a).label ?? nodeRef(a).hostname).localeCompare(nodeRef(b).label ?? nodeRef(b).hostname, 'en', { numeric: true }) || a.ID.localeCompare(b.ID)
  const workers = nodes.filter(n => n.Spec?.Role === 'worker').sort(byName)
  const ready = workers.filter(usable)
  const skipped = workers.filter(n => !usable(n)).map(n => ({ node: nodeRef(n), why: `${n.Status?.State ?? 'unknown'}, ${n.Spec?.Availability ?? 'unknown'}` }))
  const names = (list) => list.map(n => nodeRef(n).label ?? nodeRef(n).hostname).join(', ')
  if (config.nodes !== undefined && config.nodes > ready.length) {
    const down = skipped.length ? `; not usable: ${skipped.map(s => `${s.node.label ?? s.node.hostname} (${s.why})`).join(', ')}` : ''
    throw badFlag('--nodes', `${config.nodes} worker nodes asked, and the swarm has ${ready.length} ready worker${ready.length === 1 ? '' : 's'}${ready.length ? ` (${names(ready)})` : ''}${down}; lower --nodes, or add nodes (executor cluster up --nodes ${config.nodes + 1} on one machine)`, { key: 'nodes' })
  }
  if (!workers.length) {
    return { constraints: user, maxReplicasPerNode: 0, chosen: nodes.filter(usable).map(nodeRef), skipped, rule: 'single node: the manager runs the server' }
  }
  if (config.nodes === undefined && user.some(c => CHOOSES_NODES.test(c))) {
    return { constraints: user, maxReplicasPerNode: 0, chosen: null, skipped, rule: `--constraint chooses the nodes: ${user.join(', ')}` }
  }
  let chosen = ready.slice(0, config.nodes ?? ready.length)
  let maxReplicasPerNode = 0
  let rule = `${placement} over ${chosen.length} worker${chosen.length === 1 ? '' : 's'} (${names(chosen)}); the manager runs the RC and the load balancer`
  if (placement === 'pack' && strategyOf(config.strategy).replicated && chosen.length > 1) {
    const cpus = Math.min(...chosen.map(n => (n.Description?.Resources?.NanoCPUs ?? 0) / 1e9))
    const cap = config.cpusPerInstance ? Math.max(1, Math.floor(cpus / config.cpusPerInstance + 1e-9)) : config.instances
    const used = Math.min(chosen.length, Math.ceil(config.instances / cap))
    chosen = chosen.slice(0, used)
    maxReplicasPerNode = used > 1 ? cap : 0
    rule = `pack: at most ${cap} replica${cap === 1 ? '' : 's'} per node (${cpus} CPUs / ${config.cpusPerInstance ?? 'no quota'}), on ${used} worker${used === 1 ? '' : 's'} (${names(chosen)})`
  }
  const excluded = ready.filter(n => !chosen.includes(n)).map(n => `node.id != ${n.ID}`)
  return { constraints: ['node.role == worker', ...excluded, ...user], maxReplicasPerNode, chosen: chosen.map(nodeRef), skipped, rule }
}
