// `executor cluster up|down|status` as a library: this engine as the manager plus K-1 worker engines in network
// namespaces, joined over a local LAN, labelled io.nodescale.node=<name>, the last L of them io.nodescale.role=load
// (kept for the load generators); down removes exactly that and restores a loopback swarm.
import { setTimeout as sleep } from 'node:timers/promises'
import { existsSync, readdirSync, rmdirSync } from 'node:fs'
import { badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { connectDocker, ensureSwarm, dockerError } from '../docker/engine.js'
import { NAMESPACE_LABEL, OWNER_LABEL } from '../docker/stack-render.js'
import { CONTROL_PLANE_STACK } from '../docker/control-plane.js'
import { REGISTRY_STACK } from '../docker/image-registry.js'
import { ownerAlive } from '../docker/stack-remove.js'
import { NODE_LABEL, ROLE_LABEL, LOAD_ROLE, isLoadNode } from '../docker/placement.js'
import { checkHost } from './host.js'
import { ensureLan, removeLan, ensureWorkerNet, removeWorkerNet, listNetns, workerName, workerAddr, workerIndex, MANAGER_ADDR, LAN_NS } from './network.js'
import { startEngine, stopEngine, engineClient, engineAnswers, enginePaths, removeEngineFiles, DATA_ROOT, RUN_ROOT } from './worker-engine.js'
import { readState, writeState, clearState } from './state.js'
import { trustRegistryOnManager } from './manager-trust.js'

export const MANAGER_LABEL_VALUE = 'm0'
/** At most this many nodes: every local node shares this machine's cores and memory. */
export const MAX_LOCAL_NODES = 8
const LOOPBACK = /^127\.|^::1$/

/**
 * Sets or removes labels of a swarm node in one update (none when every label is already so); the others are kept.
 * @param {import('dockerode')} docker
 * @param {string} id
 * @param {Record<string, string | null>} changes label key to its value; null removes the label
 */
export async function setNodeLabels (docker, id, changes) {
  const node = docker.getNode(id)
  let info
  try { info = await node.inspect() } catch (err) { throw dockerError(err, `reading node ${id}`) }
  const had = info.Spec?.Labels ?? {}
  const labels = { ...had }
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete labels[key]
    else labels[key] = value
  }
  if (Object.keys(changes).every(key => had[key] === labels[key])) return
  try {
    await node.update({ _query: { version: info.Version.Index }, _body: { ...info.Spec, Labels: labels } })
  } catch (err) {
    throw dockerError(err, `labelling node ${id}`)
  }
}

/**
 * Stacks that re-advertising the manager could disturb: any not made by nodescale, and nodescale runs whose executor
 * still runs.
 * @param {import('dockerode')} docker
 */
async function busyStacks (docker) {
  let services
  try { services = await docker.listServices() } catch (err) { throw dockerError(err, 'listing services') }
  const busy = new Set()
  for (const s of services) {
    const labels = s.Spec?.Labels ?? {}
    const stack = labels[NAMESPACE_LABEL]
    if (stack === CONTROL_PLANE_STACK || stack === REGISTRY_STACK) continue
    if (stack?.startsWith('ns-') && !ownerAlive(labels[OWNER_LABEL])) continue
    busy.add(stack ?? `service ${s.Spec?.Name}`)
  }
  return [...busy].sort()
}

/**
 * Makes the manager advertise an address the workers reach: a swarm advertising loopback is re-initialised, unless
 * stacks other than nodescale's control plane and leftovers run (then only with force).
 * @returns {Promise<string | null>} the address advertised before, when it was changed
 */
async function advertiseOnLan (docker, { force, log }) {
  const { initialised } = await ensureSwarm(docker, { log, advertiseAddr: MANAGER_ADDR })
  if (initialised) return '127.0.0.1'
  const info = await docker.info()
  const addr = info.Swarm?.NodeAddr ?? ''
  if (!LOOPBACK.test(addr)) return null
  const busy = await busyStacks(docker)
  if (busy.length && !force) {
    throw fail('SWARM_ADDRESS_UNREACHABLE', { address: addr, stacks: busy })
  }
  await reinitialise(docker, MANAGER_ADDR, { log, why: `the swarm advertises ${addr}, which workers cannot reach` })
  return addr
}

/**
 * Re-initialises this manager's swarm with another advertise address: leave, then init. (--force-new-cluster is not
 * enough: it keeps the raft member address, and workers then look for the manager's gossip at the old, unreachable
 * address.) The swarm's services, secrets and configs go with the old swarm; nodescale redeploys its control plane on
 * the next run.
 */
async function reinitialise (docker, addr, { log, why }) {
  log(`cluster: ${why}; re-initialising the swarm to advertise ${addr} (swarm leave + init: the old swarm's services go)`)
  try {
    await docker.swarmLeave({ force: true })
    await docker.swarmInit({ ListenAddr: '0.0.0.0:2377', AdvertiseAddr: addr })
  } catch (err) {
    throw dockerError(err, `re-initialising the swarm with advertise address ${addr}`)
  }
}

/** Swarm nodes of the manager's list, by id. */
async function nodesById (docker) {
  try { return new Map((await docker.listNodes()).map(n => [n.ID, n])) } catch (err) { throw dockerError(err, 'listing swarm nodes') }
}

/**
 * Worker i: namespace, engine, joined to the swarm as a worker, Ready, labelled with its name, and with
 * io.nodescale.role=load when `load` (the label removed when not). Repairs what an earlier attempt left half done.
 * @returns {Promise<import('./state.js').WorkerEntry>}
 */
async function ensureWorker (docker, i, { token, load, log, timeoutMs = 60_000 }) {
  const name = workerName(i)
  await ensureWorkerNet(i)
  await startEngine(i, { log })
  const worker = engineClient(i)
  let info = await worker.info()
  const known = await nodesById(docker)
  const state = info.Swarm?.LocalNodeState
  if (state !== 'inactive' && !(state === 'active' && known.has(info.Swarm.NodeID))) {
    log(`cluster: ${name} is in swarm state "${state}" of another swarm or a removed node; leaving it`)
    await worker.swarmLeave({ force: true }).catch(() => {})
    info = await worker.info()
  }
  if (info.Swarm?.LocalNodeState === 'inactive') {
    try {
      await worker.swarmJoin({ RemoteAddrs: [`${MANAGER_ADDR}:2377`], JoinToken: token, ListenAddr: '0.0.0.0:2377', AdvertiseAddr: workerAddr(i) })
    } catch (err) {
      throw dockerError(err, `joining ${name} to the swarm at ${MANAGER_ADDR}:2377`)
    }
    info = await worker.info()
  }
  const nodeId = info.Swarm?.NodeID
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const node = (await nodesById(docker)).get(nodeId)
    if (node?.Status?.State === 'ready') break
    if (Date.now() > deadline) {
      throw fail('NODE_NOT_READY', { name, node: nodeId, timeoutMs, state: node?.Status?.State })
    }
    await sleep(200)
  }
  await setNodeLabels(docker, nodeId, { [NODE_LABEL]: name, [ROLE_LABEL]: load ? LOAD_ROLE : null })
  return { index: i, name, addr: workerAddr(i), nodeId, socket: enginePaths(i).socket }
}

/**
 * Removes worker i: leaves the swarm, stops its engine, removes its node entry, namespace, veth and files.
 * @param {import('dockerode') | null} docker the manager (null when no engine answers: the node entry cannot be removed
 *   then)
 */
async function removeWorker (docker, i, { nodeId = null, log }) {
  const name = workerName(i)
  if (await engineAnswers(i)) {
    const worker = engineClient(i)
    nodeId ??= (await worker.info().catch(() => null))?.Swarm?.NodeID || null
    await worker.swarmLeave({ force: true }).catch(() => {})
  }
  await stopEngine(i, { log })
  if (docker) {
    const nodes = await nodesById(docker)
    for (const n of nodes.values()) {
      if (n.ID === nodeId || (n.Description?.Hostname === name && n.Spec?.Role === 'worker')) {
        await docker.getNode(n.ID).remove({ force: true }).catch(err => { if (err.statusCode !== 404) throw dockerError(err, `removing node ${name}`) })
      }
    }
  }
  await removeWorkerNet(i)
  await removeEngineFiles(i, { log })
  log(`cluster: ${name} removed`)
}

/**
 * Removes the swarm's worker entries named like our local workers (nodescale-wN) that are not `keep`: a worker whose
 * engine lost its swarm state (a machine restarted mid-cluster, an engine's data removed) joins again as a new node,
 * and its old entry stays behind as a second node of the same name (Ready until the manager misses its heartbeats).
 * @param {import('dockerode')} docker the manager
 * @param {{ keep?: Set<string>, log: (line: string) => void }} opts
 */
async function removeStaleEntries (docker, { keep = new Set(), log }) {
  for (const n of (await nodesById(docker)).values()) {
    const name = n.Description?.Hostname ?? ''
    if (n.Spec?.Role !== 'worker' || workerIndex(name) === null || keep.has(n.ID)) continue
    log(`cluster: removing a stale node entry ${n.ID} (${name}, ${n.Status?.State ?? 'unknown'})`)
    await docker.getNode(n.ID).remove({ force: true }).catch(err => { if (err.statusCode !== 404) throw dockerError(err, `removing node ${name}`) })
  }
}

/** Indexes of workers this machine has in any form: state file, namespaces, engine files. */
async function workersPresent (state) {
  const found = new Set(state.workers.map(w => w.index))
  for (const ns of await listNetns()) if (workerIndex(ns) !== null) found.add(workerIndex(ns))
  for (const dir of [DATA_ROOT, RUN_ROOT]) {
    if (!existsSync(dir)) continue
    for (const f of readdirSync(dir)) {
      const idx = workerIndex(f.replace(/\.(sock|pid)$/, ''))
      if (idx !== null) found.add(idx)
    }
  }
  return [...found].sort((a, b) => a - b)
}

/**
 * Why `loadNodes` load nodes cannot be had of `nodes` nodes (a bad --load-nodes, exit 2), or null: at most nodes-1,
 * as the manager is never one.
 * @param {number} nodes
 * @param {number} loadNodes
 */
export function checkLoadNodes (nodes, loadNodes) {
  if (Number.isInteger(loadNodes) && loadNodes >= 0 && loadNodes <= nodes - 1) return null
  return badFlag('--load-nodes', `${loadNodes} is not allowed with --nodes ${nodes}; ` +
    `a whole number from 0 to ${Math.max(0, nodes - 1)} (the workers; the manager is never a load node)`, { key: 'loadNodes' })
}

/**
 * Makes this machine a swarm of `nodes` nodes: the manager (this engine) plus nodes-1 local workers, the last
 * `loadNodes` of them labelled io.nodescale.role=load and the others not; grows, shrinks or relabels an existing one.
 * @param {{ nodes: number, loadNodes?: number, force?: boolean, log?: (line: string) => void, connect?: typeof
 *   connectDocker }} opts
 */
export async function clusterUp ({ nodes, loadNodes = 0, force = false, log = () => {}, connect = connectDocker }) {
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_LOCAL_NODES) {
    throw badFlag('--nodes', `${nodes} is not allowed; a whole number from 1 to ${MAX_LOCAL_NODES} (the manager counts as one)`)
  }
  const badLoad = checkLoadNodes(nodes, loadNodes)
  if (badLoad) throw badLoad
  checkHost()
  const started = Date.now()
  const docker = await connect()
  if (nodes === 1) {
    log('cluster: --nodes 1 is the manager alone; removing the local workers')
    await clusterDown({ force, log, connect: async () => docker })
    return { ...(await clusterStatus({ connect: async () => docker })), ms: Date.now() - started }
  }
  const state = readState()
  await ensureLan()
  const before = await advertiseOnLan(docker, { force, log })
  if (before) state.advertiseBefore = before
  await trustRegistryOnManager(docker, { log })
  const info = await docker.info()
  state.managerNodeId = info.Swarm.NodeID
  writeState(state)
  await setNodeLabels(docker, info.Swarm.NodeID, { [NODE_LABEL]: MANAGER_LABEL_VALUE })

  const present = await workersPresent(state)
  for (const i of present.filter(i => i >= nodes).reverse()) {
    await removeWorker(docker, i, { nodeId: state.workers.find(w => w.index === i)?.nodeId, log })
    state.workers = state.workers.filter(w => w.index !== i)
    writeState(state)
  }
  let token
  try { token = (await docker.swarmInspect()).JoinTokens.Worker } catch (err) { throw dockerError(err, 'reading the worker join token') }
  const wanted = Array.from({ length: nodes - 1 }, (_, k) => k + 1)
  const results = await Promise.allSettled(wanted.map(i => ensureWorker(docker, i, { token, load: i >= nodes - loadNodes, log })))
  for (const r of results) if (r.status === 'fulfilled') state.workers = [...state.workers.filter(w => w.index !== r.value.index), r.value]
  writeState(state)
  const failed = results.find(r => r.status === 'rejected')
  if (!failed) await removeStaleEntries(docker, { keep: new Set(state.workers.map(w => w.nodeId)), log })
  if (failed) throw /** @type {PromiseRejectedResult} */ (failed).reason
  const loads = wanted.filter(i => i >= nodes - loadNodes).map(workerName)
  log(`cluster: ${nodes} nodes up in ${Date.now() - started} ms${loads.length ? `; load nodes (${ROLE_LABEL}=${LOAD_ROLE}): ${loads.join(', ')}` : ''}`)
  return { ...(await clusterStatus({ connect: async () => docker })), ms: Date.now() - started }
}

/**
 * Removes every local worker (engine, namespace, veth, node entry, files), the LAN and the manager's label, and makes
 * the manager advertise loopback again when up changed it (so single-node runs work as before).
 * @param {{ force?: boolean, log?: (line: string) => void, connect?: typeof connectDocker }} [opts]
 */
export async function clusterDown ({ force = false, log = () => {}, connect = connectDocker } = {}) {
  checkHost()
  const started = Date.now()
  const state = readState()
  let docker = null
  try { docker = await connect() } catch (err) { log(`cluster: ${err.message}; removing the local parts only`) }
  if (docker && !force && (await docker.info().catch(() => null))?.Swarm?.NodeAddr === MANAGER_ADDR) {
    const busy = await busyStacks(docker)
    if (busy.length) {
      throw fail('STACKS_STILL_RUNNING', { stacks: busy })
    }
  }
  const present = await workersPresent(state)
  for (const i of present.reverse()) await removeWorker(docker, i, { nodeId: state.workers.find(w => w.index === i)?.nodeId, log })
  if (docker) await removeStaleEntries(docker, { log }).catch(err => log(`cluster: ${err.message}`))
  if (docker) {
    const info = await docker.info().catch(() => null)
    if (info?.Swarm?.LocalNodeState === 'active') {
      await setNodeLabels(docker, info.Swarm.NodeID, { [NODE_LABEL]: null }).catch(err => log(`cluster: ${err.message}`))
      const addr = info.Swarm.NodeAddr
      if (addr === MANAGER_ADDR) {
        await reinitialise(docker, state.advertiseBefore ?? '127.0.0.1', { log, why: `${MANAGER_ADDR} goes away with the cluster's LAN` })
      }
    }
  }
  await removeLan()
  clearState()
  for (const dir of [DATA_ROOT, RUN_ROOT]) try { rmdirSync(dir) } catch {}
  log(`cluster: down in ${Date.now() - started} ms (${present.length} worker${present.length === 1 ? '' : 's'} removed)`)
  return { removed: present.map(workerName), ms: Date.now() - started }
}

/**
 * The swarm's nodes as `executor cluster status` shows them, with the local workers' engines.
 * @param {{ connect?: typeof connectDocker }} [opts]
 */
export async function clusterStatus ({ connect = connectDocker } = {}) {
  const docker = await connect()
  const info = await docker.info()
  const state = readState()
  const swarm = info.Swarm?.LocalNodeState === 'active'
  const list = swarm ? [...(await nodesById(docker)).values()] : []
  const nodes = list.map(n => {
    const local = state.workers.find(w => w.nodeId === n.ID)
    return {
      id: n.ID,
      hostname: n.Description?.Hostname ?? '',
      label: n.Spec?.Labels?.[NODE_LABEL] ?? null,
      role: n.Spec?.Role ?? '',
      loadNode: isLoadNode(n),
      state: n.Status?.State ?? '',
      availability: n.Spec?.Availability ?? '',
      addr: n.Status?.Addr ?? '',
      engine: local ? local.socket : (n.ID === info.Swarm.NodeID ? 'this engine' : null)
    }
  }).sort((a, b) => (a.role === b.role ? (a.label ?? a.hostname).localeCompare(b.label ?? b.hostname) : a.role === 'manager' ? -1 : 1))
  return {
    swarm: info.Swarm?.LocalNodeState ?? 'unknown',
    advertise: info.Swarm?.NodeAddr ?? null,
    lan: (await listNetns().catch(() => [])).includes(LAN_NS),
    localWorkers: state.workers.length,
    nodes
  }
}
