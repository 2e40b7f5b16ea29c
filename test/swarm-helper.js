// Shared by the Swarm suites: makes sure a Docker engine in a swarm answers (scripts/docker-up.sh, once), or says why
// the suite is skipped.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { connectDocker } from '../executor/docker/engine.js'
import { buildImage } from '../executor/docker/image-build.js'

const script = fileURLToPath(new URL('../scripts/docker-up.sh', import.meta.url))

let pending = null

/**
 * `{ docker, skip: false }` when the engine answers, else `{ docker: null, skip: reason }`.
 * Under CI=true an engine that cannot run is a failure, not a skip.
 * @returns {Promise<{ docker: import('dockerode') | null, skip: string | false }>}
 */
export function swarmEngine () {
  pending ??= (async () => {
    const r = spawnSync('bash', [script], { encoding: 'utf8', timeout: 240_000 })
    let reason = null
    if (r.error || r.status !== 0) {
      reason = `Docker cannot run here: scripts/docker-up.sh exited ${r.status ?? r.error?.message}: ${(r.stderr || r.stdout || '').trim().split('\n')[0]}`
    }
    let docker = null
    if (!reason) {
      try { docker = await connectDocker() } catch (err) { reason = `Docker cannot run here: ${err.message}` }
    }
    if (reason && process.env.CI === 'true') throw new Error(`${reason} (CI=true: the Swarm suite must run)`)
    return { docker, skip: reason ?? false }
  })()
  return pending
}

let images = null
/**
 * The register and HAProxy images every Swarm test uses (host base: works without a registry), built once per process.
 * @param {import('dockerode')} docker
 */
export function testImages (docker) {
  images ??= (async () => ({
    register: await buildImage(docker, { kind: 'register', base: 'host' }),
    haproxy: await buildImage(docker, { kind: 'haproxy', base: 'host' })
  }))()
  return images
}

/** A run id no other test (or test process) uses. */
export function testRunId (what) {
  return `t${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}-${what}`
}
