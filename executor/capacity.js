// Capacity at an objective: the highest offered rate (open model) one deployed shape serves within its SLO, with every
// request answered at the rate it was sent, found by doubling and bisection, each probe a full run; the result is
// confirmed by repeating it.
import { join } from 'node:path'
import { NsError, badFlag } from '../lib/errors.js'
import { option } from '../lib/options.js'
import { CAPACITY_FILE, CAPACITY_SCHEMA, makeDirs, stampedId, writeJsonAtomic } from '../lib/run-files.js'
import { mean } from 'simple-statistics'
import { missText, sloMisses, sloText } from '../lib/slo.js'
import { prepareRun } from './run.js'
import { createShapeRunner } from './shape-runner.js'
import { invalidFlags } from './validity.js'
import { serverCores } from '../lib/strategies.js'

export const CAPACITY_DEFAULTS = Object.freeze({
  /** the search stops when the bracket [lo, hi] is within this share of lo */
  precision: 0.05,
  /** repeats of the capacity found that must meet the objective too */
  confirm: 2,
  maxProbes: 20,
  /** a probe served the rate when it completed at least this share of it per second */
  served: 0.97,
  duration: 5,
  warmup: 1
})

/**
 * Probes a search usually takes: the estimate, three bracket probes, three bisections (a quarter's step to 5%) and the
 * confirmations; started at a previous capacity, no estimate and one bracket probe fewer. (Measured: 8, then 6 from a
 * previous capacity, with --confirm 1 on test/fixtures/apps/fixed-rate.js.)
 * @param {{ confirm?: number }} settings
 * @param {boolean} warm started at a previous capacity
 */
export const typicalProbes = ({ confirm = CAPACITY_DEFAULTS.confirm } = {}, warm = false) => (warm ? 5 : 7) + confirm

/** The search's own settings, as flags of executor capacity and keys of an experiment's `capacity` mapping. */
export const CAPACITY_SEARCH_OPTIONS = Object.freeze([
  option({ flag: 'precision', type: 'number', min: 0.005, max: 0.5, default: CAPACITY_DEFAULTS.precision, arg: 'P', help: 'stop when the bracket is within this share of the capacity (default {default})' }),
  option({ flag: 'confirm', type: 'whole', min: 0, max: 10, default: CAPACITY_DEFAULTS.confirm, arg: 'N', help: 'repeats of the capacity found that must meet the objective too (default {default})' }),
  option({ flag: 'max-probes', type: 'whole', min: 3, max: 200, default: CAPACITY_DEFAULTS.maxProbes, arg: 'N', help: 'at most this many probe runs (default {default})' })
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
 * that meets the objective meets it, whatever else was busy. The server was the limit when it used nearly all the CPU
 * it may use, when it answered fewer requests than the generator sent (its queue grew: at an overload the
 * generator's backlog of open requests keeps it busy too, which must not hide the server's doing), or when a latency
 * bound is missed by more than the generator's worst lag behind its schedule could add.
 * @param {any} run a probe's run.json
 * @param {number} rate the offered rate
 * @param {import('../lib/slo.js').Slo} slo
 * @param {number} served
 * @returns {{ verdict: 'meets'|'misses'|'inconclusive', why: string[] }}
 */
export function judgeProbe (run, rate, slo, served = CAPACITY_DEFAULTS.served) {
  const invalid = invalidFlags(run)
  const { throughput } = run.summary
  const misses = sloMisses(run.summary, slo)
  const why = misses.map(missText)
  if (throughput < served * rate) why.push(`served ${Math.round(throughput)} of ${round(rate)} req/s`)
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

/** A rate to probe: a few significant digits are enough and read better. */
const tidy = (rate) => Number(rate.toPrecision(3))

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
  throw badFlag(auto ? '--min-duration' : '--duration', `${seconds} s is too short for a capacity probe: its steadiness is judged on its whole seconds but the first, and fewer than 3 cannot be; give ${PROBE_MIN_SECONDS} or more`, { key: auto ? 'minDuration' : 'duration' })
}

/**
 * Finds the capacity of one shape. A first closed-model probe (concurrency 4 per instance) estimates the throughput;
 * the open-model search starts at 80% of it (or at a previous search's capacity: `near`), steps up by a quarter (by
 * doubling from a rate the user guessed) until a rate is missed, or down until one is met, bisects the bracket to
 * `precision`, and confirms the highest met rate by repeating it (a repeat that misses makes it the new upper bound).
 * Every probe is a run in the search's folder, its config.capacity naming the search and the phase.
 * @param {import('./backends/index.js').RunConfig} config a validated run config; its `out` is where the search folder
 *   goes, its duration and warm-up are each probe's, its `slo` the objective
 * @param {{ precision?: number, confirm?: number, maxProbes?: number, startRate?: number, near?: number,
 *   log?: (line: string) => void, signal?: AbortSignal, onProbe?: (probe: any) => void, prepared?: any,
 *   runner?: ReturnType<typeof createShapeRunner>, id?: string, sweep?: object }} [opts] runner: a shape runner to use
 *   (a sweep's, which keeps its deployment); sweep: the sweep entry the search is (capacity.json's sweep)
 * @returns {Promise<any>} the capacity record (also written to <folder>/capacity.json)
 */
export async function findCapacity (config, opts = {}) {
  checkProbeDuration(config)
  const { precision, confirm, maxProbes, served } = { ...CAPACITY_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) }
  const { log = () => {}, signal, onProbe } = opts
  const started = Date.now()
  const id = opts.id ?? stampedId(`capacity-${config.strategy}${config.instances}${config.nodes ? `-${config.nodes}n` : ''}`)
  const dir = join(config.out, id)
  await makeDirs(dir)
  const prepared = opts.prepared ?? await prepareRun(config, { log, signal })
  const runner = opts.runner ?? createShapeRunner({ log, signal })
  const probes = []
  /** the run.json of every probe that met its rate, by rate: what the record says was measured at the capacity */
  const met = new Map()
  let environment = null
  const run = async (load, phase) => {
    if (probes.length >= maxProbes) throw new BudgetSpent()
    const r = await runner.runOn({ ...config, ...load, out: dir, capacity: { search: id, phase } }, { prepared })
    environment ??= r.environment
    if (r.status !== 'done') throw new NsError('NS_ERR_RUN', `capacity probe (${phase}) ${r.status}: ${r.error?.message ?? ''}`)
    return r
  }
  /** the run.json of every probe that missed its rate, by rate: what stopped the server is read from the lowest */
  const missed = new Map()
  const said = (r, fields) => {
    const p = { ...fields, throughput: r.summary.throughput, p99: r.summary.latency.p99, errorRate: r.summary.errorRate, flags: r.validity?.flags.map(f => f.name) ?? [], bottleneck: r.diagnosis?.bottleneck?.kind ?? null, run: r.id }
    probes.push(p)
    onProbe?.(p)
    return p
  }
  let retries = 0
  const probe = async (rate, phase) => {
    for (;;) {
      const r = await run({ rate, concurrency: undefined }, phase)
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
      if (judged.verdict === 'meets') met.set(rate, [...(met.get(rate) ?? []), r])
      if (judged.verdict === 'misses') missed.set(rate, r)
      return said(r, { phase, rate, ...judged })
    }
  }

  const notes = []
  let lo = null
  let hi = null
  let confirmed = false
  // from an estimate or a previous capacity the capacity is near: gentle steps; from a rate the user guessed, doubling
  const step = opts.startRate && !opts.near ? 2 : 1.25
  try {
    let rate = opts.near ?? opts.startRate
    if (!rate) {
      const estimate = await run({ concurrency: Math.max(4, 4 * config.instances), rate: undefined }, 'estimate')
      said(estimate, { phase: 'estimate', rate: null, verdict: 'estimate', why: [] })
      rate = Math.max(1, estimate.summary.throughput * 0.8)
    }
    rate = tidy(rate)
    for (;;) {
      const p = await probe(rate, lo === null || hi === null ? 'bracket' : 'bisect')
      if (p.verdict === 'inconclusive') {
        notes.push(`at ${rate} req/s the load side was the limit (${p.why.join(', ')}): the capacity is beyond what this generator and host can measure${lo ? `, at least ${lo} req/s` : ''}`)
        break
      }
      if (p.verdict === 'meets') lo = Math.max(lo ?? 0, rate)
      else hi = Math.min(hi ?? Infinity, rate)
      if (hi === null) { rate = tidy(rate * step); continue }
      if (lo === null) {
        if (rate <= 1) { notes.push('even 1 request per second misses the objective: no capacity'); break }
        rate = tidy(Math.max(1, rate / step))
        continue
      }
      if ((hi - lo) / lo > precision) { rate = tidy((lo + hi) / 2); if (rate === lo || rate === hi) rate = (lo + hi) / 2; continue }
      // the bracket is narrow enough: the capacity is lo, if it holds on repetition
      const repeats = []
      for (let i = 0; i < confirm; i++) repeats.push(await probe(lo, 'confirm'))
      if (repeats.every(r => r.verdict === 'meets')) { confirmed = true; break }
      if (repeats.some(r => r.verdict === 'inconclusive')) { notes.push(`confirming ${lo} req/s the load side was the limit`); break }
      // it did not hold: it is an upper bound now; search below it from the highest rate met before it
      hi = lo
      met.delete(hi)
      lo = Math.max(0, ...probes.filter(x => x.verdict === 'meets' && x.rate < hi).map(x => x.rate)) || null
      rate = tidy(lo === null ? hi / step : (lo + hi) / 2)
    }
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err
    notes.push(`stopped after ${maxProbes} probes (--max-probes): the bracket found so far is kept`)
  } finally {
    if (!opts.runner) await runner.close()
  }
  const { rate: _rate, concurrency: _concurrency, ...shape } = config
  const record = {
    schema: CAPACITY_SCHEMA,
    id,
    dir,
    status: 'done',
    createdAt: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    config: shape,
    sweep: opts.sweep ?? null,
    benchmark: prepared.benchmark,
    slo: config.slo,
    objective: sloText(config.slo),
    precision,
    served,
    capacity: confirmed ? lo : null,
    bounds: { lo, hi },
    confirmed,
    atCapacity: confirmed ? measuredAt(lo, met.get(lo)) : null,
    limit: limitOf(lo, missed, met),
    notes,
    probes,
    environment
  }
  await writeJsonAtomic(join(dir, CAPACITY_FILE), record)
  return record
}

/**
 * What stopped the server: the diagnosis of the lowest rate above the capacity that missed and whose diagnosis names
 * a limit (just above the capacity a loop can miss its latency objective at 93% busy, below the event-loop rule's
 * threshold, while a rate further up shows it plainly); else of the lowest rate missed, else of the highest rate met;
 * with the rate it was read at.
 * @param {number | null} lo
 * @param {Map<number, any>} missed
 * @param {Map<number, any[]>} met
 */
function limitOf (lo, missed, met) {
  const above = [...missed.keys()].filter(rate => lo === null || rate > lo).sort((a, b) => a - b)
  const named = above.find(rate => (missed.get(rate).diagnosis?.bottleneck?.kind ?? 'none') !== 'none')
  const missedAt = named ?? above[0]
  const rate = missedAt ?? (lo !== null && met.has(lo) ? lo : null)
  const run = rate === null ? null : missedAt !== undefined ? missed.get(missedAt) : met.get(rate).at(-1)
  if (!run?.diagnosis) return null
  return { rate, verdict: missedAt !== undefined ? 'misses' : 'meets', run: run.id, ...run.diagnosis }
}

/**
 * What the probes that met the capacity measured: their mean served throughput, latency and error rate, and the last
 * one's CPU (per core, for the report's CPU table).
 * @param {number} rate
 * @param {any[]} runs their run.json
 */
function measuredAt (rate, runs) {
  const avg = (f) => mean(runs.map(f).filter(Number.isFinite))
  return {
    rate,
    probes: runs.length,
    runs: runs.map(r => r.id),
    throughput: avg(r => r.summary.throughput),
    errorRate: avg(r => r.summary.errorRate),
    latency: Object.fromEntries(['p50', 'p95', 'p99'].map(k => [k, avg(r => r.summary.latency[k])])),
    cpu: runs.at(-1).cpu
  }
}
