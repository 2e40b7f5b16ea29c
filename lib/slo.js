// Service-level objectives: what a run must meet to count as served well (errors at most a share of requests, latency
// percentiles at most a bound), written like p99=50ms,errors=0.1%.

/** @typedef {{ errors: number, p50?: number, p90?: number, p95?: number, p99?: number }} Slo errors: a fraction of the
 *   requests (0.001 = 0.1%); pNN: a latency bound in ms */

export const SLO_LATENCIES = Object.freeze(['p50', 'p90', 'p95', 'p99'])
/** At most 0.1% of the requests fail; no latency bound unless one is given. */
export const DEFAULT_SLO = Object.freeze({ errors: 0.001 })

/**
 * An open-model run served its rate when it completed at least this share of it: a capacity probe without a count of
 * its answers (executor/capacity/capacity.js), and the diagnosis of a run that fell behind (analyzer/diagnosis).
 */
export const SERVED_SHARE = 0.97

const PART = /^\s*(errors|p50|p90|p95|p99)\s*=\s*(\d+(?:\.\d+)?)\s*(%|ms|s)?\s*$/

/**
 * An objective from its text: comma-separated bounds, each `errors=<percent>%` or `p50|p90|p95|p99=<number>ms|s`; the
 * errors bound is 0.1% unless given.
 * @param {string} text
 * @returns {Slo}
 * @throws {Error} saying which part is not understood
 */
export function parseSlo (text) {
  /** @type {Record<string, number>} */
  const out = { ...DEFAULT_SLO }
  for (const part of String(text).split(',')) {
    const m = PART.exec(part)
    if (!m) throw new Error(`"${part.trim()}" is not a bound; write errors=0.1% or p99=50ms (p50, p90, p95, p99; ms or s)`)
    const [, key, number, unit] = m
    if (key === 'errors' && unit !== '%') throw new Error(`errors=${number}${unit ?? ''}: give the errors bound in percent (errors=0.1%)`)
    if (key !== 'errors' && unit === '%') throw new Error(`${key}=${number}%: give a latency bound in ms or s (${key}=50ms)`)
    out[key] = key === 'errors' ? Number(number) / 100 : Number(number) * (unit === 's' ? 1000 : 1)
  }
  return checkSlo(out)
}

/**
 * Checks an objective's bounds (as an experiment file gives them, or as parseSlo made them).
 * @param {Record<string, any>} slo
 * @returns {Slo}
 */
export function checkSlo (slo) {
  for (const [key, value] of Object.entries(slo)) {
    if (key !== 'errors' && !SLO_LATENCIES.includes(key)) throw new Error(`"${key}" is not a bound; allowed: errors, ${SLO_LATENCIES.join(', ')}`)
    if (!(typeof value === 'number' && Number.isFinite(value))) throw new Error(`${key}: ${JSON.stringify(value)} is not a number`)
    if (key === 'errors' ? value < 0 || value > 1 : value <= 0) throw new Error(`${key}: ${value} is out of range (errors 0 to 100%, latencies above 0 ms)`)
  }
  return Object.freeze({ ...DEFAULT_SLO, ...slo })
}

/** "p99 ≤ 50 ms, errors ≤ 0.1%". */
export function sloText (slo) {
  const latency = SLO_LATENCIES.filter(k => slo[k] !== undefined).map(k => `${k} ≤ ${slo[k]} ms`)
  return [...latency, `errors ≤ ${Math.round(slo.errors * 100000) / 1000}%`].join(', ')
}

/**
 * What a run's summary breaks of an objective: one entry per bound it does not meet.
 * @param {{ errorRate: number, latency: Record<string, number|null> }} summary
 * @param {Slo} slo
 * @returns {{ name: string, value: number, threshold: number }[]}
 */
export function sloMisses (summary, slo) {
  const misses = []
  if (summary.errorRate > slo.errors) misses.push({ name: 'errors', value: summary.errorRate, threshold: slo.errors })
  for (const k of SLO_LATENCIES) {
    const v = summary.latency?.[k]
    if (slo[k] !== undefined && Number.isFinite(v) && v > slo[k]) misses.push({ name: k, value: v, threshold: slo[k] })
  }
  return misses
}

/** One bound broken, in words: "p99 1102 ms > 100 ms", "errors 0.52% > 0.1%". */
export function missText ({ name, value, threshold }) {
  if (name === 'errors') return `errors ${Math.round(value * 100000) / 1000}% > ${Math.round(threshold * 100000) / 1000}%`
  return `${name} ${Math.round(value)} ms > ${threshold} ms`
}
