// Removes a stack (services, then configs and networks) and waits until its tasks, containers and networks are gone;
// finds leftovers of earlier runs by label.
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { fail } from '../../lib/messages.js'
import { dockerError, dockerMessage } from './engine.js'
import { NAMESPACE_LABEL, RUN_LABEL, OWNER_LABEL } from './stack-render.js'
import { nodeRef } from './placement.js'

const gone = (err) => err?.statusCode === 404

/** What of a stack is still there, through the API. */
export async function stackResources (docker, stack) {
  const filters = { label: [`${NAMESPACE_LABEL}=${stack}`] }
  const [services, containers, networks, configs] = await Promise.all([
    docker.listServices({ filters }),
    docker.listContainers({ all: true, filters }),
    docker.listNetworks({ filters }),
    docker.listConfigs({ filters })
  ])
  return { services, containers, networks, configs }
}

/**
 * Removes every service, config and network of a stack and waits until its tasks, containers and networks are gone.
 * With `force` (the default) the containers this engine runs are removed at once after their services: Swarm would
 * first wait 2 s for gossip to converge and stop them gracefully, which a finished benchmark does not need. Tasks on a
 * node that is not ready (down, disconnected), or in `lostNodes`, are not waited for: that node never reports them shut
 * down while it is gone, and its engine stops them when it comes back and finds their service removed.
 * @param {import('dockerode')} docker
 * @param {string} stack
 * @param {{ log?: (line: string) => void, timeoutMs?: number, force?: boolean, lostNodes?: Iterable<string> }} [opts]
 * @returns {Promise<{ services: number, networks: number, configs: number, ms: number }>}
 */
export async function removeStack (docker, stack, opts = {}) {
  try {
    const removed = await removeStackOnce(docker, stack, opts)
    unremoved.delete(stack)
    return removed
  } catch (err) {
    unremoved.add(stack)
    throw err
  }
}

/**
 * Stacks this process deployed and failed to remove (the daemon was down, a removal timed out): removeLeftovers takes
 * them too, although their owner, this process, still runs.
 * @type {Set<string>}
 */
const unremoved = new Set()

/**
 * @param {import('dockerode')} docker
 * @param {string} stack
 * @param {{ log?: (line: string) => void, timeoutMs?: number, force?: boolean, lostNodes?: Iterable<string> }} [opts]
 */
async function removeStackOnce (docker, stack, { log = () => {}, timeoutMs = 60_000, force = true, lostNodes = [] } = {}) {
  const started = Date.now()
  const deadline = started + timeoutMs
  let first
  try { first = await stackResources(docker, stack) } catch (err) { throw dockerError(err, `listing stack ${stack}`) }
  const counts = { services: first.services.length, networks: first.networks.length, configs: first.configs.length }
  if (!counts.services && !first.containers.length && !counts.networks && !counts.configs) return { ...counts, ms: Date.now() - started }
  log(`swarm: removing stack ${stack} (${counts.services} services, ${counts.networks} networks, ${counts.configs} configs)`)
  await Promise.all(first.services.map(s => docker.getService(s.ID).remove().catch(err => {
    if (!gone(err)) throw dockerError(err, `removing service ${s.Spec?.Name}`)
  })))
  if (force) await Promise.all(first.containers.map(c => docker.getContainer(c.Id).remove({ force: true }).catch(() => {})))
  const serviceIds = new Set(first.services.map(s => s.ID))
  let left = first
  let tasks = []
  const skipped = new Set()
  // which nodes are gone, read again at most once a second: the loop polls every 100 ms, node states change slower
  let goneNodes = null
  let goneAt = 0
  for (;;) {
    try {
      left = await stackResources(docker, stack)
      // A removed service's tasks stay listed until their node reports them shut down (after Swarm's 2 s gossip delay).
      tasks = serviceIds.size ? (await docker.listTasks()).filter(t => serviceIds.has(t.ServiceID)) : []
      if (tasks.length) {
        if (!goneNodes || Date.now() - goneAt >= 1000) {
          goneNodes = await nodesGone(docker, lostNodes)
          goneAt = Date.now()
        }
        const away = goneNodes
        for (const t of tasks) if (away.has(t.NodeID)) skipped.add(`${t.ID.slice(0, 12)} on ${away.get(t.NodeID)}`)
        tasks = tasks.filter(t => !away.has(t.NodeID))
      }
    } catch (err) {
      throw dockerError(err, `listing stack ${stack}`)
    }
    // Configs and networks can go once no task uses them; a network with endpoints refuses, and is retried.
    if (!left.containers.length) {
      await Promise.all([
        ...left.configs.map(c => docker.getConfig(c.ID).remove().catch(() => {})),
        ...left.networks.map(n => docker.getNetwork(n.Id).remove().catch(() => {}))
      ])
    }
    if (!left.services.length && !left.containers.length && !left.networks.length && !left.configs.length && !tasks.length) break
    if (Date.now() > deadline) {
      const what = [
        ...left.services.map(s => `service ${s.Spec?.Name}`),
        ...tasks.map(t => `task ${t.ID} (${t.Status?.State})`),
        ...left.containers.map(c => `container ${c.Id.slice(0, 12)} (${c.State})`),
        ...left.networks.map(n => `network ${n.Name}`),
        ...left.configs.map(c => `config ${c.Spec?.Name}`)
      ]
      throw fail('STACK_NOT_GONE', { stack, timeoutMs, left: what })
    }
    await sleep(100)
  }
  const ms = Date.now() - started
  if (skipped.size) {
    log(`swarm: not waiting for ${skipped.size} task${skipped.size === 1 ? '' : 's'} on nodes that are gone (${[...skipped].join(', ')}); ` +
      'their engines stop them when they are back')
  }
  log(`swarm: stack ${stack} removed in ${ms} ms`)
  return { ...counts, ms }
}

/**
 * Nodes whose tasks cannot report: not ready in the manager's list, or named in `lost` (lost by the run's watch before
 * the manager noticed). Id -> a name for the log.
 * @param {import('dockerode')} docker
 * @param {Iterable<string>} lost
 * @returns {Promise<Map<string, string>>}
 */
async function nodesGone (docker, lost) {
  const lostIds = new Set(lost)
  const out = new Map()
  for (const n of await docker.listNodes()) {
    const name = nodeRef(n).label ?? nodeRef(n).hostname
    if (lostIds.has(n.ID) || n.Status?.State !== 'ready') out.set(n.ID, `${name} (${lostIds.has(n.ID) ? 'lost during the run' : n.Status?.State})`)
  }
  return out
}

/** True when the owner label names a process of this host that still runs (pid reuse aside). */
export function ownerAlive (owner) {
  const m = /^(.*):(\d+)$/.exec(owner ?? '')
  if (!m) return false
  if (m[1] !== hostname()) return true // another machine's run: not ours to judge
  try {
    process.kill(Number(m[2]), 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

/**
 * Removes stacks (services, containers, networks, configs) that an earlier run left behind: Swarm state survives daemon
 * restarts. A stack whose owner process still runs on this host is left alone unless `all`.
 * @param {import('dockerode')} docker
 * @param {{ label?: string, all?: boolean, log?: (line: string) => void, timeoutMs?: number }} [opts] label is `key` or
 *   `key=value`
 * @returns {Promise<string[]>} the stacks removed
 */
export async function removeLeftovers (docker, { label = RUN_LABEL, all = false, log = () => {}, timeoutMs } = {}) {
  const filters = { label: [label] }
  let found
  try {
    // secrets too: a run killed after its services went and before its token secret did leaves only that
    const [services, networks, configs, secrets, containers] = await Promise.all([
      docker.listServices({ filters }), docker.listNetworks({ filters }), docker.listConfigs({ filters }), docker.listSecrets({ filters }),
      docker.listContainers({ all: true, filters })
    ])
    found = [
      ...services.map(s => s.Spec?.Labels ?? {}),
      ...networks.map(n => n.Labels ?? {}),
      ...configs.map(c => c.Spec?.Labels ?? {}),
      ...secrets.map(c => c.Spec?.Labels ?? {}),
      ...containers.map(c => c.Labels ?? {})
    ]
  } catch (err) {
    throw dockerError(err, 'looking for leftovers of earlier runs')
  }
  const stacks = new Map()
  for (const labels of found) {
    const stack = labels[NAMESPACE_LABEL]
    if (stack && !stacks.has(stack)) stacks.set(stack, labels[OWNER_LABEL])
  }
  const removed = []
  const errors = []
  await Promise.all([...stacks].map(async ([stack, owner]) => {
    if (!all && ownerAlive(owner) && !unremoved.has(stack)) return
    log(`swarm: removing leftover stack ${stack} of an earlier run (owner ${owner ?? 'unknown'})`)
    try {
      await removeStack(docker, stack, { log, timeoutMs })
      await removeSecrets(docker, stack)
      removed.push(stack)
    } catch (err) {
      errors.push(`${stack}: ${dockerMessage(err)}`)
    }
  }))
  if (errors.length) throw fail('LEFTOVERS_NOT_REMOVED', { errors })
  return removed.sort()
}

/**
 * Removes the Swarm secrets a stack created (labelled with its namespace), after its services are gone.
 * @param {import('dockerode')} docker
 * @param {string} stack
 */
export async function removeSecrets (docker, stack) {
  let secrets
  try { secrets = await docker.listSecrets({ filters: { label: [`${NAMESPACE_LABEL}=${stack}`] } }) } catch (err) { throw dockerError(err, 'listing secrets') }
  await Promise.all(secrets.map(s => docker.getSecret(s.ID).remove().catch(err => {
    if (!gone(err)) throw dockerError(err, `removing secret ${s.Spec?.Name}`)
  })))
}
