// The control plane's private image registry: the `registry` service of docker-compose.yml on the manager (stack
// nodescale-registry, started on first use), the run's images pushed to it through the manager's loopback (which every
// engine trusts over plain HTTP) and deployed by the manager's swarm address (which the workers reach and trust).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { load } from 'js-yaml'
import { ROOT } from '../../lib/paths.js'
import { NsError } from '../../lib/errors.js'
import { dockerError, swarmInfo } from './engine.js'
import { stackSpecs } from './stack-spec.js'
import { removeStack } from './stack-remove.js'
import { describeTasks, taskLogs, nodeNames } from './stack-wait.js'
import { probe } from '../../lib/net.js'
import { REGISTRY_PORT } from '../../lib/wire.js'
import { pushImages, splitTag } from './image-copy.js'

export const REGISTRY_STACK = 'nodescale-registry'
const SERVICE = `${REGISTRY_STACK}_registry`

/** Where the executor reaches the registry: loopback for the local engine, else the manager's address. */
const probeHost = (docker, managerAddr) => (/** @type {any} */ (docker).modem?.socketPath ? '127.0.0.1' : managerAddr)

/**
 * The registry service as it is: the image its running task runs, whether /v2/ answers, and its failed tasks (none
 * when there is no such service).
 * @param {import('dockerode')} docker
 * @param {string} url
 */
async function registryState (docker, url) {
  let tasks
  try {
    tasks = await docker.listTasks({ filters: { service: [SERVICE] } })
  } catch (err) {
    if (/** @type {any} */ (err)?.statusCode === 404) return { image: null, answers: false, failed: [] }
    throw dockerError(err, 'reading the image registry service')
  }
  const failed = tasks.filter(t => ['failed', 'rejected'].includes(t.Status?.State))
  const running = tasks.find(t => t.DesiredState === 'running' && t.Status?.State === 'running')
  if (!running) return { image: null, answers: false, failed }
  const answers = await probe(`${url}/v2/`, { timeoutMs: 1000 }).then(r => r.status === 200, () => false)
  return { image: running.Spec?.ContainerSpec?.Image?.replace(/@sha256:.*$/, '') ?? null, answers, failed }
}

/**
 * The control plane's registry, running this image: reused when it runs and answers, else (re)deployed and waited for.
 * @param {import('dockerode')} docker
 * @param {{ image: string, log?: (line: string) => void, timeoutMs?: number, file?: string }} opts image: a `registry`
 *   image
 * @returns {Promise<{ stack: string, service: string, pushHost: string, pullHost: string, reused: boolean }>}
 *   pushHost: where the manager's engine pushes; pullHost: the reference prefix every node pulls by
 */
export async function ensureRegistry (docker, { image, log = () => {}, timeoutMs = 60_000, file = join(ROOT, 'docker-compose.yml') }) {
  const { managerAddr } = await swarmInfo(docker)
  const addr = managerAddr ?? '127.0.0.1'
  const url = `http://${probeHost(docker, addr)}:${REGISTRY_PORT}`
  const out = { stack: REGISTRY_STACK, service: SERVICE, pushHost: `127.0.0.1:${REGISTRY_PORT}`, pullHost: `${addr}:${REGISTRY_PORT}` }
  const now = await registryState(docker, url)
  if (now.answers && now.image === image) {
    log(`swarm: image registry up at ${out.pullHost}, reused`)
    return { ...out, reused: true }
  }
  await removeStack(docker, REGISTRY_STACK, { log })
  const doc = /** @type {any} */ (load(readFileSync(file, 'utf8')))
  const started = Date.now()
  const { services } = stackSpecs({ ...doc, services: { registry: { ...doc.services.registry, image } } }, { stack: REGISTRY_STACK })
  try { await docker.createService(services[0].spec) } catch (err) { throw dockerError(err, `creating service ${SERVICE}`) }
  log(`swarm: image registry ${SERVICE} on the manager, port ${REGISTRY_PORT} (workers pull from ${out.pullHost})`)
  for (;;) {
    const { answers, failed } = await registryState(docker, url)
    if (answers) {
      log(`swarm: image registry answers after ${Date.now() - started} ms`)
      return { ...out, reused: false }
    }
    if (failed.length || Date.now() - started > timeoutMs) {
      const logs = failed.length ? await taskLogs(docker, failed[0]) : ''
      await removeStack(docker, REGISTRY_STACK, { log }).catch(() => {})
      throw new NsError('NS_ERR_DEPLOY', `the image registry did not start${failed.length ? `: ${describeTasks(failed, () => SERVICE, await nodeNames(docker))}` : ` within ${timeoutMs} ms`}${logs ? `\n${logs}` : ''}`, {
        hint: `is port ${REGISTRY_PORT} free on the manager? Or give --registry HOST:PORT (a registry of yours), or --registry none`
      })
    }
    await sleep(200)
  }
}

/**
 * Pushes images to the control plane's registry and tags them on the manager with the reference the nodes pull by, so
 * the manager's own tasks (the load balancer) run from its copy.
 * @param {import('dockerode')} docker
 * @param {{ pushHost: string, pullHost: string }} registry from ensureRegistry
 * @param {string[]} tags local tags
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<Record<string, string>>} local tag -> the reference to deploy by
 */
export async function pushToRegistry (docker, registry, tags, { log = () => {} } = {}) {
  await pushImages(docker, registry.pushHost, tags, { log })
  /** @type {Record<string, string>} */
  const refs = {}
  for (const tag of tags) {
    const { repo, version } = splitTag(tag)
    try {
      await docker.getImage(tag).tag({ repo: `${registry.pullHost}/${repo}`, tag: version })
    } catch (err) {
      throw dockerError(err, `tagging ${tag} as ${registry.pullHost}/${repo}:${version}`)
    }
    refs[tag] = `${registry.pullHost}/${repo}:${version}`
  }
  return refs
}

/**
 * Removes the registry service (`executor down`); the pushed images stay in its volume for the next time.
 * @param {import('dockerode')} docker
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function removeRegistry (docker, { log = () => {} } = {}) {
  await removeStack(docker, REGISTRY_STACK, { log })
}
