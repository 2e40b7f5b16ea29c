// The local backend: runs the server under test on this machine in the strategy's local shape (DESIGN.md, Strategies).
import { availableParallelism, hostname } from 'node:os'
import { launch, localShapeFor } from '../../register/launch.js'
import { createCpuGroup } from '../../rc/cpu-group.js'
import { createSampler } from '../../rc/sampler.js'
import { createQuotaGroup } from '../cpu-quota.js'
import { requireHaproxy, startHaproxy } from '../local-haproxy.js'
import { freePort, waitForInstances } from '../net-util.js'
import { NsError, badFlag } from '../errors.js'

/** Runs a list of wrappers innermost-last: the process joins every group before it execs. */
function composeWraps (wraps) {
  const list = wraps.filter(Boolean)
  return (cmd, args) => list.reduceRight((acc, w) => w(acc.cmd, acc.args), { cmd, args })
}

/**
 * @param {{ cpus?: number }} [opts]
 */
export function createLocalBackend ({ cpus = availableParallelism() } = {}) {
  return {
    name: 'local',

    /**
     * Checks what the run needs on this machine, before anything starts.
     * @param {any} config
     * @param {{ log?: (line: string) => void }} [ctx]
     */
    async prepare (config, ctx = {}) {
      const info = {}
      // with a quota, N vCPUs of c CPUs each fit while N x c fits in the machine; without one, N cores must exist
      if (config.strategy === 'up' && config.instances > cpus && !(config.cpusPerInstance !== undefined && config.instances * config.cpusPerInstance <= cpus)) {
        throw badFlag('--instances', `${config.instances} vCPUs for --strategy up on the local backend, but this machine has ${cpus} cores; allowed: 1..${cpus}, or more with --cpus-per-instance X where N x X <= ${cpus}`)
      }
      if (config.memoryPerInstance !== undefined) throw badFlag('--memory-per-instance', 'is a Swarm memory limit; use --backend swarm (or leave it out locally)')
      if (config.strategy === 'hs') info.haproxy = requireHaproxy()
      if (config.lb === 'ingress') throw badFlag('--lb', 'ingress is the Swarm routing mesh; the local backend balances hs with haproxy (use --lb haproxy or auto)')
      return info
    },

    /**
     * Starts the shape and resolves when every instance answers.
     * @param {any} config validated run config
     * @param {{ runId: string, runDir: string, log: (line: string) => void }} ctx
     */
    async deploy (config, { runId, runDir, log }) {
      const cleanups = []
      const teardown = async () => {
        const errors = []
        for (const fn of cleanups.reverse()) {
          try { await fn() } catch (err) { errors.push(err) }
        }
        cleanups.length = 0
        if (errors.length) log(`teardown: ${errors.map(e => e.message).join('; ')}`)
      }
      try {
        const group = await createCpuGroup({ name: runId })
        cleanups.push(() => group.remove())
        const quota = (name, n) => {
          if (config.cpusPerInstance === undefined) return undefined
          const q = createQuotaGroup({ name, cpus: n * config.cpusPerInstance })
          cleanups.push(() => q.remove())
          return q.wrap
        }
        const common = { benchmark: config.benchmark, app: config.app, params: config.params, log, readyTimeoutMs: config.readyTimeout * 1000 }
        const handles = []
        let url
        let lb = null
        if (config.strategy === 'hs') {
          for (let i = 0; i < config.instances; i++) {
            const h = await launch({
              ...common,
              shape: 'single',
              instances: 1,
              port: 0,
              env: { NODESCALE_INSTANCE: `r${i + 1}` },
              wrap: composeWraps([quota(`${runId}-r${i + 1}`, 1), group.wrap])
            })
            handles.push(h)
            cleanups.push(() => h.stop())
          }
          const port = config.port || await freePort()
          lb = await startHaproxy({ port, backends: handles.map(h => h.port), runDir })
          cleanups.push(() => lb.stop())
          url = `http://127.0.0.1:${port}`
          try {
            await waitForInstances(`${url}/healthz`, { distinct: config.instances, timeoutMs: config.readyTimeout * 1000, isAlive: lb.isAlive })
          } catch (err) {
            throw new NsError('NS_ERR_DEPLOY', `HAProxy in front of ${config.instances} instances did not answer: ${err.message}\n${lb.output()}`, { cause: err })
          }
        } else {
          const shape = localShapeFor(config.strategy)
          const h = await launch({
            ...common,
            shape,
            instances: shape === 'single' ? 1 : config.instances,
            port: config.port,
            affinity: config.strategy === 'up' ? Array.from({ length: Math.min(config.instances, cpus) }, (_, i) => i) : undefined,
            wrap: composeWraps([quota(runId, config.instances), group.wrap])
          })
          handles.push(h)
          cleanups.push(() => h.stop())
          url = h.url
        }
        const pids = () => [...handles.flatMap(h => h.pids())]
        return {
          url,
          pids,
          /** CPU of the server's own processes: their cgroup, or their threads. */
          createSampler: () => createSampler({ group, pids, intervalMs: 1000 }),
          lbPid: lb?.pid ?? null,
          placement: handles.map((h, i) => ({
            instance: config.strategy === 'hs' ? `r${i + 1}` : h.shape,
            node: hostname(),
            pid: h.rootPid,
            port: h.port
          })),
          teardown
        }
      } catch (err) {
        await teardown()
        throw err
      }
    }
  }
}
