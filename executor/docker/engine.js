// The connection to the Docker engine: a pinged dockerode client, the swarm it belongs to, and Docker errors turned
// into coded ones.
import Docker from 'dockerode'
import { NsError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { withTimeout } from '../../lib/with-timeout.js'

const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'EPIPE'])

/**
 * True when a call failed because no daemon is there to answer (refused, reset, no socket), not because it said no.
 * @param {any} err
 */
export const daemonUnreachable = (err) => Boolean(err && UNREACHABLE.has(err.code) && !err.statusCode)

/**
 * The daemon's own words for a failed API call: dockerode errors carry `statusCode`, `reason` and `json`.
 * @param {any} err
 * @returns {string}
 */
export function dockerMessage (err) {
  const json = err?.json
  const fromJson = typeof json === 'string' ? json.trim() : json?.message
  const text = fromJson || err?.message || String(err)
  return err?.statusCode && !/HTTP code/.test(text) ? `${text} (HTTP ${err.statusCode}${err.reason ? ` ${err.reason}` : ''})` : text
}

/**
 * Turns a dockerode error into an NsError that keeps the original as `cause`:
 * an unreachable daemon is NS_ERR_MISSING_DOCKER (exit 3), anything else the message `refused` (DOCKER_REFUSED).
 * @param {unknown} err
 * @param {string} what what we were doing, e.g. 'creating service x'
 * @param {{ refused?: 'DOCKER_REFUSED' | 'SWARM_UNREADABLE' }} [opts]
 * @returns {NsError}
 */
export function dockerError (err, what, { refused = 'DOCKER_REFUSED' } = {}) {
  if (err instanceof NsError) return err
  const e = /** @type {any} */ (err)
  if (daemonUnreachable(e)) {
    return fail('DOCKER_GONE', { what, errno: e.code, address: e.address }, { cause: err })
  }
  return fail(refused, { what, said: dockerMessage(e) }, { cause: err, details: e?.statusCode ? { statusCode: e.statusCode } : undefined })
}

/**
 * A dockerode client for the local engine (or DOCKER_HOST), checked with a ping.
 * @param {{ socketPath?: string, timeoutMs?: number }} [opts]
 * @returns {Promise<import('dockerode')>}
 */
export async function connectDocker ({ socketPath, timeoutMs = 5000 } = {}) {
  const docker = socketPath ? new Docker({ socketPath }) : new Docker()
  const where = socketPath ?? process.env.DOCKER_HOST ?? '/var/run/docker.sock'
  try {
    await withTimeout(docker.ping(), timeoutMs)
  } catch (err) {
    const e = /** @type {any} */ (err)
    throw fail('DOCKER_UNREACHABLE', { where, why: e?.code ?? dockerMessage(e) }, { cause: err })
  }
  return docker
}

/**
 * Resolves when the daemon answers again and its swarm manager lists this node ready: at once when it does (the usual
 * case), else after waiting through a restart. Says when it starts waiting and when the daemon is back; gives up after
 * `timeoutMs` (NS_ERR_MISSING_DOCKER) or on an abort.
 * @param {import('dockerode')} docker
 * @param {{ timeoutMs?: number, intervalMs?: number, signal?: AbortSignal, log?: (line: string) => void }} [opts]
 * @returns {Promise<{ waitedMs: number }>} how long it waited (0: the daemon answered at once)
 */
export async function waitForDaemon (docker, { timeoutMs = 600_000, intervalMs = 1000, signal, log = () => {} } = {}) {
  const started = Date.now()
  let why = null
  let said = false
  for (;;) {
    signal?.throwIfAborted()
    try {
      await withTimeout(docker.ping(), 5000)
      const info = await withTimeout(docker.info(), 5000)
      const self = info.Swarm?.NodeID
      const nodes = self ? await withTimeout(docker.listNodes(), 5000) : []
      const state = nodes.find(n => n.ID === self)?.Status?.State
      if (!self || state === 'ready') break
      why = `the swarm manager lists this node ${state ?? 'unknown'}`
    } catch (err) {
      why = err.code ?? dockerMessage(err)
    }
    if (!said) log(`the Docker daemon does not answer (${why}); waiting up to ${Math.round(timeoutMs / 60_000)} min for it to come back`)
    said = true
    if (Date.now() - started > timeoutMs) {
      throw fail('DOCKER_SILENT', { seconds: Math.round(timeoutMs / 1000), why })
    }
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
  const waitedMs = Date.now() - started
  if (why) log(`the Docker daemon answers again after ${(waitedMs / 1000).toFixed(1)} s`)
  return { waitedMs: why ? waitedMs : 0 }
}

/**
 * Makes sure the engine is a swarm manager: initialises a single-node swarm when it is in none (and says so).
 * @param {import('dockerode')} docker
 * @param {{ log?: (line: string) => void, advertiseAddr?: string }} [opts]
 * @returns {Promise<{ nodeId: string, initialised: boolean }>}
 */
export async function ensureSwarm (docker, { log = () => {}, advertiseAddr = '127.0.0.1' } = {}) {
  let info
  try { info = await docker.info() } catch (err) { throw dockerError(err, 'reading the engine info') }
  const state = info.Swarm?.LocalNodeState
  if (state === 'active') {
    if (!info.Swarm.ControlAvailable) {
      throw fail('ENGINE_NOT_MANAGER', { node: info.Swarm.NodeID })
    }
    return { nodeId: info.Swarm.NodeID, initialised: false }
  }
  if (state !== 'inactive') {
    throw fail('SWARM_STATE_BROKEN', { state })
  }
  log(`swarm: the engine is in no swarm; initialising a single-node swarm (advertise ${advertiseAddr})`)
  let nodeId
  try {
    nodeId = await docker.swarmInit({ ListenAddr: '0.0.0.0:2377', AdvertiseAddr: advertiseAddr })
  } catch (err) {
    throw dockerError(err, 'initialising a swarm')
  }
  log(`swarm: initialised, node ${nodeId}`)
  return { nodeId: String(nodeId).replace(/"/g, '').trim(), initialised: true }
}

/**
 * The swarm's nodes and the address of a manager (what run.json records as `environment.swarmNodes`).
 * @param {import('dockerode')} docker
 * @returns {Promise<{ nodes: { id: string, hostname: string, role: string, state: string, availability: string, addr:
 *   string, labels: Record<string, string> }[], managerAddr: string | null }>}
 */
export async function swarmInfo (docker) {
  let list
  try { list = await docker.listNodes() } catch (err) { throw dockerError(err, 'listing swarm nodes') }
  const nodes = list.map(n => ({
    id: n.ID,
    hostname: n.Description?.Hostname ?? '',
    role: n.Spec?.Role ?? '',
    state: n.Status?.State ?? '',
    availability: n.Spec?.Availability ?? '',
    addr: n.Status?.Addr ?? '',
    labels: { ...(n.Spec?.Labels ?? {}) }
  }))
  const leader = list.find(n => n.ManagerStatus?.Leader) ?? list.find(n => n.ManagerStatus)
  const managerAddr = leader?.ManagerStatus?.Addr?.replace(/:\d+$/, '') ?? null
  return { nodes, managerAddr }
}

/**
 * The image a service was deployed with, as it was given: a digest the engine appended to a tag (`repo:tag@sha256:…`)
 * is dropped, a reference by digest (`repo@sha256:…`) is kept whole.
 * @param {string | undefined | null} ref a task's Spec.ContainerSpec.Image
 * @returns {string | null}
 */
export function deployedImage (ref) {
  if (!ref) return null
  return /:[^/@]+@sha256:/.test(ref) ? ref.replace(/@sha256:.*$/, '') : ref
}
