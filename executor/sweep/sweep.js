// A sweep on disk: <out>/<sweep-id>/sweep.json (plan, seed, status per run) and one run folder per run, resumable.
import { readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fail } from '../../lib/messages.js'
import { targetName } from '../../benchmarks/index.js'
import { parseCommandLine } from '../../lib/options.js'
import { RUN_OPTIONS, validateRunConfig } from '../../lib/run-options.js'
import { SWEEP_FILE, SWEEP_SCHEMA, freeBytes, isNoSpace, makeDirs, readRunFiles, stampedId, writeJsonAtomic } from '../../lib/run-files.js'
import { degradedReason } from '../../analyzer/report/report-runs.js'
import { instancesText } from '../../analyzer/report/report-tables.js'
import { prepareRun } from '../run.js'
import { resolveBackend } from '../backends/index.js'
import { createShapeRunner } from '../shape-runner.js'
import { findCapacity } from '../capacity/capacity.js'
import { invalidFlags } from '../validity.js'
import { estimateBackend, estimatePlan } from './sweep-plan.js'

/** What a plan entry ran, in a few words: "cm x2 · page · c=25 (relaxed)", "hs x4 on 2 nodes · cpu · c=8". */
export function entryLabel (cell) {
  const c = cell.config
  const load = cell.capacity ? 'capacity' : c.rate !== undefined ? `r=${c.rate}/s` : `c=${c.concurrency ?? '?'}`
  return `${shapeText(c)} · ${benchmarkName(c)} · ${load}${cell.level ? ` (${cell.level})` : ''}`
}

/** Strategy, instances and, for a run on K worker nodes, K: "hs x4 on 2 nodes". */
export const shapeText = (c) => `${c.strategy} x${instancesText(c)}`

/** What a run measures, by name (benchmarks/index.js). */
export const benchmarkName = targetName

/**
 * Creates the sweep folder and its sweep.json with every run pending.
 * @param {{ exp: any, cells: any[], plan: any[], seed: number, out: string, backend?: string, calibration?: any,
 *   estimate?: { runs: number, deployments: number, seconds: number }, adaptive?: any }} spec planSweep's plan (the
 *   estimate is worked out when it is not given); adaptive: planAdaptive's record (executor/sweep/sweep-adaptive.js)
 */
export async function createSweep ({ exp, cells, plan, seed, out, backend, calibration, estimate, adaptive }) {
  const id = stampedId(exp.name)
  const dir = join(resolve(out), id)
  await makeDirs(dir)
  await writeFile(join(dir, 'experiment.yml'), exp.text)
  if (calibration) await writeJsonAtomic(join(dir, 'calibration.json'), calibration)
  const sweep = {
    schema: SWEEP_SCHEMA,
    id,
    dir,
    status: 'planned',
    createdAt: new Date().toISOString(),
    updatedAt: null,
    finishedAt: null,
    experiment: {
      file: exp.path,
      name: exp.name,
      description: exp.description ?? null,
      profile: exp.profile,
      repeats: exp.repeats,
      order: exp.order,
      analysis: exp.analysis,
      copy: 'experiment.yml'
    },
    seed,
    backend: backend ?? null,
    // the backend the first session's runs went to (an auto sweep keeps it)
    backendUsed: null,
    calibration: calibration ? { file: exp.calibration, relaxed: calibration.relaxed, exhausted: calibration.exhausted, cores: calibration.cores } : null,
    estimate: estimate ?? estimatePlan(plan, cells, { backendName: estimateBackend(exp, backend) }),
    counts: null,
    deployments: 0,
    cells: cells.map(c => ({
      index: c.index,
      label: entryLabel(c),
      level: c.level,
      capacity: c.capacity ?? null,
      shape: c.shape,
      values: withoutOut(c.values)
    })),
    plan: plan.map(e => pendingEntry(e, cells)),
    // an adaptive sweep's question, its looks and its verdict (executor/sweep/sweep-adaptive.js)
    ...(adaptive ? { adaptive } : {})
  }
  await saveSweep(sweep)
  return sweep
}

/**
 * A plan entry as sweep.json keeps it before it runs.
 * @param {{ index: number, cell: number, repeat: number }} e
 * @param {any[]} cells the cells with their configs
 */
export const pendingEntry = (e, cells) => ({ ...e, label: entryLabel(cells[e.cell]), status: 'pending', run: null, reason: null, seconds: null, attempts: [] })

/** A cell's run values as sweep.json keeps them: typed, as the experiment gave them; the folder is the sweep's own. */
const withoutOut = ({ out, ...rest }) => rest

export async function saveSweep (sweep) {
  sweep.updatedAt = new Date().toISOString()
  sweep.counts = countEntries(sweep.plan)
  await writeJsonAtomic(join(sweep.dir, SWEEP_FILE), sweep)
}

/**
 * The finished runs whose measurement is not valid, and how often each flag made them so.
 * @param {{ status: string, invalid?: string[] }[]} plan
 */
export function countInvalid (plan) {
  const byFlag = {}
  let runs = 0
  for (const e of plan.filter(x => x.status === 'done' && x.invalid?.length)) {
    runs++
    for (const f of e.invalid) byFlag[f] = (byFlag[f] ?? 0) + 1
  }
  return { runs, byFlag }
}

/**
 * An entry still to run: neither done nor skipped (an adaptive sweep's entry left out once its question was answered or
 * its budget spent, executor/sweep/sweep-adaptive.js).
 * @param {{ status: string }} e
 */
export const isLeft = (e) => e.status !== 'done' && e.status !== 'skipped'

/**
 * How many entries have each status (skipped only when some are).
 * @param {{ status: string }[]} plan
 * @returns {{ runs: number, done: number, failed: number, degraded: number, interrupted: number, pending: number,
 *   running: number, skipped?: number }}
 */
export function countEntries (plan) {
  const counts = { runs: plan.length, done: 0, failed: 0, degraded: 0, interrupted: 0, pending: 0, running: 0 }
  for (const e of plan) counts[e.status] = (counts[e.status] ?? 0) + 1
  return counts
}

/**
 * A sweep's status from its entries: done only when every run is; a failed or degraded run makes it failed (exit 1,
 * --resume redoes them); Ctrl-C, or runs left pending, interrupted.
 * @param {ReturnType<typeof countEntries>} counts
 * @param {{ aborted?: boolean }} [opts]
 */
export function sweepStatus (counts, { aborted = false } = {}) {
  if (aborted || counts.interrupted) return 'interrupted'
  if (counts.done + (counts.skipped ?? 0) === counts.runs) return 'done'
  return counts.failed || counts.degraded ? 'failed' : 'interrupted'
}

/**
 * A sweep folder's sweep.json as it is on disk, read only (its dir the folder given); exit 2 when there is none.
 * @param {string} dir
 * @param {string} [flag] the flag that named the folder
 */
export async function readSweepJson (dir, flag = '--resume') {
  const file = join(resolve(dir), SWEEP_FILE)
  let sweep
  try {
    sweep = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw fail('SWEEP_FILE_UNREADABLE', { flag, dir, why: err.code ?? err.message })
  }
  if (sweep?.schema !== SWEEP_SCHEMA || !Array.isArray(sweep.plan) || !Array.isArray(sweep.cells)) {
    throw fail('SWEEP_FILE_WRONG_SCHEMA', { flag, dir, schema: SWEEP_SCHEMA })
  }
  sweep.dir = resolve(dir)
  return sweep
}

/**
 * Opens a sweep folder to resume it: finished runs stay done (a run folder whose run.json says done counts even when
 * sweep.json did not record it, e.g. after kill -9); running, interrupted, failed and degraded entries become pending.
 * @param {string} dir
 */
export async function openSweep (dir) {
  const sweep = await readSweepJson(dir)
  const finished = await finishedRuns(sweep.dir, sweep.id)
  for (const e of sweep.plan) {
    const done = finished.get(e.index)
    if (done) Object.assign(e, { status: 'done', run: done })
    else if (isLeft(e) && e.status !== 'pending') Object.assign(e, { status: 'pending', reason: e.reason ?? `was ${e.status}` })
  }
  return sweep
}

/**
 * Plan index -> run id of every run folder of this sweep whose run.json says done, and search id of every capacity
 * search it finished. A run.json still "running" was left by a sweep process that died (kill -9, power loss): it is
 * marked interrupted, as its run never finished.
 */
async function finishedRuns (dir, sweepId) {
  const out = new Map()
  const read = await readRunFiles([dir])
  for (const { capacity } of read.capacities) if (capacity.sweep?.id === sweepId) out.set(capacity.sweep.index, capacity.id)
  for (const { file, run } of read.runs) {
    if (run.config.sweep?.id !== sweepId) continue
    if (run.status === 'done') out.set(run.config.sweep.index, run.id)
    if (run.status === 'running') {
      await writeJsonAtomic(file, {
        ...run,
        status: 'interrupted',
        error: { code: 'NS_ERR_INTERRUPTED', message: 'the sweep process stopped during this run (found on --resume)' }
      })
    }
  }
  return out
}

/**
 * The validated run config of each cell, for this sweep folder (validated again: a resumed sweep may run elsewhere).
 * A sweep.json written before values were kept typed holds them as flag texts: those are read as the command line is.
 * @param {any} sweep
 */
export function cellConfigs (sweep) {
  return sweep.cells.map(c => {
    const values = typeof c.values.instances === 'string' ? flagTexts(c.values) : c.values
    return { ...c, config: validateRunConfig({ ...values, out: sweep.dir }) }
  })
}

/** Flag texts by flag name ({ instances: '2', 'cpus-per-instance': '0.5', param: ['n=1'] }) as run values. */
function flagTexts (texts) {
  const argv = Object.entries(texts).flatMap(([flag, v]) =>
    (v === undefined || v === false ? [] : v === true ? [`--${flag}`] : [].concat(v).map(x => `--${flag}=${x}`)))
  return parseCommandLine(argv, RUN_OPTIONS).values
}

/** Free space a run needs to start: below it the sweep stops before the run rather than in the middle of it. */
export const MIN_FREE_BYTES = 16 * 2 ** 20

/**
 * Everything a run checks before it starts, for every shape still to run, before the first run. An auto sweep stays
 * on the backend its first session found: the runs of one study never mix backends (a daemon down at a resume is
 * waited for, not taken as a reason to go local).
 * @returns {Promise<Map<string, any>>} each shape's prepared run
 */
async function prepareShapes (sweep, cells, todo, { log, note, signal }) {
  const prepared = new Map()
  const resumed = sweep.plan.some(e => e.attempts.length)
  for (const e of todo) {
    const cell = cells[e.cell]
    if (prepared.has(cell.shape)) continue
    const config = cell.config.backend === 'auto' && sweep.backendUsed ? { ...cell.config, backend: sweep.backendUsed } : cell.config
    prepared.set(cell.shape, await prepareWaiting(config, { log, note, signal, resumed }))
    sweep.backendUsed ??= prepared.get(cell.shape).backend.name
  }
  return prepared
}

/** An entry not run, as its shape's deployment failed just before and none is live to run it on. */
function notRunAfterFailedDeploy (e, deployFailed) {
  Object.assign(e, { status: 'failed', reason: `not run: deploying this shape failed just before (${deployFailed.reason.split('\n')[0]})` })
  e.attempts.push({ run: null, status: 'failed', reason: e.reason })
}

/**
 * One entry run (a capacity search, or a run on its shape's deployment), its outcome written into it. Resolves with the
 * run (null when it threw), the sweep's stop (a full disk) and its shape's failed deployment: null after a success, set
 * when the deployment failed (not a daemon gone, which failed this run, not its shape), undefined when unchanged.
 */
async function runEntry (sweep, e, cell, { runner, prepared, backend, note, signal, onProgress }) {
  const entry = { id: sweep.id, index: e.index, repeat: e.repeat, level: cell.level }
  try {
    if (cell.capacity) {
      const run = await searchCapacity(sweep, e, cell, { runner, prepared, signal, entry, onProgress })
      Object.assign(e, {
        status: 'done',
        run: run.id,
        capacity: run.capacity,
        reason: run.confirmed ? null : run.notes.join('; ') || null,
        invalid: run.confirmed ? [] : ['capacity-not-found']
      })
      return { run, stopped: null, deployFailed: null }
    }
    const run = await runner.runOn({ ...cell.config, sweep: entry }, { prepared, onProgress: p => onProgress?.(e, p) })
    // a degraded run (a node lost mid-run) is no steady-state measurement: like a failed one, --resume redoes it
    Object.assign(e, {
      status: run.status,
      run: run.id,
      reason: run.status === 'degraded' ? degradedReason(run) : run.error?.message ?? null,
      invalid: invalidFlags(run)
    })
    return { run, stopped: null, deployFailed: null }
  } catch (err) {
    const stopped = isNoSpace(err) ? noSpaceError(sweep, e, err) : null
    // a daemon that went away under the run is waited for before the next
    const daemonDown = !stopped && !signal?.aborted && Boolean(backend.waitAvailable) &&
      (err.code === 'NS_ERR_MISSING_DOCKER' || (await backend.waitAvailable({ log: note, signal }).catch(() => null))?.waitedMs !== 0)
    Object.assign(e, { status: signal?.aborted || stopped ? 'interrupted' : 'failed', reason: `${err.code ? `${err.code}: ` : ''}${err.message}` })
    const deployFailed = err.phase === 'deploy' && !daemonDown && !stopped ? { shape: cell.shape, reason: err.message } : undefined
    return { run: null, stopped, deployFailed }
  }
}

/**
 * Runs the plan's pending entries in order, one deployment per shape kept across its runs. Each run folder and
 * sweep.json are written as soon as a run ends. A failed run is recorded with its reason and the sweep goes on
 * (unless failFast); when the signal aborts, the current run stops, everything is torn down and the entry is
 * marked interrupted, so `--resume` redoes it.
 *
 * Faults of a long sweep: before each run the backend must answer (a Docker daemon restarting is waited for, up to 10
 * min; the run it cut is failed, and redone on --resume); what earlier processes left deployed is removed first; a full
 * disk (before a run: less than MIN_FREE_BYTES free; or a write failing with ENOSPC) stops the sweep with every file as
 * it was (atomic writes) and throws NS_ERR_NO_SPACE: free space, then --resume.
 * @param {any} sweep from createSweep or openSweep
 * @param {{ log?: (line: string) => void, note?: (line: string) => void, signal?: AbortSignal, failFast?: boolean,
 *   onStart?: (entry: any, cell: any) => void, onEnd?: (entry: any, run: any) => void,
 *   onProgress?: (entry: any, p: any) => void, only?: (entry: any) => boolean }} [opts] log: the runs' own lines; note:
 *   what the user must hear (a daemon waited for, leftovers removed); only: run just the entries it keeps (an
 *   adaptive sweep's block)
 */
export async function executeSweep (sweep, { log = () => {}, note = log, signal, failFast = false, onStart, onEnd, onProgress, only = () => true } = {}) {
  const cells = cellConfigs(sweep)
  const todo = sweep.plan.filter(e => isLeft(e) && only(e))
  const prepared = await prepareShapes(sweep, cells, todo, { log, note, signal })
  const backends = await backendsOf(cells, prepared)
  await cleanupAll(backends, note)
  const runner = createShapeRunner({ log, signal })
  sweep.status = 'running'
  let stopped = await saved(sweep)
  let deployFailed = null
  try {
    for (const e of stopped ? [] : todo) {
      if (signal?.aborted) break
      const cell = cells[e.cell]
      const { backend } = prepared.get(cell.shape)
      stopped = await backendAnswers(backend, { note, signal }) ?? await spaceFor(sweep)
      if (stopped) break
      const started = Date.now()
      onStart?.(e, cell)
      if (deployFailed?.shape === cell.shape && runner.live === null) {
        notRunAfterFailedDeploy(e, deployFailed)
        if ((stopped = await saved(sweep))) break
        onEnd?.(e, null)
        continue
      }
      // an entry that is a deployment of its own (an adaptive sweep's) does not run on the one the entry before left
      if (e.fresh) await runner.close()
      Object.assign(e, { status: 'running', startedAt: new Date().toISOString() })
      if ((stopped = await saved(sweep))) break
      const outcome = await runEntry(sweep, e, cell, { runner, prepared: prepared.get(cell.shape), backend, note, signal, onProgress })
      const { run } = outcome
      stopped = outcome.stopped
      if (outcome.deployFailed !== undefined) deployFailed = outcome.deployFailed
      e.seconds = Math.round((Date.now() - started) / 100) / 10
      e.attempts.push({ run: e.run, status: e.status, reason: e.reason })
      stopped ??= await saved(sweep)
      if (stopped) break
      onEnd?.(e, run)
      if (e.status === 'interrupted' || signal?.aborted) break
      if ((e.status === 'failed' || e.status === 'degraded') && failFast) break
    }
  } finally {
    await runner.close()
    await cleanupAll(backends, note)
    sweep.deployments = (sweep.deployments ?? 0) + runner.deploys
    sweep.status = sweepStatus(countEntries(sweep.plan), { aborted: signal?.aborted || Boolean(stopped) })
    sweep.finishedAt = new Date().toISOString()
    // on a full disk this write fails too, and sweep.json stays as it was after the last run that ended
    stopped ??= await saved(sweep)
  }
  if (stopped) throw stopped
  return sweep
}

/**
 * prepareRun; when a sweep that has run before finds no Docker daemon (it is restarting), it waits for it (the
 * backend's waitAvailable, up to 10 min) and prepares again. A new sweep without a daemon fails at once (exit 3, with
 * the fix).
 */
async function prepareWaiting (config, { log, note, signal, resumed }) {
  try {
    return await prepareRun(config, { log, signal })
  } catch (err) {
    if (err.code !== 'NS_ERR_MISSING_DOCKER' || !resumed) throw err
    const backend = await resolveBackend(config)
    if (!backend.waitAvailable) throw err
    await backend.waitAvailable({ log: note, signal })
    return prepareRun(config, { log, signal })
  }
}

/** Saves sweep.json; a full disk is returned as the error that stops the sweep (anything else throws). */
async function saved (sweep) {
  try {
    await saveSweep(sweep)
    return null
  } catch (err) {
    if (isNoSpace(err)) return noSpaceError(sweep, null, err)
    throw err
  }
}

/** The error that stops a sweep on a full disk: where, how much is free, and what to do. */
function noSpaceError (sweep, entry, cause) {
  return fail('DISK_FULL', { dir: sweep.dir, run: entry ? entry.index + 1 : null, label: entry?.label }, { cause })
}

/** Null when the folder's disk has room for a run; else the error that stops the sweep before it starts one. */
async function spaceFor (sweep) {
  const free = await freeBytes(sweep.dir).catch(() => Infinity)
  return free < MIN_FREE_BYTES
    ? noSpaceError(sweep, null, Object.assign(new Error(`${free} bytes free, a run needs ${MIN_FREE_BYTES}`), { code: 'ENOSPC' }))
    : null
}

/** Null when the backend answers (after waiting through a daemon restart); else the error that stops the sweep. */
async function backendAnswers (backend, { note, signal }) {
  if (!backend.waitAvailable) return null
  try {
    await backend.waitAvailable({ log: note, signal })
    return null
  } catch (err) {
    return signal?.aborted ? null : err
  }
}

/** The backends of a sweep's shapes (one per prepared shape; the first cell's when nothing is left to run). */
async function backendsOf (cells, prepared) {
  const list = [...prepared.values()].map(p => p.backend)
  if (!list.length && cells.length) list.push(await resolveBackend(cells[0].config).catch(() => null))
  return list.filter(Boolean)
}

/** Removes what runs of dead processes (kill -9) left deployed and what this one could not remove; never fatal. */
async function cleanupAll (backends, note) {
  for (const b of backends) {
    const removed = await b.cleanup?.({ log: note }).catch(err => { note(`cleanup: ${err.message}`); return [] })
    if (removed?.length) note(`removed ${removed.length} stack(s) left deployed by earlier runs: ${removed.join(', ')}`)
  }
}

/**
 * A capacity entry: one search on the cell's shape, its probes in a folder of the sweep's, on a deployment of its own
 * and from its own estimate: the repeats of a cell are independent searches (findCapacity closes the runner's).
 * @returns {Promise<any>} the capacity record
 */
function searchCapacity (sweep, e, cell, { runner, prepared, signal, entry, onProgress }) {
  const id = stampedId(`capacity-${String(e.index + 1).padStart(String(sweep.plan.length).length, '0')}`)
  return findCapacity(cell.config, { ...cell.capacity, runner, prepared, signal, id, sweep: entry, onProbe: p => onProgress?.(e, { probe: p }) })
}
