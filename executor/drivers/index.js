// The load drivers behind one interface: validate the options, run autocannon (in a child or in process) or JMeter,
// write the JTL.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { RUN_OPTION } from '../../lib/run-options.js'
import { badOption, checkOption } from '../../lib/options.js'
import { runLocalLoad } from './local-load.js'
import { runInChild } from './child-runner.js'
import { runJmeter } from './jmeter.js'

/** The drivers, as the run's --driver option names them. */
export const DRIVERS = RUN_OPTION.driver.choices

const positive = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0

/**
 * Checks and completes the options; throws NS_ERR_BAD_FLAG naming the option.
 * @returns {import('./load-common.js').LoadOptions}
 */
export function normalizeLoadOptions (opts) {
  checkOption(RUN_OPTION.driver, opts.driver)
  let url
  try { url = new URL(opts.url) } catch { throw badFlag('url', `"${opts.url}" is not a URL`) }
  if (url.protocol !== 'http:') throw badFlag('url', `${url.protocol} is not supported; the drivers speak http:`)
  const method = checkOption(RUN_OPTION.method, opts.method ?? 'GET')
  const hasC = opts.concurrency !== undefined && opts.concurrency !== null
  const hasR = opts.rate !== undefined && opts.rate !== null
  if (hasC === hasR) throw badFlag('--concurrency/--rate', 'give exactly one: --concurrency C (closed model) or --rate R (open model)')
  if (hasC) checkOption(RUN_OPTION.concurrency, opts.concurrency)
  if (hasR) checkOption(RUN_OPTION.rate, opts.rate)
  // the run's rows, so a generator (the agent's too) holds what the command line does; a driver runs for seconds, so
  // duration's word (auto) is the run's to resolve, never the driver's
  if (checkOption(RUN_OPTION.duration, opts.duration) === 'auto') {
    throw badOption(RUN_OPTION.duration, 'a driver runs for a number of seconds: auto is resolved by the run (until)')
  }
  const warmup = checkOption(RUN_OPTION.warmup, opts.warmup ?? 0)
  const timeoutSec = opts.timeoutSec ?? 10
  if (!positive(timeoutSec)) throw badFlag('timeoutSec', `${timeoutSec} is not a positive number of seconds`)
  if (opts.maxSockets !== undefined && !(Number.isInteger(opts.maxSockets) && opts.maxSockets > 0)) {
    throw badFlag('maxSockets', `${opts.maxSockets} is not a positive integer`)
  }
  if (opts.body !== undefined && !Buffer.isBuffer(opts.body)) throw badFlag('body', 'must be a Buffer')
  if (!opts.jtlPath) throw fail('JTL_PATH_MISSING')
  const connection = checkOption(RUN_OPTION.connection, opts.connection ?? RUN_OPTION.connection.default)
  const samples = checkOption(RUN_OPTION.samples, opts.samples ?? RUN_OPTION.samples.default)
  const until = opts.until
  if (until && opts.driver !== 'autocannon') throw badFlag('--duration', 'auto needs --driver autocannon: JMeter runs for a fixed time')
  if (until && !(positive(until.minSeconds) && positive(until.relHalfWidth) && until.minSeconds <= opts.duration)) {
    throw badFlag('--min-duration', `${until.minSeconds} is not a number of seconds > 0 and <= the longest run (${opts.duration} s)`)
  }
  return {
    url: url.href,
    method,
    headers: { ...(opts.headers ?? {}) },
    body: opts.body?.length ? opts.body : undefined,
    concurrency: hasC ? opts.concurrency : undefined,
    rate: hasR ? opts.rate : undefined,
    connection,
    duration: opts.duration,
    warmup,
    label: opts.label ?? 'HTTP Request',
    timeoutSec,
    maxSockets: opts.maxSockets,
    signal: opts.signal,
    onProgress: opts.onProgress,
    samples,
    ...(opts.startAt !== undefined ? { startAt: opts.startAt } : {}),
    ...(opts.group !== undefined ? { group: opts.group } : {}),
    ...(opts.histogramPath ? { histogramPath: opts.histogramPath } : {}),
    ...(opts.microsPath ? { microsPath: opts.microsPath } : {}),
    ...(until ? { until: { minSeconds: until.minSeconds, relHalfWidth: until.relHalfWidth } } : {})
  }
}

/**
 * Drives HTTP load at one URL and writes every steady-window request as a row of `jtlPath` (JMeter CSV JTL), or of
 * `jtlPath`.gz (`samples: 'gz'`), or of no file (`samples: 'none'`); with `histogramPath`, the latency histograms of
 * the same rows there (latency.json).
 *
 * autocannon driver: the closed model is autocannon with C keep-alive connections (with `connection: 'close'`, C
 * clients each opening a connection per request); the open model (`rate`) is
 * nodescale's own scheduler over node:http (requests leave at t0 + i/R, latency counts from that intended time; at
 * most `maxSockets` in flight, default 512, due requests queue beyond it and their wait is latency). By default the
 * load runs in a child Node process (off the executor's event loop, pinned with taskset when `cpus` is given);
 * `inProcess: true` runs it in this process. jmeter driver: JMeter 5.6.3 non-GUI with a generated plan.
 *
 * @param {{ driver: string, url: string, method?: 'GET'|'POST', headers?: Record<string,string>, body?: Buffer,
 *   concurrency?: number, rate?: number, connection?: 'keep-alive'|'close', duration: number, warmup?: number, jtlPath:
 *   string, label?: string, timeoutSec?: number, signal?: AbortSignal, onProgress?: (p: { phase: 'warmup'|'steady',
 *   elapsed: number, total: number, requests: number, errors: number }) => void, cpus?: number[], log?: (line: string)
 *   => void, inProcess?: boolean, maxSockets?: number, onSpawn?: (pid: number, engine: 'node'|'java') => void, until?:
 *   import('./load-common.js').Until, samples?: string, histogramPath?: string, microsPath?: string, startAt?: number,
 *   group?: number }} opts microsPath: where the autocannon driver's µs histograms alone go (a generator's part);
 *   onSpawn: each generator process as it starts (so its CPU can be measured); until: end the steady window early once
 *   the throughput is known well (`duration` its longest); samples: jtl (default), gz or none
 * @returns {Promise<{ driver: string, requests: number, errors: number, warmupRequests: number, steadyStart: number,
 *   steadyEnd: number, interrupted: boolean, jtlPath: string | null, version: string }>}
 */
export async function runLoad (opts) {
  const o = normalizeLoadOptions(opts)
  mkdirSync(dirname(opts.jtlPath), { recursive: true })
  const env = { cpus: opts.cpus, log: opts.log, onSpawn: opts.onSpawn }
  if (opts.driver === 'jmeter') return runJmeter(o, opts.jtlPath, env)
  if (opts.inProcess) {
    if (opts.cpus?.length) opts.log?.('autocannon driver: cpus ignored in process (pinning would pin the executor)')
    return runLocalLoad(o, opts.jtlPath)
  }
  return runInChild(o, opts.jtlPath, env)
}
