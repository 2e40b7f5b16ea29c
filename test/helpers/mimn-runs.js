// Writes run folders like the executor's for multi-node sweeps (config.nodes, cpu.nodes, p95, degraded), for analyzer
// tests.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

let serial = 0

/**
 * One run folder with the run.json fields the analyzer reads.
 * @param {string} out
 * @param {{ benchmark?: string, strategy?: string, nodes?: number, instances: number, concurrency?: number, [key:
 *   string]: any }} config
 * @param {{ throughput: number, p95?: number, nodeCpu?: number[], cpuTotal?: number, status?: string, degraded?: any,
 *   startedAt?: string }} measured nodeCpu: each node's server CPU in cores (cpu.nodes[].total); cpuTotal: cpu.total
 *   (default: their sum, or 0.5)
 */
export function writeMimnRun (out, config, { throughput, p95 = 10, nodeCpu, cpuTotal, status = 'done', degraded, startedAt = '2026-11-23T10:00:00.000Z' }) {
  const id = `run-${String(++serial).padStart(4, '0')}-${config.strategy ?? 'hs'}${config.instances}${config.nodes ? `-${config.nodes}n` : ''}`
  const dir = join(out, id)
  mkdirSync(dir, { recursive: true })
  const cores = (nodeCpu ?? [cpuTotal ?? 0.5]).flatMap(total => [{ core: 0, usage: total * 50 }, { core: 1, usage: total * 50 }])
  /** @param {number} total @param {number} i */
  const nodeOf = (total, i) => ({
    node: `id${i + 1}`,
    hostname: `w${i + 1}`,
    label: `nodescale-w${i + 1}`,
    firstCore: 2 * i,
    cores: [],
    highest: 50,
    lowest: 10,
    spread: 40,
    overall: 30,
    total
  })
  const run = {
    schema: 'nodescale.run/v1',
    id,
    status,
    startedAt,
    config: {
      strategy: 'hs', benchmark: 'cpu', concurrency: 10, duration: 3, warmup: 1, driver: 'autocannon', backend: 'swarm', cpusPerInstance: 0.25, ...config
    },
    environment: { host: 'vm', cpus: 2, node: 'v20.0.0' },
    summary: {
      requests: Math.round(throughput * 3),
      errors: 0,
      errorRate: 0,
      throughput,
      latency: { mean: p95 / 2, p50: p95 / 2, p90: p95 * 0.9, p95, p99: p95 * 1.2, max: p95 * 2 }
    },
    cpu: {
      source: 'cgroup-v1',
      cores: cores.map((c, i) => ({ ...c, core: i })),
      highest: 50,
      lowest: 10,
      spread: 40,
      overall: 30,
      total: cpuTotal ?? (nodeCpu ? nodeCpu.reduce((a, b) => a + b, 0) : 0.5),
      ...(nodeCpu ? { nodes: nodeCpu.map(nodeOf) } : {})
    },
    placement: [],
    error: status === 'failed' ? { code: 'NS_ERR_RUN', message: 'the load failed' } : null,
    ...(degraded ? { degraded } : {})
  }
  writeFileSync(join(dir, 'run.json'), JSON.stringify(run, null, 2))
  return { dir, run }
}
