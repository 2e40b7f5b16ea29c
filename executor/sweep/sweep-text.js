// What a sweep prints: its plan (--dry-run), a line per run, and the end (counts, per-core table, fits, report).
import { table } from '../../analyzer/text-table.js'
import { formatCompare, formatCorrelate } from '../../analyzer/text-format.js'
import { perCoreWhy } from '../../analyzer/diagnosis/why-bends.js'
import { RUN_OPTION } from '../../lib/run-options.js'
import { DEFAULT_SLO, sloText } from '../../lib/slo.js'
import { benchmarkName, countInvalid, shapeText } from './sweep.js'
import { calibrationBound } from './sweep-plan.js'
import { ASSUMED_RATES, SAMPLE_BYTES, formatBytes } from './sweep-estimate.js'
import { adaptivePlanLines, lookLine, nextText, verdictLines } from './sweep-adaptive-text.js'

/** "1 h 02 min", "4 min 10 s", "12 s". */
export function formatDuration (seconds) {
  const s = Math.max(0, Math.round(seconds))
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
  if (s >= 60) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${s} s`
}

/** Where an estimate's figures come from, in a few words. */
const BASIS_TEXT = {
  plan: 'from the plan',
  cell: 'from the finished runs of each cell',
  overall: 'from the mean of the finished runs',
  mixed: 'from the finished runs: of each cell where it has some, their mean elsewhere'
}

/**
 * The estimate's disk line: bytes, what they rest on, and the free space where they go.
 * "estimated disk: 1.4 GB (from the plan: samples gz 12 B a request; assumed, as no calibration or finished run says:
 * cpu 500 req/s) · 31 GB free on /work/results"
 * @param {{ bytes: number, basis?: string, samples?: string[], assumedRates?: string[] }} estimate
 * @param {{ free?: number, dir?: string }} where
 */
export function diskText (estimate, { free, dir }) {
  const formats = estimate.samples ?? []
  const samples = formats.length ? `: samples ${formats.map(f => `${f} ${SAMPLE_BYTES[f]} B`).join(', ')} a request` : ''
  const assumed = (estimate.assumedRates ?? []).map(b => `${b} ${(ASSUMED_RATES[b] ?? ASSUMED_RATES.other).toLocaleString('en')}`)
  const rates = assumed.length ? `; assumed, as no calibration or finished run says: ${assumed.join(', ')} req/s` : ''
  const room = free === undefined ? '' : ` · ${formatBytes(free)} free on ${dir}`
  return `estimated disk: ${formatBytes(estimate.bytes ?? 0)} (${BASIS_TEXT[estimate.basis ?? 'plan']}${samples}${rates})${room}`
}

/** A plan entry's cell in a few aligned words: "cm x2     page      c=25 (relaxed)". */
export function entryText (cell) {
  const c = cell.config
  const load = cell.capacity ? 'capacity' : c.rate !== undefined ? `rate ${c.rate}/s` : `c=${c.concurrency ?? '?'}`
  return `${shapeText(c).padEnd(c.nodes ? 17 : 7)} ${benchmarkName(c).padEnd(9)} ${load}${cell.level ? ` (${cell.level})` : ''}`
}

/**
 * The dry run's view: grid, counts, estimate, seed and the order.
 * @param {Awaited<ReturnType<typeof import('./sweep-plan.js').planSweep>>} planned
 */
export function formatPlan ({ exp, cells, plan, seed, estimate, backend, calibration, warnings, free, out, adaptive }) {
  const lines = [`experiment ${exp.name} (profile ${exp.profile}) from ${exp.file}`]
  const perStrategy = axis => exp.strategies.map(s => `${s} ${axis[s].map(i => i.value).join(',')}`).join(' · ')
  const loads = exp.capacity
    ? `at ${sloText(exp.settings.slo ?? DEFAULT_SLO)}`
    : [...new Set(Object.values(exp.loads).flat().map(l => l.value ?? RUN_OPTION.concurrency.default))].join(',')
  const nodes = exp.nodes ? ` × nodes (${perStrategy(exp.nodes)})` : ''
  const benchmarks = exp.benchmarks.map(b => b ?? (exp.app || exp.settings.server || exp.settings.image
    ? benchmarkName({ app: exp.app, ...exp.settings })
    : RUN_OPTION.benchmark.default)).join(', ')
  lines.push(`grid: ${benchmarks} × ${exp.perNode ? 'instances per node' : 'instances'} (${perStrategy(exp.instances)})${nodes} × ${exp.loadKey} ${loads} = ` +
    `${cells.length} cells` +
    `${adaptive ? `, the question's ${Object.keys(adaptive.cells).length} in blocks` : ` × ${exp.repeats} repeat${exp.repeats === 1 ? '' : 's'}`}`)
  const duration = exp.settings.duration ?? RUN_OPTION.duration.default
  const measured = duration === 'auto'
    ? `auto ${exp.settings.minDuration ?? RUN_OPTION.minDuration.default}–${exp.settings.maxDuration ?? RUN_OPTION.maxDuration.default} s`
    : `${duration} s`
  const each = `${exp.settings.warmup ?? RUN_OPTION.warmup.default} s warm-up + ${measured}`
  lines.push(`plan: ${estimate.runs} runs on ${estimate.deployments} deployments (order: ${adaptive ? 'blocks' : exp.order}), ` +
    `each ${exp.capacity ? `a capacity search of probe runs, each ${each}` : each}`)
  if (adaptive) lines.push(...adaptivePlanLines(adaptive))
  // nodes are Swarm worker nodes: the estimate is the swarm's whatever the file says
  const backendName = backend ?? (exp.nodes ? 'swarm' : undefined) ?? exp.settings.backend ?? RUN_OPTION.backend.default
  lines.push(`estimated time: ${formatDuration(estimate.seconds)} on the ${backendName} backend` +
    `${backendName === 'auto' ? ' (figures of the local backend; on Swarm each deployment adds about 12 s)' : ''}`)
  lines.push(diskText(estimate, { free, dir: out }))
  if (exp.usesLevels) {
    lines.push(calibration
      ? `calibration ${exp.calibration}: relaxed ${calibration.relaxed.concurrency}, ` +
        `exhausted ${calibration.exhausted?.concurrency ?? '-'}, ${calibration.cores} cores`
      : `calibration ${exp.calibration} is missing: it is made first, adding up to ${formatDuration(calibrationBound(exp.calibrate))}`)
  }
  for (const w of warnings) lines.push(`warning: ${w}`)
  lines.push(`seed ${seed} (the same --seed gives the same order)`, 'order:')
  for (const e of plan.slice(0, 200)) lines.push(`  ${String(e.index + 1).padStart(4)}  ${entryText(cells[e.cell])}  ${repeatText(e)}`)
  if (plan.length > 200) lines.push(`  ... ${plan.length - 200} more (--json lists them all)`)
  return lines.join('\n')
}

/**
 * The dry run's view for machines: the plan with each entry's label.
 * @param {Awaited<ReturnType<typeof import('./sweep-plan.js').planSweep>>} planned
 */
export function planJson ({ exp, cells, plan, seed, estimate, calibration, warnings, free, out, adaptive }) {
  return {
    experiment: exp.name,
    profile: exp.profile,
    seed,
    estimate,
    disk: { out, free },
    warnings,
    calibration: calibration && { relaxed: calibration.relaxed, exhausted: calibration.exhausted, cores: calibration.cores },
    ...(adaptive ? { adaptive } : {}),
    plan: plan.map(e => ({ ...e, label: entryText(cells[e.cell]).replace(/\s+/g, ' ') }))
  }
}

/** Which repeat an entry is, or which block of an adaptive sweep: "repeat 2", "block 3". */
const repeatText = (e) => `${e.block ? 'block' : 'repeat'} ${e.repeat}`

/** The line a run of the sweep leaves on stderr when it ends. */
export function formatRunLine (e, run, total) {
  const n = `[${String(e.index + 1).padStart(String(total).length)}/${total}]`
  return `${n} ${e.label} · ${repeatText(e)}  ${resultText(e, run)}  (${e.seconds ?? 0} s)`
}

/** What an entry measured (a run's throughput, a search's capacity), or why it did not finish. */
function resultText (e, run) {
  if (e.status !== 'done' || !(run?.probes || run?.summary)) return `${e.status.toUpperCase()}: ${String(e.reason).split('\n')[0]}`
  if (run.probes) return capacityText(run)
  const s = run.summary
  return `${Math.round(s.throughput).toLocaleString('en')} req/s · p95 ${s.latency?.p95?.toFixed(1) ?? '-'} ms · ${s.errors} errors · ` +
    `busiest core ${run.cpu?.highest ?? '-'}%` +
    (e.invalid?.length ? ` · NOT VALID: ${e.invalid.join(', ')}` : '')
}

/** A capacity search's result in a few words: "capacity 203 req/s (p99 18 ms) · 8 probes". */
function capacityText (c) {
  const found = c.capacity === null
    ? `NO CAPACITY FOUND (${c.notes[0] ?? `between ${c.bounds.lo ?? '-'} and ${c.bounds.hi ?? '-'} req/s`})`
    : `capacity ${Math.round(c.capacity).toLocaleString('en')} req/s (p99 ${Math.round(c.atCapacity.latency.p99)} ms` +
      // the probit's capacity can lie above every rate that missed: then there is no "next up" to name
      `${c.bounds.hi === null ? '' : `, next up ${Math.round(c.bounds.hi).toLocaleString('en')} misses`})`
  return `${found} · ${c.probes.length} probes`
}

const pct = v => (v === null || v === undefined ? '-' : v.toFixed(1))

export function formatPerCoreTable (rows) {
  const sorted = [...rows].sort((a, b) =>
    String(a.benchmark).localeCompare(String(b.benchmark)) || a.loadValue - b.loadValue || a.strategy.localeCompare(b.strategy))
  const why = sorted.map(perCoreWhy).filter(Boolean)
  return table(['benchmark', 'approach', 'load (connections)', 'runs', 'highest core %', 'lowest core %', 'difference', 'overall %', 'bottleneck'],
    sorted.map(r => [
      r.benchmark, `${r.strategy} x${r.instances}`, r.load, r.runs, pct(r.highest), pct(r.lowest), pct(r.spread), pct(r.overall), r.bottleneck ?? '-'
    ])) +
    (why.length ? `\n\n${why.map(w => `  ${w}`).join('\n')}` : '')
}

/** The lines printed at the end of a sweep. */
export function formatSweepEnd (sweep, analysis, { seconds }) {
  const c = sweep.counts
  const d = sweep.deployments
  const lines = [`sweep ${sweep.id}: ${sweep.status} · ${c.done}/${c.runs} runs done${c.failed ? ` · ${c.failed} failed` : ''}` +
    `${c.degraded ? ` · ${c.degraded} degraded` : ''}${c.interrupted ? ` · ${c.interrupted} interrupted` : ''}` +
    `${c.pending ? ` · ${c.pending} not run` : ''}${c.skipped ? ` · ${c.skipped} skipped` : ''} · ` +
    `${d} deployment${d === 1 ? '' : 's'} · ${formatDuration(seconds)}`]
  if (sweep.actual && sweep.estimate) lines.push(`  ${estimateVsActual(sweep)}`)
  if (sweep.adaptive) lines.push(...verdictLines(sweep.adaptive, { skipped: c.skipped }))
  const invalid = countInvalid(sweep.plan)
  if (invalid.runs) {
    const why = Object.entries(invalid.byFlag).map(([f, n]) => `${f} ${n}`).join(', ')
    lines.push(`  ${invalid.runs} finished run${invalid.runs === 1 ? ' is' : 's are'} not valid (${why}): the fits leave them out; see each run's validity`)
  }
  for (const e of sweep.plan.filter(x => x.status === 'failed' || x.status === 'degraded')) {
    lines.push(`  ${e.status}: #${e.index + 1} ${e.label} (repeat ${e.repeat}): ${String(e.reason).split('\n')[0]}`)
  }
  if (sweep.status !== 'done') {
    lines.push(`  resume: executor sweep --resume ${sweep.dir}` +
      `${c.degraded ? ' (redoes the degraded runs too: a node lost mid-run is no steady-state measurement)' : ''}`)
  }
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

/** "estimated 15 min 34 s and 4.7 MB; took 14 min 10 s (2 sessions) and 3.9 MB: 0.91 x the time, 0.83 x the disk". */
export function estimateVsActual ({ estimate, actual, status }) {
  const ratio = (a, e) => (e > 0 ? `${(a / e).toFixed(2)} x` : '-')
  const sessions = actual.sessions > 1 ? ` (${actual.sessions} sessions)` : ''
  return `estimated ${formatDuration(estimate.seconds)} and ${formatBytes(estimate.bytes ?? 0)}; ` +
    `${status === 'done' ? 'took' : 'so far'} ${formatDuration(actual.seconds)}${sessions} and ${formatBytes(actual.bytes)}: ` +
    `${ratio(actual.seconds, estimate.seconds)} the time, ${ratio(actual.bytes, estimate.bytes)} the disk`
}

const OWNER_TEXT = {
  alive: (o) => `owned by the running process ${o.pid} on host ${o.host} (since ${o.startedAt})`,
  'other-host': (o) => `locked by process ${o.pid} on host ${o.host}, another host: whether it runs cannot be told from here`,
  unreadable: () => 'its sweep.lock cannot be read: delete it if no sweep process runs on this folder'
}

/**
 * The view of `executor sweep --status DIR`.
 * @param {Awaited<ReturnType<typeof import('./sweep-status.js').sweepStatusOf>>} st
 */
export function formatStatus (st) {
  const r = st.runs
  const resume = `executor sweep --resume ${st.dir}`
  const o = st.owner
  const owner = !o
    ? `no sweep process owns it${st.status === 'done' ? '' : `; ${resume}`}`
    : o.state === 'gone'
      ? `no sweep process owns it: the process ${o.pid} on host ${o.host} is gone; ${resume}`
      : OWNER_TEXT[o.state](o)
  const lines = [
    `sweep ${st.id} (${st.experiment}): ${st.status}${o?.state === 'gone' ? ' (its process died)' : ''} · sweep.json written ${st.updatedAt}`,
    `  runs: ${r.done} of ${r.total} done · ${r.failed} failed · ${r.interrupted} interrupted · ${r.invalid} not valid · ${r.left} left` +
      `${r.skipped ? ` · ${r.skipped} skipped` : ''}`,
    `  time: ${formatDuration(st.seconds.spent)} spent${r.left ? ` · about ${formatDuration(st.seconds.left)} left (${BASIS_TEXT[st.seconds.basis]})` : ''}` +
      (st.seconds.estimated !== null ? ` · planned ${formatDuration(st.seconds.estimated)}` : ''),
    `  disk: ${formatBytes(st.bytes.used)} used${r.left ? ` · about ${formatBytes(st.bytes.left)} to come` : ''} · ${formatBytes(st.bytes.free)} free` +
      (st.bytes.estimated !== null && st.bytes.estimated !== undefined ? ` · planned ${formatBytes(st.bytes.estimated)}` : ''),
    `  in flight: ${st.inFlight ? `#${st.inFlight.index + 1} ${st.inFlight.label} (repeat ${st.inFlight.repeat}), since ${st.inFlight.startedAt}` : 'nothing'}`,
    '  last error: ' + (st.lastError
      ? `#${st.lastError.index + 1} ${st.lastError.label} (repeat ${st.lastError.repeat}) ${st.lastError.status}: ${String(st.lastError.reason).split('\n')[0]}`
      : 'none'),
    `  ${owner}`
  ]
  if (st.adaptive) lines.push(...adaptiveStatusLines(st.adaptive))
  return lines.join('\n')
}

/**
 * --status's lines of an adaptive sweep: its question, the last look (the current interval) and the next block, or its
 * verdict.
 * @param {any} a sweep.json's adaptive
 */
function adaptiveStatusLines (a) {
  const last = a.looks.at(-1)
  const lines = adaptivePlanLines(a).map(l => `  ${l}`)
  lines.push(`  ${last ? lookLine(last, a) : `no look yet: block 1 (${Object.keys(a.cells).map(c => `${c} ×1`).join(', ')}) first`}`)
  if (a.verdict) lines.push(...verdictLines(a).map(l => `  ${l}`))
  else if (last) lines.push(`  next: block ${last.look + 1}: ${nextText(last)}`)
  return lines
}
