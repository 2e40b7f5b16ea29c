// One process's view of itself, once a second, off the request path: event-loop utilisation and delay, GC pauses,
// heap, CPU. Written as a line to standard output (lib/telemetry.js), where the launcher or the service logs read it:
// no port the load could reach, no work per request.
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks'
import { formatTelemetry, TELEMETRY_INTERVAL_MS } from '../lib/telemetry.js'

const round3 = (x) => Math.round(x * 1000) / 1000
const RESOLUTION_MS = 10
// the histogram holds the time between the 10 ms timer's runs: the delay is what is over the 10 ms
const ms = (ns) => round3(Math.max(0, ns / 1e6 - RESOLUTION_MS))

/**
 * Starts the monitor; its timer is unref'd (it never keeps the process alive).
 * @param {{ id: string, role: 'worker'|'primary', write?: (line: string) => void, intervalMs?: number }} opts
 * @returns {{ stop: () => void }}
 */
export function startTelemetry ({ id, role, write = (line) => process.stdout.write(line + '\n'), intervalMs = TELEMETRY_INTERVAL_MS }) {
  // a 10 ms timer of libuv's own; its histogram is read and reset once an interval
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  delay.enable()
  let gcMs = 0
  const gc = new PerformanceObserver((list) => { for (const e of list.getEntries()) gcMs += e.duration })
  gc.observe({ entryTypes: ['gc'] })
  let elu = performance.eventLoopUtilization()
  let cpu = process.cpuUsage()
  let wall = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    const eluNow = performance.eventLoopUtilization()
    const cpuNow = process.cpuUsage()
    const spent = (cpuNow.user - cpu.user + cpuNow.system - cpu.system) / 1000
    const span = now - wall
    const record = {
      t: Date.now(),
      id,
      pid: process.pid,
      role,
      ms: Math.round(span),
      elu: round3(performance.eventLoopUtilization(eluNow, elu).utilization),
      cpu: round3(span > 0 ? spent / span : 0),
      delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      gcMs: round3(gcMs),
      heapMB: Math.round(process.memoryUsage().heapUsed / 1e5) / 10
    }
    elu = eluNow
    cpu = cpuNow
    wall = now
    gcMs = 0
    delay.reset()
    try { write(formatTelemetry(record)) } catch {}
  }, intervalMs)
  timer.unref()
  return {
    stop () {
      clearInterval(timer)
      delay.disable()
      gc.disconnect()
    }
  }
}
