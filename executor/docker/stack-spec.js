// Converts a Compose stack object into Docker Engine API specs, in the shape `docker stack deploy` creates (names
// `<stack>_<name>`, namespace labels, aliases).
import { fail } from '../../lib/messages.js'
import { NAMESPACE_LABEL } from './stack-render.js'

const UNITS = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/**
 * Bytes of a Docker memory size ("512M", "1g", "256mb", 1048576), as the CLI reads them (binary units).
 * @param {string | number} value
 */
export function parseBytes (value) {
  if (typeof value === 'number') return Math.floor(value)
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(String(value))
  if (!m) throw fail('MEMORY_NOT_A_SIZE', { value })
  return Math.floor(Number(m[1]) * UNITS[m[2].toLowerCase()])
}

/**
 * Nanoseconds of a Compose duration ("5s", "1m30s", "500ms").
 * @param {string | number | undefined} value
 */
export function parseDuration (value) {
  if (value === undefined) return undefined
  if (typeof value === 'number') return Math.round(value * 1e9)
  const unit = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 }
  let total = 0
  let rest = String(value).trim()
  while (rest) {
    const m = /^(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/.exec(rest)
    if (!m) throw fail('DURATION_NOT_VALID', { value })
    total += Number(m[1]) * unit[m[2]]
    rest = rest.slice(m[0].length)
  }
  return Math.round(total)
}

/**
 * A Compose capability list as the Engine API takes it (what the docker CLI sends): upper case, CAP_ prefixed, but ALL.
 * @param {string | string[]} caps
 */
export function capabilities (caps) {
  return [].concat(caps).map(c => {
    const name = String(c).trim().toUpperCase()
    return name === 'ALL' || name.startsWith('CAP_') ? name : `CAP_${name}`
  })
}

const envList = (env = {}) => Array.isArray(env) ? [...env] : Object.entries(env).map(([k, v]) => (v === null || v === undefined ? k : `${k}=${v}`)).sort()

function resources (res = {}) {
  const one = (r) => {
    if (!r) return undefined
    const out = {}
    if (r.cpus !== undefined) out.NanoCPUs = Math.round(Number(r.cpus) * 1e9)
    if (r.memory !== undefined) out.MemoryBytes = parseBytes(r.memory)
    return Object.keys(out).length ? out : undefined
  }
  return { Limits: one(res.limits), Reservations: one(res.reservations) }
}

/**
 * The API objects of a stack: networks and configs to create first, then services.
 * @param {Record<string, any>} doc a rendered Compose object (renderStack)
 * @param {{ configIds?: Record<string, string>, secretIds?: Record<string, string>, stack?: string }} [opts] ids of
 *   created configs and secrets by Compose name; stack overrides x-nodescale.stack
 * @returns {{ stack: string, networks: any[], configs: any[], services: any[] }}
 */
export function stackSpecs (doc, { configIds = {}, secretIds = {}, stack: name } = {}) {
  const stack = name ?? doc['x-nodescale']?.stack
  if (!stack) throw fail('STACK_NOT_RENDERED')
  const files = doc['x-nodescale']?.files ?? {}
  /** @type {StackContext} */
  const ctx = { stack, configIds, secretIds, ns: (labels = {}) => ({ ...labels, [NAMESPACE_LABEL]: stack }) }
  const networks = Object.entries(doc.networks ?? {}).map(([name, n]) => ({
    key: name,
    Name: `${stack}_${name}`,
    Driver: n?.driver ?? 'overlay',
    Attachable: Boolean(n?.attachable),
    Labels: ctx.ns(n?.labels),
    CheckDuplicate: true
  }))
  const configs = Object.entries(doc.configs ?? {}).map(([name, c]) => {
    const file = String(c.file ?? '').replace(/^\.\//, '')
    const text = c.content ?? files[file]
    if (text === undefined) throw fail('STACK_CONFIG_MISSING', { stack, name, file: c.file })
    return { key: name, Name: `${stack}_${name}`, Labels: ctx.ns(c.labels), Data: Buffer.from(text).toString('base64') }
  })
  const services = Object.entries(doc.services).map(([name, s]) => ({ key: name, spec: serviceSpec(ctx, name, s) }))
  return { stack, networks, configs, services }
}

/**
 * @typedef {{ stack: string, configIds: Record<string, string>, secretIds: Record<string, string>, ns: (labels?:
 *   Record<string, string>) => Record<string, string> }} StackContext the stack's name, the ids of its configs and
 *   secrets once created, and its labels with its namespace label
 */

/**
 * One service of the stack as the Engine API takes it: its container, resources, restart policy, placement, networks,
 * replicas and published ports.
 * @param {StackContext} ctx @param {string} name @param {any} s the service in the stack file
 */
function serviceSpec (ctx, name, s) {
  const deploy = s.deploy ?? {}
  return {
    Name: `${ctx.stack}_${name}`,
    Labels: { ...ctx.ns(deploy.labels), 'com.docker.stack.image': s.image },
    TaskTemplate: {
      ContainerSpec: containerSpec(ctx, name, s),
      Resources: resources(deploy.resources),
      RestartPolicy: {
        Condition: deploy.restart_policy?.condition ?? 'any',
        Delay: parseDuration(deploy.restart_policy?.delay ?? '5s'),
        ...(deploy.restart_policy?.max_attempts !== undefined ? { MaxAttempts: deploy.restart_policy.max_attempts } : {})
      },
      Placement: {
        Constraints: [...(deploy.placement?.constraints ?? [])],
        ...(deploy.placement?.max_replicas_per_node ? { MaxReplicas: Number(deploy.placement.max_replicas_per_node) } : {})
      },
      Networks: [].concat(s.networks ?? []).map(n => ({ Target: `${ctx.stack}_${n}`, Aliases: [name] }))
    },
    Mode: deploy.mode === 'global' ? { Global: {} } : { Replicated: { Replicas: deploy.replicas ?? 1 } },
    EndpointSpec: {
      Mode: deploy.endpoint_mode ?? 'vip',
      Ports: (s.ports ?? []).map(p => ({
        Protocol: p.protocol ?? 'tcp',
        TargetPort: Number(p.target),
        ...(p.published ? { PublishedPort: Number(p.published) } : {}),
        PublishMode: p.mode ?? 'ingress'
      }))
    }
  }
}

/**
 * A service's container: image, command, environment, who it runs as and what it may do (ContainerSpec keys of Engine
 * API 1.41, Docker 20.10), its mounts, secrets and configs.
 * @param {StackContext} ctx @param {string} name @param {any} s
 */
function containerSpec (ctx, name, s) {
  return {
    Image: s.image,
    ...(s.entrypoint ? { Command: [].concat(s.entrypoint) } : {}),
    ...(s.command ? { Args: [].concat(s.command).map(String) } : {}),
    Env: envList(s.environment),
    ...(s.working_dir ? { Dir: String(s.working_dir) } : {}),
    Labels: ctx.ns(s.labels),
    ...(s.stop_grace_period ? { StopGracePeriod: parseDuration(s.stop_grace_period) } : {}),
    ...(s.init !== undefined ? { Init: Boolean(s.init) } : {}),
    ...(s.user !== undefined ? { User: String(s.user) } : {}),
    ...(s.read_only !== undefined ? { ReadOnly: Boolean(s.read_only) } : {}),
    ...(s.cap_add ? { CapabilityAdd: capabilities(s.cap_add) } : {}),
    ...(s.cap_drop ? { CapabilityDrop: capabilities(s.cap_drop) } : {}),
    Mounts: (s.volumes ?? []).map(v => mountOf(ctx, name, v)),
    Secrets: (s.secrets ?? []).map(x => fileRef(ctx, name, 'secret', x)),
    Configs: (s.configs ?? []).map(c => fileRef(ctx, name, 'config', c))
  }
}

/** A long-form bind or volume mount; a named volume is the stack's, as docker stack deploy names it. */
function mountOf (ctx, name, v) {
  if (typeof v !== 'object' || !['bind', 'volume'].includes(v.type)) {
    throw fail('STACK_MOUNT_SHORT', { stack: ctx.stack, service: name, got: JSON.stringify(v) })
  }
  return {
    Type: v.type,
    Source: v.type === 'volume' ? `${ctx.stack}_${v.source}` : v.source,
    Target: v.target,
    ReadOnly: Boolean(v.read_only),
    ...(v.type === 'volume' ? { VolumeOptions: { Labels: ctx.ns({}) } } : {})
  }
}

/**
 * A secret's or a config's file in the container, by the id it was created with: a secret at /run/secrets/<target>,
 * a config at /<source> unless a target is given; mode 0444 and root's unless said.
 * @param {StackContext} ctx @param {string} name @param {'secret'|'config'} kind @param {string | any} x
 */
function fileRef (ctx, name, kind, x) {
  const ref = typeof x === 'string' ? { source: x } : x
  const id = (kind === 'secret' ? ctx.secretIds : ctx.configIds)[ref.source]
  if (!id) throw fail('STACK_SOURCE_NOT_CREATED', { stack: ctx.stack, service: name, kind, source: ref.source })
  const owner = { UID: String(ref.uid ?? '0'), GID: String(ref.gid ?? '0'), Mode: ref.mode ?? 0o444 }
  return kind === 'secret'
    ? { File: { Name: ref.target ?? ref.source, ...owner }, SecretID: id, SecretName: ref.secretName ?? ref.source }
    : { File: { Name: ref.target ?? `/${ref.source}`, ...owner }, ConfigID: id, ConfigName: `${ctx.stack}_${ref.source}` }
}
