// Deploys the framework's control plane (docker-compose.yml: the RC on every node) through the API, with a fresh token
// per deployment passed as a Swarm secret.
import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { load } from 'js-yaml'
import { ROOT, cacheDir, readCacheJson, writeCacheJson } from '../../lib/paths.js'
import { rcCall } from './rc-client.js'
import { internalError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { dockerError, deployedImage } from './engine.js'
import { stackSpecs } from './stack-spec.js'
import { removeStack, removeSecrets } from './stack-remove.js'
import { taskLogs, describeTasks, nodeNames, missingImageHint } from './stack-wait.js'
import { probe } from '../../lib/net.js'
import { NAMESPACE_LABEL } from './stack-render.js'
import { RC_PORT } from '../../lib/wire.js'
import { createServiceWithAuth } from './registry-auth.js'
import { localAddress } from './stack-deploy.js'

export const CONTROL_PLANE_STACK = 'nodescale'
const ROLE_LABEL = 'io.nodescale.role'

/**
 * Replaces the control-plane stack: removes an earlier one, creates a token secret, deploys the RC as a global service
 * and waits until the RC of every ready node answers /healthz on its published port.
 * @param {import('dockerode')} docker
 * @param {{ image: string, token?: string, stack?: string, port?: number, log?: (line: string) => void, timeoutMs?:
 *   number, file?: string }} opts image: an `rc` image (buildImage kind 'rc')
 * @returns {Promise<{ stack: string, token: string, service: string, rcs: { node: string, url: string, containerId:
 *   string | null }[] }>}
 */
export async function deployControlPlane (docker, {
  image,
  token = randomBytes(24).toString('hex'),
  stack = CONTROL_PLANE_STACK,
  port = RC_PORT,
  log = () => {},
  timeoutMs = 60_000,
  file = join(ROOT, 'docker-compose.yml')
}) {
  if (!image) throw internalError('the control plane needs the rc image tag (buildImage kind "rc")')
  const doc = /** @type {any} */ (load(readFileSync(file, 'utf8')))
  const rc = doc.services.rc
  rc.image = image
  rc.ports = [{ ...rc.ports[0], published: port }]
  rc.labels = { ...rc.labels, [ROLE_LABEL]: 'control-plane' }
  rc.deploy.labels = { ...rc.deploy.labels, [ROLE_LABEL]: 'control-plane' }
  await removeStack(docker, stack, { log })

  const started = Date.now()
  const labels = { [NAMESPACE_LABEL]: stack, [ROLE_LABEL]: 'control-plane' }
  try {
    const secretName = `${stack}_rc_token_${Date.now().toString(36)}`
    let secret
    try {
      secret = await docker.createSecret({ Name: secretName, Labels: labels, Data: Buffer.from(token).toString('base64') })
    } catch (err) {
      throw dockerError(err, `creating secret ${secretName}`)
    }
    // The service reads the secret under its Compose name; the stored secret's name is unique per deployment (secrets
    // are immutable).
    // The file's owner and mode stay (the RC runs as nobody and reads it as such).
    const fileRef = [].concat(rc.secrets ?? []).map(x => (typeof x === 'string' ? { source: x } : x)).find(x => x.source === 'nodescale_rc_token')
    rc.secrets = [{ ...fileRef, source: 'nodescale_rc_token', target: 'nodescale_rc_token', secretName }]
    // the file's other services (the registry) are deployed on their own, when a run needs them
    const { services } = stackSpecs({ ...doc, services: { rc } }, { stack, secretIds: { nodescale_rc_token: secret.id } })
    const { spec } = services[0]
    try { await createServiceWithAuth(docker, spec) } catch (err) { throw dockerError(err, `creating service ${spec.Name}`) }
    log(`swarm: control plane ${stack}: RC on every node, port ${port}`)

    const deadline = started + timeoutMs
    let last = 'no tasks yet'
    while (Date.now() < deadline) {
      const state = await controlPlaneState(docker, { service: spec.Name, port })
      if (state.failed.length) {
        const out = await taskLogs(docker, state.failed[0])
        throw fail('SERVICE_NOT_STARTED', {
          service: 'RC', tasks: describeTasks(state.failed, () => spec.Name, await nodeNames(docker)), output: out, imageHint: missingImageHint(state.failed)
        })
      }
      if (state.ready) {
        log(`swarm: ${state.rcs.length} RC${state.rcs.length === 1 ? '' : 's'} answer after ${Date.now() - started} ms`)
        return { stack, token, service: spec.Name, rcs: state.rcs }
      }
      last = state.last
      await sleep(200)
    }
    throw fail('CONTROL_PLANE_NOT_READY', { timeoutMs, last })
  } catch (err) {
    await removeControlPlane(docker, { stack, log }).catch(() => {})
    throw err
  }
}

/**
 * Where the control plane's RCs are and whether they all answer: ready when every ready, active node runs an RC task
 * whose /healthz answers on the node's address.
 * @param {import('dockerode')} docker
 * @param {{ service?: string, port?: number }} [opts]
 * @returns {Promise<{ ready: boolean, rcs: { node: string, url: string, containerId: string | null }[], failed: any[],
 *   image: string | null, last: string }>}
 */
export async function controlPlaneState (docker, { service = `${CONTROL_PLANE_STACK}_rc`, port = RC_PORT } = {}) {
  let nodes, tasks
  try {
    nodes = (await docker.listNodes()).filter(n => n.Status?.State === 'ready' && n.Spec?.Availability === 'active')
    tasks = (await docker.listTasks({ filters: { service: [service] } })).filter(t => t.Spec?.ContainerSpec)
  } catch (err) {
    // no such service (a swarm re-initialised since the token was saved): not ready, so it is deployed afresh
    if (err?.statusCode === 404) return { ready: false, rcs: [], failed: [], image: null, last: `no service ${service}` }
    throw dockerError(err, 'reading the control plane')
  }
  const failed = tasks.filter(t => ['failed', 'rejected'].includes(t.Status?.State))
  const running = tasks.filter(t => t.DesiredState === 'running' && t.Status?.State === 'running')
  const image = deployedImage(running[0]?.Spec?.ContainerSpec?.Image)
  if (!nodes.length || !nodes.every(n => running.some(t => t.NodeID === n.ID))) {
    return { ready: false, rcs: [], failed, image, last: describeTasks(tasks, () => service) || 'no tasks yet' }
  }
  // this node's RC at docker_gwbridge's gateway, as the load reaches the server (stack-deploy.js localAddress): through
  // loopback Docker's userland proxy would relay every sample the RC is asked for
  const local = /** @type {any} */ (docker).modem?.socketPath ? await localAddress(docker) : null
  const rcs = running.map(t => {
    const addr = nodes.find(n => n.ID === t.NodeID)?.Status?.Addr
    const host = local && addr === '127.0.0.1' ? local : addr
    return { node: t.NodeID, url: `http://${host}:${port}`, containerId: t.Status?.ContainerStatus?.ContainerID ?? null }
  })
  const answers = await Promise.all(rcs.map(r => probe(`${r.url}/healthz`, { timeoutMs: 1000 }).then(x => x.status === 200, () => false)))
  const ready = answers.every(Boolean)
  return { ready, rcs, failed, image, last: ready ? 'ready' : `${answers.filter(Boolean).length} of ${rcs.length} RCs answer /healthz` }
}

/**
 * Removes the control-plane stack and its token secrets.
 * @param {import('dockerode')} docker
 * @param {{ stack?: string, log?: (line: string) => void }} [opts]
 */
export async function removeControlPlane (docker, { stack = CONTROL_PLANE_STACK, log = () => {} } = {}) {
  await removeStack(docker, stack, { log })
  await removeSecrets(docker, stack)
}

/** Where the executor keeps the running control plane's token (owner-only), so later runs reuse it. */
export const controlPlaneFile = () => join(cacheDir(), 'control-plane.json')

/**
 * The control plane a run samples with: the running one when it runs this RC image on every node and accepts the token
 * this machine saved for it; otherwise a fresh deployment (deployControlPlane), whose token is saved for the next run.
 * @param {import('dockerode')} docker
 * @param {{ image: string, log?: (line: string) => void, timeoutMs?: number }} opts
 * @returns {Promise<{ stack: string, token: string, service: string, rcs: { node: string, url: string, containerId:
 *   string | null }[], reused: boolean }>}
 */
export async function ensureControlPlane (docker, { image, log = () => {}, timeoutMs }) {
  const saved = readCacheJson('control-plane.json')
  if (saved?.token && saved.image === image) {
    const state = await controlPlaneState(docker, { service: saved.service })
    if (state.ready && state.image === image) {
      // 400 (no such session) means the token was accepted; 401 means the plane was redeployed by someone else
      const answers = await Promise.all(state.rcs.map(rc =>
        rcCall({ url: rc.url, token: saved.token }, 'GET', '/timeline?session=x').then(r => r.status, () => 0)))
      if (answers.every(s => s === 400)) {
        log(`swarm: control plane up (${state.rcs.length} RC${state.rcs.length === 1 ? '' : 's'}), reused`)
        return { stack: saved.stack, token: saved.token, service: saved.service, rcs: state.rcs, reused: true }
      }
    }
  }
  const plane = await deployControlPlane(docker, { image, log, timeoutMs })
  writeCacheJson('control-plane.json', { stack: plane.stack, service: plane.service, image, token: plane.token, at: new Date().toISOString() }, { mode: 0o600 })
  return { ...plane, reused: false }
}

/**
 * `executor down`'s part: removes the control plane and forgets its token.
 * @param {import('dockerode')} docker
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function stopControlPlane (docker, { log = () => {} } = {}) {
  await removeControlPlane(docker, { log })
  rmSync(controlPlaneFile(), { force: true })
}
