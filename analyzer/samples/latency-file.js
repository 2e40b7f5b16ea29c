// A run's latency histograms (latency.json): what the JTL scanner made of every row, per label, kept small enough to
// hold for every run when the samples file is not kept.
import { open } from 'node:fs/promises'
import { fail } from '../../lib/messages.js'
import { LATENCY_SCHEMA, readJsonBounded } from '../../lib/run-files.js'
import { LatencyHistogram, MAX_SPAN_TENTHS, MAX_SPARSE } from './latency-histogram.js'
import { MAX_LABELS } from './jtl-reader.js'
import { decodeMicros, microsProblem } from './micro-latency.js'

/** latency.json's bound: a file over this is refused before it is parsed (docs/SECURITY.md, "Bounded parsers"). */
export const MAX_LATENCY_FILE_BYTES = 256 << 20

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
 * latency.json's content: the scan's facts and every histogram, and the driver's µs histograms when it kept them.
 * @param {ReturnType<typeof histogramSink>} sink
 * @param {import('./jtl-reader.js').ScanResult} scan
 * @param {import('./micro-latency.js').MicrosJson | null} [micros]
 */
export function latencyFileOf (sink, scan, micros) {
  const byName = (map) => Object.fromEntries([...map].map(([name, h]) => [name, h.toJSON()]))
  return { schema: LATENCY_SCHEMA, ...scanFacts(scan), labels: byName(sink.plain), controllers: byName(sink.controllers), ...(micros ? { micros } : {}) }
}

/**
 * Reads a latency.json back into histograms (only `label`'s when given).
 * @param {string} file
 * @param {{ label?: string }} [opts]
 * @returns {Promise<{ plain: Map<string, LatencyHistogram>, controllers: Map<string, LatencyHistogram>, rows: number,
 *   outsideWindow: number, malformed: { count: number, examples: any[] }, header: { columns: string[], assumed:
 *   boolean } | null, micros: Map<string, any> | null }>} micros: the driver's µs histograms by label, where it kept
 *   them
 * @throws {NsError} NS_ERR_BAD_FILE when it is not one
 */
export async function readLatencyFile (file, { label } = {}) {
  const data = await readJsonBounded(file, MAX_LATENCY_FILE_BYTES)
  if (data?.schema !== LATENCY_SCHEMA) throw fail('NOT_A_LATENCY_FILE', { file, schema: LATENCY_SCHEMA })
  const problem = latencyFileProblem(data)
  if (problem) throw fail('LATENCY_FILE_INVALID', { file, problem, schema: LATENCY_SCHEMA })
  const mapOf = (obj) => new Map(Object.entries(obj ?? {}).filter(([name]) => label === undefined || name === label)
    .map(([name, j]) => [name, LatencyHistogram.fromJSON(j)]))
  return {
    plain: mapOf(data.labels),
    controllers: mapOf(data.controllers),
    rows: data.rows,
    outsideWindow: data.outsideWindow ?? 0,
    malformed: data.malformed ?? { count: 0, examples: [] },
    header: data.header ?? null,
    micros: data.micros ? decodeMicros(data.micros, file) : null
  }
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)
const isCount = (v) => Number.isSafeInteger(v) && v >= 0
const isNumber = (v) => typeof v === 'number' && Number.isFinite(v)

/**
 * What is wrong with a parsed latency.json (the field's path and why), or null: a hand check of what fromJSON reads
 * (schemas/latency.v1.schema.json is the full form; ajv is a devDependency), with the histograms' bounds.
 * @param {any} data
 * @returns {string | null}
 */
export function latencyFileProblem (data) {
  if (!isCount(data.rows)) return 'rows: not a whole number'
  if (data.outsideWindow !== undefined && !isCount(data.outsideWindow)) return 'outsideWindow: not a whole number'
  if (data.malformed !== undefined && !(isObject(data.malformed) && isCount(data.malformed.count) && Array.isArray(data.malformed.examples))) {
    return 'malformed: not { count, examples }'
  }
  if (data.header != null && !(isObject(data.header) && Array.isArray(data.header.columns))) return 'header: not { columns, assumed }'
  if (data.micros !== undefined) {
    const problem = microsProblem(data.micros, MAX_LABELS)
    if (problem) return problem
  }
  for (const group of ['labels', 'controllers']) {
    const obj = data[group] ?? {}
    if (!isObject(obj)) return `${group}: not an object of histograms`
    const names = Object.keys(obj)
    if (names.length > MAX_LABELS) return `${group}: ${names.length} labels, at most ${MAX_LABELS}`
    for (const name of names) {
      const problem = histogramProblem(obj[name])
      if (problem) return `${group}[${JSON.stringify(name.slice(0, 80))}].${problem}`
    }
  }
  return null
}

/** @param {any} h @returns {string | null} */
function histogramProblem (h) {
  if (!isObject(h)) return 'not a histogram'
  for (const k of ['count', 'errors']) if (!isCount(h[k])) return `${k}: not a whole number`
  for (const k of ['sum', 'bytes', 'sentBytes']) if (!isNumber(h[k])) return `${k}: not a number`
  for (const k of ['min', 'max', 'firstStart', 'firstEnd', 'lastEnd']) if (h[k] !== null && !isNumber(h[k])) return `${k}: not a number or null`
  const pairs = (obj, a, b, max) => {
    if (!isObject(obj) || !Array.isArray(obj[a]) || !Array.isArray(obj[b]) || obj[a].length !== obj[b].length) return `not { ${a}, ${b} } of one length`
    if (obj[a].length > max) return `${obj[a].length} entries, at most ${max}`
    for (let i = 0; i < obj[a].length; i++) {
      if (!isCount(obj[a][i]) || !isCount(obj[b][i])) return `${a}[${i}]: not a whole number`
      if (i > 0 && obj[a][i] <= obj[a][i - 1]) return `${a}[${i}]: not ascending`
    }
    return null
  }
  const latency = pairs(h.latency, 'ms', 'n', (1 << 20) + MAX_SPARSE)
  if (latency) return `latency: ${latency}`
  const errors = pairs(h.errorTenths, 'at', 'n', MAX_SPAN_TENTHS)
  if (errors) return `errorTenths: ${errors}`
  const t = h.tenths
  if (!isObject(t) || !(t.first === null || isCount(t.first)) || !Array.isArray(t.n)) return 'tenths: not { first, n }'
  if (t.n.length > MAX_SPAN_TENTHS) return `tenths: ${t.n.length} tenths, at most ${MAX_SPAN_TENTHS} (24 h)`
  if (!t.n.every(isCount)) return 'tenths.n: not whole numbers'
  // what perSecond and perTenth walk: from the first end to the last, within the span a histogram may have
  if ((h.count > 0 || h.firstEnd !== null || h.lastEnd !== null) &&
    !(h.firstEnd !== null && h.lastEnd !== null && h.lastEnd >= h.firstEnd && h.lastEnd - h.firstEnd < MAX_SPAN_TENTHS * 100)) {
    return `lastEnd: not within ${MAX_SPAN_TENTHS / 36000} h after firstEnd`
  }
  return null
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
