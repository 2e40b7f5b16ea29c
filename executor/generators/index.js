// Where a run's generators come from: --load-procs P processes of this machine, --load-nodes K agents on swarm nodes
// (the deployment places them, see the backend contract), or neither (the one generator of runLoad).
import { basename, join } from 'node:path'
import { internalError } from '../../lib/errors.js'
import { generatorCores, localPlace } from './local.js'

/** The folder of a run's generators' own files (their samples before the merge, JMeter's logs). */
const GENERATORS_DIR = 'generators'

/**
 * The generators of a run and what removes them, or null when the run has one generator (runLoad).
 * @param {import('../backends/index.js').RunConfig} config
 * @param {{ deployment: any, dir: string, log: (line: string) => void, signal?: AbortSignal }} ctx
 * @returns {Promise<{ places: import('./run-generators.js').GeneratorPlace[], flag: string, partsDir: string,
 *   teardown: () => Promise<void>, url?: string } | null>} partsDir: where the generators' own files go; url: the
 *   server's address as the generators reach it, when it is not the deployment's (one elsewhere misses our loopback)
 */
export async function generatorPlaces (config, { deployment, dir, log, signal }) {
  const partsDir = join(dir, GENERATORS_DIR)
  if (config.loadNodes !== undefined) {
    if (!deployment.createGenerators) throw internalError('--load-nodes reached a deployment that cannot place generators (the option table lets it through on Swarm only)')
    const made = await deployment.createGenerators({ count: config.loadNodes, placement: config.loadPlacement, runId: basename(dir), partsDir, log, signal })
    return { ...made, flag: '--load-nodes', partsDir }
  }
  // with --server-cpus the generators are pinned to the load's cores, one process unless --load-procs says more
  const pool = deployment.partition?.load
  if (config.loadProcs !== undefined || pool) {
    const count = config.loadProcs ?? 1
    const { cores, shared } = generatorCores(count, { serverCores: deployment.pinnedCores ?? 0, pool })
    if (shared) log(`load: the server is pinned to every core; the ${count} generator processes share them with it`)
    const places = cores.map((cpus, i) => localPlace({ name: `g${i + 1}`, group: i + 1, cpus, dir: join(partsDir, `g${i + 1}`) }))
    return { places, flag: config.loadProcs !== undefined ? '--load-procs' : '--server-cpus', partsDir, teardown: async () => {} }
  }
  return null
}
