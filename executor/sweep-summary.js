// What a finished sweep prints: counts, the multi-core study's per-core table, and the USL/Amdahl comparison.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { mean } from 'simple-statistics'
import { compare } from '../analyzer/compare.js'
import { formatCompare } from '../analyzer/cli-format.js'
import { table } from '../analyzer/text-table.js'
import { NsError } from './errors.js'
import { formatDuration } from './sweep-plan.js'

/** The run.json of every done entry of a sweep. */
export async function doneRuns (sweep) {
  const runs = []
  for (const e of sweep.plan) {
    if (e.status !== 'done' || !e.run) continue
    try {
      runs.push(JSON.parse(await readFile(join(sweep.dir, e.run, 'run.json'), 'utf8')))
    } catch {}
  }
  return runs
}

const r1 = x => Math.round(x * 10) / 10

/**
 * The thesis's per-core table (Table 4.3.1) per approach and load: the server's busiest core, its idlest core, their
 * difference and the mean over cores, each the mean over repeats; with throughput for context.
 * @param {any[]} runs run.json objects
 */
export function perCoreTable (runs) {
  const groups = new Map()
  for (const run of runs) {
    if (!run.cpu || !(run.cpu.samples > 0)) continue
    const c = run.config
    const load = c.rate !== undefined ? `rate ${c.rate}` : `${c.sweep?.level ? `${c.sweep.level} = ` : ''}${c.concurrency}`
    const key = JSON.stringify([c.benchmark, c.strategy, c.instances, load])
    if (!groups.has(key)) groups.set(key, { benchmark: c.benchmark, strategy: c.strategy, instances: c.instances, load, concurrency: c.concurrency ?? null, runs: [] })
    groups.get(key).runs.push(run)
  }
  return [...groups.values()].map(g => ({
    benchmark: g.benchmark,
    approach: `${g.strategy} x${g.instances}`,
    load: g.load,
    repeats: g.runs.length,
    highest: r1(mean(g.runs.map(r => r.cpu.highest))),
    lowest: r1(mean(g.runs.map(r => r.cpu.lowest))),
    difference: r1(mean(g.runs.map(r => r.cpu.spread))),
    overall: r1(mean(g.runs.map(r => r.cpu.overall))),
    throughput: Math.round(mean(g.runs.map(r => r.summary?.throughput ?? 0))),
    concurrency: g.concurrency
  })).sort((a, b) => a.benchmark.localeCompare(b.benchmark) || (a.concurrency ?? 0) - (b.concurrency ?? 0) || a.approach.localeCompare(b.approach))
}

export function formatPerCoreTable (rows) {
  return table(['benchmark', 'approach', 'load (connections)', 'runs', 'highest core %', 'lowest core %', 'difference', 'overall %', 'req/s'],
    rows.map(r => [r.benchmark, r.approach, r.load, r.repeats, r.highest.toFixed(1), r.lowest.toFixed(1), r.difference.toFixed(1), r.overall.toFixed(1), r.throughput.toLocaleString('en')]))
}

/**
 * The analysis the experiment asked for, on the sweep folder: USL (Amdahl when too few points) per strategy and
 * benchmark, and the per-core table. A fit that the data cannot support says why instead of failing the sweep.
 * @param {any} sweep
 */
export async function analyseSweep (sweep) {
  const analysis = sweep.experiment.analysis ?? { fit: 'usl', x: 'instances', cpuTable: false }
  const out = { fit: null, fitError: null, cpuTable: null }
  if (analysis.cpuTable) out.cpuTable = perCoreTable(await doneRuns(sweep))
  if (analysis.fit !== 'none') {
    try {
      out.fit = await compare([sweep.dir], { model: analysis.fit === 'amdahl' ? 'amdahl' : 'usl', x: analysis.x })
    } catch (err) {
      if (!(err instanceof NsError)) throw err
      out.fitError = err.message
    }
  }
  return out
}

/** The lines printed at the end of a sweep. */
export function formatSweepEnd (sweep, analysis, { seconds }) {
  const c = sweep.counts
  const d = sweep.deployments
  const lines = [`sweep ${sweep.id}: ${sweep.status} · ${c.done}/${c.runs} runs done${c.failed ? ` · ${c.failed} failed` : ''}${c.interrupted ? ` · ${c.interrupted} interrupted` : ''}${c.pending ? ` · ${c.pending} not run` : ''} · ${d} deployment${d === 1 ? '' : 's'} · ${formatDuration(seconds)}`]
  for (const e of sweep.plan.filter(x => x.status === 'failed')) lines.push(`  failed: #${e.index + 1} ${e.label} (repeat ${e.repeat}): ${String(e.reason).split('\n')[0]}`)
  if (sweep.status !== 'done') lines.push(`  resume: executor sweep --resume ${sweep.dir}`)
  if (analysis?.cpuTable?.length) lines.push('', 'per-core CPU of the server (multi-core study, Table 4.3.1):', formatPerCoreTable(analysis.cpuTable))
  if (analysis?.fit && analysis.fit.rows.some(r => r.model)) lines.push('', `scalability fit (max throughput per ${analysis.fit.x === 'concurrency' ? 'concurrency' : 'instance count'}):`, formatCompare(analysis.fit))
  else if (analysis?.fit) lines.push('', 'scalability fit: not enough points for any group', ...analysis.fit.rows.map(r => `  ${r.line}`))
  else if (analysis?.fitError) lines.push('', `scalability fit: not enough data (${analysis.fitError})`)
  lines.push('', `results: ${sweep.dir}`)
  return lines.join('\n')
}
