// The swarm backend: the server under test as a Docker Swarm stack (up, cm, pm2, hs), its CPU per core from the RC of each node.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { NsError } from '../errors.js'
import { cacheDir } from '../paths.js'
import { connectDocker, ensureSwarm, swarmInfo, dockerError } from '../docker/engine.js'
import { buildImage } from '../docker/image-build.js'
import { renderStack, writeStackFiles } from '../docker/stack-render.js'
import { deployStack, removeStack, removeLeftovers, ingressWorks } from '../docker/stack-deploy.js'
import { ensureControlPlane } from '../docker/control-plane.js'
import { createRcSampler } from '../docker/rc-client.js'

/**
 * How the published port is reached: `--lb ingress|haproxy` as given; `auto` is the routing mesh where it answers,
 * else host mode (and HAProxy in front of hs), said in the log.
 * @param {import('dockerode')} docker
 * @param {any} config
 * @param {(line: string) => void} log
 * @param {string} probeImage
 * @returns {Promise<'ingress'|'haproxy'>}
 */
async function resolveLb (docker, config, log, probeImage) {
  if (config.lb !== 'auto') return config.lb
  if (await meshAnswers(docker, probeImage, log)) return 'ingress'
  if (config.strategy === 'hs') log('swarm: --lb auto -> haproxy (the ingress routing mesh does not answer here); HAProxy balances the replicas')
  return 'haproxy'
}

/**
 * Whether the routing mesh answers on this swarm: probed once per swarm (cluster id) and remembered in the cache folder,
 * since the probe deploys a service and takes seconds.
 */
async function meshAnswers (docker, probeImage, log) {
  const file = join(cacheDir(), 'ingress.json')
  let cluster = null
  try { cluster = (await docker.info()).Swarm?.Cluster?.ID ?? null } catch {}
  let known = {}
  try { known = JSON.parse(readFileSync(file, 'utf8')) } catch {}
  if (cluster && typeof known[cluster] === 'boolean') {
    log(`swarm: the ingress routing mesh ${known[cluster] ? 'answers' : 'does not answer'} on this swarm (probed before; ${file})`)
    return known[cluster]
  }
  const works = await ingressWorks(docker, { image: probeImage, log })
  if (cluster) {
    mkdirSync(cacheDir(), { recursive: true })
    writeFileSync(file, JSON.stringify({ ...known, [cluster]: works }))
  }
  return works
}

/** A placement row of run.json per task of the stack. */
function placementOf (deployment) {
  return deployment.tasks.map(t => ({
    instance: `${t.service}.${t.slot ?? t.id.slice(0, 12)}`,
    service: t.service,
    task: t.id,
    node: t.nodeName,
    nodeId: t.node,
    container: t.containerId
  }))
}

/**
 * @param {{ connect?: typeof connectDocker }} [opts]
 */
export function createSwarmBackend ({ connect = connectDocker } = {}) {
  /** @type {import('dockerode') | null} */
  let docker = null
  /** @type {{ register: any, rc: any, lb: any, lbMode: 'ingress'|'haproxy' } | null} */
  let parts = null

  return {
    name: 'swarm',

    /**
     * Connects, makes sure of a swarm, builds (or reuses) the images the run needs; nothing is deployed yet.
     * @param {any} config
     * @param {{ log?: (line: string) => void }} [ctx]
     */
    async prepare (config, { log = () => {} } = {}) {
      if (config.app?.startsWith('cmd:')) {
        throw new NsError('NS_ERR_BAD_APP', '--app cmd:...: a command-line program is served on the local backend only (the program is not in the image); use --backend local')
      }
      docker = await connect()
      await ensureSwarm(docker, { log })
      const register = await buildImage(docker, { kind: 'register', apps: config.app ? [config.app] : [], log })
      const rc = await buildImage(docker, { kind: 'rc', log })
      const lbMode = await resolveLb(docker, config, log, register.tag)
      const lb = config.strategy === 'hs' && lbMode === 'haproxy' ? await buildImage(docker, { kind: 'haproxy', log }) : null
      parts = { register, rc, lb, lbMode }
      let version
      try { version = await docker.version() } catch (err) { throw dockerError(err, 'reading the engine version') }
      const swarm = await swarmInfo(docker)
      return {
        docker: version.Version,
        image: register.id,
        imageTag: register.tag,
        imageBase: register.base,
        lbImage: lb?.tag ?? null,
        rcImage: rc.tag,
        lb: lbMode,
        swarmNodes: swarm.nodes.length,
        nodes: swarm.nodes.map(n => ({ hostname: n.hostname, role: n.role, state: n.state, availability: n.availability, addr: n.addr }))
      }
    },

    /**
     * Deploys the stack and resolves when every instance answers; the control plane is started when it is not up.
     * @param {any} config validated run config
     * @param {{ runId: string, runDir: string, log: (line: string) => void, signal?: AbortSignal }} ctx
     */
    async deploy (config, { runId, runDir, log, signal }) {
      if (!docker || !parts) throw new Error('swarm backend: prepare() first')
      const engine = docker
      await removeLeftovers(engine, { log })
      const plane = await ensureControlPlane(engine, { image: parts.rc.tag, log })
      signal?.throwIfAborted()
      const doc = renderStack({
        strategy: config.strategy,
        instances: config.instances,
        cpusPerInstance: config.cpusPerInstance,
        memory: config.memoryPerInstance === undefined ? undefined : config.memoryPerInstance * (config.strategy === 'hs' ? 1 : config.instances),
        image: parts.register.tag,
        lbImage: parts.lb?.tag,
        benchmark: config.benchmark,
        app: parts.register.apps[0]?.path,
        params: config.params,
        port: config.port,
        lb: parts.lbMode,
        runId
      })
      writeStackFiles(doc, runDir)
      const deployment = await deployStack(engine, doc, { log, signal, readyTimeoutMs: config.readyTimeout * 1000 })
      log(`swarm: ${deployment.stack} ready in ${deployment.readyMs} ms at ${deployment.url}`)
      const appService = deployment.services.find(s => s.name.endsWith('_app'))?.name
      const containers = deployment.tasks.filter(t => t.service === appService).map(t => ({ node: t.node, containerId: t.containerId }))
      let removed = false
      return {
        url: deployment.url,
        stack: deployment.stack,
        readyMs: deployment.readyMs,
        placement: placementOf(deployment),
        createSampler: () => createRcSampler({ rcs: plane.rcs, token: plane.token, containers, log }),
        async teardown () {
          if (removed) return
          removed = true
          await removeStack(engine, deployment.stack, { log })
        }
      }
    }
  }
}
