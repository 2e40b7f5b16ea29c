// Parses and validates a run's configuration before anything starts; the result is frozen.
import { parseArgs } from 'node:util'
import { availableParallelism, totalmem } from 'node:os'
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { NsError, badFlag } from './errors.js'
import { STRATEGIES, BACKENDS, LOAD_BALANCERS, DRIVER_NAMES, PLACEMENTS, DEFAULTS, LIMITS } from './defaults.js'

/** The flags of `executor run`, in the form node:util parseArgs takes. */
export const RUN_OPTIONS = Object.freeze({
  strategy: { type: 'string', short: 's' },
  instances: { type: 'string', short: 'n' },
  benchmark: { type: 'string', short: 'b' },
  concurrency: { type: 'string', short: 'c' },
  rate: { type: 'string', short: 'r' },
  duration: { type: 'string', short: 'd' },
  warmup: { type: 'string', short: 'w' },
  driver: { type: 'string' },
  backend: { type: 'string' },
  'cpus-per-instance': { type: 'string' },
  'memory-per-instance': { type: 'string' },
  app: { type: 'string' },
  param: { type: 'string', multiple: true, short: 'p' },
  out: { type: 'string', short: 'o' },
  port: { type: 'string' },
  lb: { type: 'string' },
  'ready-timeout': { type: 'string' },
  nodes: { type: 'string' },
  placement: { type: 'string' },
  constraint: { type: 'string', multiple: true },
  registry: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' }
})

/**
 * Parses argv with the given option table; unknown flags and missing values become NS_ERR_BAD_FLAG.
 * @param {string[]} argv
 * @param {Record<string, any>} options
 * @returns {{ values: Record<string, any>, positionals: string[] }}
 */
export function parseFlags (argv, options) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (err) {
    const m = /--[a-z][\w-]*/i.exec(err.message) ?? /'(-\w)/.exec(err.message)
    const flag = m ? m[m.length - 1] : 'arguments'
    const known = Object.keys(options).map(k => `--${k}`).join(', ')
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw badFlag(flag, `unknown flag; known flags: ${known}`)
    if (/ambiguous/.test(err.message)) throw badFlag(flag, `needs a value; write a value that starts with "-" as ${flag}=-1 (and note that negative values are not allowed for most flags)`)
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw badFlag(flag, 'needs a value')
    throw badFlag(flag, err.message)
  }
}

/** A memory size like 512M or 1G, in bytes: at least 6 MiB (Docker's minimum) and at most the machine's memory. */
function memorySize (raw) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg])i?b?\s*$/i.exec(raw)
  const allowed = 'a size like 256M or 1G, from 6M to the machine\'s memory'
  if (!m) throw badFlag('--memory-per-instance', `"${raw}" is not a size; allowed: ${allowed}`)
  const bytes = Math.floor(Number(m[1]) * 1024 ** ({ k: 1, m: 2, g: 3 }[m[2].toLowerCase()]))
  if (bytes < 6 * 1024 ** 2 || bytes > totalmem()) throw badFlag('--memory-per-instance', `${raw} is out of range; allowed: ${allowed}`)
  return bytes
}

function number (flag, raw, { min, max, integer = false, minExclusive = false }) {
  const text = String(raw).trim()
  const value = Number(text)
  const kind = integer ? 'a whole number' : 'a number'
  const range = `${minExclusive ? '>' : '>='} ${min} and <= ${max}`
  if (text === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw badFlag(flag, `"${raw}" is not ${kind}; allowed: ${kind} ${range}`)
  }
  if ((minExclusive ? value <= min : value < min) || value > max) {
    throw badFlag(flag, `${value} is out of range; allowed: ${kind} ${range}`)
  }
  return value
}

function oneOf (flag, raw, allowed) {
  if (!allowed.includes(raw)) throw badFlag(flag, `"${raw}" is not allowed; one of: ${allowed.join(', ')}`)
  return raw
}

/** Swarm constraint expressions as `docker service create --constraint` takes them: `<attribute> ==|!= <value>`. */
function constraints (list = []) {
  for (const c of list) {
    if (!/^\s*node\.[\w.-]+\s*(==|!=)\s*\S+\s*$/.test(c)) {
      throw badFlag('--constraint', `"${c}" is not a Swarm constraint; allowed: node.<attribute> == or != <value>, e.g. node.labels.io.nodescale.node==nodescale-w1 or node.hostname!=vm`)
    }
  }
  return Object.freeze(list.map(c => c.trim()))
}

/** How the images reach the nodes: a registry as HOST:PORT (a port is required: a local registry has no default), the
 * control plane's own (builtin), or none (every node has them already). */
function registry (raw) {
  if (raw === undefined || raw === 'builtin' || raw === 'none') return raw
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})$/i.test(raw) || Number(raw.split(':')[1]) > 65535) {
    throw badFlag('--registry', `"${raw}" is not allowed; HOST:PORT (e.g. --registry 10.0.0.5:5000), builtin (the control plane's registry on the manager) or none`)
  }
  return raw
}

function params (list = []) {
  /** @type {Record<string, string>} */
  const out = {}
  for (const item of list) {
    const eq = item.indexOf('=')
    if (eq <= 0) throw badFlag('--param', `"${item}" is not key=value (e.g. --param n=104729)`)
    out[item.slice(0, eq).trim()] = item.slice(eq + 1)
  }
  return out
}

/**
 * Validates raw flag values (strings, as parsed) into a run config. No side effects.
 * Checks that need the machine (custom app loading, HAProxy, Docker) come later, still before anything starts.
 * @param {Record<string, any>} values
 * @param {{ cwd?: string, cpus?: number }} [ctx]
 */
export function validateRunConfig (values, { cwd = process.cwd(), cpus = availableParallelism() } = {}) {
  if (values.strategy === undefined) throw badFlag('--strategy', `is required; one of: ${STRATEGIES.join(', ')}`)
  const strategy = oneOf('--strategy', values.strategy, STRATEGIES)
  if (values.instances === undefined) throw badFlag('--instances', `is required: how many ${instanceWord(strategy)} (a whole number >= 1)`)
  const instances = number('--instances', values.instances, { min: 1, max: LIMITS.instances, integer: true })
  if (values.concurrency !== undefined && values.rate !== undefined) {
    throw badFlag('--rate', 'cannot be combined with --concurrency: choose the closed model (--concurrency C) or the open model (--rate R)')
  }
  const rate = values.rate === undefined ? undefined : number('--rate', values.rate, { min: 0, max: LIMITS.rate, minExclusive: true })
  const concurrency = rate !== undefined
    ? undefined
    : number('--concurrency', values.concurrency ?? DEFAULTS.concurrency, { min: 1, max: LIMITS.concurrency, integer: true })
  const backend = oneOf('--backend', values.backend ?? DEFAULTS.backend, BACKENDS)
  const cpusPerInstance = values['cpus-per-instance'] === undefined
    ? undefined
    : number('--cpus-per-instance', values['cpus-per-instance'], { min: 0, max: cpus, minExclusive: true })
  const memoryPerInstance = values['memory-per-instance'] === undefined ? undefined : memorySize(values['memory-per-instance'])
  const lb = oneOf('--lb', values.lb ?? DEFAULTS.lb, LOAD_BALANCERS)
  if (values.lb !== undefined && strategy !== 'hs') throw badFlag('--lb', `only applies to --strategy hs (got --strategy ${strategy})`)
  // with --app the module names itself unless --benchmark says otherwise
  const benchmark = values.benchmark ?? (values.app === undefined ? DEFAULTS.benchmark : undefined)
  if (benchmark !== undefined && !/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(benchmark)) throw badFlag('--benchmark', `"${benchmark}" is not a name (letters, digits, - and _)`)
  let app
  if (values.app !== undefined) {
    app = values.app.startsWith('cmd:') ? values.app : resolve(cwd, values.app)
    if (!app.startsWith('cmd:') && !existsSync(app)) {
      throw new NsError('NS_ERR_BAD_APP', `--app: no file at ${app}`)
    }
  }
  const out = resolve(cwd, values.out ?? DEFAULTS.out)
  if (existsSync(out) && !statSync(out).isDirectory()) throw badFlag('--out', `${out} exists and is not a folder`)
  return Object.freeze({
    strategy,
    instances,
    benchmark,
    app,
    params: Object.freeze(params(values.param)),
    concurrency,
    rate,
    duration: number('--duration', values.duration ?? DEFAULTS.duration, { min: 0, max: LIMITS.duration, minExclusive: true }),
    warmup: number('--warmup', values.warmup ?? DEFAULTS.warmup, { min: 0, max: LIMITS.warmup }),
    driver: oneOf('--driver', values.driver ?? DEFAULTS.driver, DRIVER_NAMES),
    backend,
    cpusPerInstance,
    memoryPerInstance,
    lb,
    port: number('--port', values.port ?? DEFAULTS.port, { min: 0, max: 65535, integer: true }),
    readyTimeout: number('--ready-timeout', values['ready-timeout'] ?? DEFAULTS.readyTimeout, { min: 0, max: 3600, minExclusive: true }),
    ...swarmPlacement(values, backend),
    out,
    json: Boolean(values.json),
    quiet: Boolean(values.quiet)
  })
}

/**
 * The Swarm-only flags: --nodes (worker nodes to use), --placement, --constraint, --registry. Checked against the swarm's nodes
 * later (backends/swarm.js), before anything is deployed.
 */
function swarmPlacement (values, backend) {
  const given = ['nodes', 'placement', 'constraint', 'registry'].find(k => values[k] !== undefined)
  if (given && backend === 'local') throw badFlag(`--${given}`, 'only applies to Swarm runs (--backend swarm or auto); the local backend has one node')
  return {
    nodes: values.nodes === undefined ? undefined : number('--nodes', values.nodes, { min: 1, max: LIMITS.nodes, integer: true }),
    placement: oneOf('--placement', values.placement ?? DEFAULTS.placement, PLACEMENTS),
    constraints: constraints(values.constraint),
    registry: registry(values.registry)
  }
}

/** What "instances" counts for a strategy, for messages. */
export function instanceWord (strategy) {
  return { up: 'vCPUs for the one Node process', cm: 'cluster workers', pm2: 'PM2 instances', hs: 'replicas behind a load balancer' }[strategy] ?? 'instances'
}
