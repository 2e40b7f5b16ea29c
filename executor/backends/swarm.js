// The swarm backend: the server under test as a Docker Swarm stack (up, cm, pm2, hs), its CPU per core from the RC of
// each node. The server is ours with a benchmark app, a user's whole server folder in our image (--server), or a user's
// own image (--image): as it is for up and hs, with our launchers added for cm and pm2.
import { join } from 'node:path'
import Docker from 'dockerode'
import { randomBytes } from 'node:crypto'
import { badApp, badFlag, internalError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { deploymentShape } from '../../lib/strategies.js'
import { checkAffinity } from '../../lib/run-options.js'
import { cacheDir, readCacheJson, writeCacheJson } from '../../lib/paths.js'
import { connectDocker, ensureSwarm, swarmInfo, dockerError, waitForDaemon } from '../docker/engine.js'
import { buildImage, buildLauncherImage, entryFromCommand, imageNodeVersion, inspectUserImage, nodeHasImport, userImagePort } from '../docker/image-build.js'
import { LAUNCHER_DIR, SERVER_DIR } from '../docker/image-context.js'
import { renderStack, writeStackFiles } from '../docker/stack-render.js'
import { deployStack, removeStack, removeLeftovers, ingressWorks, taskRows, localAddress } from '../docker/stack-deploy.js'
import { createNodeWatch } from '../docker/node-watch.js'
import { ensureControlPlane } from '../docker/control-plane.js'
import { serviceTelemetry } from '../docker/service-telemetry.js'
import { createRcSampler } from '../docker/rc-client.js'
import { dockerProxyPids, withLocalRoles } from '../../rc/role-cpu.js'
import { planPlacement, planLoadPlacement, nodeRef, isLoadNode } from '../docker/placement.js'
import { copyImages, pushImages } from '../docker/image-copy.js'
import { ensureRegistry, pushToRegistry } from '../docker/image-registry.js'
import { localWorkerEngines } from '../local-swarm/state.js'
import { APP_PORT } from '../../lib/wire.js'
import { deployLoadService } from '../docker/load-service.js'
import { ensureJmeter } from '../jmeter-install.js'
import { agentCaller, agentPlace, measureClock } from '../generators/agent-client.js'
import { GeneratorLost } from '../generators/run-generators.js'

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
  if (deploymentShape(config).balanced) log('swarm: --lb auto -> haproxy (the ingress routing mesh does not answer here); HAProxy balances the replicas')
  return 'haproxy'
}

/**
 * Whether the routing mesh answers on this swarm: probed once per swarm (cluster id) and remembered in the cache
 * folder, since the probe deploys a service and takes seconds.
 */
async function meshAnswers (docker, probeImage, log) {
  let cluster = null
  try { cluster = (await docker.info()).Swarm?.Cluster?.ID ?? null } catch {}
  const known = readCacheJson('ingress.json') ?? {}
  if (cluster && typeof known[cluster] === 'boolean') {
    log(`swarm: the ingress routing mesh ${known[cluster] ? 'answers' : 'does not answer'} on this swarm (probed before; ${join(cacheDir(), 'ingress.json')})`)
    return known[cluster]
  }
  const works = await ingressWorks(docker, { image: probeImage, log })
  if (cluster) writeCacheJson('ingress.json', { ...known, [cluster]: works })
  return works
}

/**
 * A placement row of run.json per task of the stack: the task, its node (id, hostname, io.nodescale.node label,
 * address), its container.
 * @param {any} deployment
 * @param {Map<string, ReturnType<typeof nodeRef>>} nodes
 */
function placementOf (deployment, nodes) {
  return deployment.tasks.map(t => ({
    instance: `${t.service}.${t.slot ?? t.id.slice(0, 12)}`,
    service: t.service,
    task: t.id,
    node: t.nodeName,
    nodeId: t.node,
    nodeLabel: nodes.get(t.node)?.label ?? null,
    nodeAddr: nodes.get(t.node)?.addr ?? null,
    container: t.containerId
  }))
}

/**
 * The run's images as run.json records them: local tag, image id, the reference deployed and its digest (null when the
 * nodes got the image by save/load or had it: then they run the tag, whose id is the one here).
 * @param {({ tag: string, id: string } | null)[]} images
 * @param {(tag: string) => string} ref
 */
function imageRecords (images, ref) {
  const seen = new Map()
  for (const img of images) {
    if (img && !seen.has(img.tag)) seen.set(img.tag, { tag: img.tag, id: img.id, ref: ref(img.tag), digest: ref(img.tag).split('@')[1] ?? null })
  }
  return [...seen.values()]
}

/** Reads the swarm's nodes (raw, as the placement plan takes them). */
async function listNodes (docker) {
  try { return await docker.listNodes() } catch (err) { throw dockerError(err, 'listing swarm nodes') }
}

/**
 * The images on every node that may run the run's tasks, by `--registry`:
 * - HOST:PORT: pushed there and deployed by digest (HOST:PORT/...@sha256:…);
 * - builtin: pushed to the control plane's registry on the manager (with its credentials) and deployed by
 *   MANAGER:5000/...@sha256:…;
 * - none: nothing is moved (every node has them already);
 * - not given: loaded from the manager into this machine's local-swarm workers (save/load through the API), and
 *   through the builtin registry when any worker is not one of them (a swarm of other machines).
 * @param {import('dockerode')} docker
 * @param {{ registry?: string, registryTls?: { cert: string, key: string } }} config
 * @param {string[]} tags images the workers run
 * @param {any[]} nodes docker.listNodes()
 * @param {(line: string) => void} log
 * @param {string[]} [managerOnly] images only the manager runs (pushed along, never loaded)
 * @param {Record<string, (node: any) => boolean>} [onlyOn] images only some workers run: loaded into those alone (the
 *   load agents' image, with JMeter ~100 MB more, into the load nodes: 16.5 s for four local workers in CI)
 * @returns {Promise<{ refs: Record<string, string>, copied: any[], via: string, registry?: { pullHost: string, tls:
 *   boolean, reused: boolean } }>} registry: the builtin one, when it carried the images
 */
export async function imagesOnNodes (docker, config, tags, nodes, log, managerOnly = [], onlyOn = {}) {
  const all = [...tags, ...managerOnly]
  if (config.registry === 'none') {
    log(`swarm: --registry none: every node that runs a task must have ${tags.join(', ')} already`)
    return { refs: {}, copied: [], via: 'none' }
  }
  if (config.registry && config.registry !== 'builtin') {
    return { refs: await pushImages(docker, config.registry, all, { log }), copied: [], via: config.registry }
  }
  const workers = nodes.filter(n => n.Spec?.Role === 'worker' && n.Status?.State === 'ready')
  const local = localWorkerEngines().filter(e => workers.some(n => n.ID === e.nodeId))
  const remote = workers.filter(n => !local.some(e => e.nodeId === n.ID))
  if (config.registry === 'builtin' || remote.length) {
    const registryImage = await buildImage(docker, { kind: 'registry', log })
    const registry = await ensureRegistry(docker, { image: registryImage.tag, tls: config.registryTls ?? null, log })
    if (remote.length && !config.registry) {
      log(`swarm: nodes ${remote.map(n => nodeRef(n).hostname).join(', ')} are not this machine's local swarm: ` +
        `they pull from the control plane's registry at ${registry.pullHost} ` +
        `(their engines must trust it: insecure-registries ${registry.pullHost}, or its certificate with --registry-tls; or give --registry HOST:PORT)`)
    }
    return { refs: await pushToRegistry(docker, registry, all, { log }), copied: [], via: `builtin ${registry.pullHost}`, registry }
  }
  if (!workers.length) return { refs: {}, copied: [], via: 'manager' }
  const wanted = (engine) => {
    const node = workers.find(n => n.ID === engine.nodeId)
    return tags.filter(tag => !onlyOn[tag] || onlyOn[tag](node))
  }
  return { refs: {}, copied: await copyImages(docker, local.map(e => ({ ...e, tags: wanted(e) })), tags, { log }), via: 'load' }
}

/**
 * The RC sampler with each node of the merged timeline named (hostname, label), for run.json's per-node CPU.
 * @param {{ start: () => Promise<void>, stop: () => Promise<any> }} sampler
 * @param {Map<string, ReturnType<typeof nodeRef>>} refs
 */
function namedNodes (sampler, refs) {
  return {
    start: () => sampler.start(),
    async stop () {
      const timeline = await sampler.stop()
      if (timeline?.nodes) {
        timeline.nodes = timeline.nodes.map(n => ({ ...n, hostname: refs.get(n.node)?.hostname ?? null, label: refs.get(n.node)?.label ?? null }))
      }
      return timeline
    }
  }
}

/**
 * The generators of a --load-nodes run: placed on load nodes apart from the server's (planLoadPlacement), deployed as
 * agents, each one's clock measured; what removes them; the server's address as they reach it (the manager's
 * local address is the manager's swarm address to them).
 * @param {import('dockerode')} docker
 * @param {{ count: number, placement: string, runId: string, partsDir: string, image?: string, serverNodes: string[],
 *   url: string, log: (line: string) => void, signal?: AbortSignal }} opts
 */
async function loadGenerators (docker, { count, placement, runId, partsDir, image, serverNodes, url, log, signal }) {
  if (!image) throw internalError('--load-nodes: prepare() builds the load image when the config asks for load nodes')
  const nodes = await listNodes(docker)
  const plan = planLoadPlacement(nodes, { loadNodes: count, loadPlacement: placement }, serverNodes)
  log(`swarm: load: ${plan.rule}`)
  const refs = new Map(nodes.map(n => [n.ID, nodeRef(n)]))
  const token = randomBytes(24).toString('hex')
  const service = await deployLoadService(docker, {
    image,
    runId,
    count,
    constraints: plan.constraints,
    token,
    addrOf: (id) => refs.get(id)?.addr ?? id,
    nodes: nodes.filter(n => plan.chosen?.some(c => c.id === n.ID)),
    log,
    signal
  })
  const lost = new Set()
  try {
    // in the plan's order of nodes: g1 on the first chosen
    const order = (agent) => plan.chosen.findIndex(n => n.id === agent.nodeId)
    const places = []
    for (const [i, agent] of [...service.agents].sort((a, b) => order(a) - order(b)).entries()) {
      const node = /** @type {ReturnType<typeof nodeRef>} */ (refs.get(agent.nodeId))
      const clock = await measureClock(agentCaller(agent.url, token))
      log(`swarm: load: g${i + 1} on ${node.label ?? node.hostname}: ` +
        `clock ${clock.offsetMs >= 0 ? '+' : ''}${clock.offsetMs} ms (round trip ${clock.rttMs} ms)`)
      const place = agentPlace({ name: `g${i + 1}`, group: i + 1, url: agent.url, token, node, task: agent.task, partsDir, clock })
      places.push({ ...place, run: (o, c) => place.run(o, c).catch(err => { if (err instanceof GeneratorLost) lost.add(agent.nodeId); throw err }) })
    }
    const target = new URL(url)
    // this machine's address of the server's published port (loopback, or docker_gwbridge's gateway: localAddress)
    // is the agents' own machine's to them
    if (/^(127\.|localhost$)/.test(target.hostname) || target.hostname === await localAddress(docker)) {
      let info
      try { info = await docker.info() } catch (err) { throw dockerError(err, 'reading the manager\'s swarm address') }
      target.hostname = info.Swarm?.NodeAddr ?? target.hostname
    }
    return { places, url: target.href, teardown: () => service.remove({ lostNodes: lost }).then(() => {}) }
  } catch (err) {
    await service.remove().catch(() => {})
    throw err
  }
}

/** A node option as NODE_OPTIONS takes it (double quotes around one with a space). */
const optionText = (a) => (/[\s"\\]/.test(a) ? `"${a.replace(/(["\\])/g, '\\$1')}"` : a)

/**
 * A user's own image (--image), checked on the manager before anything is built: it is there, the port it listens on,
 * and for cm and pm2 (whose launchers nodescale runs with the image's node) a node that can preload the hook and the
 * entry file (--server, else the image's own `node FILE ...` command). Exit 2 (NS_ERR_BAD_FLAG, --image) when it
 * cannot be run so.
 * @param {import('dockerode')} docker
 * @param {any} config
 * @param {(line: string) => void} log
 * @returns {Promise<{ image: Awaited<ReturnType<typeof inspectUserImage>>, port: number, asIs: boolean, node: string |
 *   null, server: import('../docker/stack-render.js').ServerSpec | null }>}
 */
async function userImage (docker, config, log) {
  const image = await inspectUserImage(docker, config.image)
  const { port, why } = userImagePort(image, config.containerPort)
  const shape = deploymentShape(config)
  log(`swarm: --image ${image.ref} (${image.id.replace(/^sha256:/, '').slice(0, 12)}) listens on port ${port} in its container (${why})`)
  if (shape.process === 'single') {
    log(`swarm: --image with --strategy ${config.strategy}: the image runs as it is (its own entrypoint and command, PORT=${port} HOST=0.0.0.0); ` +
      'nodescale does not run its processes, so their per-instance figures (how many instances answer, each one\'s event loop and ' +
      `GC telemetry) cannot be had: ready when every task runs and ${config.health ?? config.path ?? '/'} answers a 2xx`)
    return { image, port, asIs: true, node: null, server: null }
  }
  const runs = shape.process === 'cluster' ? 'its cluster primary' : 'PM2'
  const node = await imageNodeVersion(docker, image.ref)
  if (!node.version || !nodeHasImport(node.version)) {
    const found = node.version
      ? `it has node ${node.version}, which cannot preload nodescale's hook (node --import needs 18.19+ or 20.6+)`
      : `it has no usable node: ${node.why}`
    throw badFlag('--image', `--strategy ${config.strategy} needs Node 18.19 or later in ${image.ref}: ${found}. ` +
      `nodescale runs ${runs} with the image's node; ` +
      'use --strategy up or hs for an image without Node', { key: 'image' })
  }
  let entry = config.server
  let args = [...(config.serverArgs ?? [])]
  let nodeArgs = []
  if (entry === undefined) {
    const derived = entryFromCommand(image)
    const command = JSON.stringify([...image.entrypoint, ...image.cmd])
    if (!derived) {
      throw badFlag('--image', `cannot tell which file node runs in ${image.ref}: its command ${command} is not "node FILE ..."; ` +
        `give --server /path/in/image (the entry file ${runs} starts)`, { key: 'image' })
    }
    entry = derived.entry
    args = [...derived.args, ...args]
    nodeArgs = derived.nodeArgs
    log(`swarm: --image: its command ${command} runs ${entry}${derived.args.length ? ` with ${JSON.stringify(derived.args)}` : ''} from ${image.workingDir}`)
  }
  // the node options of the image's command reach every process of the shape (the primary or PM2, and the workers)
  const nodeOptions = nodeArgs.length ? [image.env.NODE_OPTIONS, ...nodeArgs.map(optionText)].filter(Boolean).join(' ') : undefined
  if (nodeOptions) log(`swarm: --image: its node options go in NODE_OPTIONS="${nodeOptions}"`)
  log(`swarm: --image with --strategy ${config.strategy}: node ${node.version} of the image runs ${runs} from ${LAUNCHER_DIR} ` +
    '(added to a copy of the image), ' +
    `which starts ${entry} with the hook preloaded`)
  return {
    image,
    port,
    asIs: false,
    node: node.version,
    server: { entry, args, workingDir: image.workingDir, registerDir: `${LAUNCHER_DIR}/register`, nodeOptions }
  }
}

/**
 * The tag the nodes get a user's image by: its reference as given, or (a digest reference, which cannot be re-tagged
 * for a registry) a local tag of its id.
 * @param {import('dockerode')} docker
 * @param {{ ref: string, id: string }} image
 */
async function userImageTag (docker, image) {
  if (!image.ref.includes('@')) return image.ref
  const version = image.id.replace(/^sha256:/, '').slice(0, 12)
  try {
    await docker.getImage(image.id).tag({ repo: 'nodescale/user-image', tag: version })
  } catch (err) {
    throw dockerError(err, `tagging ${image.ref} as nodescale/user-image:${version}`)
  }
  return `nodescale/user-image:${version}`
}

/**
 * What the Swarm backend's prepare tells the run (run.json's environment): the engine, the images it built or
 * found and how they reach the nodes, a user's server image and what can be measured of it, the swarm's nodes.
 * @param {Record<string, any>} p what prepare found and built
 */
function preparedRecord ({ config, version, swarm, own, launcher, register, rc, lb, load, app, ref, lbMode, via, copied }) {
  return {
    docker: version.Version,
    image: app.id,
    imageTag: app.tag,
    imageRef: ref(app.tag),
    imageBase: own ? null : register.base,
    // a user's own server: the image it ran in (a user's own, or ours with its folder at /server), how, and what
    // could be measured of it (health-only: no instance figures)
    ...(own && {
      serverImage: {
        ref: own.image.ref,
        id: own.image.id,
        runs: own.asIs ? 'as-is' : 'launchers',
        launcherImage: launcher?.tag ?? null,
        node: own.node,
        entry: own.server?.entry ?? null,
        workingDir: own.asIs ? null : own.image.workingDir,
        containerPort: own.port,
        readiness: own.asIs ? 'health-only' : 'instances'
      }
    }),
    ...(register.server && {
      serverImage: {
        ref: register.tag,
        id: register.id,
        runs: 'register',
        entry: register.server.entry,
        workingDir: SERVER_DIR,
        folder: register.server.folder,
        readiness: 'instances'
      }
    }),
    lbImage: lb?.tag ?? null,
    rcImage: rc.tag,
    lb: lbMode,
    swarmNodes: swarm.nodes.length,
    nodes: swarm.nodes.map(n => ({
      id: n.id,
      hostname: n.hostname,
      label: n.labels['io.nodescale.node'] ?? null,
      role: n.role,
      state: n.state,
      availability: n.availability,
      addr: n.addr
    })),
    registry: config.registry ?? null,
    imagesVia: via,
    // each image the run deployed: its id here, and the digest it was deployed by when a registry carried it
    images: imageRecords([register, rc, lb, load, app], ref),
    imagesCopied: copied
  }
}

/**
 * @param {{ connect?: typeof connectDocker }} [opts]
 * @returns {import('./index.js').Backend}
 */
export function createSwarmBackend ({ connect = connectDocker } = {}) {
  /** @type {import('dockerode') | null} */
  let docker = null
  /**
   * app: the image the server's service runs (ours, or a user's image with or without our launchers); server: a
   * user's entry file as our launchers start it; asIs: a user's image run as it is.
   * @type {{ register: any, rc: any, lb: any, lbMode: 'ingress'|'haproxy', load: any, app: { tag: string, id: string },
   *   server: import('../docker/stack-render.js').ServerSpec | null, asIs: boolean, targetPort: number } | null}
   */
  let parts = null

  return {
    name: 'swarm',

    checkConfig (config) {
      checkAffinity(config, 'swarm')
      if (config.app?.startsWith('cmd:')) {
        throw badApp('cmd:...', 'a command-line program is served on the local backend only (the program is not in the image); use --backend local')
      }
      if (config.image !== undefined && deploymentShape(config).process === 'single') {
        const asIs = `with --image, --strategy ${config.strategy} runs the image as it is (its own entrypoint and command)`
        if (config.server !== undefined) throw badFlag('--server', `${asIs}; --server names the entry file for cm and pm2 only`, { key: 'server' })
        if (config.serverArgs?.length) {
          throw badFlag('--server-arg', `${asIs}, whose arguments are its own; --server-arg is for --server, or --image with cm or pm2`, { key: 'serverArgs' })
        }
      }
    },

    /** Connects, makes sure of a swarm, builds (or reuses) the images the run needs; nothing is deployed yet. */
    async prepare (config, { log = () => {} } = {}) {
      docker = await connect()
      const prepared = await prepareParts(docker, config, log)
      parts = prepared.parts
      return prepared.record
    },

    /** Resolves when the Docker daemon answers (waiting through a restart, up to 10 min): see the contract. */
    async waitAvailable ({ log = () => {}, signal, timeoutMs } = {}) {
      // before prepare (a daemon down when a resumed sweep starts): a client that has not pinged yet
      return waitForDaemon(docker ?? new Docker(), { log, signal, timeoutMs })
    },

    /** Removes the stacks of runs whose process is gone (kill -9) and those this process could not remove. */
    async cleanup ({ log = () => {} } = {}) {
      docker ??= await connect()
      return removeLeftovers(docker, { log })
    },

    /** Deploys the stack and resolves when every instance answers; the control plane is started when it is not up. */
    async deploy (config, { runId, runDir, log, signal }) {
      if (!docker || !parts) throw new Error('swarm backend: prepare() first')
      const engine = docker
      await removeLeftovers(engine, { log })
      const plane = await ensureControlPlane(engine, { image: parts.rc.tag, log })
      signal?.throwIfAborted()
      const { doc, nodes, plan } = await placedStack(engine, config, parts, runId, log)
      writeStackFiles(doc, runDir)
      const deployment = await deployStack(engine, doc, { log, signal, readyTimeoutMs: config.readyTimeout * 1000 })
      log(`swarm: ${deployment.stack} ready in ${deployment.readyMs} ms at ${deployment.url}`)
      return deploymentHandle(engine, { deployment, nodes, plan, plane, parts, log })
    }
  }
}

/**
 * A swarm made sure of and the images a run needs built (or reused) and put where they run: the parts the deploy uses
 * and what run.json records of them. A user's image is checked first: one that cannot run is exit 2 before anything is
 * built.
 * @param {import('dockerode')} docker @param {any} config @param {(line: string) => void} log
 */
async function prepareParts (docker, config, log) {
  await ensureSwarm(docker, { log })
  // a user's image is checked first: one that cannot run is exit 2 before anything is built
  const own = config.image !== undefined ? await userImage(docker, config, log) : null
  // --server: the server's folder goes into our image, at /server
  const server = config.image === undefined ? config.server : undefined
  const register = await buildImage(docker, { kind: 'register', apps: config.app ? [config.app] : [], server, log })
  const launcher = own && !own.asIs ? await buildLauncherImage(docker, { image: own.image, log }) : null
  const app = own ? (launcher ?? { tag: await userImageTag(docker, own.image), id: own.image.id }) : register
  const rc = await buildImage(docker, { kind: 'rc', log })
  const nodes = await listNodes(docker)
  const plan = planPlacement(nodes, config)
  log(`swarm: placement: ${plan.rule}`)
  // before the ingress probe, whose service runs the register image on any node; HAProxy runs on the manager only
  const lbWanted = deploymentShape(config).balanced && config.lb !== 'ingress'
  const lbImage = lbWanted ? await buildImage(docker, { kind: 'haproxy', log }) : null
  // --load-nodes: the generators' agents run on the load nodes, from an image of their own
  const jmeterHome = config.loadNodes !== undefined && config.driver === 'jmeter' ? (await ensureJmeter({ log })).home : null
  const load = config.loadNodes !== undefined ? await buildImage(docker, { kind: 'load', jmeterHome, log }) : null
  const tags = [...new Set([app.tag, register.tag, rc.tag, ...(load ? [load.tag] : [])])]
  // labelled load nodes take the agents (--load-placement free: any node may)
  const loadOnly = load && config.loadPlacement !== 'free' ? { [load.tag]: isLoadNode } : {}
  const { refs, copied, via } = await imagesOnNodes(docker, config, tags, nodes, log, lbImage ? [lbImage.tag] : [], loadOnly)
  const ref = (tag) => refs[tag] ?? tag
  const lbMode = await resolveLb(docker, config, log, ref(register.tag))
  const lb = lbMode === 'haproxy' ? lbImage : null
  /** @type {import('../docker/stack-render.js').ServerSpec | null} */
  const serverSpec = own
    ? own.server
    : register.server && { entry: register.server.entry, args: config.serverArgs, workingDir: SERVER_DIR, registerDir: '/app/register' }
  const parts = {
    register: { ...register, tag: ref(register.tag) },
    rc: { ...rc, tag: ref(rc.tag) },
    lb: lb && { ...lb, tag: ref(lb.tag) },
    lbMode,
    load: load && { ...load, tag: ref(load.tag) },
    app: { tag: ref(app.tag), id: app.id },
    server: serverSpec,
    asIs: own?.asIs ?? false,
    targetPort: own?.port ?? APP_PORT
  }
  let version
  try { version = await docker.version() } catch (err) { throw dockerError(err, 'reading the engine version') }
  const swarm = await swarmInfo(docker)
  return { parts, record: preparedRecord({ config, version, swarm, own, launcher, register, rc, lb, load, app, ref, lbMode, via, copied }) }
}

/**
 * The deploy's placing step: the nodes listed again (one may have gone down since prepare), the stack's placement
 * planned on them and its compose document rendered.
 * @param {import('dockerode')} engine @param {any} config @param {any} parts the prepared images and modes
 * @param {string} runId @param {(line: string) => void} log
 */
async function placedStack (engine, config, parts, runId, log) {
  // placed again now: a node may have gone down since prepare
  const nodes = await listNodes(engine)
  let plan
  try {
    plan = planPlacement(nodes, config)
  } catch (err) {
    throw fail('NOT_ENOUGH_NODES', { why: err.message }, { cause: err })
  }
  for (const s of plan.skipped) log(`swarm: warning: node ${s.node.label ?? s.node.hostname} is not usable (${s.why}); skipped`)
  const doc = renderStack({
    strategy: config.strategy,
    instances: config.instances,
    cpusPerInstance: config.cpusPerInstance,
    memory: deploymentShape(config).memoryPerReplica,
    image: parts.app.tag,
    lbImage: parts.lb?.tag,
    server: parts.server ?? undefined,
    asIs: parts.asIs,
    targetPort: parts.targetPort,
    health: config.health,
    benchmark: config.benchmark,
    app: parts.register.apps[0]?.path,
    params: config.params,
    port: config.port,
    lb: parts.lbMode,
    constraints: plan.constraints,
    runId
  })
  if (plan.maxReplicasPerNode) doc.services.app.deploy.placement.max_replicas_per_node = plan.maxReplicasPerNode
  return { doc, nodes, plan }
}

/**
 * The containers a run samples: the server's, sorted by node so that the merged timeline numbers the nodes' cores in
 * label order, and the load balancer's, for its CPU as a role beside the server's.
 * @param {any} deployment @param {(id: string) => string} nodeName
 */
function sampledContainers (deployment, nodeName) {
  const appService = deployment.services.find(s => s.name.endsWith('_app'))?.name
  const lbService = deployment.services.find(s => s.name.endsWith('_lb'))?.name
  const app = deployment.tasks.filter(t => t.service === appService).map(t => ({ node: t.node, containerId: t.containerId }))
    .sort((a, b) => nodeName(a.node).localeCompare(nodeName(b.node), 'en', { numeric: true }))
  const lb = deployment.tasks.filter(t => t.service === lbService).map(t => ({ node: t.node, containerId: t.containerId, role: 'load-balancer' }))
  return { appService, containers: [...app, ...lb] }
}

/**
 * Where the stack's tasks run now (after Swarm rescheduled those of a lost node), with each task's state. A
 * replacement waits out the restart delay with desired state "ready" before it is started: it counts, as not running
 * yet.
 * @param {import('dockerode')} engine @param {any} deployment
 */
async function currentPlacementOf (engine, deployment) {
  let tasks, now
  try {
    tasks = (await engine.listTasks({ filters: { service: deployment.services.map(s => s.name) } }))
      .filter(t => t.DesiredState === 'running' || t.DesiredState === 'ready')
    now = await engine.listNodes()
  } catch (err) {
    throw dockerError(err, `listing the tasks of ${deployment.stack}`)
  }
  const rows = taskRows(tasks, deployment.services, now)
  return placementOf({ tasks: rows }, new Map(now.map(n => [n.ID, nodeRef(n)]))).map((p, i) => ({ ...p, state: rows[i].state ?? 'unknown' }))
}

/**
 * Do the deployed containers still run? Not after a daemon restart or a crash, when Swarm started new ones, which the
 * sampler does not know.
 * @param {import('dockerode')} engine @param {any} deployment
 */
async function stillIntact (engine, deployment) {
  try {
    const tasks = await engine.listTasks({ filters: { service: deployment.services.map(s => s.name), 'desired-state': ['running'] } })
    const running = new Set(tasks.filter(t => t.Status?.State === 'running').map(t => t.Status?.ContainerStatus?.ContainerID))
    return deployment.tasks.every(t => running.has(t.containerId))
  } catch {
    return false
  }
}

/**
 * The deploy's hand-over: a deployed stack as run.js uses it (see the Deployment contract in backends/index.js): its
 * placement, a sampler of its containers through the RCs, its telemetry, generators on load nodes, a watch over its
 * nodes, where its tasks run now, whether its containers are the ones deployed, and its teardown.
 * @param {import('dockerode')} engine
 * @param {{ deployment: any, nodes: any[], plan: any, plane: any, parts: any, log: (line: string) => void }} o
 */
function deploymentHandle (engine, { deployment, nodes, plan, plane, parts, log }) {
  const refs = new Map(nodes.map(n => [n.ID, nodeRef(n)]))
  const nodeName = (id) => refs.get(id)?.label ?? refs.get(id)?.hostname ?? id
  const { appService, containers } = sampledContainers(deployment, nodeName)
  /** @type {ReturnType<typeof createNodeWatch> | null} */
  let watch = null
  let removed = false
  return {
    url: deployment.url,
    stack: deployment.stack,
    readyMs: deployment.readyMs,
    // 'health-only': a user's image run as it is named no instance; its instance figures are not known
    readiness: deployment.readiness,
    placement: placementOf(deployment, refs),
    placementRule: plan.rule,
    // the RCs sample the containers; this host, where the load enters, samples Docker's proxy of the published port
    createSampler: () => withLocalRoles(
      namedNodes(createRcSampler({ rcs: plane.rcs, token: plane.token, containers, log }), refs),
      () => ({ 'docker-proxy': dockerProxyPids(deployment.port) })
    ),
    telemetry: (window) => serviceTelemetry(engine, appService, window),
    /** --load-nodes: the run's generators on load nodes that run none of the stack's tasks (see the contract). */
    createGenerators: (opts) => loadGenerators(engine, {
      ...opts,
      image: parts.load?.tag,
      serverNodes: deployment.tasks.map(t => t.node),
      url: deployment.url
    }),
    /** A watch over the nodes that run the stack's tasks (run.js starts it with the load and stops it after). */
    createWatch () {
      const ids = [...new Set(deployment.tasks.map(t => t.node))]
      watch = createNodeWatch({
        docker: engine,
        log,
        nodes: ids.map(id => ({
          id,
          hostname: refs.get(id)?.hostname ?? id,
          label: refs.get(id)?.label ?? null,
          rcUrl: plane.rcs.find(r => r.node === id)?.url ?? null
        }))
      })
      return watch
    },
    currentPlacement: () => currentPlacementOf(engine, deployment),
    intact: () => stillIntact(engine, deployment),
    async teardown () {
      if (removed) return
      removed = true
      await removeStack(engine, deployment.stack, { log, lostNodes: watch?.tracker.lostNow() ?? [] })
    }
  }
}
