// Run-level calibration of the multi-core study (thesis section 2.3.1), by bisection: the relaxed and exhausted levels.
import { readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fail } from '../../lib/messages.js'
import { parseCpuList } from '../../lib/cpu-list.js'
import { CALIBRATION_SCHEMA, makeWritableDir, writeJsonAtomic } from '../../lib/run-files.js'
import { prepareRun } from '../run.js'
import { createShapeRunner } from '../shape-runner.js'
/** The thesis's relaxed window: the busiest core between 75% and 85%. */
export const RELAXED_WINDOW = Object.freeze([75, 85])
export const CALIBRATION_DEFAULTS = Object.freeze({ confirm: 3, maxConcurrency: 4096, maxProbes: 30, duration: 3, warmup: 1 })

/**
 * Finds the relaxed level (the concurrency at which the server's busiest core sits in 75-85%, run.json cpu.highest)
 * and the exhausted level (the highest concurrency without a single failed request) on one deployment, and confirms
 * each by repeating it. The relaxed search doubles from 1 connection and bisects; the exhausted search doubles from
 * the relaxed level until a request fails (or maxConcurrency) and bisects down to 2% (or 1 connection).
 * @param {any} config a validated run config; its `out` receives the probe runs, its duration/warmup are the probes'
 * @param {{ confirm?: number, maxConcurrency?: number, maxProbes?: number, log?: (line: string) => void,
 *   signal?: AbortSignal, onProbe?: (probe: any) => void, prepared?: any }} [opts]
 */
export async function calibrate (config, opts = {}) {
  const { confirm, maxConcurrency, maxProbes } = { ...CALIBRATION_DEFAULTS, ...stripUndefined(opts) }
  const { log = () => {}, signal, onProbe } = opts
  const started = Date.now()
  const prepared = opts.prepared ?? await prepareRun(config, { log })
  const runner = createShapeRunner({ log, signal })
  const prober = calibrationProber(config, runner, prepared, { maxProbes, onProbe })
  const notes = []
  let relaxed = null
  let exhausted = null
  try {
    relaxed = await findRelaxed(prober.probe, { maxConcurrency, confirm, notes })
    exhausted = await findExhausted(prober.probe, prober.probes, { start: relaxed.concurrency, maxConcurrency, confirm, notes })
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err
    notes.push(`stopped after ${maxProbes} probes (--max-probes): the levels found so far are kept`)
  } finally {
    await runner.close()
  }
  if (!relaxed) throw fail('NO_RELAXED_LEVEL', { probes: maxProbes })
  if (exhausted && exhausted.concurrency !== null && exhausted.concurrency < relaxed.concurrency) {
    notes.push(`the exhausted level (${exhausted.concurrency}) is below the relaxed level (${relaxed.concurrency}): ` +
      `requests fail before the busiest core reaches ${RELAXED_WINDOW[0]}%`)
  }
  return calibrationRecord(config, prepared, { started, confirm, maxConcurrency, maxProbes, relaxed, exhausted, notes, ...prober })
}

/**
 * A probe at a concurrency: a run on the one deployment, its busiest core, errors, throughput and p95 kept (and the
 * first run's environment); a probe past the budget throws BudgetSpent, a run not done fails the calibration.
 */
function calibrationProber (config, runner, prepared, { maxProbes, onProbe }) {
  /** @type {any[]} */
  const probes = []
  const prober = {
    probes,
    /** @type {any} */
    environment: null,
    /** @param {number} concurrency @param {string} phase */
    async probe (concurrency, phase) {
      if (probes.length >= maxProbes) throw new BudgetSpent()
      const run = await runner.runOn({ ...config, concurrency, rate: undefined, calibration: { phase } }, { prepared })
      prober.environment ??= run.environment
      if (run.status !== 'done') throw fail('CALIBRATION_PROBE_FAILED', { concurrency, status: run.status, why: run.error?.message })
      const p = {
        phase,
        concurrency,
        highest: run.cpu?.highest ?? 0,
        errors: Math.max(run.summary?.errors ?? 0, run.load?.errors ?? 0),
        requests: run.summary?.requests ?? 0,
        throughput: run.summary?.throughput ?? 0,
        p95: run.summary?.latency?.p95 ?? null,
        run: run.id
      }
      probes.push(p)
      onProbe?.(p)
      return p
    }
  }
  return prober
}

/** The calibration file's record: what was calibrated and how, the two levels, the notes, every probe. */
function calibrationRecord (config, prepared, { started, confirm, maxConcurrency, maxProbes, relaxed, exhausted, notes, environment, probes }) {
  return {
    schema: CALIBRATION_SCHEMA,
    createdAt: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    config: {
      benchmark: prepared.benchmark,
      strategy: config.strategy,
      instances: config.instances,
      backend: prepared.backend.name,
      driver: config.driver,
      cpusPerInstance: config.cpusPerInstance,
      affinity: config.affinity,
      serverCpus: config.serverCpus,
      params: config.params,
      app: config.app
    },
    probe: { duration: config.duration, warmup: config.warmup, confirm, maxConcurrency, maxProbes },
    // relaxed*cores: the cores the server is given (--server-cpus), else the machine's
    cores: config.serverCpus ? parseCpuList(config.serverCpus)?.length ?? null : environment?.cpus ?? null,
    window: RELAXED_WINDOW,
    relaxed,
    exhausted,
    notes,
    environment,
    probes
  }
}

class BudgetSpent extends Error {}

function stripUndefined (o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
}

const [LOW, HIGH] = RELAXED_WINDOW
const inWindow = h => h >= LOW && h <= HIGH

async function findRelaxed (probe, { maxConcurrency, confirm, notes }) {
  let lo = null // highest probe below the window
  let hi = null // lowest probe above it
  let c = 1
  let found = null
  let peak = null // the probe with the busiest core so far, and how many doublings have not raised it
  let flat = 0
  for (;;) {
    const p = await probe(c, 'relaxed')
    if (inWindow(p.highest)) { found = p; break }
    if (p.highest < LOW) lo = p
    else hi = p
    if (!hi) {
      flat = peak && p.highest <= peak.highest + 2 ? flat + 1 : 0
      if (!peak || p.highest > peak.highest) peak = p
      if (flat >= 2) {
        // the server saturates below the window: something else (the load driver, on a small machine) shares its core
        found = peak
        notes.push(`the busiest core levels off at ${peak.highest}% (below ${LOW}%) from ${peak.concurrency} connections on: ` +
          'the server saturates first, other processes share its core; relaxed is where it peaks')
        break
      }
      if (c >= maxConcurrency) {
        found = peak
        notes.push(`the busiest core stays below ${LOW}% up to ${maxConcurrency} connections (at most ${peak.highest}%): relaxed is where it peaks`)
        break
      }
      c = Math.min(c * 2, maxConcurrency)
      continue
    }
    const below = lo?.concurrency ?? 0
    if (hi.concurrency - below <= 1) {
      // no whole number of connections lands in the window: take the one nearer to its middle
      found = !lo || Math.abs(hi.highest - (LOW + HIGH) / 2) <= Math.abs(lo.highest - (LOW + HIGH) / 2) ? hi : lo
      notes.push(`no concurrency puts the busiest core in ${LOW}-${HIGH}% ` +
        `(${lo ? `${lo.concurrency}: ${lo.highest}%, ` : ''}${hi.concurrency}: ${hi.highest}%): relaxed is the nearer one`)
      break
    }
    c = Math.floor((below + hi.concurrency) / 2)
  }
  const repeats = [found.highest]
  for (let i = 1; i < confirm; i++) repeats.push((await probe(found.concurrency, 'relaxed-confirm')).highest)
  const mean = repeats.reduce((a, b) => a + b, 0) / repeats.length
  return {
    concurrency: found.concurrency,
    highest: Math.round(mean * 10) / 10,
    repeats,
    inWindow: inWindow(found.highest),
    confirmed: repeats.every(inWindow)
  }
}

async function findExhausted (probe, probes, { start, maxConcurrency, confirm, notes }) {
  const clean = p => p.errors === 0
  // every probe so far tells something: a clean one is a lower bound, one with errors an upper bound
  let lo = Math.max(0, ...probes.filter(clean).map(p => p.concurrency))
  let hi = Math.min(Infinity, ...probes.filter(p => !clean(p)).map(p => p.concurrency))
  let bounded = false
  if (hi === Infinity) {
    let c = Math.min(Math.max(start * 2, lo * 2, 1), maxConcurrency)
    for (;;) {
      const p = await probe(c, 'exhausted')
      if (!clean(p)) { hi = c; break }
      lo = c
      if (c >= maxConcurrency) { bounded = true; break }
      c = Math.min(c * 2, maxConcurrency)
    }
  }
  for (let round = 0; ; round++) {
    // bisect until the gap is 2% of the level (or 1 connection); a bounded search has no upper side to narrow
    if (!bounded) {
      while (hi - lo > Math.max(1, Math.floor(lo * 0.02))) {
        const c = Math.floor((lo + hi) / 2)
        const p = await probe(c, 'exhausted')
        if (clean(p)) lo = c
        else hi = c
      }
    }
    if (lo === 0) {
      notes.push('a request failed even at 1 connection: there is no exhausted level')
      return { concurrency: null, bounded, confirmed: false, repeats: [] }
    }
    const repeats = [0]
    let failed = null
    for (let i = 1; i < confirm && !failed; i++) {
      const p = await probe(lo, 'exhausted-confirm')
      repeats.push(p.errors)
      if (!clean(p)) failed = p
    }
    if (!failed) {
      if (bounded) notes.push(`no request failed up to ${maxConcurrency} connections (--max-concurrency): the exhausted level is at least that`)
      return { concurrency: lo, bounded, confirmed: true, repeats }
    }
    // the level did not hold on repetition: it is an upper bound now, search again below it
    hi = lo
    bounded = false
    lo = Math.max(0, ...probes.filter(p => clean(p) && p.concurrency < hi).map(p => p.concurrency))
    if (round >= 3) {
      notes.push(`the exhausted level did not hold on repetition ${round + 1} times; ${hi} failed once`)
      return { concurrency: lo || null, bounded: false, confirmed: false, repeats }
    }
  }
}

/**
 * Reads a calibration file for an experiment's `concurrency: relaxed | exhausted` levels.
 * @param {string} file
 */
export async function readCalibration (file) {
  let data
  try {
    data = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw fail('CALIBRATION_FILE_UNREADABLE', { file, why: err.code ?? err.message })
  }
  if (data?.schema !== CALIBRATION_SCHEMA || !Number.isInteger(data.relaxed?.concurrency) || !Number.isInteger(data.cores)) {
    throw fail('NOT_A_CALIBRATION_FILE', { file, schema: CALIBRATION_SCHEMA })
  }
  if (!Number.isInteger(data.exhausted?.concurrency)) data.exhausted = { ...data.exhausted, concurrency: null }
  return data
}

/**
 * Calibrates and writes the result to `file` (atomically), the probe runs into config.out.
 * @param {any} config
 * @param {string} file
 * @param {Parameters<typeof calibrate>[1]} [opts]
 */
export async function calibrateToFile (config, file, opts) {
  // both folders are made (and written to) before the first probe: a file that cannot be written costs no calibration
  await makeWritableDir(dirname(file), { flag: '--out' })
  await makeWritableDir(config.out, { flag: '--runs' })
  const result = await calibrate(config, opts)
  await writeJsonAtomic(file, { ...result, file, probeRuns: config.out })
  return { ...result, file, probeRuns: config.out }
}
