// The instances' telemetry on Swarm: each writes its line (lib/telemetry.js) to its output, which the Engine API
// gathers from every node as the service's logs.
import { parseTelemetry } from '../../lib/telemetry.js'
import { dockerError } from './engine.js'
import { demuxLogs } from './stack-wait.js'

/**
 * The telemetry records a service's tasks wrote within a window (ms epoch), on whatever node they ran.
 * @param {import('dockerode')} docker
 * @param {string} service the service's name or id
 * @param {{ from: number, to: number }} window
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<import('../../lib/telemetry.js').TelemetryRecord[]>}
 */
export async function serviceTelemetry (docker, service, { from, to }, { timeoutMs = 15_000 } = {}) {
  let buf
  // a node that does not answer holds its tasks' logs back for as long as it is gone: a bound, then none
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeoutMs)
  try {
    // whole seconds: the logs' `since` is in seconds; the records' own times decide what is in the window
    buf = await docker.getService(service).logs({ stdout: true, stderr: true, follow: false, since: Math.max(0, Math.floor(from / 1000) - 1), abortSignal: abort.signal })
  } catch (err) {
    throw dockerError(err, abort.signal.aborted ? `reading the logs of service ${service}: no answer within ${timeoutMs} ms` : `reading the logs of service ${service}`)
  } finally {
    clearTimeout(timer)
  }
  const text = Buffer.isBuffer(buf) ? demuxLogs(buf) : String(buf)
  return text.split('\n').map(parseTelemetry).filter(r => r !== null && r.t >= from && r.t <= to)
}
