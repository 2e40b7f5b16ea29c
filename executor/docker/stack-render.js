// Renders a strategy's Compose template (stacks/<strategy>.yml) from a run's config and its deployment shape: js-yaml
// in, a plain Compose object out; the only text filled in is a template's own {{workers}} inside a parsed value. The
// service runs our server (a benchmark app), a user's own server through our launchers (--server, --image with cm or
// pm2), or a user's image as it is (--image with up or hs).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { hostname } from 'node:os'
import { load as yamlLoad, dump as yamlDump } from 'js-yaml'
import { ROOT } from '../../lib/paths.js'
import { internalError } from '../../lib/errors.js'
import { APP_PORT } from '../../lib/wire.js'
import { deploymentShape } from '../../lib/strategies.js'
import { serverVars } from '../../register/server-entry.js'
import { shapeArgs } from '../../register/launch-command.js'
import { renderHaproxyConfig } from '../haproxy.js'

export const STACK_LBS = Object.freeze(['ingress', 'haproxy'])
export const NAMESPACE_LABEL = 'com.docker.stack.namespace'
export const RUN_LABEL = 'io.nodescale.run'
export const OWNER_LABEL = 'io.nodescale.owner'

const STACKS_DIR = join(ROOT, 'stacks')

/** A Swarm stack name for a run id: lowercase letters, digits, - and _, short enough for `<stack>_<service>`. */
export function stackNameFor (runId) {
  const name = `ns-${String(runId).toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '')}`.slice(0, 48).replace(/-+$/, '')
  if (name === 'ns') throw internalError(`run id "${runId}" has no letters or digits`)
  return name
}

/** Formats a CPU count the way Compose writes it ("0.25"). */
const cpusText = (n) => String(Number(n.toFixed(3)))

/** The owner of a deployment: a later run removes leftovers only when their owner process is gone. */
export const ownerId = () => `${hostname()}:${process.pid}`

/**
 * @typedef {object} RenderOptions
 * @property {string} strategy a strategy of the strategy table
 * @property {number} instances
 * @property {number} [cpusPerInstance] no CPU limit when undefined
 * @property {string|number} [memory] memory limit per replica ("512M" or bytes)
 * @property {string} image register image tag
 * @property {string} [lbImage] HAProxy image tag (hs with lb haproxy)
 * @property {string} [benchmark]
 * @property {string} [app] path of a custom app INSIDE the image (buildImage's `apps[].path`)
 * @property {Record<string, string>} [params]
 * @property {number} [port] published port; 0 = pick one at deploy
 * @property {'ingress'|'haproxy'} lb how the published port is reached: Swarm's routing mesh, or host mode (+ HAProxy
 *   for hs)
 * @property {string[]} [constraints] placement constraints of the server's service, e.g. "node.role == worker"
 * @property {string} runId
 * @property {boolean} [reserve] reserve the CPU and memory limits too (the scheduler then refuses what does not fit);
 *   default true
 * @property {string} [owner]
 * @property {ServerSpec} [server] a user's own server, run by our launchers with our hook preloaded (instead of a
 *   benchmark)
 * @property {boolean} [asIs] the image is a user's, run as it is: its own entrypoint and command, PORT and HOST set
 * @property {number} [targetPort] the port the server listens on in its container (default 8080)
 * @property {string} [health] the readiness path of a user's server (a 2xx is ready); ours is /healthz (200)
 */

/**
 * @typedef {object} ServerSpec a user's server as its processes see it in the image
 * @property {string} entry the entry file (absolute, in the image)
 * @property {readonly string[]} [args] its arguments, {port} in them filled in
 * @property {string} workingDir where it runs from
 * @property {string} registerDir where our launchers are in the image (/app/register, or /opt/nodescale/register)
 * @property {string} [nodeOptions] NODE_OPTIONS for every process of the shape (the node options of the image's own
 *   command)
 */

/**
 * The deployment shape of a render's values, once they are checked: every value here comes from a validated run
 * config, so one that is not allowed is a bug in the caller (an internal error).
 * @param {RenderOptions & { own: boolean }} o the options with their defaults; own: a user's server or image
 */
function checkedShape ({ strategy, instances, cpusPerInstance, lb, port, image, lbImage, benchmark, app, server, asIs, own, targetPort, constraints }) {
  const shape = deploymentShape({ strategy, instances, cpusPerInstance })
  if (cpusPerInstance !== undefined && !(cpusPerInstance > 0)) throw internalError(`--cpus-per-instance: ${cpusPerInstance} is not a number > 0`)
  if (!STACK_LBS.includes(lb)) throw internalError(`--lb: "${lb}" is not allowed here; one of: ${STACK_LBS.join(', ')} (resolve auto before rendering)`)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw internalError(`--port: ${port} is not a port (0..65535)`)
  if (!image) throw internalError('the register image tag is missing')
  if (shape.balanced && lb === 'haproxy' && !lbImage) throw internalError('lbImage: replicas behind HAProxy need the HAProxy image tag')
  if (!benchmark && !app && !own) throw internalError('--benchmark: missing; name a benchmark or a custom app')
  if (server && asIs) throw internalError('a user\'s image runs as it is (asIs) or through our launchers (server), not both')
  if (server && !(server.entry?.startsWith('/') && server.workingDir && server.registerDir)) {
    throw internalError(`server: ${JSON.stringify(server)} needs an absolute entry, a workingDir and a registerDir`)
  }
  if (!Number.isInteger(targetPort) || targetPort < 1 || targetPort > 65535) throw internalError(`--container-port: ${targetPort} is not a port (1..65535)`)
  if (!Array.isArray(constraints) || constraints.some(c => typeof c !== 'string' || !/^\s*[\w.-]+\s*(==|!=)\s*\S/.test(c))) {
    throw internalError(`constraints: ${JSON.stringify(constraints)}: each must look like "node.role == manager" or "node.labels.x != y"`)
  }
  return shape
}

/**
 * What the app service runs: a user's image as it is, a user's entry file through the shape's launcher, or our server
 * with its benchmark or custom app; on the image given, listening on targetPort.
 * @param {Record<string, any>} service the template's app service (changed in place)
 * @param {ReturnType<typeof deploymentShape>} shape
 * @param {Pick<RenderOptions, 'image' | 'targetPort' | 'asIs' | 'server' | 'benchmark' | 'app' | 'params'>} o
 */
function setAppProgram (service, shape, { image, targetPort, asIs, server, benchmark, app, params }) {
  service.image = image
  Object.assign(service.environment, { PORT: String(targetPort) })
  if (asIs) {
    // the user's image as it is: its own entrypoint, command, user and folder; only where to listen is said
    delete service.entrypoint
    delete service.command
    service.environment = { PORT: String(targetPort), HOST: '0.0.0.0' }
  } else if (server) {
    // the user's entry file, started by the shape's launcher with our hook preloaded, from its own folder
    Object.assign(service.environment, serverVars({ entry: server.entry, args: server.args, port: targetPort }))
    if (shape.process === 'pm2') service.environment.PM2_HOME = '/tmp/.pm2'
    if (server.nodeOptions) service.environment.NODE_OPTIONS = server.nodeOptions
    service.command = shapeArgs(shape.process, service.environment, server.registerDir)
    service.working_dir = server.workingDir
  } else {
    if (benchmark) service.environment.NODESCALE_BENCHMARK = benchmark
    if (app) service.environment.NODESCALE_APP = app
    if (Object.keys(params).length) service.environment.NODESCALE_PARAMS = JSON.stringify(params)
  }
}

/**
 * The app service's replicas, its CPU and memory limits per replica (reserved too unless reserve is false) and its
 * placement constraints.
 * @param {Record<string, any>} service the template's app service (changed in place)
 * @param {ReturnType<typeof deploymentShape>} shape
 * @param {{ memory: string | number | undefined, reserve: boolean, constraints: string[] }} o
 */
function setAppResources (service, shape, { memory, reserve, constraints }) {
  service.deploy.replicas = shape.replicas
  const limits = {}
  if (shape.cpusPerReplica !== undefined) limits.cpus = cpusText(shape.cpusPerReplica)
  if (memory !== undefined) limits.memory = String(memory)
  service.deploy.resources = Object.keys(limits).length ? { limits, ...(reserve ? { reservations: { ...limits } } : {}) } : {}
  service.deploy.placement.constraints = [...constraints]
}

/**
 * How the published port reaches the server: balanced replicas through the routing mesh (the template's HAProxy
 * removed) or through HAProxy in host mode; a single replica's own port, in host mode or through the mesh.
 * @param {Record<string, any>} doc the Compose object (changed in place)
 * @param {ReturnType<typeof deploymentShape>} shape
 * @param {{ lb: RenderOptions['lb'], port: number, targetPort: number, lbImage: string | undefined }} o
 */
function publishPort (doc, shape, { lb, port, targetPort, lbImage }) {
  const app = doc.services.app
  if (shape.balanced && lb === 'ingress') {
    delete doc.services.lb
    delete doc.configs
    // The routing mesh balances over VIP endpoints; dnsrr cannot publish in ingress mode.
    app.deploy.endpoint_mode = 'vip'
    app.ports = [{ target: targetPort, published: port, protocol: 'tcp', mode: 'ingress' }]
  } else if (shape.balanced && lb === 'haproxy') {
    const svc = doc.services.lb
    svc.image = lbImage
    svc.ports[0].published = port
    svc.ports[0].target = APP_PORT
  } else {
    app.ports[0].published = port
    app.ports[0].target = targetPort
    if (lb === 'ingress') {
      app.ports[0].mode = 'ingress'
      app.deploy.endpoint_mode = 'vip'
    }
  }
}

/**
 * Labels every service (and its deploy), network and config with the stack, the run and the owner.
 * @param {Record<string, any>} doc the Compose object (changed in place) @param {Record<string, string>} labels
 */
function labelResources (doc, labels) {
  for (const svc of Object.values(doc.services)) {
    svc.labels = { ...labels }
    svc.deploy.labels = { ...labels }
  }
  for (const net of Object.values(doc.networks ?? {})) net.labels = { ...labels }
  for (const cfg of Object.values(doc.configs ?? {})) cfg.labels = { ...labels }
}

/**
 * Renders the stack of a strategy as a Compose object. `x-nodescale` carries what the deployer needs (stack name,
 * expected instances, files).
 * @param {RenderOptions} opts
 * @returns {Record<string, any>}
 */
export function renderStack (opts) {
  const {
    strategy, instances, memory, image, lbImage, benchmark, app, params = {}, port = 0, lb, constraints = [], runId, reserve = true,
    owner = ownerId()
  } = opts
  const { server, asIs = false, targetPort = APP_PORT } = opts
  const own = Boolean(server) || asIs
  const shape = checkedShape({ ...opts, port, constraints, asIs, own, targetPort })
  const health = own ? opts.health ?? '/' : '/healthz'
  const stack = stackNameFor(runId)
  const doc = fillIn(yamlLoad(readFileSync(join(STACKS_DIR, shape.template), 'utf8')), { workers: String(shape.workers) })
  const labels = { [NAMESPACE_LABEL]: stack, [RUN_LABEL]: String(runId), [OWNER_LABEL]: owner }

  setAppProgram(doc.services.app, shape, { image, targetPort, asIs, server, benchmark, app, params })
  setAppResources(doc.services.app, shape, { memory, reserve, constraints })
  const balancer = shape.balanced && lb === 'haproxy'
  publishPort(doc, shape, { lb, port, targetPort, lbImage })
  const files = {}
  if (doc.configs?.haproxy_cfg) {
    files['haproxy.cfg'] = renderHaproxyConfig({ service: 'app', port: targetPort, listen: APP_PORT, slots: Math.max(16, shape.replicas), health })
  }
  labelResources(doc, labels)
  const entry = balancer ? 'lb' : 'app'
  // readiness: every instance names itself (our server, or the hook in a user's), or for an image run as it is only
  // its health path answers (no instance header: how many processes answer is not known)
  const readiness = asIs ? 'health-only' : 'instances'
  doc['x-nodescale'] = {
    stack,
    runId: String(runId),
    strategy,
    instances,
    lb,
    entry,
    expect: shape.answering,
    targetPort: balancer ? APP_PORT : targetPort,
    health,
    any2xx: own,
    readiness,
    files
  }
  return doc
}

/**
 * Fills a template's own placeholders ({{workers}}) inside the parsed values; Swarm's templates ({{.Task.Slot}}) stay.
 * @param {any} node
 * @param {Record<string, string>} values
 */
function fillIn (node, values) {
  if (typeof node === 'string') return node.replace(/\{\{(\w+)\}\}/g, (m, key) => values[key] ?? m)
  if (Array.isArray(node)) return node.map(x => fillIn(x, values))
  if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, fillIn(v, values)]))
  return node
}

/**
 * Writes a rendered stack as a Compose file plus the files it names, for `docker stack deploy -c` by hand.
 * @param {Record<string, any>} stack
 * @param {string} dir
 * @returns {string} the Compose file's path
 */
export function writeStackFiles (stack, dir) {
  const meta = stack['x-nodescale']
  for (const [name, text] of Object.entries(meta.files ?? {})) writeFileSync(join(dir, name), text)
  const file = join(dir, 'docker-compose.yml')
  writeFileSync(file, yamlDump(stack, { lineWidth: -1, noRefs: true }))
  return file
}
