// The control plane's private image registry: the `registry` service of docker-compose.yml on the manager (stack
// nodescale-registry, started on first use). Every request needs nodescale's credentials (registry-auth.js); the run's
// images are pushed by the manager's engine to the address every node pulls from, and deployed by their digest.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { checkServerIdentity } from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import { load } from 'js-yaml'
import { ROOT } from '../../lib/paths.js'
import { internalError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { dockerError, swarmInfo, deployedImage } from './engine.js'
import { stackSpecs } from './stack-spec.js'
import { removeStack, removeSecrets } from './stack-remove.js'
import { describeTasks, taskLogs, nodeNames } from './stack-wait.js'
import { REGISTRY_PORT } from '../../lib/wire.js'
import { pushImages } from './image-copy.js'
import { NAMESPACE_LABEL } from './stack-render.js'
import { newCredentials, savedCredentials, saveCredentials, forgetCredentials } from './registry-auth.js'

export const REGISTRY_STACK = 'nodescale-registry'
const SERVICE = `${REGISTRY_STACK}_registry`
/** The service label that says what the running registry was deployed with (image, address, TLS): reused if same. */
const CONFIG_LABEL = 'io.nodescale.registry-config'

/** Where the executor reaches the registry: loopback for the local engine, else the manager's address. */
const probeHost = (docker, managerAddr) => (/** @type {any} */ (docker).modem?.socketPath ? '127.0.0.1' : managerAddr)

/** Whether a TLS error is the certificate's (not trusted, or not for that address), not the network's. */
const certificateRefused = (err) => /^ERR_TLS_CERT|CERT|SIGNATURE|ISSUER/.test(String(err?.code ?? ''))

/**
 * The status of the registry's GET /v2/, with or without credentials (0 when it does not answer): 401 means it runs
 * and asks for credentials, 200 with them that they are the right ones. Over HTTPS the registry must present the
 * certificate it was given (`tls.ca`, --registry-tls's file: the trust anchor, a CA-signed leaf included) issued for
 * the address the nodes pull it from (`tls.host`), or nothing is sent: the credentials go only to nodescale's registry.
 * @param {string} url http(s)://HOST:PORT
 * @param {{ user: string, password: string }} [creds]
 * @param {{ ca: string | Buffer, host: string }} [tls] required for https
 * @returns {Promise<number>} rejects with NS_ERR_DEPLOY when the certificate is refused
 */
export function registryStatus (url, creds, tls) {
  const https = url.startsWith('https:')
  if (https && !tls?.ca) throw internalError('an HTTPS probe of the registry without the certificate to verify')
  const request = https ? httpsRequest : httpRequest
  const headers = creds ? { authorization: `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}` } : {}
  // allowPartialTrustChain: the given certificate is an anchor even when a CA of the user's signed it
  const verify = https && tls ? { ca: tls.ca, allowPartialTrustChain: true, checkServerIdentity: (_, cert) => checkServerIdentity(tls.host, cert) } : {}
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v2/`, /** @type {any} */ ({ headers, timeout: 1000, agent: false, ...verify }), (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', (err) => {
      if (!https || !certificateRefused(err)) return resolve(0)
      reject(fail('REGISTRY_CERTIFICATE_WRONG', { url, host: tls?.host, why: err.message, port: REGISTRY_PORT }))
    })
    req.on('timeout', () => req.destroy())
    req.end()
  })
}

/** The registry service as it is: its running task's image and config label, and its failed tasks. */
async function registryState (docker) {
  let services, tasks
  try {
    services = await docker.listServices({ filters: { name: [SERVICE] } })
    tasks = services.length ? await docker.listTasks({ filters: { service: [SERVICE] } }) : []
  } catch (err) {
    throw dockerError(err, 'reading the image registry service')
  }
  const running = tasks.find(t => t.DesiredState === 'running' && t.Status?.State === 'running')
  return {
    image: deployedImage(running?.Spec?.ContainerSpec?.Image),
    configHash: services.find(s => s.Spec?.Name === SERVICE)?.Spec?.Labels?.[CONFIG_LABEL] ?? null,
    failed: tasks.filter(t => ['failed', 'rejected'].includes(t.Status?.State))
  }
}

/** Whether an IPv4 address is inside a CIDR block (false for anything else). */
function inCidr (host, cidr) {
  const num = (ip) => ip.split('.').reduce((n, p) => n * 256 + Number(p), 0)
  const [net, bits] = cidr.split('/')
  if (![host, net].every(x => /^\d+\.\d+\.\d+\.\d+$/.test(x))) return false
  const size = 2 ** (32 - Number(bits))
  return Math.floor(num(host) / size) === Math.floor(num(net) / size)
}

/**
 * Whether an engine pulls from HOST:PORT over plain HTTP: it is one of its insecure registries, by name or by CIDR
 * (127.0.0.0/8 always is).
 * @param {any} info the engine's docker.info()
 * @param {string} hostPort
 */
export function trustsPlainHttp (info, hostPort) {
  if (info?.RegistryConfig?.IndexConfigs?.[hostPort]?.Secure === false) return true
  return (info?.RegistryConfig?.InsecureRegistryCIDRs ?? []).some(cidr => inCidr(hostPort.split(':')[0], cidr))
}

/** The certificate and key files of --registry-tls, read. */
const tlsFiles = (tls) => tls && { cert: readFileSync(tls.cert), key: readFileSync(tls.key) }

/**
 * The control plane's registry, running this image with these settings: reused when it runs, was deployed so, and
 * takes the credentials saved for it; else (re)deployed with new credentials and waited for.
 * @param {import('dockerode')} docker
 * @param {{ image: string, tls?: { cert: string, key: string } | null, log?: (line: string) => void,
 *   timeoutMs?: number, file?: string }} opts image: a `registry` image; tls: --registry-tls (PEM files)
 * @returns {Promise<{ stack: string, service: string, pullHost: string, tls: boolean, reused: boolean }>}
 *   pullHost: HOST:PORT every node (and the manager's engine, which pushes there) reaches it by
 */
export async function ensureRegistry (docker, { image, tls = null, log = () => {}, timeoutMs = 60_000, file = join(ROOT, 'docker-compose.yml') }) {
  const { managerAddr } = await swarmInfo(docker)
  const addr = managerAddr ?? '127.0.0.1'
  const pullHost = `${addr}:${REGISTRY_PORT}`
  const url = `${tls ? 'https' : 'http'}://${probeHost(docker, addr)}:${REGISTRY_PORT}`
  const out = { stack: REGISTRY_STACK, service: SERVICE, pullHost, tls: Boolean(tls) }
  const files = tlsFiles(tls)
  const verify = files ? { ca: files.cert, host: addr } : undefined
  if (!files) await plainHttpCheck(docker, pullHost, log)
  const configHash = createHash('sha256')
    .update([image, pullHost, files ? createHash('sha256').update(files.cert).update(files.key).digest('hex') : 'plain'].join('\0'))
    .digest('hex').slice(0, 16)

  const saved = savedCredentials()
  const now = await registryState(docker)
  if (now.image === image && now.configHash === configHash && saved?.configHash === configHash && await registryStatus(url, saved, verify) === 200) {
    log(`swarm: image registry up at ${pullHost} (${tls ? 'HTTPS' : 'plain HTTP'}, credentials required), reused`)
    return { ...out, reused: true }
  }
  await removeRegistry(docker, { log })
  const started = Date.now()
  const creds = newCredentials()
  const doc = /** @type {any} */ (load(readFileSync(file, 'utf8')))
  const svc = doc.services.registry
  svc.image = image
  svc.deploy.labels = { ...svc.deploy.labels, [CONFIG_LABEL]: configHash }
  const secrets = { nodescale_registry_htpasswd: creds.htpasswd, ...(files && { nodescale_registry_cert: files.cert, nodescale_registry_key: files.key }) }
  if (files) {
    svc.environment = {
      ...svc.environment,
      REGISTRY_HTTP_TLS_CERTIFICATE: '/run/secrets/nodescale_registry_cert',
      REGISTRY_HTTP_TLS_KEY: '/run/secrets/nodescale_registry_key'
    }
  }
  const secretIds = await createSecrets(docker, secrets)
  svc.secrets = Object.keys(secrets).map(name => ({
    source: name,
    target: name,
    secretName: secretIds[name].name,
    mode: name.endsWith('_key') ? 0o400 : 0o444
  }))
  const { services } = stackSpecs({ ...doc, services: { registry: svc } }, {
    stack: REGISTRY_STACK,
    secretIds: Object.fromEntries(Object.entries(secretIds).map(([k, v]) => [k, v.id]))
  })
  // the registry's image is on the manager, where it runs: no pull, no credentials
  try { await docker.createService(services[0].spec) } catch (err) { throw dockerError(err, `creating service ${SERVICE}`) }
  log(`swarm: image registry ${SERVICE} on the manager, listening on port ${REGISTRY_PORT} ` +
    `(${tls ? 'HTTPS' : 'plain HTTP'}; the nodes pull from ${pullHost} with nodescale's credentials)`)
  for (;;) {
    if (await registryStatus(url, creds, verify) === 200) {
      const anonymous = await registryStatus(url, undefined, verify)
      if (anonymous !== 401) throw internalError(`the image registry answered ${anonymous} without credentials (401 expected)`)
      saveCredentials({ user: creds.user, password: creds.password, htpasswd: creds.htpasswd, pullHost, tls: Boolean(tls), configHash })
      log(`swarm: image registry answers after ${Date.now() - started} ms`)
      return { ...out, reused: false }
    }
    const { failed } = await registryState(docker)
    if (failed.length || Date.now() - started > timeoutMs) {
      const logs = failed.length ? await taskLogs(docker, failed[0]) : ''
      await removeRegistry(docker, { log }).catch(() => {})
      const tasks = failed.length ? describeTasks(failed, () => SERVICE, await nodeNames(docker)) : null
      throw fail('REGISTRY_NOT_STARTED', { tasks, timeoutMs, logs, port: REGISTRY_PORT, tls })
    }
    await sleep(200)
  }
}

/**
 * A registry without TLS: the manager's engine must trust it for plain HTTP (it pushes there and runs tasks from it),
 * and the user is told what plain HTTP exposes.
 */
async function plainHttpCheck (docker, pullHost, log) {
  let info
  try { info = await docker.info() } catch (err) { throw dockerError(err, 'reading the engine\'s registry settings') }
  if (!trustsPlainHttp(info, pullHost)) {
    throw fail('REGISTRY_NOT_TRUSTED', { registry: pullHost })
  }
  log(`swarm: warning: the image registry at ${pullHost} speaks plain HTTP: ` +
    'anyone on the network path can read the images and capture the credentials (Basic auth) that pushes and pulls send; ' +
    'images are deployed by digest, so one pushed with them is never what a run deploys. ' +
    'On an untrusted network give --registry-tls CERT,KEY (docs/SECURITY.md)')
}

/**
 * Creates the registry's secrets, each under a name of its own (secrets are immutable), labelled with its stack.
 * @returns {Promise<Record<string, { id: string, name: string }>>} by Compose name
 */
async function createSecrets (docker, secrets) {
  const stamp = Date.now().toString(36)
  /** @type {Record<string, { id: string, name: string }>} */
  const out = {}
  for (const [key, data] of Object.entries(secrets)) {
    const name = `${key}_${stamp}`
    try {
      const secret = await docker.createSecret({ Name: name, Labels: { [NAMESPACE_LABEL]: REGISTRY_STACK }, Data: Buffer.from(data).toString('base64') })
      out[key] = { id: secret.id, name }
    } catch (err) {
      throw dockerError(err, `creating secret ${name}`)
    }
  }
  return out
}

/**
 * Pushes images to the control plane's registry, with its credentials, from the manager's engine to the address the
 * nodes pull from; returns the references by digest to deploy by.
 * @param {import('dockerode')} docker
 * @param {{ pullHost: string }} registry from ensureRegistry
 * @param {string[]} tags local tags
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<Record<string, string>>} local tag -> HOST:PORT/repo@sha256:…
 */
export async function pushToRegistry (docker, registry, tags, { log = () => {} } = {}) {
  const creds = savedCredentials()
  if (!creds || creds.pullHost !== registry.pullHost) throw internalError('pushToRegistry before ensureRegistry saved the credentials')
  return pushImages(docker, registry.pullHost, tags, {
    log,
    auth: { username: creds.user, password: creds.password },
    failed: 'IMAGE_NOT_PUSHED_TO_BUILTIN'
  })
}

/**
 * Removes the registry service and its secrets, and forgets its credentials (`executor down`; a new deployment gets new
 * ones); the pushed images stay in its volume for the next time.
 * @param {import('dockerode')} docker
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function removeRegistry (docker, { log = () => {} } = {}) {
  await removeStack(docker, REGISTRY_STACK, { log })
  await removeSecrets(docker, REGISTRY_STACK)
  forgetCredentials()
}
