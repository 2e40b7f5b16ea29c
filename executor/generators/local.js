// Generators as processes of this machine (--load-procs P): each pinned to a core apart from the server's, each with
// its own folder, its own CPU meter.
import { availableParallelism, hostname } from 'node:os'
import { join } from 'node:path'
import { runLoad } from '../drivers/index.js'
import { createGeneratorMeter, summarizeGenerator } from '../../rc/generator-cpu.js'
import { machineId } from '../../lib/machine-id.js'

/**
 * The core each of `count` generators is pinned to: the cores the server is not pinned to, from the last one down,
 * taken in turn; when the server holds every core, every core in turn (they share, said in `shared`). With `pool` (the
 * load's cores of --server-cpus' partition), those cores in turn.
 * @param {number} count
 * @param {{ cpus?: number, serverCores?: number, pool?: readonly number[] }} [opts] serverCores: the server is pinned
 *   to cores 0..serverCores-1
 * @returns {{ cores: number[][], shared: boolean }}
 */
export function generatorCores (count, { cpus = availableParallelism(), serverCores = 0, pool: given } = {}) {
  if (given?.length) return { cores: Array.from({ length: count }, (_, i) => [given[i % given.length]]), shared: false }
  const free = Array.from({ length: cpus }, (_, c) => cpus - 1 - c).filter(c => c >= serverCores)
  const pool = free.length ? free : Array.from({ length: cpus }, (_, c) => cpus - 1 - c)
  return { cores: Array.from({ length: count }, (_, i) => [pool[i % pool.length]]), shared: !free.length }
}

/**
 * A generator run as a child process of this machine, pinned to `cpus`; its samples gzip in `dir`.
 * @param {{ name: string, group: number, cpus: number[], dir: string }} opts
 * @returns {import('./run-generators.js').GeneratorPlace}
 */
export function localPlace ({ name, group, cpus, dir }) {
  return {
    name,
    group,
    where: { kind: 'process', host: hostname(), machine: machineId(), cpus },
    clock: null,
    async run (opts, { signal, onProgress, onSpawn, log }) {
      const meter = createGeneratorMeter()
      meter.start()
      const jtlPath = join(dir, 'samples.jtl')
      const microsPath = join(dir, 'micros.json')
      let result
      let timeline = null
      try {
        result = await runLoad({
          ...opts,
          jtlPath,
          samples: 'gz',
          histogramPath: undefined,
          microsPath,
          group,
          cpus,
          signal,
          onProgress,
          log: (line) => log(`${name}: ${line}`),
          onSpawn: (pid, engine) => { meter.add(pid, { engine }); onSpawn?.(pid, engine) }
        })
      } finally {
        timeline = meter.stop()
      }
      const cpu = summarizeGenerator(timeline, { from: result.steadyStart, to: result.steadyEnd })
      return { result, cpu, samplesPath: result.jtlPath, microsPath }
    }
  }
}
