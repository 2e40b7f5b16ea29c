// The instance telemetry line: what each process of the server under test says about itself once a second (its event
// loop, GC, heap, CPU), on its standard output, and how a reader (the local launcher, the Swarm service logs) finds it.

/** Every telemetry line starts with this; anything else on the output is the server's own. */
export const TELEMETRY_PREFIX = '@nodescale-telemetry '
/** The variable that turns the telemetry off (`0`), for measuring what it costs. */
export const TELEMETRY_ENV = 'NODESCALE_TELEMETRY'
/** How often an instance writes its line. */
export const TELEMETRY_INTERVAL_MS = 1000

/**
 * @typedef {{ t: number, id: string, pid: number, role: 'worker'|'primary', ms: number, elu: number, cpu: number,
 *   delay: { p50: number, p99: number, max: number }, gcMs: number, heapMB: number }} TelemetryRecord
 *   t: ms epoch at the end of the interval; ms: the interval's length; elu: event-loop utilisation over it (0..1);
 *   cpu: the process's CPU over it, in cores; delay: event-loop delay in ms (beyond a 10 ms timer's period); gcMs:
 *   time in GC pauses
 */

/** @param {TelemetryRecord} record */
export const formatTelemetry = (record) => `${TELEMETRY_PREFIX}${JSON.stringify(record)}`

/**
 * The record of a telemetry line (anything before the prefix, such as a log's own prefix, is skipped), or null when the
 * line is not one.
 * @param {string} line
 * @returns {TelemetryRecord | null}
 */
export function parseTelemetry (line) {
  const at = line.indexOf(TELEMETRY_PREFIX)
  if (at < 0) return null
  try {
    const r = JSON.parse(line.slice(at + TELEMETRY_PREFIX.length))
    return r && typeof r.t === 'number' && typeof r.id === 'string' && typeof r.elu === 'number' ? r : null
  } catch {
    return null
  }
}

/** Whether the environment leaves the telemetry on (it is on unless NODESCALE_TELEMETRY=0). */
export const telemetryOn = (env) => env[TELEMETRY_ENV] !== '0'
