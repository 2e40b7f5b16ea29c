// Latency at microsecond resolution: the driver's own per-request times (hrtime, fractions of a ms) kept in an HDR
// histogram per label beside the JTL's whole milliseconds, which stay JMeter-exact. latency.json carries them as
// `micros`; a summary uses them only where they hold exactly the samples its whole-ms figures were made of.
import hdr from 'hdr-histogram-js'
import { fail } from '../../lib/messages.js'
import { readJsonBounded } from '../../lib/run-files.js'

/** Values are recorded in µs, 1 µs to 1 h, with 3 significant digits: each figure within 0.1% of the value recorded. */
export const MICRO_DIGITS = 3
const HIGHEST_US = 3600e6

/** What the µs figures are, stated once for run.json's readers and the docs. */
export const MICRO_DEFINITION = 'the driver\'s per-request times (process.hrtime) in an HDR histogram at 1 µs and 3 significant ' +
  'digits (each figure within 0.1%); a percentile is the smallest recorded value at or above p% of the samples (HdrHistogram), ' +
  'not JMeter\'s interpolation between whole ms'

/** A bound on one label's encoded histogram in a latency.json (docs/SECURITY.md, "Bounded parsers"). */
export const MAX_MICRO_CHARS = 1 << 20

const newHistogram = () => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: MICRO_DIGITS })

/**
 * Per-label µs histograms, recorded as the driver records its rows.
 * @returns {{ record: (label: string, ms: number) => void, add: (label: string, histogram: any) => void,
 *   readonly count: number, toJSON: () => MicrosJson | null }} add: another recorder's histogram of the label (a
 *   generator's part)
 */
export function microRecorder () {
  /** @type {Map<string, any>} */
  const byLabel = new Map()
  let count = 0
  const of = (label) => {
    let h = byLabel.get(label)
    if (h === undefined) { h = newHistogram(); byLabel.set(label, h) }
    return h
  }
  return {
    record (label, ms) {
      of(label).recordValue(Math.min(HIGHEST_US, Math.max(0, Math.round(ms * 1000))))
      count++
    },
    add (label, histogram) {
      of(label).add(histogram)
      count += histogram.totalCount
    },
    get count () { return count },
    toJSON () {
      if (!count) return null
      return { unit: 'us', digits: MICRO_DIGITS, labels: Object.fromEntries([...byLabel].map(([name, h]) => [name, hdr.encodeIntoCompressedBase64(h)])) }
    }
  }
}

/** @typedef {{ unit: 'us', digits: number, labels: Record<string, string> }} MicrosJson */

/**
 * What is wrong with latency.json's `micros`, or null (the field's path and why).
 * @param {any} micros
 * @param {number} maxLabels
 */
export function microsProblem (micros, maxLabels) {
  if (typeof micros !== 'object' || micros === null || Array.isArray(micros)) return 'micros: not { unit, digits, labels }'
  if (micros.unit !== 'us' || micros.digits !== MICRO_DIGITS) return `micros: unit us and digits ${MICRO_DIGITS} expected`
  const labels = micros.labels
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) return 'micros.labels: not an object of histograms'
  const names = Object.keys(labels)
  if (names.length > maxLabels) return `micros.labels: ${names.length} labels, at most ${maxLabels}`
  for (const name of names) {
    const v = labels[name]
    if (typeof v !== 'string' || v.length > MAX_MICRO_CHARS || !/^[A-Za-z0-9+/=]+$/.test(v)) {
      return `micros.labels[${JSON.stringify(name.slice(0, 80))}]: not an encoded histogram of at most ${MAX_MICRO_CHARS} characters`
    }
  }
  return null
}

/**
 * The µs histograms of a checked `micros` field, decoded.
 * @param {MicrosJson} micros
 * @param {string} file for errors
 * @returns {Map<string, any>}
 */
export function decodeMicros (micros, file) {
  const out = new Map()
  for (const [name, text] of Object.entries(micros.labels)) {
    try {
      out.set(name, hdr.decodeFromCompressedBase64(text))
    } catch (err) {
      throw fail('MICRO_LABEL_INVALID', { file, label: JSON.stringify(name.slice(0, 80)), why: err.message })
    }
  }
  return out
}

/**
 * A generator part's µs histograms (the file a writer's microsPath names), or null where it kept none (no file, no
 * sample, not readable as one): a merge without every part's histograms has no µs figures.
 * @param {string} file
 * @param {number} maxLabels
 * @returns {Promise<Map<string, any> | null>}
 */
export async function readMicrosFile (file, maxLabels) {
  const data = await readJsonBounded(file, 64 << 20).catch(() => null)
  if (!data || microsProblem(data, maxLabels)) return null
  try {
    return decodeMicros(data, file)
  } catch {
    return null
  }
}

/**
 * The µs figures of some labels' histograms together, in µs (integers but the mean), or null when they hold no sample.
 * @param {any[]} histograms
 * @returns {{ count: number, mean: number, min: number, p50: number, p90: number, p95: number, p99: number, max:
 *   number } | null}
 */
export function microFigures (histograms) {
  const h = newHistogram()
  for (const x of histograms) h.add(x)
  if (!h.totalCount) return null
  const at = (p) => h.getValueAtPercentile(p)
  return {
    count: h.totalCount,
    mean: Math.round(h.mean * 10) / 10,
    min: at(0),
    p50: at(50),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    max: h.maxValue
  }
}

/**
 * One µs figure as a person reads it: whole µs below 10 ms, ms with one decimal from there.
 * @param {number | null | undefined} us
 */
export function microText (us) {
  if (us === null || us === undefined) return '-'
  return us < 10_000 ? `${Math.round(us)} µs` : `${(us / 1000).toFixed(1)} ms`
}
