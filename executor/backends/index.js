// The backend contract (what run.js, sweeps and calibration may ask of a backend) and the choice of backend for a run.
import { checkBackendOptions } from '../../lib/run-options.js'
import { createLocalBackend } from './local.js'

/**
 * A backend deploys the server under test somewhere (this machine, a Docker Swarm) in a strategy's shape. Both backends
 * keep these rules:
 * - `checkConfig` refuses what this backend cannot run (exit 2, naming the flag), with no side effect; run.js calls it
 *   also when `--backend auto` chose the backend, so a flag only the other backend takes is never silently dropped.
 * - `prepare` checks and builds the parts (HAProxy, images); nothing is deployed yet.
 * - `deploy` honours `signal`: an abort stops the deployment, removes what it started, and rejects.
 * - `teardown` removes everything the deployment started, tries every part even when one fails, and then rejects with
 *   the first failure (an NsError) so the caller can record it; a second call does nothing.
 * @typedef {object} Backend
 * @property {'local'|'swarm'} name
 * @property {(config: RunConfig, ctx?: { why?: string }) => void} checkConfig
 * @property {(config: RunConfig, ctx?: { log?: Log, signal?: AbortSignal }) => Promise<Record<string, any>>} prepare
 *   resolves with facts for run.json's `environment` (versions, images)
 * @property {(config: RunConfig, ctx: { runId: string, runDir: string, log: Log, signal?: AbortSignal }) =>
 *   Promise<Deployment>} deploy
 * @property {(ctx?: { log?: Log, signal?: AbortSignal, timeoutMs?: number }) => Promise<{ waitedMs: number }>}
 *   [waitAvailable] Swarm: resolves when the engine answers, waiting through a daemon restart (a sweep calls it before
 *   each run); rejects after the time limit
 * @property {(ctx?: { log?: Log }) => Promise<string[]>} [cleanup] Swarm: removes what runs of dead processes left
 *   deployed, and what this process failed to remove
 */

/**
 * A deployed shape: every instance answers at `url`.
 * @typedef {object} Deployment
 * @property {string} url where the load goes (the load balancer, or the one replica)
 * @property {PlacementRow[]} placement where each instance runs (run.json's `placement`); locally each row's `cpus`,
 *   the cores its process may run on (/proc/<pid>/status Cpus_allowed_list, read once it answered)
 * @property {() => Sampler} createSampler the server's CPU per core while the load runs; its timeline's samples may
 *   also hold `roles` (the cores of the load balancer and of the sampler itself, `rc`) and the timeline `lb` (HAProxy's
 *   sessions, queue and rate)
 * @property {(window: { from: number, to: number }) => Promise<TelemetryRecord[]>} telemetry what the instances said of
 *   themselves (lib/telemetry.js) within a window (ms epoch): event loop, GC, heap, CPU per process
 * @property {() => Promise<void>} teardown see Backend
 * @property {() => NodeWatch} [createWatch] Swarm: watches the nodes that run tasks, so a lost node makes the run
 *   degraded
 * @property {() => Promise<PlacementRow[]>} [currentPlacement] Swarm: where the tasks run now (after a node was lost)
 * @property {() => Promise<boolean>} [intact] Swarm: whether the containers deployed still run (not after a daemon
 *   restart); a kept deployment that is not intact is deployed again
 * @property {(opts: { count: number, placement: string, runId: string, partsDir: string, log: Log, signal?:
 *   AbortSignal }) => Promise<{ places: import('../generators/run-generators.js').GeneratorPlace[], url: string,
 *   teardown: () => Promise<void> }>} [createGenerators] Swarm: --load-nodes generators as agents on load nodes that
 *   run none of the deployment's tasks, each one's clock measured; url: the server as they reach it; teardown
 *   removes them (a run's generators live as long as the run, the deployment may serve many)
 * @property {'instances'|'health-only'} [readiness] Swarm: how readiness knew the instances: each named itself (our
 *   server, or the hook in a user's), or health-only (a user's image run as it is, whose processes nodescale does not
 *   start: no instance header, no telemetry)
 * @property {number} [pinnedCores] local: the server's one process is pinned to cores 0..n-1 (--load-procs keeps off);
 *   0 when nothing is pinned (cm, pm2, hs, up with --affinity none)
 * @property {{ server: number[], load: number[], lb: number[] | null, derived: string[] } | null} [partition] local,
 *   --server-cpus: the cores of the server, the load generators and HAProxy (executor/load-cpus.js cpuPartition)
 * @property {{ pid: number | undefined, cpus: number[] | null } | null} [lbPlace] local, hs: HAProxy's process and
 *   the cores the kernel lets it use
 */

/**
 * @typedef {Readonly<import('../../lib/run-options.js').RunConfig>} RunConfig a validated run config
 *   (validateRunConfig)
 * @typedef {(line: string) => void} Log
 * @typedef {Record<string, any>} PlacementRow
 * @typedef {import('../../lib/telemetry.js').TelemetryRecord} TelemetryRecord
 * @typedef {{ start: () => void | Promise<void>, stop: () => Promise<any> }} Sampler stop resolves with the timeline
 * @typedef {{ start: () => void, stop: () => Promise<import('../docker/node-watch.js').LossEpisode[]>, outages?: () =>
 *   import('../docker/node-watch.js').DaemonOutage[] }} NodeWatch
 */

/**
 * The backend for a config: `local`, `swarm`, or for `auto` the swarm when a Docker daemon answers, else local (said in
 * the log). The chosen backend checks the config's flags before anything else happens.
 * @param {RunConfig} config
 * @param {{ log?: Log }} [opts]
 * @returns {Promise<Backend>}
 */
export async function resolveBackend (config, { log = () => {} } = {}) {
  let backend
  let why
  if (config.backend === 'local') {
    backend = createLocalBackend()
  } else {
    const { createSwarmBackend } = await import('./swarm.js')
    if (config.backend === 'swarm') {
      backend = createSwarmBackend()
    } else {
      const { connectDocker } = await import('../docker/engine.js')
      try {
        const docker = await connectDocker({ timeoutMs: 2000 })
        why = 'a Docker daemon answers'
        backend = createSwarmBackend({ connect: async () => docker })
      } catch (err) {
        why = err.message
        backend = createLocalBackend()
      }
      log(`backend auto -> ${backend.name} (${why})`)
    }
  }
  checkBackendOptions(config, backend.name, { why })
  backend.checkConfig(config, { why })
  return backend
}
