// A run's latency histograms (latency.json): what the JTL scanner made of every row, per label, kept small enough to
// hold for every run when the samples file is not kept.
import { open, readFile } from 'node:fs/promises'
import { NsError } from '../lib/errors.js'
import { LATENCY_SCHEMA } from '../lib/run-files.js'
import { LatencyHistogram } from './latency-histogram.js'

/**
 * A JTL sink that keeps a histogram per label, plain samples and JMeter transaction-controller samples apart (the
 * dashboard counts controllers per label, not in the total).
 * @param {{ label?: string }} [opts] only this label
 */
export function histogramSink ({ label } = {}) {
  /** @type {Map<string, LatencyHistogram>} */
  const plain = new Map()
  /** @type {Map<string, LatencyHistogram>} */
  const controllers = new Map()
  const keep = (map, name) => {
    if (label !== undefined && name !== label) return null
    const h = new LatencyHistogram()
    map.set(name, h)
    return h
  }
  return {
    plain,
    controllers,
    record: (/** @type {string} */ name) => keep(plain, name),
    controller: (/** @type {string} */ name) => keep(controllers, name)
  }
}

/**
 * What a scan says of the file besides its samples: rows, blank lines, rows outside the window, malformed rows with
 * examples, the header.
 * @param {import('./jtl-reader.js').ScanResult} scan
 */
export function scanFacts (scan) {
  return {
    rows: scan.rows,
    blankLines: scan.blankLines,
    outsideWindow: scan.outsideWindow,
    malformed: scan.malformed,
    header: scan.layout ? { columns: scan.layout.columns, assumed: scan.layout.assumed } : null
  }
}

/**
 * latency.json's content: the scan's facts and every histogram.
 * @param {ReturnType<typeof histogramSink>} sink
 * @param {import('./jtl-reader.js').ScanResult} scan
 */
export function latencyFileOf (sink, scan) {
  const byName = (map) => Object.fromEntries([...map].map(([name, h]) => [name, h.toJSON()]))
  return { schema: LATENCY_SCHEMA, ...scanFacts(scan), labels: byName(sink.plain), controllers: byName(sink.controllers) }
}

/**
 * Reads a latency.json back into histograms (only `label`'s when given).
 * @param {string} file
 * @param {{ label?: string }} [opts]
 * @returns {Promise<{ plain: Map<string, LatencyHistogram>, controllers: Map<string, LatencyHistogram>, rows: number,
 *   outsideWindow: number, malformed: { count: number, examples: any[] }, header: { columns: string[], assumed:
 *   boolean } | null }>}
 * @throws {NsError} NS_ERR_BAD_FILE when it is not one
 */
export async function readLatencyFile (file, { label } = {}) {
  const data = await readFile(file, 'utf8').then(JSON.parse).catch(() => null)
  if (data?.schema !== LATENCY_SCHEMA) throw new NsError('NS_ERR_BAD_FILE', `${file}: not a nodescale latency histogram (${LATENCY_SCHEMA})`)
  const mapOf = (obj) => new Map(Object.entries(obj ?? {}).filter(([name]) => label === undefined || name === label)
    .map(([name, j]) => [name, LatencyHistogram.fromJSON(j)]))
  return {
    plain: mapOf(data.labels),
    controllers: mapOf(data.controllers),
    rows: data.rows,
    outsideWindow: data.outsideWindow ?? 0,
    malformed: data.malformed ?? { count: 0, examples: [] },
    header: data.header ?? null
  }
}

/** Does the file start like a JSON object (a latency.json) rather than a JTL? */
export async function looksLikeJson (file) {
  const fh = await open(file, 'r')
  try {
    const b = Buffer.alloc(64)
    const { bytesRead } = await fh.read(b, 0, 64, 0)
    return b.toString('utf8', 0, bytesRead).trimStart().startsWith('{')
  } finally {
    await fh.close()
  }
}
