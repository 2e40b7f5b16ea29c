// The load service of a --load-nodes run: K generator agents (executor/load-agent/), one per chosen load node, on the
// node's own network, as a stack of their own that lives as long as the run (the server's may serve many runs).
import { setTimeout as sleep } from 'node:timers/promises'
import { NsError } from '../../lib/errors.js'
import { AGENT_TOKEN_FILE, LOAD_AGENT_PORT } from '../../lib/wire.js'
import { probe } from '../../lib/net.js'
import { dockerError } from './engine.js'
import { NAMESPACE_LABEL, RUN_LABEL, OWNER_LABEL, ownerId, stackNameFor } from './stack-render.js'
import { removeStack, removeSecrets } from './stack-remove.js'
import { taskLogs, describeTasks, nodeNames, missingImageHint } from './stack-wait.js'
import { createServiceWithAuth } from './registry-auth.js'

/**
 * Deploys the agents and resolves when each answers on its node's address.
 * @param {import('dockerode')} docker
 * @param {{ image: string, runId: string, count: number, constraints: string[], token: string, addrOf: (nodeId:
 *   string) => string, port?: number, log?: (line: string) => void, signal?: AbortSignal, timeoutMs?: number }} opts
 *   addrOf: the address the executor reaches a node at
 * @returns {Promise<{ stack: string, agents: { task: string, nodeId: string, url: string }[], remove: (opts?: {
 *   lostNodes?: Iterable<string> }) => Promise<any> }>}
 */
export async function deployLoadService (docker, { image, runId, count, constraints, token, addrOf, port = LOAD_AGENT_PORT, log = () => {}, signal, timeoutMs = 60_000 }) {
  const stack = `${stackNameFor(runId)}-load`
  const labels = { [NAMESPACE_LABEL]: stack, [RUN_LABEL]: String(runId), [OWNER_LABEL]: ownerId() }
  const name = `${stack}_agent`
  // the token as a Swarm secret: not in the service's environment, which docker service inspect shows
  const secretName = `${stack}_token_${Date.now().toString(36)}`
  let secret
  try { secret = await docker.createSecret({ Name: secretName, Labels: labels, Data: Buffer.from(token).toString('base64') }) } catch (err) { throw dockerError(err, `creating secret ${secretName}`) }
  const tokenFile = { File: { Name: AGENT_TOKEN_FILE.split('/').pop(), UID: '0', GID: '0', Mode: 0o400 }, SecretID: secret.id, SecretName: secretName }
  const spec = {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: { Image: image, Labels: labels, Env: [`NODESCALE_AGENT_TOKEN_FILE=${AGENT_TOKEN_FILE}`, `NODESCALE_AGENT_PORT=${port}`], Secrets: [tokenFile] },
      // the node's own network: no NAT between the generator and the wire, and the executor reaches it at the node
      Networks: [{ Target: 'host' }],
      Placement: { Constraints: constraints, MaxReplicas: 1 },
      // a generator that dies is not replaced: a new one would start mid-run with nothing to do
      RestartPolicy: { Condition: 'none' }
    },
    Mode: { Replicated: { Replicas: count } }
  }
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
      try { tasks = (await docker.listTasks({ filters: { service: [name] } })).filter(t => t.DesiredState === 'running') } catch (err) { throw dockerError(err, `listing the tasks of ${name}`) }
      const failed = tasks.filter(t => ['failed', 'rejected', 'shutdown'].includes(t.Status?.State))
      if (failed.length) {
        const out = await taskLogs(docker, failed[0])
        throw new NsError('NS_ERR_DEPLOY', `the load agents failed to start: ${describeTasks(failed, () => name, await nodeNames(docker))}${out ? `\n${out}` : ''}`, { hint: missingImageHint(failed) })
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
    throw new NsError('NS_ERR_DEPLOY', `the load agents did not get ready within ${timeoutMs} ms (${last})`, {
      hint: 'check the load nodes: docker node ls; a load node must run the nodescale/load image and reach the server'
    })
  } catch (err) {
    await remove().catch(() => {})
    throw err
  }
}
