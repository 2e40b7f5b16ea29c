// Renders a strategy's Compose template (stacks/<strategy>.yml) from a run's config: js-yaml in, a plain Compose object out, no text substitution in YAML.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { hostname } from 'node:os'
import { load as yamlLoad, dump as yamlDump } from 'js-yaml'
import { ROOT } from '../paths.js'
import { badFlag } from '../errors.js'
import { APP_PORT } from './image-build.js'

export const STACK_STRATEGIES = Object.freeze(['up', 'cm', 'pm2', 'hs'])
export const STACK_LBS = Object.freeze(['ingress', 'haproxy'])
export const NAMESPACE_LABEL = 'com.docker.stack.namespace'
export const RUN_LABEL = 'io.nodescale.run'
export const OWNER_LABEL = 'io.nodescale.owner'
/** HAProxy exits at start when maxconn does not fit a container's FD limit (about 20000 here). */
export const LB_MAXCONN = 4000

const STACKS_DIR = join(ROOT, 'stacks')

/** A Swarm stack name for a run id: lowercase letters, digits, - and _, short enough for `<stack>_<service>`. */
export function stackNameFor (runId) {
  const name = `ns-${String(runId).toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '')}`.slice(0, 48).replace(/-+$/, '')
  if (name === 'ns') throw badFlag('runId', `"${runId}" has no letters or digits`)
  return name
}

/** Formats a CPU count the way Compose writes it ("0.25"). */
const cpusText = (n) => String(Number(n.toFixed(3)))

/** The owner of a deployment: a later run removes leftovers only when their owner process is gone. */
export const ownerId = () => `${hostname()}:${process.pid}`

/**
 * @typedef {object} RenderOptions
 * @property {'up'|'cm'|'pm2'|'hs'} strategy
 * @property {number} instances
 * @property {number} [cpusPerInstance] no CPU limit when undefined
 * @property {string|number} [memory] memory limit per replica ("512M" or bytes)
 * @property {string} image register image tag
 * @property {string} [lbImage] HAProxy image tag (hs with lb haproxy)
 * @property {string} [benchmark]
 * @property {string} [app] path of a custom app INSIDE the image (buildImage's `apps[].path`)
 * @property {Record<string, string>} [params]
 * @property {number} [port] published port; 0 = pick one at deploy
 * @property {'ingress'|'haproxy'} lb how the published port is reached: Swarm's routing mesh, or host mode (+ HAProxy for hs)
 * @property {string[]} [constraints] placement constraints of the server's service, e.g. "node.role == worker"
 * @property {string} runId
 * @property {boolean} [reserve] reserve the CPU and memory limits too (the scheduler then refuses what does not fit); default true
 * @property {string} [owner]
 */

/**
 * Renders the stack of a strategy as a Compose object. `x-nodescale` carries what the deployer needs (stack name, expected instances, files).
 * @param {RenderOptions} opts
 * @returns {Record<string, any>}
 */
export function renderStack (opts) {
  const { strategy, instances, cpusPerInstance, memory, image, lbImage, benchmark, app, params = {}, port = 0, lb, constraints = [], runId, reserve = true, owner = ownerId() } = opts
  if (!STACK_STRATEGIES.includes(strategy)) throw badFlag('--strategy', `"${strategy}" is not allowed; one of: ${STACK_STRATEGIES.join(', ')}`)
  if (!Number.isInteger(instances) || instances < 1) throw badFlag('--instances', `${instances} is not a whole number >= 1`)
  if (cpusPerInstance !== undefined && !(cpusPerInstance > 0)) throw badFlag('--cpus-per-instance', `${cpusPerInstance} is not a number > 0`)
  if (!STACK_LBS.includes(lb)) throw badFlag('--lb', `"${lb}" is not allowed here; one of: ${STACK_LBS.join(', ')} (resolve auto before rendering)`)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw badFlag('--port', `${port} is not a port (0..65535)`)
  if (!image) throw badFlag('image', 'the register image tag is missing')
  if (strategy === 'hs' && lb === 'haproxy' && !lbImage) throw badFlag('lbImage', 'hs with lb haproxy needs the HAProxy image tag')
  if (!benchmark && !app) throw badFlag('--benchmark', 'missing; name a benchmark or a custom app')
  if (!Array.isArray(constraints) || constraints.some(c => typeof c !== 'string' || !/^\s*[\w.-]+\s*(==|!=)\s*\S/.test(c))) {
    throw badFlag('constraints', `${JSON.stringify(constraints)}: each must look like "node.role == manager" or "node.labels.x != y"`)
  }
  const stack = stackNameFor(runId)
  const doc = /** @type {Record<string, any>} */ (yamlLoad(readFileSync(join(STACKS_DIR, `${strategy}.yml`), 'utf8')))
  const labels = { [NAMESPACE_LABEL]: stack, [RUN_LABEL]: String(runId), [OWNER_LABEL]: owner }
  const app_ = doc.services.app
  const hs = strategy === 'hs'
  const replicas = hs ? instances : 1
  const cpus = cpusPerInstance === undefined ? undefined : (hs ? cpusPerInstance : instances * cpusPerInstance)

  app_.image = image
  Object.assign(app_.environment, { PORT: String(APP_PORT) })
  if (benchmark) app_.environment.NODESCALE_BENCHMARK = benchmark
  if (app) app_.environment.NODESCALE_APP = app
  if (Object.keys(params).length) app_.environment.NODESCALE_PARAMS = JSON.stringify(params)
  if (strategy === 'cm') app_.environment.NODESCALE_WORKERS = String(instances)
  if (strategy === 'pm2') app_.command[app_.command.indexOf('-i') + 1] = String(instances)
  app_.deploy.replicas = replicas
  const limits = {}
  if (cpus !== undefined) limits.cpus = cpusText(cpus)
  if (memory !== undefined) limits.memory = String(memory)
  app_.deploy.resources = Object.keys(limits).length ? { limits, ...(reserve ? { reservations: { ...limits } } : {}) } : {}
  app_.deploy.placement.constraints = [...constraints]

  const entry = hs && lb === 'haproxy' ? 'lb' : 'app'
  if (hs && lb === 'ingress') {
    delete doc.services.lb
    delete doc.configs
    // The routing mesh balances over VIP endpoints; dnsrr cannot publish in ingress mode.
    app_.deploy.endpoint_mode = 'vip'
    app_.ports = [{ target: APP_PORT, published: port, protocol: 'tcp', mode: 'ingress' }]
  } else if (hs) {
    const svc = doc.services.lb
    svc.image = lbImage
    svc.ports[0].published = port
    svc.ports[0].target = APP_PORT
  } else {
    app_.ports[0].published = port
    app_.ports[0].target = APP_PORT
    if (lb === 'ingress') {
      app_.ports[0].mode = 'ingress'
      app_.deploy.endpoint_mode = 'vip'
    }
  }
  const files = {}
  if (doc.configs?.haproxy_cfg) {
    files['haproxy.cfg'] = renderHaproxyConfig({ service: 'app', port: APP_PORT, listen: APP_PORT, slots: Math.max(16, instances) })
  }
  for (const svc of Object.values(doc.services)) {
    svc.labels = { ...labels }
    svc.deploy.labels = { ...labels }
  }
  for (const net of Object.values(doc.networks ?? {})) net.labels = { ...labels }
  for (const cfg of Object.values(doc.configs ?? {})) cfg.labels = { ...labels }
  doc['x-nodescale'] = { stack, runId: String(runId), strategy, instances, lb, entry, expect: strategy === 'up' ? 1 : instances, targetPort: APP_PORT, files }
  return doc
}

/**
 * HAProxy's config for the hs stack (stacks/haproxy.cfg with its placeholders filled).
 * @param {{ service: string, port: number, listen: number, slots?: number, maxconn?: number }} opts
 */
export function renderHaproxyConfig ({ service, port, listen, slots = 16, maxconn = LB_MAXCONN }) {
  const values = { service, port, listen, slots, maxconn: Math.min(maxconn, LB_MAXCONN) }
  return readFileSync(join(STACKS_DIR, 'haproxy.cfg'), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, key) => {
    if (!(key in values)) throw new Error(`stacks/haproxy.cfg: unknown placeholder ${m}`)
    return String(values[key])
  })
}

/**
 * Writes a rendered stack as a Compose file plus the files it names, for `docker stack deploy -c` by hand.
 * @param {Record<string, any>} stack
 * @param {string} dir
 * @returns {string} the Compose file's path
 */
export function writeStackFiles (stack, dir) {
  mkdirSync(dir, { recursive: true })
  const meta = stack['x-nodescale']
  for (const [name, text] of Object.entries(meta.files ?? {})) writeFileSync(join(dir, name), text)
  const file = join(dir, 'docker-compose.yml')
  writeFileSync(file, yamlDump(stack, { lineWidth: -1, noRefs: true }))
  return file
}
