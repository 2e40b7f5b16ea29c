// What a finished sweep prints: counts, the multi-core study's per-core table, and the USL/Amdahl comparison.
import { compare } from '../analyzer/compare.js'
import { readRunList, cpuTable } from '../analyzer/report-runs.js'
import { formatCompare, formatCorrelate } from '../analyzer/cli-format.js'
import { correlate } from '../analyzer/correlate.js'
import { table } from '../analyzer/text-table.js'
import { NsError } from './errors.js'
import { formatDuration } from './sweep-plan.js'

/**
 * The per-core table of the analyzer's report (analyzer/report-runs.js) for the sweep's finished runs, each load named
 * by the calibration level it came from ("relaxed = 2") when it came from one.
 * @param {any} sweep
 */
export async function perCoreRows (sweep) {
  const { runs } = await readRunList([sweep.dir])
  const levels = new Map(sweep.cells.filter(c => c.level).map(c => [levelKey(c.values.strategy, c.values.instances, c.values.concurrency), c.level]))
  return cpuTable(runs.filter(r => r.config.sweep?.id === sweep.id)).map(row => {
    const level = levels.get(levelKey(row.strategy, row.instances, row.loadValue))
    return { ...row, load: level ? `${level} = ${row.loadValue}` : String(row.loadValue) }
  })
}

const levelKey = (strategy, instances, concurrency) => `${strategy} ${Number(instances)} ${Number(concurrency)}`
const pct = v => (v === null || v === undefined ? '-' : v.toFixed(1))

export function formatPerCoreTable (rows) {
  return table(['benchmark', 'approach', 'load (connections)', 'runs', 'highest core %', 'lowest core %', 'difference', 'overall %'],
    [...rows].sort((a, b) => String(a.benchmark).localeCompare(String(b.benchmark)) || a.loadValue - b.loadValue || a.strategy.localeCompare(b.strategy))
      .map(r => [r.benchmark, `${r.strategy} x${r.instances}`, r.load, r.runs, pct(r.highest), pct(r.lowest), pct(r.spread), pct(r.overall)]))
}

/**
 * The analysis the experiment asked for, on the sweep folder: USL (Amdahl when too few points) per strategy and
 * benchmark, and the per-core table. A fit that the data cannot support says why instead of failing the sweep.
 * @param {any} sweep
 */
export async function analyseSweep (sweep) {
  const analysis = sweep.experiment.analysis ?? { fit: 'usl', x: 'instances', cpuTable: false }
  const out = { fit: null, fitError: null, cpuTable: null, correlations: null, correlationsError: null }
  if (analysis.cpuTable) out.cpuTable = await perCoreRows(sweep)
  if (analysis.correlations) {
    try {
      out.correlations = await correlate([sweep.dir])
    } catch (err) {
      if (!(err instanceof NsError)) throw err
      out.correlationsError = err.message
    }
  }
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
  const lines = [`sweep ${sweep.id}: ${sweep.status} · ${c.done}/${c.runs} runs done${c.failed ? ` · ${c.failed} failed` : ''}${c.degraded ? ` · ${c.degraded} degraded` : ''}${c.interrupted ? ` · ${c.interrupted} interrupted` : ''}${c.pending ? ` · ${c.pending} not run` : ''} · ${d} deployment${d === 1 ? '' : 's'} · ${formatDuration(seconds)}`]
  for (const e of sweep.plan.filter(x => x.status === 'failed' || x.status === 'degraded')) lines.push(`  ${e.status}: #${e.index + 1} ${e.label} (repeat ${e.repeat}): ${String(e.reason).split('\n')[0]}`)
  if (sweep.status !== 'done') lines.push(`  resume: executor sweep --resume ${sweep.dir}${c.degraded ? ' (redoes the degraded runs too: a node lost mid-run is no steady-state measurement)' : ''}`)
  if (analysis?.cpuTable?.length) lines.push('', 'per-core CPU of the server (multi-core study, Table 4.3.1):', formatPerCoreTable(analysis.cpuTable))
  const per = { concurrency: 'concurrency', nodes: 'node count, over its instances and loads' }[analysis?.fit?.x] ?? 'instance count'
  if (analysis?.fit && analysis.fit.rows.some(r => r.model)) lines.push('', `scalability fit (max throughput per ${per}):`, formatCompare(analysis.fit))
  else if (analysis?.fit) lines.push('', 'scalability fit: not enough points for any group', ...analysis.fit.rows.map(r => `  ${r.line}`))
  else if (analysis?.fitError) lines.push('', `scalability fit: not enough data (${analysis.fitError})`)
  if (analysis?.correlations) lines.push('', formatCorrelate(analysis.correlations))
  else if (analysis?.correlationsError) lines.push('', `correlations: not enough data (${analysis.correlationsError})`)
  if (analysis?.report?.path) lines.push('', `report: ${analysis.report.path}`)
  else if (analysis?.report?.error) lines.push('', `report: not written (${analysis.report.error})`)
  lines.push('', `results: ${sweep.dir}`)
  return lines.join('\n')
}
