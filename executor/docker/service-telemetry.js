// The instances' telemetry on Swarm: each writes its line (lib/telemetry.js) to its output, which the Engine API
// gathers from every node as the service's logs.
import { parseTelemetry } from '../../lib/telemetry.js'
import { dockerError } from './engine.js'

/**
 * The logs' bounds (docs/SECURITY.md, "Bounded parsers"): they are read as a stream, a line at a time; a line longer
 * than MAX_LINE_BYTES is skipped (a telemetry line is ~300 bytes), and at most MAX_RECORDS records in the window are
 * kept. Memory: one frame's header, one line and the records; time: linear in the logs, within the timeout.
 */
export const MAX_LINE_BYTES = 64 << 10
export const MAX_RECORDS = 200_000

/**
 * The telemetry records in a window from a service's log stream: Docker's multiplexed frames (an 8-byte header:
 * stream, 0, 0, 0, length) or, for a TTY service, plain text.
 * @param {AsyncIterable<Buffer>} stream
 * @param {{ from: number, to: number }} window
 * @returns {Promise<import('../../lib/telemetry.js').TelemetryRecord[]>}
 */
export async function telemetryOfLogs (stream, { from, to }) {
  /** @type {import('../../lib/telemetry.js').TelemetryRecord[]} */
  const records = []
  /** @type {Buffer[]} the current line's pieces, and their length (-1: over MAX_LINE_BYTES, skipped to its end) */
  let line = []
  let lineBytes = 0
  const endLine = () => {
    if (lineBytes > 0 && records.length < MAX_RECORDS) {
      const r = parseTelemetry(Buffer.concat(line).toString())
      if (r !== null && r.t >= from && r.t <= to) records.push(r)
    }
    line = []
    lineBytes = 0
  }
  const text = (buf) => {
    let s = 0
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, s)) {
      piece(buf.subarray(s, nl))
      endLine()
      s = nl + 1
    }
    piece(buf.subarray(s))
  }
  const piece = (b) => {
    if (lineBytes < 0 || b.length === 0) return
    if (lineBytes + b.length > MAX_LINE_BYTES) { line = []; lineBytes = -1; return }
    line.push(Buffer.from(b))
    lineBytes += b.length
  }
  let framed = null
  let header = Buffer.alloc(0)
  let left = 0
  for await (const chunk of stream) {
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
    if (framed === null) framed = buf.length >= 4 && buf[0] <= 2 && buf[1] === 0 && buf[2] === 0 && buf[3] === 0
    if (!framed) { text(buf); continue }
    while (buf.length) {
      if (left === 0) {
        const need = 8 - header.length
        header = Buffer.concat([header, buf.subarray(0, need)])
        buf = buf.subarray(need)
        if (header.length < 8) break
        left = header.readUInt32BE(4)
        header = Buffer.alloc(0)
        continue
      }
      const n = Math.min(left, buf.length)
      text(buf.subarray(0, n))
      left -= n
      buf = buf.subarray(n)
    }
  }
  endLine()
  return records
}

/**
 * The telemetry records a service's tasks wrote within a window (ms epoch), on whatever node they ran.
 * @param {import('dockerode')} docker
 * @param {string} service the service's name or id
 * @param {{ from: number, to: number }} window
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<import('../../lib/telemetry.js').TelemetryRecord[]>}
 */
export async function serviceTelemetry (docker, service, { from, to }, { timeoutMs = 15_000 } = {}) {
  // a node that does not answer holds its tasks' logs back for as long as it is gone: a bound, then none
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeoutMs)
  try {
    // whole seconds: the logs' `since` is in seconds; the records' own times decide what is in the window. The
    // service logs API has no `until`: the logs are streamed (follow: false ends the stream at their end), not held.
    const stream = await new Promise((resolve, reject) => docker.modem.dial({
      path: `/services/${encodeURIComponent(service)}/logs?`,
      method: 'GET',
      abortSignal: abort.signal,
      isStream: true,
      statusCodes: { 200: true, 404: 'no such service', 500: 'server error', 503: 'node is not part of a swarm' },
      options: { stdout: true, stderr: true, follow: false, since: Math.max(0, Math.floor(from / 1000) - 1) }
    }, (err, data) => (err ? reject(err) : resolve(data))))
    return await telemetryOfLogs(stream, { from, to })
  } catch (err) {
    throw dockerError(err, abort.signal.aborted
      ? `reading the logs of service ${service}: no answer within ${timeoutMs} ms`
      : `reading the logs of service ${service}`)
  } finally {
    clearTimeout(timer)
  }
}
