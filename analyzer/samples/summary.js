// `analyzer summary`: requests, errors, throughput and latency percentiles of a JTL (or a run's latency histograms),
// per label and in total, as JMeter defines them.
import { stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { fail } from '../../lib/messages.js'
import { RUN_FILES } from '../../lib/run-files.js'
import { LatencyHistogram } from './latency-histogram.js'
import { scanJtl } from './jtl-reader.js'
import { histogramSink, looksLikeJson, readLatencyFile, scanFacts } from './latency-file.js'
import { steadyStateOf } from './steady-state.js'
import { MICRO_DEFINITION, microFigures } from './micro-latency.js'

/** The percentile definition, stated once for the docs and --json consumers. */
export const PERCENTILE_DEFINITION = 'JMeter 5.6 dashboard (statistics.json): commons-math3 Percentile, LEGACY estimation, pos = p(n+1)/100, ' +
  'linear between neighbouring order statistics; computed exactly over every sample from a histogram of whole ms ' +
  '(JMeter itself keeps only the last jmeter.reportgenerator.statistic_window = 20000 samples per percentile)'

/**
 * @typedef {{ requests: number, errors: number, errorRate: number, throughput: number, latency: { mean: number|null,
 *   p50: number|null, p90: number|null, p95: number|null, p99: number|null, max: number|null, min: number|null },
 *   start: number|null, end: number|null, bytes: number, sentBytes: number, stability: ReturnType<typeof stabilityOf>,
 *   latencyUs?: ReturnType<typeof microFigures> }} Summary latencyUs: the same samples' latency in µs from the driver's
 *   own clock (micro-latency.js), where it kept them
 */

/**
 * Was the throughput steady across the window, and how well is its mean known? From the completions per tenth of a
 * second of the steady window (analyzer/samples/steady-state.js steadyStateOf: its first second left out, the warm-up
 * MSER-5
 * finds cut and reported, the batch size from the autocorrelation, the mean's 95% interval by overlapping batch means,
 * the drift by Theil–Sen with an autocorrelation-robust test). A window too short to judge says so (judged false, why)
 * and its interval and drift are null.
 * @param {ArrayLike<number>} perTenth completions in each tenth of a second of the window, in order
 */
export function stabilityOf (perTenth) {
  return steadyStateOf(perTenth)
}

/**
 * The figures of one group of samples. Throughput is JMeter's: samples / (last end - first start), in req/s.
 * Latency figures and start/end are null when there are no samples (never NaN).
 * @param {LatencyHistogram} h
 * @param {{ steady?: { from?: number, to?: number } }} [opts] the steady window its throughput is counted over per
 *   second
 * @returns {Summary}
 */
export function summaryOf (h, { steady } = {}) {
  const n = h.count
  const [p50, p90, p95, p99] = h.percentiles([50, 90, 95, 99])
  // One sample of 0 ms spans no time at all; JMeter would print Infinity, a span of at least 1 ms keeps it finite.
  const spanMs = n ? Math.max(1, h.lastEnd - h.firstStart) : 0
  return {
    requests: n,
    errors: h.errors,
    errorRate: n ? h.errors / n : 0,
    throughput: n ? n / spanMs * 1000 : 0,
    latency: {
      mean: n ? h.sum / n : null,
      p50,
      p90,
      p95,
      p99,
      max: n ? h.max : null,
      min: n ? h.min : null
    },
    start: n ? h.firstStart : null,
    end: n ? h.lastEnd : null,
    bytes: h.bytes,
    sentBytes: h.sentBytes,
    stability: stabilityOf(h.perTenth(steady))
  }
}

/**
 * Resolves a JTL path (plain or gzip) or a run folder: its samples.jtl, else its samples.jtl.gz, else its latency
 * histograms (latency.json, a run with --samples none).
 * @param {string} pathOrRunDir
 */
export async function resolveJtl (pathOrRunDir) {
  let s
  try {
    s = await stat(pathOrRunDir)
  } catch {
    throw fail('SAMPLES_NOT_FOUND', { path: pathOrRunDir })
  }
  if (!s.isDirectory()) return pathOrRunDir
  for (const name of [RUN_FILES.samples, RUN_FILES.samplesGz, RUN_FILES.latency]) {
    const file = join(pathOrRunDir, name)
    if (await stat(file).then(f => f.isFile(), () => false)) return file
  }
  throw fail('RUN_FOLDER_WITHOUT_SAMPLES', { path: pathOrRunDir, samples: RUN_FILES.samples, samplesGz: RUN_FILES.samplesGz, latency: RUN_FILES.latency })
}

/**
 * Summarises a JTL (plain or gzip, streamed in constant memory) or a run's latency histograms per label and in total,
 * the way JMeter's dashboard does: transaction-controller samples count for their label but not in the total.
 * Malformed rows are counted and reported with examples, never fatal; an empty or header-only file gives zero
 * requests. From latency.json (a run folder without samples, or the file itself) the figures are the same as from
 * the run's samples, which it was built from; a window cannot be applied there (NS_ERR_BAD_FILE).
 * @param {string} pathOrRunDir a .jtl or .jtl.gz file, a latency.json, or a run folder
 * @param {{ label?: string, window?: { from?: number, to?: number }, steady?: { from?: number, to?: number } }} [opts]
 *   only this label; only samples
 *   starting in [from, to) (ms since the epoch); steady: the run's steady window, whose seconds the throughput's
 *   stability is counted over (default: from the first completion to the last)
 * @returns {Promise<{ file: string, source: 'samples'|'histogram', rows: number, malformed: { count: number, examples:
 *   { line: number, reason: string, text: string }[] }, total: Summary, labels: Record<string, Summary>, header: {
 *   columns: string[], assumed: boolean } | null, outsideWindow: number, percentiles: string, micros?: string }>}
 *   micros: what latencyUs is, when the total has it
 */
export async function summarize (pathOrRunDir, { label, window, steady } = {}) {
  const file = await resolveJtl(pathOrRunDir)
  let read
  if (await looksLikeJson(file)) {
    if (window && (window.from !== undefined || window.to !== undefined)) {
      throw fail('HISTOGRAM_HAS_NO_STARTS', { file })
    }
    read = { source: /** @type {const} */ ('histogram'), ...await readLatencyFile(file, { label }) }
  } else {
    const sink = histogramSink({ label })
    const scan = await scanJtl(file, sink, { window })
    read = { source: /** @type {const} */ ('samples'), plain: sink.plain, controllers: sink.controllers, ...scanFacts(scan), micros: null }
  }
  const { plain, controllers } = read
  const total = new LatencyHistogram()
  for (const h of plain.values()) total.merge(h)
  /** @type {Record<string, Summary>} */
  const labels = {}
  const names = [...new Set([...plain.keys(), ...controllers.keys()])].sort()
  for (const name of names) {
    const h = new LatencyHistogram()
    if (plain.has(name)) h.merge(plain.get(name))
    if (controllers.has(name)) h.merge(controllers.get(name))
    if (h.count) labels[name] = summaryOf(h, { steady })
  }
  // the driver's µs histograms, where they hold exactly the samples summarised here (a window, a merge of several
  // generators' rows or JMeter's controllers leave the counts apart: whole ms only, said by latencyUs' absence)
  const micros = read.micros ?? (window ? null : await microsBeside(file))
  let everyLabel = plain.size > 0
  for (const [name, summary] of Object.entries(labels)) {
    const h = micros?.get(name)
    if (h && h.totalCount === summary.requests) summary.latencyUs = microFigures([h])
    else if (plain.has(name)) everyLabel = false
  }
  const totalSummary = summaryOf(total, { steady })
  if (micros && everyLabel) totalSummary.latencyUs = microFigures([...plain.keys()].map(name => micros.get(name)))
  return {
    file,
    source: read.source,
    rows: read.rows,
    malformed: read.malformed,
    total: totalSummary,
    labels,
    header: read.header,
    outsideWindow: read.outsideWindow,
    percentiles: PERCENTILE_DEFINITION,
    ...(totalSummary.latencyUs ? { micros: MICRO_DEFINITION } : {})
  }
}

/**
 * The µs histograms in the latency.json beside a run's samples file, or null (none there, none kept, not readable:
 * the whole ms are the figures then).
 * @param {string} file
 */
async function microsBeside (file) {
  if (basename(file) !== RUN_FILES.samples && basename(file) !== RUN_FILES.samplesGz) return null
  const beside = join(dirname(file), RUN_FILES.latency)
  if (!await stat(beside).then(f => f.isFile(), () => false)) return null
  return readLatencyFile(beside).then(r => r.micros, () => null)
}
