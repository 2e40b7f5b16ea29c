// `analyzer correlate` as a library call: Ibenchjs Figure 21, how nodes and instances go with throughput, its sd and
// relative sd.
import { stat } from 'node:fs/promises'
import { sampleCorrelation } from 'simple-statistics'
import { fail } from '../lib/messages.js'
import { readRuns, repeatsOf, CONFIG_KEYS } from './points.js'

/** The factors correlated, and what each one is correlated with (per cell: mean throughput, its sd, sd / mean). */
export const FACTORS = Object.freeze(['nodes', 'instances'])
export const METRICS = Object.freeze(['throughput', 'sd', 'relSd'])
/** Two points always lie on a line (r = ±1): a correlation says something from three cells on. */
export const MIN_CELLS = 3
const METRIC_WORDS = { throughput: 'mean throughput', sd: 'its standard deviation', relSd: 'its relative standard deviation' }

/**
 * @typedef {{ benchmark: string|null, strategy: string|null, nodes: number|null, instances: number|null, concurrency:
 *   number|null, rate: number|null, runs: number, throughput: number, sd: number|null, relSd: number|null }} Cell
 * @typedef {{ r: number|null, cells: number, why: string|null }} Correlation
 * @typedef {{ benchmark: string|null, factor: string, values: number[], cells: number, runs: number,
 *   throughput: Correlation, sd: Correlation, relSd: Correlation }} CorrelationRow
 */

/** The runs' configurations, each with its repeats aggregated (a cell: strategy x nodes x instances x load x ...). */
function cellsOf (runs) {
  const byConfig = new Map()
  for (const r of runs) {
    const id = JSON.stringify(CONFIG_KEYS.map(k => r.config[k] ?? null))
    if (!byConfig.has(id)) byConfig.set(id, [])
    byConfig.get(id).push(r)
  }
  /** @type {Cell[]} */
  const cells = [...byConfig.values()].map(list => {
    const c = list[0].config
    const a = repeatsOf(list)
    const sd = a.sd ?? null
    return {
      benchmark: c.benchmark ?? null,
      strategy: c.strategy ?? null,
      nodes: Number.isFinite(c.nodes) ? c.nodes : null,
      instances: Number.isFinite(c.instances) ? c.instances : null,
      concurrency: Number.isFinite(c.concurrency) ? c.concurrency : null,
      rate: Number.isFinite(c.rate) ? c.rate : null,
      runs: a.count,
      throughput: a.throughput,
      sd,
      relSd: sd === null ? null : sd / a.throughput
    }
  })
  const load = c => c.concurrency ?? c.rate ?? 0
  return cells.sort((a, b) => String(a.benchmark).localeCompare(String(b.benchmark)) || String(a.strategy).localeCompare(String(b.strategy)) ||
    (a.nodes ?? 0) - (b.nodes ?? 0) || (a.instances ?? 0) - (b.instances ?? 0) || load(a) - load(b))
}

/** Equal up to rounding (sd / mean of proportional cells differs in the last bits): r would be noise. */
const flat = ys => Math.max(...ys) - Math.min(...ys) <= 1e-9 * Math.max(...ys.map(Math.abs))

/**
 * Pearson r of a factor with a metric over the cells that have both, or null and why it cannot be said.
 * @param {Cell[]} cells
 * @returns {Correlation}
 */
export function correlation (cells, factor, metric) {
  const all = cells.filter(c => c[factor] !== null)
  const pairs = all.filter(c => c[metric] !== null)
  const xs = pairs.map(c => c[factor])
  const ys = pairs.map(c => c[metric])
  const na = why => ({ r: null, cells: pairs.length, why })
  if (!all.length) return na(`no run names its ${factor}`)
  const values = new Set(all.map(c => c[factor]))
  if (values.size < 2) return na(`${factor} does not vary (${[...values][0]} in every cell)`)
  if (metric !== 'throughput' && pairs.length < all.length && pairs.length < MIN_CELLS) {
    return na(`${pairs.length ? `only ${pairs.length} of ${all.length} cells have` : 'no cell has'} ` +
      'two or more runs, which a standard deviation needs (repeats: 2)')
  }
  if (pairs.length < MIN_CELLS) return na(`too few cells (${pairs.length}; a correlation needs ${MIN_CELLS})`)
  if (new Set(xs).size < 2) return na(`${factor} does not vary among the cells with a ${metric === 'throughput' ? 'throughput' : 'standard deviation'}`)
  if (flat(ys)) return na(`${METRIC_WORDS[metric]} is the same in every cell`)
  const r = sampleCorrelation(xs, ys)
  return Number.isFinite(r) ? { r: Math.max(-1, Math.min(1, r)), cells: pairs.length, why: null } : na('not defined for these cells')
}

/**
 * Per benchmark and factor (nodes, instances), the Pearson correlation of the factor with each cell's mean throughput,
 * standard deviation and relative standard deviation (sd / mean), a cell being one configuration (strategy x nodes x
 * instances x load, and any other config field) with its repeats aggregated. Only finished runs count: failed,
 * interrupted and degraded runs are skipped and counted. Where a factor does not vary or there are too few cells,
 * r is null and `why` says so.
 * @param {string | string[]} sources sweep folders (run.json files inside)
 * @param {{ factors?: readonly string[], includeInvalid?: boolean }} [opts] includeInvalid: count the runs whose
 *   validity says they did not measure the server (left out by default, as by the fits)
 */
export async function correlate (sources, { factors = FACTORS, includeInvalid = false } = {}) {
  const dirs = [sources].flat()
  if (!dirs.length) throw fail('SWEEP_FOLDERS_MISSING')
  for (const dir of dirs) {
    const s = await stat(dir).catch(() => null)
    if (!s?.isDirectory()) {
      throw fail('SWEEP_FOLDER_NOT_FOUND', { dir, exists: Boolean(s) })
    }
  }
  const { runs, skipped } = await readRuns(dirs, { includeInvalid })
  if (!runs.length) {
    throw fail('NO_FINISHED_RUNS_TO_CORRELATE', { dirs, notDone: skipped.notDone, degraded: skipped.degraded })
  }
  const cells = cellsOf(runs)
  /** @type {CorrelationRow[]} */
  const rows = []
  for (const benchmark of [...new Set(cells.map(c => c.benchmark))]) {
    const mine = cells.filter(c => c.benchmark === benchmark)
    for (const factor of factors) {
      rows.push(/** @type {CorrelationRow} */ ({
        benchmark,
        factor,
        values: [...new Set(mine.map(c => c[factor]).filter(v => v !== null))].sort((a, b) => a - b),
        cells: mine.length,
        runs: mine.reduce((a, c) => a + c.runs, 0),
        ...Object.fromEntries(METRICS.map(m => [m, correlation(mine, factor, m)]))
      }))
    }
  }
  return { sources: dirs, factors: [...factors], metrics: [...METRICS], minCells: MIN_CELLS, skipped, cells, rows }
}

/** Does a set of runs vary in nodes or instances (so that a correlation table has something to say)? */
export function variesInFactors (configs) {
  return FACTORS.some(f => new Set(configs.map(c => c?.[f]).filter(v => v !== undefined && v !== null)).size > 1)
}
