// Throughput points to fit: from a sweep folder's run.json files (grouped, repeats averaged) or from a CSV.
import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { parse } from 'csv-parse/sync'
import { mean, sampleStandardDeviation } from 'simple-statistics'
import { badFlag } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { readRunFiles, sweepFolders } from '../lib/run-files.js'
import { STRATEGY_TABLE } from '../lib/strategies.js'
import { validityOf } from './run-validity.js'
import { runsAndSearches, isCapacityProbe } from './capacity-runs.js'

/** run.json config fields a sweep can be grouped by (CLI spelling -> config key). */
export const GROUP_FIELDS = Object.freeze({
  strategy: 'strategy',
  benchmark: 'benchmark',
  driver: 'driver',
  backend: 'backend',
  'cpus-per-instance': 'cpusPerInstance',
  cpusPerInstance: 'cpusPerInstance',
  instances: 'instances',
  nodes: 'nodes',
  concurrency: 'concurrency',
  rate: 'rate',
  lb: 'lb'
})
export const X_FIELDS = Object.freeze(['instances', 'concurrency', 'nodes'])
/** The config keys that make one configuration: runs equal in all of them are repeats of each other. */
export const CONFIG_KEYS = Object.freeze([...new Set(Object.values(GROUP_FIELDS))])
const N_COLUMNS = ['n', 'instances', 'nodes', 'concurrency', 'load', 'processors']

/**
 * @typedef {{ n: number, throughput: number, sd?: number, count: number, p95?: number|null, errorRate?: number|null,
 *   cpuTotal?: number|null, config?: Record<string, any>, runs?: string[] }} SweepPoint
 * @typedef {{ n: number, throughput: number, run: string|null, deployment: string|null, sd?: number, count?: number }}
 *   Observation one finished run (a CSV row: run null, with its sd and count when the row is a mean); deployment: which
 *   deployment it measured (deploymentsOf; a CSV's deployment column), null where each is its own
 * @typedef {{ run: string, n: number, flags: string[] }} Excluded a run left out as invalid, and its flags' names
 * @typedef {{ name: string, key: Record<string, any>, unit: string, points: SweepPoint[], observations: Observation[],
 *   excluded: Excluded[], notes: string[] }} PointGroup points: the mean per N (tables, charts); observations: what is
 *   fitted
 */

/** The word for N in a group: cores for up, workers for cm, ... connections when N is the concurrency. */
export function unitFor (key, x) {
  if (x === 'concurrency') return 'connections'
  if (x === 'nodes') return 'nodes'
  return STRATEGY_TABLE[key?.strategy]?.unit ?? 'instances'
}

/**
 * Validates --x and --group-by. Returns config keys.
 * @param {{ x?: string, groupBy?: string | string[] }} opts
 */
export function resolveGrouping ({ x = 'instances', groupBy } = {}) {
  if (!X_FIELDS.includes(x)) throw badFlag('--x', `"${x}" is not allowed; allowed: ${X_FIELDS.join(', ')}`)
  // over concurrency each instance count is its own curve; over nodes the point is the best instance count (Table 4)
  const raw = groupBy === undefined ? (x === 'concurrency' ? ['strategy', 'benchmark', 'instances'] : ['strategy', 'benchmark']) : groupBy
  const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map(s => s.trim()).filter(Boolean)
  const keys = list.map(f => {
    const key = GROUP_FIELDS[f]
    if (!key) {
      throw badFlag('--group-by', `"${f}" is not a run config field; allowed: strategy, benchmark, driver, backend, cpus-per-instance, ` +
        'instances, nodes, concurrency, rate, lb')
    }
    if (key === x) throw badFlag('--group-by', `cannot group by ${f}: it is the x axis (--x ${x})`)
    return key
  })
  return { x, groupBy: [...new Set(keys)] }
}

const sdOf = a => (a.length > 1 ? sampleStandardDeviation(a) : undefined)

/**
 * The server's CPU in cores over the steady window: on several Swarm nodes the sum of each node's total (cpu.nodes),
 * else cpu.total; null when the run has none.
 * @param {any} cpu run.json's cpu
 * @returns {number|null}
 */
export function clusterCpu (cpu) {
  const nodes = Array.isArray(cpu?.nodes) ? cpu.nodes.map(n => n?.total).filter(Number.isFinite) : []
  if (nodes.length) return nodes.reduce((a, b) => a + b, 0)
  return Number.isFinite(cpu?.total) ? cpu.total : null
}

/**
 * Reads the runs of one or more sweep folders: only `status: "done"` runs with a summary count. A degraded run (a
 * node was lost while it ran) is no steady-state measurement: it is skipped and counted as such. A run whose
 * validity says it did not measure the server (`validity.ok === false`: the load generator or the host saturated,
 * throttling, ...) is left out and listed in `invalid`, unless includeInvalid; a run without validity counts as valid.
 * @param {string[]} dirs
 * @param {{ includeInvalid?: boolean }} [opts]
 */
export async function readRuns (dirs, { includeInvalid = false } = {}) {
  const read = await readRunFiles(await sweepFolders(dirs))
  const deployments = deploymentsOf(read)
  const all = runsAndSearches(read)
  const runs = []
  const invalid = []
  const skipped = { notDone: 0, degraded: 0, unreadable: read.unreadable.length, noSummary: 0, invalid: 0, probes: all.probes }
  for (const { file, dir, run } of all.runs) {
    if (run.status === 'degraded') { skipped.degraded++; continue }
    if (run.status !== 'done') { skipped.notDone++; continue }
    if (!(run.summary?.throughput > 0)) { skipped.noSummary++; continue }
    const entry = {
      file,
      dir,
      config: run.config,
      summary: run.summary,
      cpuTotal: clusterCpu(run.cpu),
      validity: validityOf(run),
      deployment: deployments.get(file) ?? `run:${file}`
    }
    if (!entry.validity.ok && !includeInvalid) {
      skipped.invalid++
      invalid.push(entry)
      continue
    }
    runs.push(entry)
  }
  return { runs, invalid, skipped }
}

/** The config fields that decide what a sweep deploys, as far as the analyzer needs them (a coarser key merges). */
const DEPLOY_KEYS = Object.freeze(['strategy', 'instances', 'nodes', 'benchmark', 'cpusPerInstance', 'backend'])

/** A run's deployment from its placement: the replicas' processes (local) or containers (Swarm); null when none. */
function placementKey (run) {
  const ids = (Array.isArray(run.placement) ? run.placement : []).map(p => [p?.node, p?.pid, p?.port, p?.container, p?.task])
    .filter(x => x.slice(1).some(v => v !== undefined && v !== null))
  return ids.length ? `placement:${run.config?.sweep?.id ?? ''}:${JSON.stringify(ids)}` : null
}

/**
 * Which deployment each run and capacity search measured (file -> key): runs of one deployment share its mean as
 * one unit of replication in the tests between groups (analyzer/stats/group-tests.js).
 * - A run whose placement names its replicas' processes or containers: that placement (every run of a deployment
 *   records the same one, executor/run.js).
 * - Without one, a sweep's run (config.sweep): the sweep's runs in the order they started, a deployment kept while
 *   the shape stays and the run before finished (executor/shape-runner.js); merging two deployments is the safe error.
 * - Otherwise (executor run deploys for every run): the run's own.
 * A capacity search measured its probes' deployment.
 * @param {Awaited<ReturnType<typeof readRunFiles>>} read
 * @returns {Map<string, string>}
 */
export function deploymentsOf (read) {
  const out = new Map()
  const bySweep = new Map()
  for (const { file, run } of read.runs) {
    const key = placementKey(run)
    if (key) out.set(file, key)
    else if (run.config?.sweep?.id) bySweep.set(run.config.sweep.id, [...(bySweep.get(run.config.sweep.id) ?? []), { file, run }])
    else out.set(file, `run:${file}`)
  }
  for (const [id, list] of bySweep) {
    list.sort((a, b) => String(a.run.startedAt ?? '').localeCompare(String(b.run.startedAt ?? '')) ||
      (a.run.config.sweep.index ?? 0) - (b.run.config.sweep.index ?? 0))
    let count = 0
    let before = null
    for (const { file, run } of list) {
      const shape = JSON.stringify(DEPLOY_KEYS.map(k => run.config[k] ?? null))
      if (!before || before.shape !== shape || before.status !== 'done') count++
      out.set(file, `sweep:${id}:${count}`)
      before = { shape, status: run.status }
    }
  }
  const probeOf = new Map(read.runs.filter(r => isCapacityProbe(r.run)).map(r => [r.run.config.capacity.search, r.file]))
  for (const { file, capacity } of read.capacities) out.set(file, out.get(probeOf.get(capacity.id)) ?? `search:${file}`)
  return out
}

/**
 * One configuration's repeats as one figure: mean throughput, its sample sd (two or more runs), how many runs, and the
 * means of p95, error rate and server CPU.
 * @param {{ summary: any, cpuTotal?: number|null }[]} list
 */
export function repeatsOf (list) {
  const tps = list.map(r => r.summary.throughput)
  const meanOf = values => (values.length ? mean(values) : null)
  return {
    throughput: mean(tps),
    sd: sdOf(tps),
    count: list.length,
    p95: meanOf(list.map(r => r.summary.latency?.p95).filter(Number.isFinite)),
    errorRate: meanOf(list.map(r => r.summary.errorRate).filter(Number.isFinite)),
    cpuTotal: meanOf(list.map(r => r.cpuTotal).filter(Number.isFinite))
  }
}

/**
 * Groups runs and turns each group into points: repeats of one configuration are averaged (sd and count kept);
 * when several configurations share an N (e.g. concurrency levels at a fixed instance count), the one with the
 * highest mean throughput is the point, as Ibenchjs fitted USL and Amdahl to maximum throughput (section 5.4).
 */
function groupRuns (runs, invalid, { x, groupBy }) {
  const groups = new Map()
  let noX = 0
  const varying = CONFIG_KEYS.filter(k => k !== x && !groupBy.includes(k))
  const keyOf = r => Object.fromEntries(groupBy.map(k => [k, r.config[k] ?? null]))
  for (const r of runs) {
    const n = r.config[x]
    if (!(typeof n === 'number' && n > 0)) { noX++; continue }
    const key = keyOf(r)
    const id = JSON.stringify(key)
    if (!groups.has(id)) groups.set(id, { key, byN: new Map() })
    const byN = groups.get(id).byN
    const sig = JSON.stringify(varying.map(k => r.config[k] ?? null))
    if (!byN.has(n)) byN.set(n, new Map())
    if (!byN.get(n).has(sig)) byN.get(n).set(sig, [])
    byN.get(n).get(sig).push(r)
  }
  /** @type {PointGroup[]} */
  const out = []
  for (const [id, { key, byN }] of groups) {
    /** @type {string[] & { byText?: Map<string, number[]> }} */
    const notes = Object.assign([], { byText: new Map() })
    const points = []
    /** @type {Observation[]} */
    const observations = []
    for (const [n, sigs] of [...byN].sort((a, b) => a[0] - b[0])) {
      const ranked = [...sigs.values()].map(list => ({
        list,
        point: {
          n,
          ...repeatsOf(list),
          config: Object.fromEntries(varying.filter(k => list[0].config[k] !== undefined).map(k => [k, list[0].config[k]])),
          runs: list.map(r => r.dir)
        }
      })).sort((a, b) => b.point.throughput - a.point.throughput)
      const candidates = ranked.map(c => c.point)
      const best = candidates[0]
      observations.push(...ranked[0].list.map(r => ({ n, throughput: r.summary.throughput, run: r.dir, deployment: r.deployment })))
      const flagged = ranked[0].list.filter(r => !r.validity.ok)
      if (flagged.length) {
        const names = [...new Set(flagged.flatMap(r => r.validity.flags))].join(', ') || 'no flag named'
        note(notes, `${flagged.length} invalid run${flagged.length === 1 ? '' : 's'} kept by --include-invalid (${names})`, n)
      }
      if (candidates.length > 1) {
        const diff = Object.entries(best.config).filter(([k, v]) => candidates.some(c => c.config[k] !== v)).map(([k, v]) => `${k} ${v}`)
        note(notes, `the best of ${candidates.length} configurations (${diff.join(', ') || 'same config'})`, n)
      }
      if (best.errorRate > 0.01) note(notes, `over 1% errors (up to ${(best.errorRate * 100).toFixed(1)}%); throughput counts failed requests too`, n)
      points.push(best)
    }
    for (const [text, ns] of notes.byText) notes.push(`N=${ns.join(',')}: ${text}`)
    const name = Object.values(key).map(v => (v === null ? '-' : String(v))).join('/') || 'all'
    const excluded = invalid.filter(r => JSON.stringify(keyOf(r)) === id).map(r => ({ run: r.dir, n: r.config[x], flags: r.validity.flags }))
    out.push({ name, key, unit: unitFor(key, x), points, observations, excluded, notes: [...notes] })
  }
  return { groups: out.sort((a, b) => a.name.localeCompare(b.name)), noX }
}

/** Collects one note per kind of text, with the N it applies to (one line instead of one per N). */
function note (notes, text, n) {
  const ns = notes.byText.get(text) ?? []
  ns.push(n)
  notes.byText.set(text, ns)
}

/**
 * Points from a CSV with an N column (n, instances, concurrency, load or processors) and a throughput column; an
 * optional deployment column says which rows measured one deployment (else each row is a deployment of its own).
 */
async function readCsv (file, { groupBy }) {
  let records
  try {
    records = /** @type {Record<string, string>[]} */ (parse(await readFile(file), {
      columns: h => h.map(c => String(c).trim()),
      skip_empty_lines: true,
      trim: true,
      comment: '#'
    }))
  } catch (err) {
    throw fail('CSV_UNREADABLE', { file, why: err.message.split('\n')[0] })
  }
  const columns = records.length ? Object.keys(records[0]) : []
  const lower = new Map(columns.map(c => [c.toLowerCase(), c]))
  const nCol = N_COLUMNS.map(c => lower.get(c)).find(Boolean)
  const tCol = lower.get('throughput')
  if (!nCol || !tCol) {
    throw fail('CSV_COLUMNS_MISSING', { file, nColumns: N_COLUMNS, found: columns })
  }
  const groupCols = (groupBy ?? ['strategy', 'benchmark', 'group']).map(g => lower.get(String(g).toLowerCase())).filter(Boolean)
  const groups = new Map()
  records.forEach((rec, i) => {
    const num = (col, name) => {
      const v = Number(rec[col])
      if (rec[col] === '' || !Number.isFinite(v)) throw fail('CSV_NOT_A_NUMBER', { file, row: i + 2, column: name, value: rec[col] })
      return v
    }
    const key = Object.fromEntries(groupCols.map(c => [c, rec[c]]))
    const id = JSON.stringify(key)
    if (!groups.has(id)) groups.set(id, { key, byN: new Map() })
    const n = num(nCol, nCol)
    const list = groups.get(id).byN.get(n) ?? []
    const given = col => lower.get(col) && rec[lower.get(col)] !== ''
    list.push({
      throughput: num(tCol, 'throughput'),
      sd: given('sd') ? num(lower.get('sd'), 'sd') : undefined,
      count: given('count') ? num(lower.get('count'), 'count') : undefined,
      deployment: given('deployment') ? `csv:${file}:${rec[lower.get('deployment')]}` : null
    })
    groups.get(id).byN.set(n, list)
  })
  const x = ['concurrency', 'nodes'].includes(nCol.toLowerCase()) ? nCol.toLowerCase() : 'instances'
  /** @type {PointGroup[]} */
  const out = [...groups.values()].map(({ key, byN }) => ({
    name: Object.values(key).join('/') || basename(file),
    key,
    unit: nCol.toLowerCase() === 'n' ? (unitFor(key, x)) : nCol.toLowerCase(),
    notes: [],
    points: [...byN].sort((a, b) => a[0] - b[0]).map(([n, list]) => list.length === 1
      ? { n, throughput: list[0].throughput, sd: list[0].sd, count: list[0].count ?? 1 }
      : { n, throughput: mean(list.map(p => p.throughput)), sd: sdOf(list.map(p => p.throughput)), count: list.length }),
    // every row is fitted: a row that is a mean keeps its sd and count (for --weights sd)
    observations: [...byN].sort((a, b) => a[0] - b[0]).flatMap(([n, list]) => list.map(p => ({
      n,
      throughput: p.throughput,
      run: null,
      deployment: p.deployment,
      ...(p.sd !== undefined ? { sd: p.sd } : {}),
      ...(p.count !== undefined ? { count: p.count } : {})
    }))),
    excluded: []
  }))
  return out
}

/**
 * Loads points to fit from sweep folders (read recursively for run.json) and/or CSV files. Invalid runs are left out
 * (counted in skipped.invalid, listed in their group's excluded) unless includeInvalid.
 * @param {string | string[]} sources
 * @param {{ x?: string, groupBy?: string | string[], includeInvalid?: boolean }} [opts]
 * @returns {Promise<{ x: string, groupBy: string[], groups: PointGroup[], skipped: { notDone: number, degraded: number,
 *   unreadable: number, noSummary: number, invalid: number, probes: number, noX: number } }>} probes: capacity probes,
 *   whose searches are the points
 */
export async function loadPoints (sources, opts = {}) {
  const list = Array.isArray(sources) ? sources : [sources]
  if (!list.length) throw fail('POINTS_SOURCE_MISSING')
  const { x, groupBy } = resolveGrouping(opts)
  const dirs = []
  const groups = []
  for (const src of list) {
    let s
    try {
      s = await stat(src)
    } catch {
      throw fail('POINTS_SOURCE_NOT_FOUND', { source: src })
    }
    if (s.isDirectory()) dirs.push(src)
    else groups.push(...await readCsv(src, { groupBy: opts.groupBy === undefined ? undefined : groupBy }))
  }
  const skipped = { notDone: 0, degraded: 0, unreadable: 0, noSummary: 0, invalid: 0, probes: 0, noX: 0 }
  if (dirs.length) {
    const read = await readRuns(dirs, { includeInvalid: opts.includeInvalid })
    Object.assign(skipped, read.skipped)
    const grouped = groupRuns(read.runs, read.invalid, { x, groupBy })
    skipped.noX = grouped.noX
    groups.push(...grouped.groups)
    if (!read.runs.length && !groups.length) {
      throw fail('NO_FINISHED_RUNS', { dirs, notDone: skipped.notDone, invalid: skipped.invalid })
    }
  }
  return { x, groupBy, groups, skipped }
}
