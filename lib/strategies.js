// The strategy table: what --instances N means for each scaling strategy, and the deployment shape it gives, read by
// every place that decides per strategy (validation, both backends, the stack templates, the analyzer's units).
import { internalError } from './errors.js'
import { parseCpuList } from './cpu-list.js'

/**
 * @typedef {object} Strategy
 * @property {string} name the --strategy value
 * @property {string} summary one line for --help
 * @property {string} means what N counts, for messages ("how many <means>")
 * @property {string} unit the word for N in fits and reports
 * @property {'single'|'cluster'|'pm2'} process how one replica runs the server (register/launch-command.js knows how to
 *   start each): one Node process, Node's cluster module (a primary and workers), PM2 cluster mode
 * @property {boolean} replicated N replicas of one instance each (behind a load balancer), else one replica holding all
 *   N
 * @property {boolean} pinned locally, the one process is pinned to N cores (CPU affinity): N vCPUs for one event loop;
 *   `--affinity none` runs it unpinned instead, as the OS schedules it
 * @property {string} template the Swarm stack template under stacks/
 */

/** The instances any strategy runs: --instances' range, and what a cluster or PM2 primary accepts from its launcher. */
export const INSTANCES = Object.freeze({ min: 1, max: 64 })

/** @type {Readonly<Record<string, Readonly<Strategy>>>} */
export const STRATEGY_TABLE = Object.freeze({
  up: {
    name: 'up',
    summary: 'one Node process given N vCPUs (local: CPU affinity to N cores)',
    means: 'vCPUs for the one Node process',
    unit: 'cores',
    process: 'single',
    replicated: false,
    pinned: true,
    template: 'up.yml'
  },
  cm: {
    name: 'cm',
    summary: 'Node\'s cluster module with N workers',
    means: 'cluster workers',
    unit: 'workers',
    process: 'cluster',
    replicated: false,
    pinned: false,
    template: 'cm.yml'
  },
  pm2: {
    name: 'pm2',
    summary: 'PM2 cluster mode with N instances',
    means: 'PM2 instances',
    unit: 'instances',
    process: 'pm2',
    replicated: false,
    pinned: false,
    template: 'pm2.yml'
  },
  hs: {
    name: 'hs',
    summary: 'N single-process replicas behind a load balancer (local: HAProxy)',
    means: 'replicas behind a load balancer',
    unit: 'replicas',
    process: 'single',
    replicated: true,
    pinned: false,
    template: 'hs.yml'
  }
})

/** The strategy names, in the table's order. */
export const STRATEGIES = Object.freeze(Object.keys(STRATEGY_TABLE))

/**
 * A strategy's row. Names come validated from the option table: an unknown one here is a bug.
 * @param {string} name
 * @returns {Readonly<Strategy>}
 */
export function strategyOf (name) {
  const row = STRATEGY_TABLE[name]
  if (!row) throw internalError(`--strategy: "${name}" is not allowed; one of: ${STRATEGIES.join(', ')} (the option table lets no other through)`)
  return row
}

/**
 * @typedef {object} DeploymentShape
 * @property {string} strategy
 * @property {number} instances N as given
 * @property {number} replicas how many copies run (containers on Swarm, launches locally)
 * @property {'single'|'cluster'|'pm2'} process how each replica runs the server
 * @property {number} workers server processes inside one replica (cluster workers, PM2 instances; 1 for a single
 *   process)
 * @property {number} answering distinct instances that answer when the deployment is ready (replicas x workers)
 * @property {boolean} balanced a load balancer stands in front of the replicas
 * @property {number|undefined} cpusPerReplica the CPU quota of one replica: its instances x --cpus-per-instance
 * @property {number|undefined} memoryPerReplica the memory limit of one replica, in bytes: its instances x
 *   --memory-per-instance
 * @property {number} pinnedCores locally, the cores the one process is pinned to (0: not pinned, also with --affinity
 *   none)
 * @property {string} template
 */

/**
 * What a run deploys, worked out once from its strategy and N: both backends and the stack renderer read this.
 * @param {{ strategy: string, instances: number, cpusPerInstance?: number, memoryPerInstance?: number, affinity?:
 *   string }} config
 * @returns {DeploymentShape}
 */
export function deploymentShape ({ strategy, instances, cpusPerInstance, memoryPerInstance, affinity }) {
  const s = strategyOf(strategy)
  if (!Number.isInteger(instances) || instances < 1) {
    throw internalError(`--instances: ${instances} is not a whole number >= 1 (the option table lets no other through)`)
  }
  const replicas = s.replicated ? instances : 1
  // how many instances' worth one replica holds: its quota, its memory and (cluster, PM2) its workers scale with it
  const perReplica = s.replicated ? 1 : instances
  const workers = s.process === 'single' ? 1 : perReplica
  return {
    strategy: s.name,
    instances,
    replicas,
    process: s.process,
    workers,
    answering: replicas * workers,
    balanced: s.replicated,
    cpusPerReplica: cpusPerInstance === undefined ? undefined : perReplica * cpusPerInstance,
    memoryPerReplica: memoryPerInstance === undefined ? undefined : perReplica * memoryPerInstance,
    pinnedCores: s.pinned && affinity !== 'none' ? instances : 0,
    template: s.template
  }
}

/** The cores the server may use: those of --server-cpus (locally), else the machine's. */
const givenCores = (/** @type {{ serverCpus?: string }} */ config, machineCores) =>
  config.serverCpus ? Math.min(machineCores, parseCpuList(config.serverCpus)?.length ?? machineCores) : machineCores

/**
 * The most CPU a deployed shape can use, in cores: its quota over all replicas, else one core per server process (a
 * Node process runs its JavaScript on one thread), and never more than the machine has.
 * @param {{ strategy: string, instances: number, cpusPerInstance?: number, serverCpus?: string }} config
 * @param {number} machineCores
 */
export function serverCores (config, machineCores) {
  machineCores = givenCores(config, machineCores)
  const shape = deploymentShape(config)
  const quota = shape.cpusPerReplica === undefined ? Infinity : shape.cpusPerReplica * shape.replicas
  return Math.min(quota, shape.replicas * shape.workers, machineCores)
}

/**
 * The CPU a deployed shape is given, in cores, whatever its processes can use of it: its quota over all replicas, else
 * the cores it is pinned to, else the machine's.
 * @param {{ strategy: string, instances: number, cpusPerInstance?: number, affinity?: string, serverCpus?: string }}
 *   config
 * @param {number} machineCores
 */
export function serverAllowance (config, machineCores) {
  machineCores = givenCores(config, machineCores)
  const shape = deploymentShape(config)
  if (shape.cpusPerReplica !== undefined) return Math.min(shape.cpusPerReplica * shape.replicas, machineCores)
  return shape.pinnedCores ? Math.min(shape.pinnedCores, machineCores) : machineCores
}
