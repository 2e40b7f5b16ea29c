// The builtin registry's credentials: one user and a random password per deployment of the registry, kept owner-only
// in the cache folder (like the RC token), given to the registry as a bcrypt htpasswd file (a Swarm secret), to the
// manager's engine for each push and to Swarm with each service that pulls from it (the nodes' engines pull with it).
// Neither the password nor the header that carries it is ever logged or written to a run's files.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import bcrypt from 'bcryptjs'
import { cacheDir, readCacheJson, writeCacheJson } from '../../lib/paths.js'

const FILE = 'registry.json'
const USER = 'nodescale'

/**
 * @typedef {{ user: string, password: string, htpasswd: string, pullHost: string, tls: boolean, configHash: string }}
 *   RegistryCredentials pullHost: HOST:PORT the nodes pull by; configHash: what the running registry was deployed with
 */

/**
 * Fresh credentials for a new deployment of the registry: a 32-byte random password and its htpasswd line (bcrypt, the
 * only hash the registry's htpasswd accepts).
 * @returns {{ user: string, password: string, htpasswd: string }}
 */
export function newCredentials () {
  const password = randomBytes(32).toString('hex')
  return { user: USER, password, htpasswd: `${USER}:${bcrypt.hashSync(password, 10)}\n` }
}

/** The saved credentials of the running registry, or null. */
export function savedCredentials () {
  const saved = /** @type {RegistryCredentials | null} */ (readCacheJson(FILE))
  return saved?.user && saved.password && saved.pullHost ? saved : null
}

/**
 * Keeps the credentials of a registry just deployed (owner-only file).
 * @param {RegistryCredentials} creds
 */
export function saveCredentials (creds) {
  writeCacheJson(FILE, { ...creds, at: new Date().toISOString() }, { mode: 0o600 })
}

/** Forgets the credentials (`executor down`: the next registry gets new ones). */
export function forgetCredentials () {
  rmSync(join(cacheDir(), FILE), { force: true })
}

/**
 * The registry auth an engine needs to push to or pull an image from the builtin registry (dockerode's `authconfig`,
 * sent as X-Registry-Auth), or undefined for any other image.
 * @param {string} image a reference, e.g. 10.99.0.1:5000/nodescale/register@sha256:…
 * @returns {{ username: string, password: string, serveraddress: string } | undefined}
 */
export function registryAuthFor (image) {
  const saved = savedCredentials()
  if (!saved || !String(image).startsWith(`${saved.pullHost}/`)) return undefined
  return { username: saved.user, password: saved.password, serveraddress: saved.pullHost }
}

/**
 * Creates a Swarm service, with the builtin registry's credentials when its image comes from there: Swarm keeps them
 * with the service (they are not part of what `docker service inspect` shows) and hands them to the engine of each
 * node that pulls the image for a task.
 * @param {import('dockerode')} docker
 * @param {any} spec
 */
export function createServiceWithAuth (docker, spec) {
  return docker.createService(registryAuthFor(spec.TaskTemplate?.ContainerSpec?.Image ?? ''), spec)
}
