// `analyzer report` as a library call: everything a sweep's report shows, gathered once; the renderers only format it.
import { readFile, writeFile, rename, stat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { NsError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { loadPoints, resolveGrouping } from '../points.js'
import { fitSources, compare } from '../compare.js'
import { throughputAt, peakOf } from '../fit/usl-model.js'
import { preparePoints } from '../fit/usl-fit.js'
import { readRunList, cpuTable, environmentsOf } from './report-runs.js'
import { correlate, variesInFactors } from '../correlate.js'
import { renderCharts } from './report-charts.js'
import { renderHtml } from './report-html.js'
import { renderMarkdown } from './report-md.js'
import { replicate } from '../replicate.js'
import { studies } from '../replication/published.js'
import { SWEEP_FILE, sweepFolder } from '../../lib/run-files.js'

export const FORMATS = Object.freeze(['html', 'md'])
const CURVE_STEPS = 80
const MODELS = ['usl', 'amdahl']

/**
 * @typedef {{ model: string, nStar: number, xStar: number, inChart: boolean }} Peak
 * @typedef {import('../points.js').PointGroup & { fits: Record<string, any>, curves: { model: string, n: number,
 *   throughput: number }[], peaks: Peak[], domain: [number, number], runsUsed: number }} ReportGroup excluded: the
 *   runs left out as invalid
 */

/** Is this "the data cannot answer" (too few points, flat): the report shows a note instead of failing. */
const isBadData = err => err instanceof NsError && err.code === 'NS_ERR_BAD_DATA'

/**
 * Where a group's chart ends: the largest N measured, stretched to show a fitted peak that lies at most twice as far.
 * @returns {[number, number]}
 */
function domainOf (points, fits) {
  const ns = points.map(p => p.n)
  const lo = Math.min(1, ...ns)
  let hi = Math.max(...ns)
  for (const f of Object.values(fits)) {
    if (f && !f.error && f.nStar !== null && f.nStar > hi && f.nStar <= 2 * hi) hi = Math.ceil(f.nStar * 1.1)
  }
  return [lo, hi]
}

/** The fitted curves over the chart's N range and where each one peaks. */
function curvesOf (fits, [lo, hi]) {
  const curves = []
  /** @type {Peak[]} */
  const peaks = []
  for (const model of MODELS) {
    const f = fits[model]
    if (!f || f.error) continue
    for (let i = 0; i <= CURVE_STEPS; i++) {
      const n = lo + (hi - lo) * i / CURVE_STEPS
      const y = throughputAt(n, f)
      if (Number.isFinite(y)) curves.push({ model, n, throughput: y })
    }
    const peak = peakOf(f)
    if (peak && Number.isFinite(peak.nStar) && Number.isFinite(peak.xStar)) peaks.push({ model, ...peak, inChart: peak.nStar >= lo && peak.nStar <= hi })
  }
  return { curves, peaks }
}

/** The reason a model cannot be fitted to these points, as the fit itself words it. */
function whyNoFit (points, model, fallback) {
  try {
    preparePoints(points, model)
  } catch (err) {
    if (isBadData(err)) return { code: err.code, message: err.message }
    throw err
  }
  return { code: fallback.code, message: fallback.message }
}

/**
 * Fits both models per group with fitSources; when no group has enough points for either, the groups still come
 * back (from loadPoints) with the reason as each fit's error, so the report shows a note instead of a curve.
 */
async function fitGroups (sources, opts) {
  try {
    return (await fitSources(sources, { ...opts, model: 'both' })).groups
  } catch (err) {
    if (!isBadData(err)) throw err
    const loaded = await loadPoints(sources, opts).catch(e => { if (isBadData(e)) return { groups: [] }; throw e })
    return loaded.groups.map(g => ({
      ...g,
      fits: Object.fromEntries(MODELS.map(m => [m, { error: whyNoFit(g.observations, m, err) }])),
      better: null,
      test: null
    }))
  }
}

/** The sources that are folders (the others points CSVs); a source that is not there stops the report. */
async function folderSources (sources) {
  const dirs = []
  for (const src of sources) {
    const s = await stat(src).catch(() => null)
    if (!s) throw fail('REPORT_SOURCE_NOT_FOUND', { source: src })
    if (s.isDirectory()) dirs.push(src)
  }
  return dirs
}

/** A fitted group as the report shows it: its points, fits, curves over its domain, and the runs it used. */
function reportGroup (g) {
  const domain = domainOf(g.points, g.fits)
  return {
    name: g.name,
    key: g.key,
    unit: g.unit,
    points: g.points,
    observations: g.observations,
    excluded: g.excluded,
    notes: g.notes,
    fits: g.fits,
    ...curvesOf(g.fits, domain),
    domain,
    runsUsed: g.points.reduce((a, p) => a + (p.count ?? 1), 0)
  }
}

/** What the report says of what it left out or could not read: invalid runs, capacity probes, unreadable files. */
function reportNotes ({ groups, runs, probes, unreadable, includeInvalid }) {
  const notes = []
  if (!groups.length) notes.push('no finished runs: nothing to plot or fit; the run list below says why each run did not finish')
  const invalid = runs.filter(r => r.status === 'done' && !r.valid).length
  if (invalid) {
    notes.push(includeInvalid
      ? `${invalid} finished run${invalid > 1 ? 's' : ''} flagged invalid ${invalid > 1 ? 'are' : 'is'} used (--include-invalid); ` +
        'the run list says why each is invalid'
      : `${invalid} finished run${invalid > 1 ? 's' : ''} left out as invalid (the run list says why; --include-invalid puts them back)`)
  }
  if (probes) notes.push(`${probes} capacity probe run${probes > 1 ? 's' : ''} not listed: each capacity search is one run, its capacity the throughput`)
  if (unreadable.length) notes.push(`${unreadable.length} run.json file${unreadable.length > 1 ? 's' : ''} could not be read: ${unreadable.join(', ')}`)
  return notes
}

/** An analysis the report can go without: its data not able to answer (bad data) is null, anything else throws. */
const orNull = (promise) => promise.catch(e => { if (isBadData(e)) return null; throw e })

/**
 * Gathers a report of one or more sweep folders (and/or points CSVs): the runs and their status, the points per
 * group with their spread, both fits with curves and peaks, the sigma/lambda comparison and the tests between
 * groups, the runs left out as invalid, the per-core CPU table and the environment.
 * @param {string[]} sources
 * @param {{ x?: string, groupBy?: string|string[], bootstrap?: number, seed?: number, weights?: 'none'|'sd', title?:
 *   string, now?: Date, includeInvalid?: boolean }} [opts]
 */
export async function buildReport (sources, { x, groupBy, bootstrap = 0, seed = 1, weights, title, now = new Date(), includeInvalid = false } = {}) {
  if (!sources.length) throw fail('REPORT_SOURCES_MISSING')
  const grouping = resolveGrouping({ x, groupBy })
  const dirs = await folderSources(sources)
  const { runs, unreadable, probes, searches } = await readRunList(sources)
  const fitOpts = { x: grouping.x, groupBy: grouping.groupBy, bootstrap, seed, weights, includeInvalid }
  const fitted = await fitGroups(sources, fitOpts)
  if (!fitted.length && !runs.length) {
    throw fail('NOTHING_TO_REPORT', { sources })
  }
  const comparison = fitted.length ? await orNull(compare(sources, { ...fitOpts, model: 'usl' })) : null
  /** @type {ReportGroup[]} */
  const groups = fitted.map(reportGroup)
  // Figure 21's table where there is something to correlate: finished runs over more than one node or instance count
  const correlations = variesInFactors(runs.filter(r => r.status === 'done').map(r => r.config))
    ? await orNull(correlate(dirs, { includeInvalid }))
    : null
  const sweeps = await Promise.all(dirs.map(sweepJsonOf))
  const replications = await replicationsOf(dirs, sweeps, includeInvalid)
  const adaptive = sweeps.filter(sw => sw?.adaptive?.looks?.length).map(sw => ({ sweep: sw.id, ...sw.adaptive }))
  const status = {}
  for (const r of runs) status[r.status] = (status[r.status] ?? 0) + 1
  return {
    title: title ?? `nodescale report: ${sources.join(', ')}`,
    generatedAt: now.toISOString(),
    sources,
    x: grouping.x,
    groupBy: grouping.groupBy,
    runs,
    searches,
    status,
    groups,
    comparison,
    correlations,
    cpu: cpuTable(runs),
    environments: environmentsOf(runs),
    replications,
    adaptive,
    notes: reportNotes({ groups, runs, probes, unreadable, includeInvalid })
  }
}

/**
 * A replication per study nodescale reproduces (analyzer replicate) whose experiments some of the sweep folders ran,
 * each over all of those folders.
 * @param {string[]} dirs
 * @param {any[]} sweeps each folder's sweep.json (or null)
 * @param {boolean} includeInvalid
 */
async function replicationsOf (dirs, sweeps, includeInvalid) {
  const byStudy = new Map()
  for (const [i, dir] of dirs.entries()) {
    const name = sweeps[i]?.experiment?.name
    const study = Object.values(studies).find(s => s.experiments.includes(name))
    if (study) byStudy.set(study.id, [...(byStudy.get(study.id) ?? []), dir])
  }
  const out = []
  for (const [study, folders] of byStudy) out.push(await replicate(folders, { study, includeInvalid }))
  return out
}

/**
 * A sweep folder's sweep.json, read once for the replications and the adaptive experiments; or null (a folder of
 * runs without one, or one that cannot be read: the runs still report).
 * @param {string} dir
 */
async function sweepJsonOf (dir) {
  return readFile(join(await sweepFolder(dir), SWEEP_FILE), 'utf8').then(t => JSON.parse(t), () => null)
}

/** @typedef {Awaited<ReturnType<typeof buildReport>>} Report */

/** Where the report goes when -o is not given: report.html in the (first) sweep folder, or beside a CSV. */
async function defaultOutput (sources, format) {
  const first = sources[0]
  const dir = (await stat(first)).isDirectory() ? first : dirname(first)
  return join(dir, `report.${format}`)
}

/**
 * Builds a report and renders it: an HTML file with inline SVG charts (written to `out`, by default report.html in
 * the first sweep folder), or Markdown (written to `out`, or returned as text when there is none).
 * @param {string[]} sources
 * @param {Parameters<typeof buildReport>[1] & { format?: 'html'|'md', out?: string, log?: (line: string) => void }}
 *   [opts]
 * @returns {Promise<{ format: string, path: string|null, text: string|null, bytes: number, report: Report }>}
 */
export async function writeReport (sources, { format = 'html', out, log = () => {}, ...opts } = {}) {
  if (!FORMATS.includes(format)) throw fail('FORMAT_NOT_ALLOWED', { format, allowed: FORMATS })
  const report = await buildReport(sources, opts)
  const counts = Object.entries(report.status).map(([s, n]) => `${n} ${s}`).join(', ') || 'none'
  log(`report: ${report.runs.length} runs (${counts}), ${report.groups.length} groups of points`)
  let text
  if (format === 'html') {
    const started = Date.now()
    const charts = await renderCharts(report)
    log(`report: ${charts.count} charts drawn in ${Date.now() - started} ms`)
    text = renderHtml(report, charts)
  } else {
    text = renderMarkdown(report)
  }
  const path = out ?? (format === 'html' ? await defaultOutput(sources, format) : null)
  if (path === null) return { format, path: null, text, bytes: Buffer.byteLength(text), report }
  const abs = resolve(path)
  const tmp = `${abs}.${process.pid}.tmp`
  try {
    await writeFile(tmp, text)
    await rename(tmp, abs)
  } catch (err) {
    throw fail('REPORT_UNWRITABLE', { path, why: err.code ?? err.message }, { cause: err })
  }
  log(`report: wrote ${abs} (${Math.round(Buffer.byteLength(text) / 1024)} kB)`)
  return { format, path: abs, text: null, bytes: Buffer.byteLength(text), report }
}
