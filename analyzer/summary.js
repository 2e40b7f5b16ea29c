// `analyzer summary`: requests, errors, throughput and latency percentiles of a JTL, per label and in total, as JMeter
// defines them.
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { NsError } from '../lib/errors.js'
import { RUN_FILES } from '../lib/run-files.js'
import { LatencyHistogram } from './latency-histogram.js'
import { scanJtl } from './jtl-reader.js'

/** The percentile definition, stated once for the docs and --json consumers. */
export const PERCENTILE_DEFINITION = 'JMeter 5.6 dashboard (statistics.json): commons-math3 Percentile, LEGACY estimation, pos = p(n+1)/100, ' +
  'linear between neighbouring order statistics; computed exactly over every sample from a histogram of whole ms ' +
  '(JMeter itself keeps only the last jmeter.reportgenerator.statistic_window = 20000 samples per percentile)'

/**
 * @typedef {{ requests: number, errors: number, errorRate: number, throughput: number, latency: { mean: number|null,
 *   p50: number|null, p90: number|null, p95: number|null, p99: number|null, max: number|null, min: number|null },
 *   start: number|null, end: number|null, bytes: number, sentBytes: number }} Summary
 */

/**
 * The figures of one group of samples. Throughput is JMeter's: samples / (last end - first start), in req/s.
 * Latency figures and start/end are null when there are no samples (never NaN).
 * @param {LatencyHistogram} h
 * @returns {Summary}
 */
export function summaryOf (h) {
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
    sentBytes: h.sentBytes
  }
}

/**
 * Resolves a JTL path or a run folder (which holds samples.jtl).
 * @param {string} pathOrRunDir
 */
export async function resolveJtl (pathOrRunDir) {
  let s
  try {
    s = await stat(pathOrRunDir)
  } catch {
    throw new NsError('NS_ERR_BAD_FILE', `${pathOrRunDir}: no such file or folder; give a .jtl file or a run folder holding samples.jtl`)
  }
  if (!s.isDirectory()) return pathOrRunDir
  const file = join(pathOrRunDir, RUN_FILES.samples)
  try {
    await stat(file)
  } catch {
    throw new NsError('NS_ERR_BAD_FILE', `${pathOrRunDir}: this folder has no samples.jtl; give a .jtl file or a run folder (<out>/<run-id>/)`)
  }
  return file
}

/**
 * Streams a CSV JTL (constant memory) and summarises it per label and in total, the way JMeter's dashboard does:
 * transaction-controller samples count for their label but not in the total. Malformed rows are counted and
 * reported with examples, never fatal; an empty or header-only file gives zero requests.
 * @param {string} pathOrRunDir a .jtl file or a run folder holding samples.jtl
 * @param {{ label?: string, window?: { from?: number, to?: number } }} [opts] only this label; only samples
 *   starting in [from, to) (ms since the epoch)
 * @returns {Promise<{ file: string, rows: number, malformed: { count: number, examples: { line: number, reason: string,
 *   text: string }[] }, total: Summary, labels: Record<string, Summary>, header: { columns: string[], assumed: boolean
 *   } | null, outsideWindow: number, percentiles: string }>}
 */
export async function summarize (pathOrRunDir, { label, window } = {}) {
  const file = await resolveJtl(pathOrRunDir)
  /** @type {Map<string, LatencyHistogram>} */
  const plain = new Map()
  /** @type {Map<string, LatencyHistogram>} */
  const controllers = new Map()
  const sink = {
    record (name) {
      if (label !== undefined && name !== label) return null
      const h = new LatencyHistogram()
      plain.set(name, h)
      return h
    },
    controller (name) {
      if (label !== undefined && name !== label) return null
      const h = new LatencyHistogram()
      controllers.set(name, h)
      return h
    }
  }
  const scan = await scanJtl(file, sink, { window })
  const total = new LatencyHistogram()
  for (const h of plain.values()) total.merge(h)
  /** @type {Record<string, Summary>} */
  const labels = {}
  const names = [...new Set([...plain.keys(), ...controllers.keys()])].sort()
  for (const name of names) {
    const h = new LatencyHistogram()
    if (plain.has(name)) h.merge(plain.get(name))
    if (controllers.has(name)) h.merge(controllers.get(name))
    if (h.count) labels[name] = summaryOf(h)
  }
  return {
    file,
    rows: scan.rows,
    malformed: scan.malformed,
    total: summaryOf(total),
    labels,
    header: scan.layout ? { columns: scan.layout.columns, assumed: scan.layout.assumed } : null,
    outsideWindow: scan.outsideWindow,
    percentiles: PERCENTILE_DEFINITION
  }
}
