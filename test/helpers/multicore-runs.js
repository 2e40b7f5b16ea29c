// Writes a sweep folder like `executor sweep experiments/multicore.yml` makes (sweep.json, and run folders with
// run.json and timeline.json), from per-second per-core samples given per strategy and level, for replication tests.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { summarizeCpu } from '../../rc/cpu-summary.js'

const LEVELS = {
  up: ['relaxed', 'relaxed*cores', 'exhausted'], cm: ['relaxed', 'relaxed*cores', 'exhausted*cores'], pm2: ['relaxed', 'relaxed*cores', 'exhausted*cores']
}

/**
 * A multicore sweep of `repeats` runs per strategy and level. `seconds(strategy, level, repeat)` gives each run's
 * server samples (percent per core, one array a second); `extra(strategy, level)` adds run.json fields (a pinned
 * server, say).
 * @param {string} out
 * @param {{ seconds: (strategy: string, level: string, repeat: number) => number[][], repeats?: number, extra?:
 *   (strategy: string, level: string) => object, name?: string }} spec
 */
export function writeMulticoreSweep (out, { seconds, repeats = 3, extra = () => ({}), name = 'multicore' }) {
  const id = `20261124-120000-${name}-abcd`
  const dir = join(out, id)
  mkdirSync(dir, { recursive: true })
  const cells = []
  let n = 0
  for (const [strategy, levels] of Object.entries(LEVELS)) {
    for (const level of levels) {
      const cell = cells.length
      cells.push({
        index: cell, label: `${strategy} ${level}`, level, values: { strategy, instances: strategy === 'up' ? 1 : 2, benchmark: 'page', concurrency: level }
      })
      for (let repeat = 1; repeat <= repeats; repeat++) {
        const t0 = 1_795_000_000_000 + n * 100_000
        const per = seconds(strategy, level, repeat)
        const timeline = {
          intervalMs: 1000,
          cpus: per[0].length,
          source: /** @type {'cgroup-v1'} */ ('cgroup-v1'),
          samples: per.map((server, i) => ({ t: t0 + (i + 1) * 1000, server, serverTotal: server.reduce((a, b) => a + b, 0) / 100, host: server }))
        }
        const window = { from: t0, to: t0 + per.length * 1000 }
        const runId = `run-${String(++n).padStart(3, '0')}-${strategy}`
        const runDir = join(dir, runId)
        mkdirSync(runDir)
        const run = {
          schema: 'nodescale.run/v1',
          id: runId,
          status: 'done',
          startedAt: new Date(t0).toISOString(),
          config: {
            strategy,
            instances: strategy === 'up' ? 1 : 2,
            benchmark: 'page',
            concurrency: 10,
            duration: per.length,
            backend: 'local',
            sweep: { id, index: n - 1, repeat, level }
          },
          environment: { host: 'vm', cpus: per[0].length, cpuModel: 'test cpu', kernel: '6.1', node: 'v20.0.0', backend: 'local' },
          summary: { requests: 100, errors: 0, errorRate: 0, throughput: 100, latency: { mean: 5, p50: 5, p90: 9, p95: 10, p99: 12, max: 20 } },
          load: { steadyStart: window.from, steadyEnd: window.to },
          cpu: summarizeCpu(timeline, window),
          placement: [],
          validity: { ok: true, flags: [] },
          error: null,
          ...extra(strategy, level)
        }
        writeFileSync(join(runDir, 'run.json'), JSON.stringify(run, null, 2))
        writeFileSync(join(runDir, 'timeline.json'), JSON.stringify(timeline))
      }
    }
  }
  const sweep = {
    schema: 'nodescale.sweep/v1', id, dir, status: 'done', experiment: { name, profile: null, order: 'blocks', repeats }, seed: 7, cells, plan: []
  }
  writeFileSync(join(dir, 'sweep.json'), JSON.stringify(sweep, null, 2))
  return dir
}
