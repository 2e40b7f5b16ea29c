// Writes a sweep folder (sweep.json and run folders with the run.json fields the analyzer reads) from a list of runs
// given by config and throughput, for replication tests of studies judged on throughput.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * @param {string} out
 * @param {string} name the experiment's name
 * @param {{ config: Record<string, any>, throughput: number, diagnosis?: any, validity?: any }[]} runs
 * @param {{ cpus?: number, nodes?: any[], id?: string }} [opts] the machine's cores; the swarm's nodes
 *   (environment.nodes); the sweep's id (two sweeps of one experiment)
 */
export function writeSweepRuns (out, name, runs, { cpus = 2, nodes, id = `20261124-120000-${name}-abcd` } = {}) {
  const dir = join(out, id)
  mkdirSync(dir, { recursive: true })
  runs.forEach(({ config, throughput, diagnosis, validity = { ok: true, flags: [] } }, i) => {
    const runId = `run-${String(i + 1).padStart(3, '0')}`
    mkdirSync(join(dir, runId))
    const run = {
      schema: 'nodescale.run/v1',
      id: runId,
      status: 'done',
      startedAt: new Date(1_795_000_000_000 + i * 10_000).toISOString(),
      config: { benchmark: 'cpu', concurrency: 8, duration: 5, backend: 'local', ...config, sweep: { id, index: i, repeat: 1, level: null } },
      environment: { host: 'vm', cpus, cpuModel: 'test cpu', kernel: '6.1', node: 'v20.0.0', backend: nodes ? 'swarm' : 'local', ...(nodes ? { nodes } : {}) },
      summary: { requests: Math.round(throughput * 5), errors: 0, errorRate: 0, throughput, latency: { mean: 5, p50: 5, p90: 9, p95: 10, p99: 12, max: 20 } },
      validity,
      placement: [],
      error: null,
      ...(diagnosis ? { diagnosis } : {})
    }
    writeFileSync(join(dir, runId, 'run.json'), JSON.stringify(run, null, 2))
  })
  writeFileSync(join(dir, 'sweep.json'), JSON.stringify({
    schema: 'nodescale.sweep/v1', id, dir, status: 'done', experiment: { name, profile: null, order: 'shapes', repeats: 2 }, seed: 3, cells: [], plan: []
  }, null, 2))
  return dir
}
