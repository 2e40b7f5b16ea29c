// The load service of a --load-nodes run: K generator agents (executor/load-agent/), one per chosen load node, on the
// node's own network, as a stack of their own that lives as long as the run (the server's may serve many runs).
import { setTimeout as sleep } from 'node:timers/promises'
import { fail } from '../../lib/messages.js'
import { AGENT_TOKEN_FILE, LOAD_AGENT_PORT } from '../../lib/wire.js'
import { probe } from '../../lib/net.js'
import { dockerError } from './engine.js'
import { NAMESPACE_LABEL, RUN_LABEL, OWNER_LABEL, ownerId, stackNameFor } from './stack-render.js'
import { removeStack, removeSecrets } from './stack-remove.js'
import { taskLogs, describeTasks, nodeNames, missingImageHint } from './stack-wait.js'
import { createServiceWithAuth } from './registry-auth.js'

/**
 * The agents' user: a uid of their own (the RC's is 64100), neither root nor nobody (whose processes could read the
 * token through /proc/<pid>/root: docs/SECURITY.md).
 */
export const AGENT_UID = 64101
/** Where an agent writes (its jobs' plans, logs, samples; the JVM's temporary files): a tmpfs, the rest read-only. */
export const AGENT_DIR = '/tmp/nodescale-load'
/** The share of a load node's memory its agent may take: the rest stays the node's engine's, its RC's and kernel's. */
const MEMORY_SHARE = 0.75

/**
 * The agents' CPU and memory limits on these nodes: every core of the smallest node, no more (a quota below a node's
 * cores would throttle a generator in the middle of its requests and add that time to their latencies; a busy
 * generator is measured and flagged `generator-saturated` instead), and 3/4 of the smallest node's memory (the tmpfs
 * it writes to counts in it). A field is left out when no node says that resource.
 * @param {any[]} nodes the load nodes, as docker.listNodes() gives them
 * @returns {{ NanoCPUs?: number, MemoryBytes?: number }}
 */
export function agentLimits (nodes) {
  const least = (key) => {
    const values = nodes.map(n => Number(n?.Description?.Resources?.[key])).filter(v => Number.isFinite(v) && v > 0)
    return values.length ? Math.min(...values) : undefined
  }
  const cpus = least('NanoCPUs')
  const memory = least('MemoryBytes')
  return { ...(cpus ? { NanoCPUs: cpus } : {}), ...(memory ? { MemoryBytes: Math.floor(memory * MEMORY_SHARE) } : {}) }
}

/**
 * The load service's spec (a pure function: checked without a swarm): the agents as a user of their own, on a
 * read-only root filesystem with a tmpfs at /tmp (what autocannon, JMeter and the JVM write), with no capability
 * (the agent listens above 1024, and reads only its own children's /proc files), within `limits`; the token as a
 * Swarm secret's file only their user reads.
 * @param {{ name: string, labels: Record<string, string>, image: string, port: number, constraints: string[], count:
 *   number, secret: { id: string, name: string }, limits: { NanoCPUs?: number, MemoryBytes?: number } }} opts
 */
export function loadServiceSpec ({ name, labels, image, port, constraints, count, secret, limits }) {
  const user = String(AGENT_UID)
  return {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: image,
        Labels: labels,
        Env: [`NODESCALE_AGENT_TOKEN_FILE=${AGENT_TOKEN_FILE}`, `NODESCALE_AGENT_PORT=${port}`, `NODESCALE_AGENT_DIR=${AGENT_DIR}`, 'HOME=/tmp'],
        User: `${user}:${user}`,
        ReadOnly: true,
        CapabilityDrop: ['ALL'],
        Mounts: [{ Type: 'tmpfs', Target: '/tmp', TmpfsOptions: { Mode: 0o1777 } }],
        Secrets: [{ File: { Name: AGENT_TOKEN_FILE.split('/').pop(), UID: user, GID: user, Mode: 0o400 }, SecretID: secret.id, SecretName: secret.name }]
      },
      // the node's own network: no NAT between the generator and the wire, and the executor reaches it at the node
      Networks: [{ Target: 'host' }],
      Placement: { Constraints: constraints, MaxReplicas: 1 },
      Resources: { Limits: limits },
      // a generator that dies is not replaced: a new one would start mid-run with nothing to do
      RestartPolicy: { Condition: 'none' }
    },
    Mode: { Replicated: { Replicas: count } }
  }
}

/**
 * Deploys the agents and resolves when each answers on its node's address.
 * @param {import('dockerode')} docker
 * @param {{ image: string, runId: string, count: number, constraints: string[], token: string, addrOf: (nodeId:
 *   string) => string, nodes?: any[], port?: number, log?: (line: string) => void, signal?: AbortSignal, timeoutMs?:
 *   number }} opts addrOf: the address the executor reaches a node at; nodes: the load nodes (their resources set the
 *   limits, agentLimits)
 * @returns {Promise<{ stack: string, agents: { task: string, nodeId: string, url: string }[], remove: (opts?: {
 *   lostNodes?: Iterable<string> }) => Promise<any> }>}
 */
export async function deployLoadService (docker, {
  image,
  runId,
  count,
  constraints,
  token,
  addrOf,
  nodes = [],
  port = LOAD_AGENT_PORT,
  log = () => {},
  signal,
  timeoutMs = 60_000
}) {
  const stack = `${stackNameFor(runId)}-load`
  const labels = { [NAMESPACE_LABEL]: stack, [RUN_LABEL]: String(runId), [OWNER_LABEL]: ownerId() }
  const name = `${stack}_agent`
  // the token as a Swarm secret: not in the service's environment, which docker service inspect shows
  const secretName = `${stack}_token_${Date.now().toString(36)}`
  let secret
  try {
    secret = await docker.createSecret({ Name: secretName, Labels: labels, Data: Buffer.from(token).toString('base64') })
  } catch (err) {
    throw dockerError(err, `creating secret ${secretName}`)
  }
  const spec = loadServiceSpec({ name, labels, image, port, constraints, count, secret: { id: secret.id, name: secretName }, limits: agentLimits(nodes) })
  const remove = async ({ lostNodes = [] } = {}) => {
    const removed = await removeStack(docker, stack, { log, lostNodes })
    await removeSecrets(docker, stack)
    return removed
  }
  try {
    try { await createServiceWithAuth(docker, spec) } catch (err) { throw dockerError(err, `creating service ${name}`) }
    const started = Date.now()
    let last = 'no tasks yet'
    while (Date.now() - started < timeoutMs) {
      signal?.throwIfAborted()
      let tasks
      try {
        tasks = (await docker.listTasks({ filters: { service: [name] } })).filter(t => t.DesiredState === 'running')
      } catch (err) {
        throw dockerError(err, `listing the tasks of ${name}`)
      }
      const failed = tasks.filter(t => ['failed', 'rejected', 'shutdown'].includes(t.Status?.State))
      if (failed.length) {
        const out = await taskLogs(docker, failed[0])
        throw fail('SERVICE_NOT_STARTED', {
          service: 'load agents', tasks: describeTasks(failed, () => name, await nodeNames(docker)), output: out, imageHint: missingImageHint(failed)
        })
      }
      const running = tasks.filter(t => t.Status?.State === 'running')
      if (running.length === count) {
        const agents = running.map(t => ({ task: t.ID, nodeId: t.NodeID, url: `http://${addrOf(t.NodeID)}:${port}` }))
        const answers = await Promise.all(agents.map(a => probe(`${a.url}/healthz`, { timeoutMs: 1000 }).then(r => r.status === 200, () => false)))
        if (answers.every(Boolean)) {
          log(`swarm: ${count} load agent${count === 1 ? '' : 's'} answer after ${Date.now() - started} ms`)
          return { stack, agents, remove }
        }
        last = `${answers.filter(Boolean).length} of ${count} agents answer`
      } else {
        last = `${running.length} of ${count} agents running (${tasks.map(t => t.Status?.State).join(', ') || 'none placed'})`
      }
      await sleep(250)
    }
    throw fail('LOAD_AGENTS_NOT_READY', { timeoutMs, last })
  } catch (err) {
    await remove().catch(() => {})
    throw err
  }
}
