// Where a run's tasks may go on a swarm. The server: --nodes K workers, --placement spread|pack, --constraint, the
// manager kept for the RC and the load balancer when workers exist (as in the Ibenchjs MIMN runs), and never a node
// labelled io.nodescale.role=load. The load generators (--load-nodes L, --load-placement labelled|free): L nodes that
// run no server task, the labelled load nodes first. Pure: nodes in, constraints out.
import { badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { strategyOf } from '../../lib/strategies.js'

export const NODE_LABEL = 'io.nodescale.node'
/** The node label that gives a node a part to play: `load` keeps it for the load generators (no server task). */
export const ROLE_LABEL = 'io.nodescale.role'
export const LOAD_ROLE = 'load'
const NOT_LOAD = `node.labels.${ROLE_LABEL} != ${LOAD_ROLE}`
const IS_LOAD = `node.labels.${ROLE_LABEL} == ${LOAD_ROLE}`
const LABEL_FIX = `docker node update --label-add ${ROLE_LABEL}=${LOAD_ROLE} <node>`

/** A user constraint that already says which nodes: then nodescale adds no node choice of its own (unless --nodes). */
const CHOOSES_NODES = /^\s*node\.(role|id|hostname|labels\.io\.nodescale\.node)\s*(==|!=)/

/** A node as run.json names it. */
export const nodeRef = (n) => ({ id: n.ID, hostname: n.Description?.Hostname ?? '', label: n.Spec?.Labels?.[NODE_LABEL] ?? null, addr: n.Status?.Addr ?? '' })

/**
 * A node (as docker.listNodes() gives it) labelled io.nodescale.role=load: kept for the load generators.
 * @param {any} node
 */
export const isLoadNode = (node) => node?.Spec?.Labels?.[ROLE_LABEL] === LOAD_ROLE

const usable = (n) => n.Status?.State === 'ready' && n.Spec?.Availability === 'active'
const nameOf = (n) => nodeRef(n).label ?? nodeRef(n).hostname
/** By io.nodescale.node label, else hostname; numbers as numbers (w2 before w10). */
const byName = (a, b) => nameOf(a).localeCompare(nameOf(b), 'en', { numeric: true }) || a.ID.localeCompare(b.ID)
const names = (list) => list.map(nameOf).join(', ')
const plural = (k, word) => `${k} ${word}${k === 1 ? '' : 's'}`
const notUsable = (n) => `${nameOf(n)} (${n.Status?.State ?? 'unknown'}, ${n.Spec?.Availability ?? 'unknown'})`

/**
 * @typedef {{ constraints: string[], maxReplicasPerNode: number, chosen: ReturnType<typeof nodeRef>[] | null, skipped:
 *   { node: ReturnType<typeof nodeRef>, why: string }[], rule: string }} PlacementPlan
 */

/**
 * The placement of a run's server service over the swarm's nodes (as listNodes gives them).
 * - load nodes (labelled io.nodescale.role=load) never run the server: they are not among the workers below, and
 *   `node.labels.io.nodescale.role != load` is added to the constraints whenever a node carries the label.
 * - no workers (a single-node swarm, or only load workers): the manager runs everything; --nodes is an error (there
 *   are no workers to choose).
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
  const loads = nodes.filter(isLoadNode).sort(byName)
  const notLoad = loads.length ? [NOT_LOAD] : []
  const kept = loads.length ? `; the load nodes (${names(loads)}) are kept for the load` : ''
  const workers = nodes.filter(n => n.Spec?.Role === 'worker' && !isLoadNode(n)).sort(byName)
  const ready = workers.filter(usable)
  const skipped = workers.filter(n => !usable(n)).map(n => ({ node: nodeRef(n), why: `${n.Status?.State ?? 'unknown'}, ${n.Spec?.Availability ?? 'unknown'}` }))
  if (config.nodes !== undefined && config.nodes > ready.length) {
    const down = skipped.length ? `; not usable: ${workers.filter(n => !usable(n)).map(notUsable).join(', ')}` : ''
    const loadWorkers = loads.filter(n => n.Spec?.Role === 'worker').length
    const up = `executor cluster up --nodes ${config.nodes + 1 + loadWorkers}${loadWorkers ? ` --load-nodes ${loadWorkers}` : ''}`
    throw badFlag('--nodes', `${config.nodes} worker nodes asked, and the swarm has ${plural(ready.length, 'ready worker')}` +
      `${loads.length ? ' not labelled for load' : ''}${ready.length ? ` (${names(ready)})` : ''}${down}${kept}; ` +
      `lower --nodes, or add nodes (${up} on one machine)`, { key: 'nodes' })
  }
  if (!workers.length) {
    const chosen = nodes.filter(n => usable(n) && !isLoadNode(n))
    if (!chosen.length && loads.length) {
      throw fail('NO_NODE_FOR_SERVER', { label: ROLE_LABEL, role: LOAD_ROLE, loads: names(loads) })
    }
    const rule = loads.length ? `no worker but the load nodes: the manager runs the server${kept}` : 'single node: the manager runs the server'
    return { constraints: [...notLoad, ...user], maxReplicasPerNode: 0, chosen: chosen.map(nodeRef), skipped, rule }
  }
  if (config.nodes === undefined && user.some(c => CHOOSES_NODES.test(c))) {
    return {
      constraints: [...notLoad, ...user],
      maxReplicasPerNode: 0,
      chosen: null,
      skipped,
      rule: `--constraint chooses the nodes: ${user.join(', ')}${kept}`
    }
  }
  let chosen = ready.slice(0, config.nodes ?? ready.length)
  let maxReplicasPerNode = 0
  let rule = `${placement} over ${plural(chosen.length, 'worker')} (${names(chosen)}); the manager runs the RC and the load balancer`
  if (placement === 'pack' && strategyOf(config.strategy).replicated && chosen.length > 1) {
    const cpus = Math.min(...chosen.map(n => (n.Description?.Resources?.NanoCPUs ?? 0) / 1e9))
    const cap = config.cpusPerInstance ? Math.max(1, Math.floor(cpus / config.cpusPerInstance + 1e-9)) : config.instances
    const used = Math.min(chosen.length, Math.ceil(config.instances / cap))
    chosen = chosen.slice(0, used)
    maxReplicasPerNode = used > 1 ? cap : 0
    rule = `pack: at most ${plural(cap, 'replica')} per node (${cpus} CPUs / ${config.cpusPerInstance ?? 'no quota'}), ` +
      `on ${plural(used, 'worker')} (${names(chosen)})`
  }
  const excluded = ready.filter(n => !chosen.includes(n)).map(n => `node.id != ${n.ID}`)
  return { constraints: ['node.role == worker', ...notLoad, ...excluded, ...user], maxReplicasPerNode, chosen: chosen.map(nodeRef), skipped, rule: rule + kept }
}

/** @typedef {{ chosen: ReturnType<typeof nodeRef>[], constraints: string[], rule: string }} LoadPlacementPlan */

/**
 * Where a run's load generators go: `loadNodes` nodes, never one in serverNodeIds, ordered as planPlacement orders
 * (by label, else hostname), with the Swarm constraints that put a service on exactly those nodes (Swarm has no
 * `node.id in (...)`, so the other candidates are excluded by id).
 * - labelled (default): only ready, active nodes labelled io.nodescale.role=load. Constraints:
 *   `node.labels.io.nodescale.role == load` and `node.id != X` for every other labelled node (spare, down, drained).
 * - free: the labelled nodes first, then any other ready, active node that runs no server task: workers, then the
 *   manager last. Constraints: `node.id != X` for every node not chosen.
 * Too few nodes is a bad --load-nodes (exit 2) naming those that qualify and the fix.
 * @param {any[]} nodes docker.listNodes()
 * @param {{ loadNodes?: number, loadPlacement?: string }} config
 * @param {Iterable<string>} [serverNodeIds] the nodes the server runs on (its plan's chosen ids, or its tasks' nodes)
 * @returns {LoadPlacementPlan}
 */
export function planLoadPlacement (nodes, { loadNodes = 0, loadPlacement = 'labelled' }, serverNodeIds = []) {
  if (loadPlacement !== 'labelled' && loadPlacement !== 'free') {
    throw badFlag('--load-placement', `"${loadPlacement}" is not allowed; one of: labelled, free`, { key: 'loadPlacement' })
  }
  if (!loadNodes) return { chosen: [], constraints: [], rule: 'no load nodes: the load runs on the executor\'s machine' }
  const server = new Set(serverNodeIds)
  const open = (n) => usable(n) && !server.has(n.ID)
  const labelled = nodes.filter(n => isLoadNode(n) && open(n)).sort(byName)
  const rest = nodes.filter(n => !isLoadNode(n) && open(n))
  const others = [...rest.filter(n => n.Spec?.Role !== 'manager').sort(byName), ...rest.filter(n => n.Spec?.Role === 'manager').sort(byName)]
  const free = loadPlacement === 'free'
  const candidates = free ? [...labelled, ...others] : labelled
  if (candidates.length < loadNodes) throw tooFewLoadNodes(nodes, { loadNodes, free, candidates, server, freeCount: labelled.length + others.length })
  const chosen = candidates.slice(0, loadNodes)
  const excluded = (list) => list.filter(n => !chosen.includes(n)).sort(byName).map(n => `node.id != ${n.ID}`)
  if (!free) {
    return {
      chosen: chosen.map(nodeRef),
      constraints: [IS_LOAD, ...excluded(nodes.filter(isLoadNode))],
      rule: `load generators on ${plural(chosen.length, 'node')} labelled ${ROLE_LABEL}=${LOAD_ROLE} (${names(chosen)})`
    }
  }
  const tagged = chosen.map(n => `${nameOf(n)}${isLoadNode(n) ? ' [load]' : n.Spec?.Role === 'manager' ? ' [manager]' : ''}`)
  return {
    chosen: chosen.map(nodeRef),
    constraints: excluded(nodes),
    rule: `free: load generators on ${plural(chosen.length, 'node')} that run no server task (${tagged.join(', ')})`
  }
}

/** The --load-nodes error: how many were asked, which nodes qualify, why others do not, and how to get more. */
function tooFewLoadNodes (nodes, { loadNodes, free, candidates, server, freeCount }) {
  const what = free ? 'ready, active and running no server task' : `ready, active, labelled ${ROLE_LABEL}=${LOAD_ROLE} and running no server task`
  const labelled = nodes.filter(isLoadNode).sort(byName)
  const down = labelled.filter(n => !usable(n))
  const busy = labelled.filter(n => usable(n) && server.has(n.ID))
  const why = [
    down.length ? `; labelled but not usable: ${down.map(notUsable).join(', ')}` : '',
    busy.length ? `; labelled but running the server: ${names(busy)}` : ''
  ].join('')
  const serverWorkers = nodes.filter(n => n.Spec?.Role === 'worker' && !isLoadNode(n)).length
  const up = `on one machine: executor cluster up --nodes ${1 + serverWorkers + loadNodes} --load-nodes ${loadNodes}`
  const fix = free
    ? `lower --load-nodes, or add nodes (${up}; on a real swarm: join workers, docker swarm join-token worker)`
    : `lower --load-nodes, or label more nodes (${up}; on a real swarm: ${LABEL_FIX}), ` +
      `or --load-placement free (${plural(freeCount, 'node')} ${freeCount === 1 ? 'runs' : 'run'} no server task)`
  return badFlag('--load-nodes', `${loadNodes} load node${loadNodes === 1 ? '' : 's'} asked, ` +
    `and ${candidates.length} node${candidates.length === 1 ? ' qualifies' : 's qualify'}${candidates.length ? ` (${names(candidates)})` : ''}: ` +
    `${what}${why}; ${fix}`, { key: 'loadNodes' })
}
