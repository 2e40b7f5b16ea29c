// Deploys a rendered stack through the Docker API (networks, configs, services, as `docker stack deploy` makes them)
// and waits until every instance answers; removes it again on any failure.
import { fail } from '../../lib/messages.js'
import { dockerError } from './engine.js'
import { stackSpecs } from './stack-spec.js'
import { waitReady } from './stack-wait.js'
import { removeStack } from './stack-remove.js'
import { createServiceWithAuth } from './registry-auth.js'

export { removeStack, removeLeftovers, stackResources } from './stack-remove.js'
export { ingressWorks } from './ingress-probe.js'

/** True when the client talks to this machine's engine (a unix socket), so its node is reached on this machine. */
const isLocalEngine = (docker) => Boolean(/** @type {any} */ (docker).modem?.socketPath)

/**
 * The address this machine reaches a port published on its own node by: the gateway of docker_gwbridge, the bridge
 * that host-mode ports are published on, so that the kernel's NAT carries each connection to the task. On loopback
 * the engine's userland proxy (docker-proxy) relays every connection instead, at about 0.2 cores for 4k req/s here,
 * CPU taken from the host the server is measured on. Loopback where the bridge has no IPv4 gateway.
 * @param {import('dockerode')} docker
 * @returns {Promise<string>}
 */
export async function localAddress (docker) {
  try {
    const net = await docker.getNetwork('docker_gwbridge').inspect()
    return net.IPAM?.Config?.find(c => c.Gateway && !c.Gateway.includes(':'))?.Gateway ?? '127.0.0.1'
  } catch {
    return '127.0.0.1'
  }
}

/**
 * Refuses, before anything is created, a reservation no node could ever hold (Swarm would leave it pending forever).
 */
function checkCapacity (nodes, services) {
  const ready = nodes.filter(n => n.Status?.State === 'ready' && n.Spec?.Availability === 'active')
  const maxCpu = Math.max(0, ...ready.map(n => n.Description?.Resources?.NanoCPUs ?? 0))
  const maxMem = Math.max(0, ...ready.map(n => n.Description?.Resources?.MemoryBytes ?? 0))
  for (const { spec } of services) {
    const r = spec.TaskTemplate.Resources?.Reservations
    if (r?.NanoCPUs > maxCpu) {
      throw fail('TASK_CPUS_TOO_MANY', { service: spec.Name, cpus: r.NanoCPUs / 1e9, maxCpus: maxCpu / 1e9 })
    }
    if (r?.MemoryBytes > maxMem) {
      throw fail('TASK_MEMORY_TOO_LARGE', { service: spec.Name, bytes: r.MemoryBytes, maxBytes: maxMem })
    }
  }
}

/**
 * The tasks of a stack as a deployment lists them: task, service name, node (id and hostname), container, state, slot.
 * @param {any[]} tasks docker.listTasks()
 * @param {{ id: string, name: string }[]} services the stack's services
 * @param {any[]} nodes docker.listNodes()
 * @returns {{ id: string, service: string, node: string, nodeName: string, containerId: string | null, state: string,
 *   slot: number | null }[]}
 */
export function taskRows (tasks, services, nodes) {
  return tasks.map(t => ({
    id: t.ID,
    service: services.find(s => s.id === t.ServiceID)?.name ?? t.ServiceID,
    node: t.NodeID,
    nodeName: nodes.find(n => n.ID === t.NodeID)?.Description?.Hostname ?? '',
    containerId: t.Status?.ContainerStatus?.ContainerID ?? null,
    state: t.Status?.State,
    slot: t.Slot ?? null
  }))
}

/**
 * The swarm as a deploy sees it: its nodes, this engine's node id and, for a local engine, the address of this
 * machine the load reaches a task published here by.
 * @param {import('dockerode')} docker
 */
async function swarmView (docker) {
  const here = isLocalEngine(docker) ? await localAddress(docker) : null
  try {
    return { here, nodes: await docker.listNodes(), localNode: (await docker.info()).Swarm?.NodeID }
  } catch (err) {
    throw dockerError(err, 'reading the swarm')
  }
}

/**
 * The stack's networks, configs and services, created in that order (a service names its configs by the ids they
 * got); resolves with the services created.
 */
async function createStackObjects (docker, doc, pre, signal) {
  for (const n of pre.networks) {
    const { key, ...spec } = n
    try { await docker.createNetwork(spec) } catch (err) { throw dockerError(err, `creating network ${spec.Name}`) }
  }
  /** @type {Record<string, string>} */
  const configIds = {}
  for (const c of pre.configs) {
    const { key, ...spec } = c
    try { configIds[key] = (await docker.createConfig(spec)).id } catch (err) { throw dockerError(err, `creating config ${spec.Name}`) }
  }
  const services = []
  for (const { key, spec } of stackSpecs(doc, { configIds }).services) {
    signal?.throwIfAborted()
    let created
    try { created = await createServiceWithAuth(docker, spec) } catch (err) { throw dockerError(err, `creating service ${spec.Name}`) }
    services.push({ id: created.id, key, name: spec.Name, replicas: spec.Mode.Replicated?.Replicas ?? 1, ports: spec.EndpointSpec.Ports })
  }
  return services
}

/**
 * Where the entry service answers, once published (null before): host mode through the node its running task is on
 * (an engine may bind IPv4 and IPv6 to different random ports: the IPv4 one, which `here` reaches), ingress through
 * the engine's address.
 * @param {import('dockerode')} docker
 * @param {{ id: string, name: string, ports: any[] }} entry @param {any} meta
 * @param {{ here: string | null, nodes: any[], localNode: string | undefined }} view
 * @returns {() => Promise<string | null>}
 */
function entryUrl (docker, entry, meta, { here, nodes, localNode }) {
  const hostOf = (nodeId) => {
    if (here && nodeId === localNode) return here
    const addr = nodes.find(n => n.ID === nodeId)?.Status?.Addr
    return addr && addr !== '0.0.0.0' ? addr : /** @type {any} */ (docker).modem?.host ?? '127.0.0.1'
  }
  return async () => {
    const port = entry.ports.find(p => p.TargetPort === meta.targetPort) ?? entry.ports[0]
    if (!port) return null
    if (port.PublishMode === 'host') {
      const tasks = await docker.listTasks({ filters: { service: [entry.name], 'desired-state': ['running'] } })
      const task = tasks.find(t => t.Status?.State === 'running')
      const candidates = (task?.Status?.PortStatus?.Ports ?? []).filter(p => p.TargetPort === port.TargetPort).map(p => p.PublishedPort)
      let published = candidates[0]
      if (candidates.length > 1 && isLocalEngine(docker) && task.NodeID === localNode) {
        const bindings = (await docker.getContainer(task.Status.ContainerStatus.ContainerID).inspect())
          .NetworkSettings?.Ports?.[`${port.TargetPort}/tcp`] ?? []
        published = Number(bindings.find(b => !b.HostIp.includes(':'))?.HostPort) || published
      }
      return published ? `http://${hostOf(task.NodeID)}:${published}` : null
    }
    const info = await docker.getService(entry.id).inspect()
    const published = info.Endpoint?.Ports?.find(p => p.TargetPort === port.TargetPort)?.PublishedPort
    const host = isLocalEngine(docker) ? '127.0.0.1' : /** @type {any} */ (docker).modem?.host
    return published ? `http://${host}:${published}` : null
  }
}

/**
 * Deploys a stack rendered by renderStack and resolves when every task runs and every instance answers /healthz (or
 * the user's server's health path, x-nodescale.health) on the published port. On failure (a task error, a timeout,
 * an abort) the stack is removed before the error is thrown.
 * @param {import('dockerode')} docker
 * @param {Record<string, any>} doc rendered Compose object
 * @param {{ log?: (line: string) => void, signal?: AbortSignal, readyTimeoutMs?: number, pendingGraceMs?: number,
 *   removeTimeoutMs?: number }} [opts]
 * @returns {Promise<{ stack: string, url: string, port: number, services: { id: string, name: string, replicas: number
 *   }[], tasks: { id: string, service: string, node: string, nodeName: string, containerId: string | null, state:
 *   string, slot: number | null }[], image: string, instances: string[], readiness: 'instances' | 'health-only',
 *   readyMs: number }>} instances: those that named themselves (none for 'health-only': a user's image run as it is)
 */
export async function deployStack (docker, doc, { log = () => {}, signal, readyTimeoutMs = 60_000, pendingGraceMs, removeTimeoutMs } = {}) {
  const started = Date.now()
  const meta = doc['x-nodescale']
  signal?.throwIfAborted()
  const pre = stackSpecs(doc, { configIds: Object.fromEntries(Object.keys(doc.configs ?? {}).map(k => [k, 'pending'])) })
  const { stack } = pre
  const view = await swarmView(docker)
  checkCapacity(view.nodes, pre.services)
  try {
    log(`swarm: deploying stack ${stack} (${meta.strategy}, ${meta.instances} instance${meta.instances === 1 ? '' : 's'}, lb ${meta.lb})`)
    const services = await createStackObjects(docker, doc, pre, signal)
    const entry = services.find(s => s.key === meta.entry) ?? services[0]
    const ready = await waitReady(docker, {
      services,
      url: entryUrl(docker, entry, meta, view),
      expect: meta.expect,
      timeoutMs: readyTimeoutMs,
      pendingGraceMs,
      signal,
      log,
      health: meta.health,
      any2xx: meta.any2xx,
      readiness: meta.readiness
    })
    return {
      stack,
      url: ready.url,
      port: Number(new URL(ready.url).port),
      services: services.map(({ id, name, replicas }) => ({ id, name, replicas })),
      tasks: taskRows(ready.tasks, services, view.nodes),
      image: doc.services.app.image,
      instances: ready.instances,
      readiness: meta.readiness ?? 'instances',
      readyMs: Date.now() - started
    }
  } catch (err) {
    await removeStack(docker, stack, { log, timeoutMs: removeTimeoutMs }).catch(e => log(`swarm: cleanup of ${stack} after a failed deploy: ${e.message}`))
    if (signal?.aborted) throw fail('DEPLOY_INTERRUPTED', { stack }, { cause: err })
    throw err
  }
}
