// One run's load from several generators: the load split between them, one shared start time, each generator's
// progress summed, a lost generator told apart from a failed one, and their samples merged into the run's.
import { mkdirSync } from 'node:fs'
import { rm, rmdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fail } from '../../lib/messages.js'
import { clock } from '../drivers/load-common.js'
import { GENERATOR_CHECKS, judgeRun } from '../validity.js'
import { splitLoad } from './split.js'
import { mergeSamples } from './merge.js'

/**
 * Where a generator runs and how it is driven: a process of this machine (local.js) or an agent on a swarm node
 * (agent-client.js). `run` resolves when its load is over (its samples at samplesPath, its timestamps on its own
 * clock) or rejects; a GeneratorLost rejection means it stopped answering, which the run survives.
 * @typedef {{ name: string, group: number, where: Record<string, any>, clock: { offsetMs: number, rttMs: number } |
 *   null, leadMs?: number, run: (opts: any, ctx: { signal: AbortSignal, onProgress: (p: any) => void, onSpawn?: (pid:
 *   number, engine: 'node'|'java') => void, log: (line: string) => void }) => Promise<{ result: any, cpu: any,
 *   samplesPath: string | null, microsPath?: string, startAnsweredMs?: number }> }} GeneratorPlace microsPath: its µs
 *   histograms (a local autocannon generator; the summary's µs figures need every part's); startAnsweredMs: an agent's
 *   answer to the start, ms after the shared start
 */

/** A generator that stopped answering mid-run: when it was last heard, when it was given up, what it had said. */
export class GeneratorLost extends Error {
  /** @param {string} message @param {{ lastSeenAt: number, lostAt: number, progress: any }} facts */
  constructor (message, facts) {
    super(message)
    this.code = 'NS_ERR_GENERATOR_LOST'
    this.lastSeenAt = facts.lastSeenAt
    this.lostAt = facts.lostAt
    this.progress = facts.progress
  }
}

/** How long before the shared start the generators are told it: a Node child starts in ~100 ms, a JVM in ~2 s. */
const LEAD_MS = { autocannon: 800, jmeter: 3500 }
/**
 * More lead for each further generator started on the same machine: their start-ups share its cores. Two JMeters on a
 * busy 2-core host started 470 ms after a 3.5 s lead, and JMeter's rate, catching up, spilled ~2.6x its rate into the
 * window's first half second (715 requests in a 600-request window); two on load nodes of `executor cluster` (one
 * machine's namespaces), counted as two machines, started their threads after a 1 + 4 s window had ended.
 */
const MORE_ON_HOST_MS = { autocannon: 100, jmeter: 2000 }

/**
 * How many of the places start on one machine, at most: the kernel's boot id where they said it (the nodes of
 * `executor cluster` are namespaces of one machine, their JVMs start on its cores together), else their node or host.
 * @param {GeneratorPlace[]} places
 */
export function mostOnOneMachine (places) {
  const count = new Map()
  for (const { where } of places) {
    const key = where.machine ?? where.node ?? where.host
    count.set(key, (count.get(key) ?? 0) + 1)
  }
  return Math.max(...count.values())
}

/**
 * The figures of a run's generators as one, for the run's validity and diagnosis: their CPU summed, the busiest
 * one's share, the busiest host's idle, the fewest samples.
 * @param {any[]} cpus each generator's summarizeGenerator (null when not measured)
 */
export function combineGenerators (cpus) {
  const known = cpus.filter(c => c && c.share !== null && c.share !== undefined)
  const idle = cpus.map(c => c?.hostIdle).filter(x => x !== null && x !== undefined)
  const round3 = (x) => Math.round(x * 1000) / 1000
  return {
    processes: cpus.flatMap(c => c?.processes ?? []),
    samples: known.length ? Math.min(...known.map(c => c.samples)) : 0,
    cores: known.length ? round3(known.reduce((a, c) => a + c.cores, 0)) : null,
    share: known.length ? Math.max(...known.map(c => c.share)) : null,
    hostIdle: idle.length ? Math.min(...idle) : null,
    generators: cpus.length
  }
}

/** The open model's schedule audit of several generators as one (each keeps its own in load.generators[]). */
function combineSchedules (schedules) {
  const all = schedules.filter(Boolean)
  if (!all.length) return undefined
  const sum = (k) => all.reduce((a, s) => a + (s[k] ?? 0), 0)
  const answered = all.every(s => typeof s.answered === 'number') ? { answered: sum('answered') } : {}
  return {
    planned: sum('planned'),
    sent: sum('sent'),
    late: sum('late'),
    queued: sum('queued'),
    maxLagMs: Math.max(...all.map(s => s.maxLagMs ?? 0)),
    ...answered
  }
}

/**
 * When every generator starts (the lead its driver needs to be up, more where several share a machine), said in the
 * run's log with each one's portion.
 * @param {GeneratorPlace[]} places @param {any} load @param {any[]} portions @param {(line: string) => void} log
 */
function sharedStart (places, load, portions, log) {
  const together = mostOnOneMachine(places)
  const lead = Math.max((LEAD_MS[load.driver] ?? 1000) + (MORE_ON_HOST_MS[load.driver] ?? 0) * (together - 1), ...places.map(p => p.leadMs ?? 0))
  const startAt = Math.ceil(clock() + lead)
  const portionsText = places.map((p, i) => `${p.name} ${p.where.node ?? p.where.host}` +
    `${portions[i].concurrency ? ` c=${portions[i].concurrency}` : ` r=${Math.round(portions[i].rate * 10) / 10}`}`).join(', ')
  const shared = together > 1 ? `; ${together} start on one machine, ${Math.round(lead / 100) / 10} s ahead` : ''
  log(`load: ${places.length} generator${places.length === 1 ? '' : 's'} (${portionsText}${shared}), starting together at ${new Date(startAt).toISOString()}`)
  return startAt
}

/**
 * The generators' progress as one (the warm-up while any is in it, their requests and errors summed), once each has
 * said its first.
 * @param {number} count @param {((p: any) => void) | undefined} onProgress
 * @returns {(i: number, p: any) => void}
 */
function progressOfAll (count, onProgress) {
  const progress = Array.from({ length: count }, () => null)
  return (i, p) => {
    progress[i] = p
    if (!onProgress || progress.some(x => x === null)) return
    const warm = progress.filter(x => x.phase === 'warmup')
    const shown = warm.length ? warm : progress
    onProgress({
      phase: warm.length ? 'warmup' : 'steady',
      elapsed: Math.min(...shown.map(x => x.elapsed)),
      total: shown[0].total,
      requests: shown.reduce((a, x) => a + x.requests, 0),
      errors: shown.reduce((a, x) => a + x.errors, 0)
    })
  }
}

/**
 * Every generator's load, started together; a generator that failed (not one that was lost) stops the others rather
 * than let them run on.
 * @returns {Promise<PromiseSettledResult<any>[]>}
 */
async function runEveryPlace (places, load, portions, startAt, { signal, onProgress, onSpawn, log }) {
  const controller = new AbortController()
  const abort = () => controller.abort()
  if (signal?.aborted) abort()
  else signal?.addEventListener('abort', abort, { once: true })
  const progress = progressOfAll(places.length, onProgress)
  const settled = await Promise.allSettled(places.map((place, i) => place.run({ ...load, ...portions[i], startAt }, {
    signal: controller.signal,
    onProgress: (p) => progress(i, p),
    onSpawn,
    log
  }).catch(err => {
    if (!(err instanceof GeneratorLost)) abort()
    throw err
  })))
  signal?.removeEventListener('abort', abort)
  return settled
}

/**
 * The generators that came through (their place's index with what they returned); a failure fails the run, and so
 * does every generator lost.
 * @param {PromiseSettledResult<any>[]} settled
 */
function survivorsOf (settled) {
  const failed = settled.find(s => s.status === 'rejected' && !(s.reason instanceof GeneratorLost))
  if (failed) throw /** @type {PromiseRejectedResult} */ (failed).reason
  const survivors = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ i, ...s.value }] : []))
  if (!survivors.length) {
    throw fail('GENERATORS_ALL_LOST', { why: settled.map(s => /** @type {PromiseRejectedResult} */ (s).reason.message) })
  }
  return survivors
}

/**
 * The survivors' samples merged into the run's, each on the run's clock; then the parts' files go, and their folders
 * with them when nothing else is left there (JMeter's log stays). Resolves with what the merge counted of each
 * generator, by its place's index, and the merged file.
 */
async function mergeParts (survivors, offset, { jtlPath, samples, histogramPath, steadyStart, steadyEnd, partsDir }) {
  const parts = survivors.filter(s => s.samplesPath)
  const merged = await mergeSamples(parts.map(s => ({ path: s.samplesPath, offsetMs: offset(s.i), microsPath: s.microsPath })),
    { jtlPath, samples, histogramPath, steadyStart, steadyEnd })
  await Promise.all(parts.flatMap(s => [s.samplesPath, s.microsPath].filter(Boolean).map(f => rm(f, { force: true }))))
  for (const d of [...new Set(parts.map(s => dirname(s.samplesPath))), partsDir]) await rmdir(d).catch(() => {})
  return { merged, counted: new Map(parts.map((s, k) => [s.i, merged.parts[k]])) }
}

/**
 * One generator's entry in the run's load.generators: what was lost of it, or its requests and errors as merged, its
 * throughput over the steady window, its CPU and its own validity.
 */
function generatorEntry (place, portion, s, counted, seconds) {
  const base = { name: place.name, group: place.group, ...place.where, load: portion, clock: place.clock }
  if (s.status === 'rejected') {
    const lost = /** @type {GeneratorLost} */ (s.reason)
    return {
      ...base,
      lost: { message: lost.message, lastSeenAt: lost.lastSeenAt, lostAt: lost.lostAt, requestsReported: lost.progress?.requests ?? null },
      requests: null,
      errors: null,
      throughput: null,
      cpu: null,
      validity: null
    }
  }
  const { result, cpu } = s.value
  const c = counted ?? { requests: result.requests, errors: result.errors }
  return {
    ...base,
    lost: null,
    requests: c.requests,
    errors: c.errors,
    throughput: Math.round(c.requests / seconds * 10) / 10,
    startSkewMs: result.startSkewMs ?? null,
    // an agent's answer to the start, ms after the shared start (> 0: it heard of the start late)
    startAnsweredMs: s.value.startAnsweredMs ?? null,
    version: result.version,
    interrupted: result.interrupted,
    schedule: result.schedule,
    cpu,
    validity: judgeRun({ generator: cpu, schedule: result.schedule }, { only: [...GENERATOR_CHECKS] })
  }
}

/**
 * Runs `load` (runLoad's options but jtlPath) from every place at once and merges their samples into the run's.
 * @param {GeneratorPlace[]} places
 * @param {any} load the load as one generator would drive it: driver, url, method, headers, body, concurrency or
 *   rate, duration, warmup, label, timeoutSec
 * @param {{ jtlPath: string, samples?: string, histogramPath?: string, signal?: AbortSignal, onProgress?: (p: any)
 *   => void, onSpawn?: (pid: number, engine: 'node'|'java') => void, log?: (line: string) => void, flag?: string,
 *   partsDir: string }} out flag: the option that asked for the generators (for errors); partsDir: where the
 *   generators' own files go
 * @returns {Promise<any>} the run's load result (as runLoad's), with `startAt` and `generators`
 */
export async function runGenerators (places, load, { jtlPath, samples = 'jtl', histogramPath, signal, onProgress, onSpawn, log = () => {}, flag, partsDir }) {
  const portions = splitLoad(load, places.length, { flag })
  mkdirSync(partsDir, { recursive: true })
  const startAt = sharedStart(places, load, portions, log)
  const settled = await runEveryPlace(places, load, portions, startAt, { signal, onProgress, onSpawn, log })
  const survivors = survivorsOf(settled)
  const steadyStart = startAt + load.warmup * 1000
  const offset = (i) => places[i].clock?.offsetMs ?? 0
  const steadyEnd = Math.round(Math.min(...survivors.map(s => s.result.steadyEnd - offset(s.i))))
  const { merged, counted } = await mergeParts(survivors, offset, { jtlPath, samples, histogramPath, steadyStart, steadyEnd, partsDir })
  const seconds = Math.max(0.001, (steadyEnd - steadyStart) / 1000)
  const generators = places.map((place, i) => generatorEntry(place, portions[i], settled[i], counted.get(i), seconds))
  const first = survivors[0].result
  return {
    driver: first.driver,
    requests: merged.parts.reduce((a, p) => a + p.requests, 0),
    errors: merged.parts.reduce((a, p) => a + p.errors, 0),
    warmupRequests: survivors.reduce((a, s) => a + s.result.warmupRequests, 0),
    steadyStart,
    steadyEnd,
    interrupted: survivors.some(s => s.result.interrupted),
    jtlPath: merged.path,
    version: first.version,
    startAt,
    ...(load.rate ? { schedule: combineSchedules(survivors.map(s => s.result.schedule)) } : {}),
    // --duration auto's stop (one generator: the option table allows no more)
    ...(survivors.length === 1 && first.until ? { until: first.until } : {}),
    generators
  }
}
