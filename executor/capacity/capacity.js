// Capacity at an objective: the offered rate (open model) at which a probe of one deployed shape meets its SLO with
// probability 0.5, its queue not growing, with a 95% credible interval; each probe a full run on the search's own
// deployment. Which rate to probe and what to report is executor/capacity/capacity-search.js's (the policy, without
// runs).
import { join } from 'node:path'
import { badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { option } from '../../lib/options.js'
import { CAPACITY_FILE, CAPACITY_SCHEMA, makeDirs, stampedId, writeJsonAtomic } from '../../lib/run-files.js'
import { mean } from 'simple-statistics'
import { INCONCLUSIVE_AT_BOUNDARY, SEARCH_DEFAULTS, capacityPosterior, gapAround, runSearch } from './capacity-search.js'
import { SERVED_SHARE, missText, sloMisses, sloText } from '../../lib/slo.js'
import { prepareRun } from '../run.js'
import { createShapeRunner } from '../shape-runner.js'
import { invalidFlags } from '../validity.js'
import { serverCores } from '../../lib/strategies.js'

export const CAPACITY_DEFAULTS = Object.freeze({
  /** probes near the boundary, after the bracket (the stochastic approximation's) */
  boundary: SEARCH_DEFAULTS.boundary,
  maxProbes: 30,
  /** without a count of the answers in the window (JMeter), a probe served the rate when it completed this share */
  served: SERVED_SHARE,
  duration: 5,
  warmup: 1
})

/**
 * Probes a search usually takes: the closed-model estimate, about three bracket probes and the boundary's. (On the
 * simulated server of calibration/scenarios/capacity.js the bracket took 2.4 probes on average.)
 * @param {{ boundary?: number }} settings
 */
export const typicalProbes = ({ boundary = CAPACITY_DEFAULTS.boundary } = {}) => 4 + boundary

/** The search's own settings, as flags of executor capacity and keys of an experiment's `capacity` mapping. */
export const CAPACITY_SEARCH_OPTIONS = Object.freeze([
  option({
    flag: 'boundary-probes',
    key: 'boundary',
    type: 'whole',
    min: 4,
    max: 100,
    default: CAPACITY_DEFAULTS.boundary,
    arg: 'N',
    help: 'probes near the boundary once a rate has met and one missed (default {default})'
  }),
  option({
    flag: 'max-probes',
    type: 'whole',
    min: 6,
    max: 200,
    default: CAPACITY_DEFAULTS.maxProbes,
    arg: 'N',
    help: 'at most this many probe runs (default {default})'
  })
])

/** The flags that say the load side (the generator, its host) may have been the limit of a probe. */
const LOAD_SIDE = ['generator-saturated', 'host-saturated']
/** How many probes of a search may be repeated because something outside the run disturbed them. */
const DISTURBED_RETRIES = 3
/** The server used this share of the CPU it may use: it was the limit, whatever else was busy. */
const SERVER_BUSY = 0.9

/**
 * What one probe says about its rate: `meets` (within the objective, the rate served, steady), `misses` (and why), or
 * `inconclusive`: it missed while the load side was saturated and the server was not shown to be the limit. A probe
 * whose queue grew over its window (queueGrowth) misses, however its latency looked: the rate is more than the server
 * serves, and a longer probe would miss its objective too. A probe
 * that meets the objective meets it, whatever else was busy. The server was the limit when it used nearly all the CPU
 * it may use, when it answered fewer requests than the generator sent (its queue grew: at an overload the
 * generator's backlog of open requests keeps it busy too, which must not hide the server's doing), or when a latency
 * bound is missed by more than the generator's worst lag behind its schedule could add.
 * @param {any} run a probe's run.json
 * @param {number} rate the offered rate
 * @param {import('../../lib/slo.js').Slo} slo
 * @param {number} served
 * @returns {{ verdict: 'meets'|'misses'|'inconclusive', why: string[] }}
 */
export function judgeProbe (run, rate, slo, served = CAPACITY_DEFAULTS.served) {
  const invalid = invalidFlags(run)
  const { throughput } = run.summary
  const misses = sloMisses(run.summary, slo)
  const why = misses.map(missText)
  const queue = queueGrowth(run, rate)
  if (queue ? queue.grew > queue.allowed : throughput < served * rate) {
    why.push(queue
      ? `the queue grew by ${queue.grew} requests over the window (${queue.answered} answered of ${queue.sent} sent; ` +
        `more than the ${round(queue.allowed)} its length varies by)`
      : `served ${Math.round(throughput)} of ${round(rate)} req/s`)
  }
  // an open-model probe that served its rate within the objective had the schedule's throughput, however its seconds
  // varied (a queue that grew would have cost it the rate or the latency): only a closed-model one is judged on them
  if (invalid.includes('unstable') && (why.length || !run.load?.schedule)) why.push('not steady')
  if (!why.length) return { verdict: 'meets', why }
  const loadSide = invalid.filter(f => LOAD_SIDE.includes(f))
  if (!loadSide.length) return { verdict: 'misses', why }
  const limit = serverCores(run.config, run.environment?.cpus ?? Infinity)
  const busy = (run.cpu?.total ?? 0) >= SERVER_BUSY * limit
  const schedule = run.load?.schedule
  const sentRate = schedule?.planned ? rate * schedule.sent / schedule.planned : null
  const behind = sentRate !== null && throughput < served * sentRate
  // open model: latency counts from the intended send time, so a late generator adds at most its worst lag to it
  const slow = schedule ? misses.find(m => m.name !== 'errors' && m.value - schedule.maxLagMs > m.threshold) : undefined
  if (!busy && !behind && !slow) return { verdict: 'inconclusive', why: [...why, ...loadSide] }
  const server = busy
    ? `the server at ${run.cpu.total} of its ${round(limit)} cores`
    : behind
      ? `the server answered ${Math.round(throughput)} of the ${Math.round(sentRate ?? 0)} req/s sent`
      : `${slow.name} is over its bound by more than the generator's worst lag (${schedule.maxLagMs} ms)`
  return { verdict: 'misses', why: [...why, `${loadSide.join(', ')} too, ${server}`] }
}

const round = (x) => Math.round(x * 1000) / 1000

/** How many standard deviations of the queue's growth a probe's may reach before the probe misses. */
export const QUEUE_Z = 2

/**
 * How much the server's queue grew over a probe's steady window: the requests sent in it less the outcomes that came
 * in it (open model: load.schedule.answered), and how much it may grow by chance: the number in the system at either
 * end is taken as Poisson around its mean (Little's law: rate × mean latency, the latency lengthened by the
 * generator's worst lag, as a late generator also notes its answers late), so their difference varies by
 * sqrt(2 (1 + in flight)), of which QUEUE_Z times is allowed. A server that serves less than the rate adds
 * (rate - served) × window requests. Null without a count of the answers (closed model, JMeter).
 * @param {any} run a probe's run.json
 * @param {number} rate the offered rate
 * @returns {{ grew: number, allowed: number, sent: number, answered: number } | null}
 */
export function queueGrowth (run, rate) {
  const s = run.load?.schedule
  if (typeof s?.answered !== 'number' || !(s.sent > 0)) return null
  const inFlight = rate * ((run.summary.latency?.mean ?? 0) + (s.maxLagMs ?? 0)) / 1000
  return { grew: s.sent - s.answered, allowed: QUEUE_Z * Math.sqrt(2 * (1 + inFlight)), sent: s.sent, answered: s.answered }
}

class BudgetSpent extends Error {}

/** A probe is judged steady on its whole seconds but the first: fewer than 3 of them cannot be judged. */
export const PROBE_MIN_SECONDS = 4

/**
 * Refuses probes too short to judge: each would read "not steady" and the search would only walk down.
 * @param {{ duration: number|'auto', minDuration?: number }} config
 */
export function checkProbeDuration (config) {
  const auto = config.duration === 'auto'
  const seconds = auto ? config.minDuration : Number(config.duration)
  if (seconds >= PROBE_MIN_SECONDS) return
  throw badFlag(auto ? '--min-duration' : '--duration',
    `${seconds} s is too short for a capacity probe: its steadiness is judged on its whole seconds but the first, ` +
    `and fewer than 3 cannot be; give ${PROBE_MIN_SECONDS} or more`, { key: auto ? 'minDuration' : 'duration' })
}

/**
 * Finds the capacity of one shape: the offered rate at which a probe meets the objective with probability 0.5
 * (capacity-search.js: a bracket by steps of a quarter from 76–84% of a closed-model probe's throughput, or by doubling
 * from a rate the user guessed, then --boundary-probes probes placed by a stochastic approximation, then the posterior
 * of a probit curve over every probe), with its 95% credible interval. Each search deploys its shape afresh (a runner
 * given by a sweep is closed first): searches are independent. Every probe is a run in the search's folder, its
 * config.capacity naming the search and the phase.
 * @param {import('../backends/index.js').RunConfig} config a validated run config; its `out` is where the search folder
 *   goes, its duration and warm-up are each probe's, its `slo` the objective
 * @param {{ boundary?: number, maxProbes?: number, startRate?: number,
 *   log?: (line: string) => void, signal?: AbortSignal, onProbe?: (probe: any) => void, prepared?: any,
 *   runner?: ReturnType<typeof createShapeRunner>, id?: string, sweep?: object, random?: () => number }} [opts] runner:
 *   a shape runner to use (a sweep's); sweep: the sweep entry the search is (capacity.json's sweep); random: where the
 *   start's draw comes from (uniform in [0, 1))
 * @returns {Promise<any>} the capacity record (also written to <folder>/capacity.json)
 */
export async function findCapacity (config, opts = {}) {
  checkProbeDuration(config)
  const { boundary, maxProbes, served } = { ...CAPACITY_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) }
  const { log = () => {}, signal, onProbe } = opts
  const started = Date.now()
  const id = opts.id ?? stampedId(`capacity-${config.strategy}${config.instances}${config.nodes ? `-${config.nodes}n` : ''}`)
  const dir = join(config.out, id)
  await makeDirs(dir)
  const prepared = opts.prepared ?? await prepareRun(config, { log, signal })
  const runner = opts.runner ?? createShapeRunner({ log, signal })
  // a search of its own: never on a deployment an earlier search (an earlier repeat) left running
  await runner.close()
  const prober = createProber({ config, runner, prepared, dir, id, maxProbes, served, onProbe })
  let searched
  try {
    searched = await search(prober, config, { startRate: opts.startRate, boundary, random: opts.random })
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err
    prober.notes.push(`stopped after ${maxProbes} probes (--max-probes): no capacity reported`)
    searched = { state: { stop: null, observations: [] }, posterior: null }
  } finally {
    if (!opts.runner) await runner.close()
  }
  const record = capacityRecord({ config, id, dir, started, sweep: opts.sweep, prepared, boundary, served }, searched, prober)
  await writeJsonAtomic(join(dir, CAPACITY_FILE), record)
  return record
}

/**
 * A search's probes, each a run on its deployment in its folder: run(load, phase) one run (BudgetSpent once maxProbes
 * have run; a run that did not finish refused), said(r, fields) records what one said (probes, onProbe), and
 * probe(rate, phase) a rate's verdict for the search (null once the budget is spent), a probe that missed while
 * something outside the run competed for the host probed again (up to DISTURBED_RETRIES in a search). What they
 * leave: probes, the run.json of those that met (met) and missed (missed, by rate), notes, and the environment of
 * the first.
 * @param {{ config: any, runner: ReturnType<typeof createShapeRunner>, prepared: any, dir: string, id: string,
 *   maxProbes: number, served: number, onProbe?: (probe: any) => void }} o
 */
function createProber ({ config, runner, prepared, dir, id, maxProbes, served, onProbe }) {
  const probes = []
  /** the run.json of every probe that met its rate */
  const met = []
  let environment = null
  const run = async (load, phase) => {
    if (probes.length >= maxProbes) throw new BudgetSpent()
    const r = await runner.runOn({ ...config, ...load, out: dir, capacity: { search: id, phase } }, { prepared })
    environment ??= r.environment
    if (r.status !== 'done') throw fail('CAPACITY_PROBE_FAILED', { phase, status: r.status, why: r.error?.message })
    return r
  }
  /** the run.json of every probe that missed its rate, by rate: what stopped the server is read from the lowest */
  const missed = new Map()
  const said = (r, fields) => {
    const p = probeEntry(r, fields)
    probes.push(p)
    onProbe?.(p)
    return p
  }
  const notes = []
  let retries = 0
  /** @type {(rate: number, phase: string) => Promise<'meets'|'misses'|'inconclusive'|null>} */
  const probe = async (rate, phase) => {
    for (;;) {
      let r
      try {
        r = await run({ rate, concurrency: undefined }, phase)
      } catch (err) {
        if (!(err instanceof BudgetSpent)) throw err
        notes.push(`stopped after ${maxProbes} probes (--max-probes) before the search ended: no capacity reported`)
        return null
      }
      const judged = judgeProbe(r, rate, config.slo, served)
      // a rate missed while something outside the run competed for the host says nothing of the server: again
      const disturbed = judged.verdict !== 'meets' && invalidFlags(r).includes('disturbed')
      if (disturbed && retries < DISTURBED_RETRIES) {
        retries++
        const flag = r.validity.flags.find(f => f.name === 'disturbed')
        notes.push(`at ${rate} req/s something outside the run used ${flag.value} cores of the host: probed again`)
        said(r, { phase, rate, verdict: 'disturbed', why: [...judged.why, `other processes ${flag.value} cores`] })
        continue
      }
      if (judged.verdict === 'meets') met.push(r)
      if (judged.verdict === 'misses') missed.set(rate, r)
      return said(r, { phase, rate, ...judged }).verdict
    }
  }
  return { probes, met, missed, notes, environment: () => environment, run, said, probe }
}

/** A probe as capacity.json lists it: its phase, rate and verdict (fields), and what its run measured. */
function probeEntry (r, fields) {
  return {
    ...fields,
    throughput: r.summary.throughput,
    p99: r.summary.latency.p99,
    errorRate: r.summary.errorRate,
    flags: r.validity?.flags.map(f => f.name) ?? [],
    bottleneck: r.diagnosis?.bottleneck?.kind ?? null,
    run: r.id
  }
}

/**
 * The search's probes: from the user's start rate by doubling, else from a closed-model probe's estimate by gentle
 * steps; the posterior when it found the boundary, else a note of why it ended (stopNote).
 * @param {ReturnType<typeof createProber>} prober
 * @param {any} config
 * @param {{ startRate?: number, boundary: number, random?: () => number }} o
 */
async function search (prober, config, { startRate, boundary, random }) {
  let start = startRate
  if (!start) {
    const estimate = await prober.run({ concurrency: Math.max(4, 4 * config.instances), rate: undefined }, 'estimate')
    prober.said(estimate, { phase: 'estimate', rate: null, verdict: 'estimate', why: [] })
    // drawn from 76–84% of the estimate: two searches of a server that answers the same way every time then take
    // different probes, so their spread is the search's own resolution, not a tie that claims none
    start = Math.max(1, estimate.summary.throughput * (0.76 + 0.08 * (random ?? Math.random)()))
  }
  // from an estimate the capacity is near: gentle steps; from a rate the user guessed, doubling
  const state = await runSearch(prober.probe, { start, boundary, step: startRate ? 2 : SEARCH_DEFAULTS.step })
  const posterior = state.stop === 'found' ? capacityPosterior(state.observations) : null
  const note = stopNote(state, prober.probes)
  if (note) prober.notes.push(note)
  return { state, posterior }
}

/**
 * Why a search ended without its boundary, in words: the load side was the limit (in the bracket, or
 * INCONCLUSIVE_AT_BOUNDARY times near the boundary), or even 1 req/s missed; null when it found the boundary.
 * @param {import('./capacity-search.js').SearchState} state
 * @param {any[]} probes the search's, the last one the probe that stopped it
 */
function stopNote (state, probes) {
  const last = state.observations.at(-1)
  if (state.stop === 'load-side' && last.phase === 'bracket') {
    const lo = gapAround(state.observations, Infinity).lo
    return `at ${last.rate} req/s the load side was the limit (${probes.at(-1).why.join(', ')}): ` +
      `the capacity is beyond what this generator and host can measure${lo ? `, at least ${lo} req/s` : ''}`
  }
  if (state.stop === 'load-side' && last.phase === 'boundary') {
    return `near the boundary the load side was the limit ${INCONCLUSIVE_AT_BOUNDARY} times, ` +
      `last at ${last.rate} req/s (${probes.at(-1).why.join(', ')}): no capacity reported`
  }
  if (state.stop === 'no-capacity') return 'even 1 request per second misses the objective: no capacity'
  return null
}

/**
 * The capacity record (capacity.json) of a search: its settings, the capacity and its interval from the posterior
 * (null without one), the bounds the probes put around it, what was measured at it, what stopped the server, the
 * notes and every probe.
 * @param {{ config: any, id: string, dir: string, started: number, sweep?: object, prepared: any, boundary: number,
 *   served: number }} search
 * @param {{ state: { stop: string|null, observations: any[] }, posterior: any }} searched how it ended
 * @param {ReturnType<typeof createProber>} prober
 */
function capacityRecord ({ config, id, dir, started, sweep, prepared, boundary, served }, { state, posterior }, prober) {
  const { probes, met, missed, notes } = prober
  const capacity = posterior?.capacity ?? null
  const bounds = gapAround(state.observations, capacity ?? Infinity)
  const { rate: _rate, concurrency: _concurrency, ...shape } = config
  return {
    schema: CAPACITY_SCHEMA,
    id,
    dir,
    status: 'done',
    createdAt: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    config: shape,
    sweep: sweep ?? null,
    benchmark: prepared.benchmark,
    slo: config.slo,
    objective: sloText(config.slo),
    method: 'probit-posterior',
    meaning: CAPACITY_MEANING,
    target: SEARCH_DEFAULTS.target,
    boundaryProbes: boundary,
    start: probes.find(p => p.rate !== null)?.rate ?? null,
    served,
    capacity,
    interval: posterior ? { lo: posterior.lo, hi: posterior.hi, level: posterior.level } : null,
    noise: posterior?.noise ?? null,
    precision: null,
    bounds,
    confirmed: capacity !== null,
    atCapacity: capacity === null ? null : measuredAt(capacity, posterior, met),
    limit: limitOf(capacity ?? bounds.lo, missed, met),
    notes,
    probes,
    environment: prober.environment()
  }
}

/** What a capacity record's capacity is, in words (capacity.json's meaning; the text views print it). */
export const CAPACITY_MEANING = 'the offered rate at which a probe meets the objective, its queue not growing, with probability 0.5; ' +
  'the interval holds it with 95% probability (a probit curve\'s posterior over every probe)'

/**
 * What stopped the server: the diagnosis of the lowest rate above the capacity that missed and whose diagnosis names
 * a limit (just above the capacity a loop can miss its latency objective at 93% busy, below the event-loop rule's
 * threshold, while a rate further up shows it plainly); else of the lowest rate missed above it, else of the highest
 * rate met; with the rate it was read at.
 * @param {number | null} capacity
 * @param {Map<number, any>} missed
 * @param {any[]} met the run.json of the probes that met
 */
function limitOf (capacity, missed, met) {
  const above = [...missed.keys()].filter(rate => capacity === null || rate > capacity).sort((a, b) => a - b)
  const named = above.find(rate => (missed.get(rate).diagnosis?.bottleneck?.kind ?? 'none') !== 'none')
  const missedAt = named ?? above[0]
  const highest = met.filter(r => capacity === null || r.config.rate <= capacity).sort((a, b) => a.config.rate - b.config.rate).at(-1)
  const run = missedAt !== undefined ? missed.get(missedAt) : highest
  if (!run?.diagnosis) return null
  return { rate: missedAt ?? run.config.rate, verdict: missedAt !== undefined ? 'misses' : 'meets', run: run.id, ...run.diagnosis }
}

/**
 * What the probes that met near the capacity measured (those at rates within its interval and not above it; else the
 * highest one met below it): their mean served throughput, latency and error rate, and the last one's CPU (per core,
 * for the report's CPU table).
 * @param {number} capacity
 * @param {{ lo: number }} interval
 * @param {any[]} met their run.json
 */
function measuredAt (capacity, interval, met) {
  const below = met.filter(r => r.config.rate <= capacity).sort((a, b) => a.config.rate - b.config.rate)
  const near = below.filter(r => r.config.rate >= interval.lo)
  const runs = near.length ? near : below.length ? below.slice(-1) : met.slice(-1)
  if (!runs.length) return null
  const avg = (f) => mean(runs.map(f).filter(Number.isFinite))
  return {
    rate: avg(r => r.config.rate),
    probes: runs.length,
    runs: runs.map(r => r.id),
    throughput: avg(r => r.summary.throughput),
    errorRate: avg(r => r.summary.errorRate),
    latency: Object.fromEntries(['p50', 'p95', 'p99'].map(k => [k, avg(r => r.summary.latency[k])])),
    cpu: runs.at(-1).cpu
  }
}
