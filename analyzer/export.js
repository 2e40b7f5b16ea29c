// `analyzer export`: every run under some folders as one tidy row each (its config, summary, validity, diagnosis
// and, for a capacity search, its capacity), or every fitted group as one row (`--table fits`: the model chosen, σ, λ,
// γ, N*, the ceiling, each with the interval the fit prints), as CSV or NDJSON, for R, pandas or a spreadsheet. The
// columns are EXPORT_COLUMNS or FIT_COLUMNS: the same for every row, empty (CSV) or null (NDJSON) where there is no
// value.
import { writeFile } from 'node:fs/promises'
import { readRunFiles } from '../lib/run-files.js'
import { fail } from '../lib/messages.js'
import { validityOf } from './run-validity.js'
import { capacityAsRun, isCapacityProbe } from './capacity-runs.js'
import { fitSources } from './compare.js'
import { printedInterval } from './fit/fit-verdict.js'

export const EXPORT_FORMATS = Object.freeze(['csv', 'ndjson'])
export const EXPORT_TABLES = Object.freeze(['runs', 'fits'])

/**
 * The columns of a row, in order: name, what it holds (said in analyzer export --help), and how it is read from a run
 * (a run.json object, or a capacity search read as one by capacityAsRun).
 * @type {readonly { name: string, what: string, get: (run: any, kind: string) => unknown }[]}
 */
export const EXPORT_COLUMNS = Object.freeze([
  { name: 'kind', what: 'run; probe (a run of a capacity search); capacity (a search, its throughput the capacity found)', get: (_, kind) => kind },
  { name: 'id', what: 'the run\'s id (a search\'s id for kind capacity)', get: r => r.id },
  { name: 'status', what: 'done, degraded, failed, interrupted or running', get: r => r.status },
  { name: 'startedAt', what: 'when it started (ISO 8601, UTC)', get: r => r.startedAt },
  { name: 'sweep', what: 'the sweep it belongs to (config.sweep.id)', get: r => r.config?.sweep?.id },
  { name: 'repeat', what: 'its repeat in the sweep', get: r => r.config?.sweep?.repeat },
  { name: 'level', what: 'the calibration level its concurrency came from', get: r => r.config?.sweep?.level },
  { name: 'strategy', what: 'up, cm, pm2 or hs', get: r => r.config?.strategy },
  { name: 'instances', what: 'N of --instances', get: r => r.config?.instances },
  { name: 'nodes', what: 'Swarm worker nodes (--nodes)', get: r => r.config?.nodes },
  { name: 'benchmark', what: 'the benchmark or app served', get: r => r.config?.benchmark },
  { name: 'concurrency', what: 'closed model: connections', get: r => r.config?.concurrency },
  { name: 'rate', what: 'open model: offered requests/s', get: r => r.config?.rate },
  { name: 'connection', what: 'keep-alive or close', get: r => r.config?.connection },
  { name: 'cpusPerInstance', what: 'CPU quota per instance', get: r => r.config?.cpusPerInstance },
  { name: 'duration', what: 'steady seconds asked (a number or auto)', get: r => r.config?.duration },
  { name: 'driver', what: 'autocannon or jmeter', get: r => r.config?.driver },
  { name: 'backend', what: 'local or swarm', get: r => r.environment?.backend ?? r.config?.backend },
  { name: 'requests', what: 'requests in the steady window', get: r => r.summary?.requests },
  { name: 'errors', what: 'failed requests in it', get: r => r.summary?.errors },
  { name: 'errorRate', what: 'errors / requests', get: r => r.summary?.errorRate },
  { name: 'throughput', what: 'requests/s over the steady window (kind capacity: the capacity found)', get: r => r.summary?.throughput },
  { name: 'relHalfWidth', what: 'the 95% half-width of the mean throughput, relative (summary.stability)', get: r => r.summary?.stability?.relHalfWidth },
  ...['mean', 'p50', 'p90', 'p95', 'p99', 'max'].map(k => ({
    name: `latency${k[0].toUpperCase()}${k.slice(1)}`,
    what: `latency ${k} in ms`,
    get: (/** @type {any} */ r) => r.summary?.latency?.[k]
  })),
  { name: 'serverCores', what: 'the server\'s CPU in cores over the steady window (cpu.total)', get: r => r.cpu?.total },
  { name: 'valid', what: 'true unless validity.ok is false: the analyzer leaves invalid runs out of fits', get: r => validityOf(r).ok },
  { name: 'flags', what: 'the validity flags raised, separated by ;', get: r => validityOf(r).flags.join(';') },
  { name: 'bottleneck', what: 'what limited it (diagnosis.bottleneck.kind)', get: r => r.diagnosis?.bottleneck?.kind },
  { name: 'bottleneckConfidence', what: 'high, medium or low', get: r => r.diagnosis?.bottleneck?.confidence },
  { name: 'capacitySearch', what: 'probe: the search it belongs to', get: r => r.config?.capacity?.search },
  { name: 'capacityPhase', what: 'probe: bracket or boundary', get: r => r.config?.capacity?.phase },
  { name: 'capacityLow', what: 'capacity: its interval\'s low end (req/s)', get: r => r.capacityInterval?.lo },
  { name: 'capacityHigh', what: 'capacity: its interval\'s high end (req/s)', get: r => r.capacityInterval?.hi },
  { name: 'host', what: 'the host it ran on', get: r => r.environment?.host },
  { name: 'cpus', what: 'the host\'s cores', get: r => r.environment?.cpus },
  { name: 'dir', what: 'its folder', get: (r) => r.dir }
])

/** A fitted figure and the ends of the interval the fit prints for it (null where it prints none). */
const withInterval = (/** @type {string} */ name, /** @type {string} */ what) => [
  { name, what, get: (/** @type {any} */ f) => f[name] },
  {
    name: `${name}Low`,
    what: `${name}: the low end of its 95% interval (empty: none printed, see identified)`,
    get: (/** @type {any} */ f) => printedInterval(f, name)?.[0]
  },
  { name: `${name}High`, what: `${name}: the high end of that interval`, get: (/** @type {any} */ f) => printedInterval(f, name)?.[1] }
]

/**
 * The columns of a fit's row (`--table fits`): one row per group and model, as `analyzer fit --model both` fits them
 * (relative-error weighting, the intervals it prints).
 * @type {readonly { name: string, what: string, get: (fit: any, group: any, model: string) => unknown }[]}
 */
export const FIT_COLUMNS = Object.freeze([
  { name: 'group', what: 'the group fitted (its strategy and benchmark)', get: (_, g) => g.name },
  { name: 'model', what: 'usl or amdahl: the model this row fitted', get: (_, __, m) => m },
  { name: 'chosen', what: 'the model AICc prefers on these runs: usl, amdahl or ceiling (linear up to a ceiling)', get: f => f.choice?.model },
  { name: 'points', what: 'distinct N fitted', get: f => f.points },
  { name: 'observations', what: 'runs fitted (each repeat one)', get: f => f.observations },
  { name: 'weighting', what: 'relative (least squares on log throughput), none or sd', get: f => f.weighting },
  ...withInterval('gamma', 'throughput of one instance (req/s)'),
  ...withInterval('sigma', 'contention σ'),
  ...withInterval('lambda', 'coherency λ'),
  { name: 'sigmaIdentified', what: 'whether the N measured identify σ (false: only its bound is known)', get: f => f.identified?.sigma },
  { name: 'lambdaIdentified', what: 'whether the N measured identify λ', get: f => f.identified?.lambda },
  ...withInterval('nStar', 'N at the peak of the USL curve'),
  ...withInterval('ceiling', 'the throughput the curve tends to or peaks at (req/s)'),
  { name: 'limitedBy', what: 'what the fit says bends the curve', get: f => f.limitedBy },
  { name: 'verdict', what: 'the fit\'s sentence', get: f => f.verdict },
  { name: 'error', what: 'why this model could not be fitted (the other columns empty)', get: f => f.error?.message }
])

/** A value as a column holds it: a number, a string, a boolean or null (an object is its JSON). */
function cell (v) {
  if (v === undefined || v === null || (typeof v === 'number' && !Number.isFinite(v))) return null
  if (typeof v === 'object') return JSON.stringify(v)
  return /** @type {string | number | boolean} */ (v)
}

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; empty for null. */
function csvField (v) {
  if (v === null) return ''
  const s = String(v)
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/**
 * Every run under the folders as a row: run.json files (a capacity search's probes as kind probe) and each capacity
 * search's capacity.json (kind capacity), ordered by sweep, start and id.
 * @param {string[]} dirs
 * @returns {Promise<{ rows: Record<string, string | number | boolean | null>[], unreadable: string[] }>}
 */
export async function exportRows (dirs) {
  const read = await readRunFiles(dirs)
  const found = [
    ...read.runs.map(({ dir, run }) => ({ kind: isCapacityProbe(run) ? 'probe' : 'run', run: { ...run, dir } })),
    ...read.capacities.map(({ dir, capacity }) => ({ kind: 'capacity', run: { ...capacityAsRun(capacity), dir } }))
  ]
  if (!found.length) {
    throw fail('NOTHING_TO_EXPORT', { dirs, unreadable: read.unreadable.length })
  }
  const key = (/** @type {any} */ r) => [r.config?.sweep?.id ?? '', r.startedAt ?? '', r.id ?? ''].join('\u0000')
  found.sort((a, b) => (key(a.run) < key(b.run) ? -1 : key(a.run) > key(b.run) ? 1 : 0))
  const rows = found.map(({ kind, run }) => Object.fromEntries(EXPORT_COLUMNS.map(c => [c.name, cell(c.get(run, kind))])))
  return { rows, unreadable: read.unreadable }
}

/**
 * Every group of runs under the folders fitted with USL and Amdahl, a row per group and model (FIT_COLUMNS).
 * @param {string[]} dirs
 * @param {{ includeInvalid?: boolean }} [opts]
 */
export async function exportFitRows (dirs, { includeInvalid = false } = {}) {
  const fitted = await fitSources(dirs, { model: 'both', includeInvalid })
  const rows = fitted.groups.flatMap(g => Object.entries(g.fits).map(([m, f]) =>
    Object.fromEntries(FIT_COLUMNS.map(c => [c.name, cell(f.error && !['group', 'model', 'error'].includes(c.name) ? null : c.get(f, g, m))]))))
  return { rows, unreadable: [] }
}

/**
 * The rows as text: CSV with a header line, or NDJSON (one JSON object a line); no line break at the end.
 * @param {Record<string, unknown>[]} rows
 * @param {string} format csv | ndjson
 * @param {readonly { name: string }[]} [columns] EXPORT_COLUMNS, or FIT_COLUMNS for fits
 */
export function formatRows (rows, format, columns = EXPORT_COLUMNS) {
  if (format === 'ndjson') return rows.map(r => JSON.stringify(r)).join('\n')
  const names = columns.map(c => c.name)
  return [names.join(','), ...rows.map(r => names.map(n => csvField(/** @type {any} */ (r[n]))).join(','))].join('\n')
}

/**
 * analyzer export: the rows of every run under the folders (or, `table` fits, of every fitted group), written to a
 * file or returned as text.
 * @param {string[]} dirs
 * @param {{ format?: string, table?: string, out?: string, includeInvalid?: boolean, log?: (line: string) => void }}
 *   [opts]
 * @returns {Promise<{ path: string | null, text: string, rows: number }>}
 */
export async function exportRuns (dirs, { format = 'csv', table = 'runs', out, includeInvalid = false, log = () => {} } = {}) {
  const fits = table === 'fits'
  const { rows, unreadable } = fits ? await exportFitRows(dirs, { includeInvalid }) : await exportRows(dirs)
  if (unreadable.length) log(`skipped ${unreadable.length} unreadable file${unreadable.length === 1 ? '' : 's'}: ${unreadable.join(', ')}`)
  const text = formatRows(rows, format, fits ? FIT_COLUMNS : EXPORT_COLUMNS)
  if (!out) return { path: null, text, rows: rows.length }
  try {
    await writeFile(out, text + '\n')
  } catch (err) {
    throw fail('EXPORT_UNWRITABLE', { out, why: err.code ?? err.message })
  }
  return { path: out, text, rows: rows.length }
}
