// The local backend: the server under test on this machine, each replica a local launch of its process shape (one
// process, Node's cluster module, PM2), several replicas behind HAProxy; its CPU from a cgroup of the run's own.
import { availableParallelism, hostname } from 'node:os'
import { badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { freePort, is2xx, waitForInstances } from '../../lib/net.js'
import { serverFolder } from '../../benchmarks/whole-server.js'
import { deploymentShape, strategyOf } from '../../lib/strategies.js'
import { launch } from '../../register/launch.js'
import { allowedCpus } from '../../rc/cpu-affinity.js'
import { createCpuGroup } from '../../rc/cpu-group.js'
import { createSampler } from '../../rc/sampler.js'
import { withSamples } from '../../rc/with-samples.js'
import { createQuotaGroup } from '../cpu-quota.js'
import { cpuPartition } from '../load-cpus.js'
import { readHaproxyStats, requireHaproxy, startHaproxy } from '../haproxy.js'

/** Runs a list of wrappers innermost-last: the process joins every group before it execs. */
function composeWraps (wraps) {
  const list = wraps.filter(Boolean)
  return (cmd, args) => list.reduceRight((acc, w) => w(acc.cmd, acc.args), { cmd, args })
}

/**
 * What the local backend cannot run: more pinned vCPUs than the server's cores (or the machine's, without a quota
 * that fits), a Swarm memory limit, the routing mesh.
 * @param {any} config @param {number} cpus
 */
function checkLocalConfig (config, cpus) {
  // with a quota, N vCPUs of c CPUs each fit while N x c fits in the machine; without one, N cores must exist (also
  // unpinned, --affinity none: N vCPUs of a machine with fewer would be a name, not a set-up)
  const vcpus = strategyOf(config.strategy).pinned ? config.instances : 0
  const partition = cpuPartition(config, cpus)
  if (partition && vcpus > partition.server.length && config.cpusPerInstance === undefined) {
    throw badFlag('--instances', `${config.instances} vCPUs for --strategy ${config.strategy} (one core each), ` +
      `but --server-cpus ${config.serverCpus} gives the server ${partition.server.length}`, { key: 'instances' })
  }
  if (vcpus > cpus && !(config.cpusPerInstance !== undefined && config.instances * config.cpusPerInstance <= cpus)) {
    throw badFlag('--instances', `${config.instances} vCPUs for --strategy ${config.strategy} on the local backend (one core each), ` +
      `but this machine has ${cpus} cores; allowed: 1..${cpus}, or more with --cpus-per-instance X where N x X <= ${cpus}`, { key: 'instances' })
  }
  if (config.memoryPerInstance !== undefined) {
    throw badFlag('--memory-per-instance', 'is a Swarm memory limit; use --backend swarm (or leave it out locally)', { key: 'memoryPerInstance' })
  }
  if (config.lb === 'ingress') {
    throw badFlag('--lb', 'ingress is the Swarm routing mesh; the local backend balances hs with haproxy (use --lb haproxy or auto)', { key: 'lb' })
  }
}

/**
 * The deployed server as run.js uses it: where it answers, its sampler, its instances' telemetry, its placement and
 * cores, its teardown.
 */
function localHandle ({ shape, partition, pinned, group, replicas, quotaDirs, cpusOf, balanced, cleanups }) {
  const lb = balanced?.lb ?? null
  const pids = () => replicas.flatMap(h => h.pids())
  const lbPid = lb?.pid
  const statsSocket = lb?.statsSocket
  return {
    url: balanced?.url ?? replicas[0].url,
    /**
     * CPU of the server's own processes (their cgroup, or their threads) and the throttling of their quota; HAProxy's
     * CPU and figures beside it, and this process's own (the sampler's: the RC's role here).
     */
    createSampler () {
      const sampler = createSampler({
        group,
        pids,
        quotaDirs: () => quotaDirs,
        roles: () => (lbPid ? { 'load-balancer': [lbPid] } : {}),
        self: 'rc',
        intervalMs: 1000
      })
      return statsSocket ? withSamples(sampler, 'lb', () => readHaproxyStats(statsSocket)) : sampler
    },
    /** What the instances said of themselves (their telemetry lines) within a window. */
    telemetry: async (window) => replicas.flatMap(h => h.telemetry(window)),
    placement: replicas.map((h, i) => ({
      instance: shape.balanced ? `r${i + 1}` : h.shape,
      node: hostname(),
      pid: h.rootPid,
      port: h.port,
      cpus: cpusOf[i]
    })),
    /** The cores 0..n-1 the one process is pinned to (up), which --load-procs generators keep off. */
    pinnedCores: partition ? 0 : pinned,
    /** --server-cpus: the cores of the server, the load and HAProxy (null: none runs; run.json's `partition`). */
    partition: partition && { ...partition, lb: shape.balanced ? partition.lb : null },
    /** HAProxy's process and the cores it may use, as the kernel has them (null: no HAProxy). */
    lbPlace: lb ? { pid: lb.pid, cpus: allowedCpus(lb.pid) } : null,
    teardown: cleanups.teardown
  }
}

/**
 * @param {{ cpus?: number }} [opts]
 * @returns {import('./index.js').Backend}
 */
export function createLocalBackend ({ cpus = availableParallelism() } = {}) {
  return {
    name: 'local',

    checkConfig (config) { checkLocalConfig(config, cpus) },

    async prepare (config) {
      return deploymentShape(config).balanced ? { haproxy: requireHaproxy() } : {}
    },

    async deploy (config, { runId, runDir, log, signal }) {
      const shape = deploymentShape(config)
      const partition = cpuPartition(config, cpus)
      const { pinned, affinity } = serverCores(shape, partition, cpus)
      const cleanups = createCleanups()
      // the user's own server (--server): run from its folder, ready when its health path answers a 2xx
      const server = config.server === undefined
        ? undefined
        : { entry: config.server, args: config.serverArgs, health: config.health ?? '/', cwd: serverFolder(config.server) }
      try {
        const group = await createCpuGroup({ name: runId })
        cleanups.add(() => group.remove())
        const { replicas, quotaDirs } = await launchReplicas(config, { shape, runId, server, affinity, group, cleanups, log, signal })
        // the cores each replica may run on, as the kernel has it once it answers (its taskset, or none: every core the
        // executor may use); its workers and helpers inherit its affinity
        const cpusOf = replicas.map(h => allowedCpus(h.rootPid) ?? h.pids().map(pid => allowedCpus(pid)).find(Boolean) ?? null)
        const balanced = shape.balanced ? await startBalancer(config, { shape, replicas, server, runDir, partition, cleanups, signal }) : null
        return localHandle({ shape, partition, pinned, group, replicas, quotaDirs, cpusOf, balanced, cleanups })
      } catch (err) {
        // the deployment's own error (or the abort) wins; a teardown that also fails is said in the log
        await cleanups.teardown().catch(e => log(e.message))
        throw err
      }
    }
  }
}

/**
 * The server's cores: --server-cpus for every process of every strategy (up's one on the first N of them), else up's
 * pinned 0..N-1 and the others' every core (affinity undefined).
 * @param {ReturnType<typeof deploymentShape>} shape
 * @param {ReturnType<typeof cpuPartition>} partition
 * @param {number} cpus
 */
function serverCores (shape, partition, cpus) {
  const pinned = shape.pinnedCores ? Math.min(shape.pinnedCores, partition?.server.length ?? cpus) : 0
  const affinity = partition
    ? (pinned ? partition.server.slice(0, pinned) : partition.server)
    : (pinned ? Array.from({ length: pinned }, (_, c) => c) : undefined)
  return { pinned, affinity }
}

/**
 * What a deployment started, to stop in reverse order once: `teardown` runs every cleanup and fails with all their
 * errors together; a second teardown does nothing.
 */
function createCleanups () {
  /** @type {(() => any)[]} */
  const list = []
  let tornDown = false
  return {
    add: (/** @type {() => any} */ fn) => { list.push(fn) },
    async teardown () {
      if (tornDown) return
      tornDown = true
      const errors = []
      for (const fn of list.reverse()) {
        try { await fn() } catch (err) { errors.push(err) }
      }
      if (errors.length) throw fail('TEARDOWN_FAILED', { errors: errors.map(e => e.message) }, { cause: errors[0] })
    }
  }
}

/**
 * The server's replicas, one after the other, each in the run's CPU group and, with a quota, a quota group of its own;
 * one replica answers on the run's port, replicas behind the load balancer each on a free one.
 * @param {any} config
 * @param {{ shape: ReturnType<typeof deploymentShape>, runId: string, server: any, affinity: number[] | undefined,
 *   group: any, cleanups: ReturnType<typeof createCleanups>, log: (line: string) => void, signal?: AbortSignal }} ctx
 */
async function launchReplicas (config, { shape, runId, server, affinity, group, cleanups, log, signal }) {
  const quotaDirs = []
  const quota = (name, cpusOfGroup) => {
    if (cpusOfGroup === undefined) return undefined
    const q = createQuotaGroup({ name, cpus: cpusOfGroup })
    cleanups.add(() => q.remove())
    quotaDirs.push(q.path)
    return q.wrap
  }
  const replicas = []
  for (let i = 1; i <= shape.replicas; i++) {
    signal?.throwIfAborted()
    const name = shape.balanced ? `${runId}-r${i}` : runId
    const h = await launch({
      benchmark: config.benchmark,
      app: config.app,
      params: config.params,
      server,
      log,
      readyTimeoutMs: config.readyTimeout * 1000,
      shape: shape.process,
      instances: shape.workers,
      port: shape.balanced ? 0 : config.port,
      env: shape.balanced ? { NODESCALE_INSTANCE: `r${i}` } : undefined,
      affinity,
      wrap: composeWraps([quota(name, shape.cpusPerReplica), group.wrap]),
      signal
    })
    replicas.push(h)
    cleanups.add(() => h.stop())
  }
  return { replicas, quotaDirs }
}

/**
 * HAProxy in front of the replicas, on the run's port (or a free one), checking the server's health path; ready when
 * every replica has answered through it.
 * @param {any} config
 * @param {{ shape: ReturnType<typeof deploymentShape>, replicas: any[], server: any, runDir: string, partition: any,
 *   cleanups: ReturnType<typeof createCleanups>, signal?: AbortSignal }} ctx
 */
async function startBalancer (config, { shape, replicas, server, runDir, partition, cleanups, signal }) {
  const port = config.port || await freePort()
  const lb = await startHaproxy({ port, backends: replicas.map(h => h.port), runDir, health: server?.health, cpus: partition?.lb })
  cleanups.add(() => lb.stop())
  const url = `http://127.0.0.1:${port}`
  try {
    await waitForInstances(`${url}${server ? server.health : '/healthz'}`, {
      distinct: shape.answering,
      ...(server && { ok: is2xx }),
      timeoutMs: config.readyTimeout * 1000,
      signal,
      check: () => { if (!lb.isAlive()) throw new Error('HAProxy exited before it answered') }
    })
  } catch (err) {
    if (signal?.aborted) throw err
    throw fail('HAPROXY_NOT_ANSWERING', { replicas: shape.replicas, why: err.message, output: lb.output() }, { cause: err })
  }
  return { lb, url }
}
