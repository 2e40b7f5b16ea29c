// Where a run's generators come from: --load-procs P processes of this machine (auto, the default: as many as the load
// needs, probed), --load-nodes K agents on swarm nodes (the deployment places them, see the backend contract), or
// neither (the one generator of runLoad).
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { internalError } from '../../lib/errors.js'
import { generatorCores, localPlace } from './local.js'
import { THRESHOLDS } from '../validity.js'
import { oneGenerator, settleLoadProcs } from './auto.js'

/** The folder of a run's generators' own files (their samples before the merge, JMeter's logs). */
const GENERATORS_DIR = 'generators'

/**
 * The generators of a run and what removes them, or null when the run has one generator (runLoad).
 * @param {import('../backends/index.js').RunConfig} config
 * @param {{ deployment: any, dir: string, log: (line: string) => void, signal?: AbortSignal, probeLoad?: (places:
 *   import('./run-generators.js').GeneratorPlace[], dir: string) => Promise<any>, onProcs?: (procs:
 *   import('./auto.js').LoadProcs) => void }} ctx probeLoad: runs a probe's load from places (--load-procs auto);
 *   onProcs: told how many generator processes this machine runs and why (run.json's load.procs)
 * @returns {Promise<{ places: import('./run-generators.js').GeneratorPlace[], flag: string, partsDir: string,
 *   teardown: () => Promise<void>, url?: string } | null>} partsDir: where the generators' own files go; url: the
 *   server's address as the generators reach it, when it is not the deployment's (one elsewhere misses our loopback)
 */
export async function generatorPlaces (config, { deployment, dir, log, signal, probeLoad, onProcs }) {
  const partsDir = join(dir, GENERATORS_DIR)
  if (config.loadNodes !== undefined) {
    if (!deployment.createGenerators) {
      throw internalError('--load-nodes reached a deployment that cannot place generators (the option table lets it through on Swarm only)')
    }
    const made = await deployment.createGenerators({ count: config.loadNodes, placement: config.loadPlacement, runId: basename(dir), partsDir, log, signal })
    return { ...made, flag: '--load-nodes', partsDir }
  }
  const placesOn = (cores, where) => cores.map((cpus, i) => localPlace({ name: `g${i + 1}`, group: i + 1, cpus, dir: join(where, `g${i + 1}`) }))
  const pool = deployment.partition?.load
  if (config.loadProcs === 'auto') {
    // a local deployment says where its server runs; elsewhere (Swarm) the one generator of runLoad, as before
    if (deployment.pinnedCores === undefined) return null
    const free = freeCores(deployment)
    const tell = (procs) => {
      onProcs?.(procs)
      log(`load: ${procs.count} generator process${procs.count === 1 ? '' : 'es'} (--load-procs auto): ${procs.why}`)
      return procs
    }
    if (!free.length) {
      tell(oneGenerator([], 'the server may use every core: one generator, not pinned (--server-cpus N keeps cores for the load)'))
      return null
    }
    let procs
    if (free.length === 1) procs = oneGenerator(free, `one core free of the server (${free[0]}): one generator, pinned to it`)
    else if (config.duration === 'auto') procs = oneGenerator(free.slice(0, 1), '--duration auto ends the load of one generator: one, pinned, not probed')
    else if (config.driver !== 'autocannon' || !probeLoad) {
      procs = oneGenerator(free.slice(0, 1), `--driver ${config.driver}: one generator, pinned, not probed (a JVM's start takes seconds)`)
    } else {
      const probe = async (count) => {
        const where = await mkdtemp(join(tmpdir(), 'nodescale-probe-'))
        try {
          const result = await probeLoad(placesOn(generatorCores(count, { pool: free }).cores, where), where)
          const shares = result.generators.map(g => g.cpu?.share ?? null)
          return { procs: count, shares, throughput: Math.round(result.generators.reduce((a, g) => a + (g.throughput ?? 0), 0) * 10) / 10 }
        } finally {
          await rm(where, { recursive: true, force: true })
        }
      }
      procs = await settleLoadProcs({ free, most: config.concurrency ?? Infinity, probe })
    }
    tell(procs)
    return { places: placesOn(procs.cores.map(c => [c]), partsDir), flag: '--load-procs', partsDir, teardown: async () => {} }
  }
  // with --server-cpus the generators are pinned to the load's cores, one process unless --load-procs says more
  if (config.loadProcs !== undefined || pool) {
    const count = config.loadProcs ?? 1
    const { cores, shared } = generatorCores(count, { serverCores: deployment.pinnedCores ?? 0, pool })
    if (shared) log(`load: the server is pinned to every core; the ${count} generator processes share them with it`)
    onProcs?.({
      mode: 'fixed',
      count,
      cores: cores.flat(),
      why: config.loadProcs !== undefined ? `--load-procs ${count}` : 'one generator on the load\'s cores (--server-cpus)',
      probes: [],
      threshold: THRESHOLDS.generatorBusy
    })
    return { places: placesOn(cores, partsDir), flag: config.loadProcs !== undefined ? '--load-procs' : '--server-cpus', partsDir, teardown: async () => {} }
  }
  return null
}

/**
 * The cores a local deployment leaves to its generators, the last one first: the load's of --server-cpus, else those
 * above up's pinned 0..N-1; none when the server may use every core.
 * @param {{ partition?: { load: number[] } | null, pinnedCores?: number }} deployment
 * @param {number} [cpus]
 */
export function freeCores (deployment, cpus = availableParallelism()) {
  if (deployment.partition) return [...deployment.partition.load].sort((a, b) => b - a)
  const pinned = deployment.pinnedCores ?? 0
  if (!pinned) return []
  return Array.from({ length: cpus }, (_, c) => cpus - 1 - c).filter(c => c >= pinned)
}
