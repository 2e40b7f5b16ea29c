// A sweep on disk: <out>/<sweep-id>/sweep.json (plan, seed, status per run) and one run folder per run, resumable.
import { readFile, writeFile } from 'node:fs/promises'
import { basename, extname, join, resolve } from 'node:path'
import { NsError } from '../lib/errors.js'
import { parseCommandLine } from '../lib/options.js'
import { RUN_OPTIONS, validateRunConfig } from '../lib/run-options.js'
import { SWEEP_FILE, SWEEP_SCHEMA, makeDirs, readRunFiles, stampedId, writeJsonAtomic } from '../lib/run-files.js'
import { degradedReason } from '../analyzer/report-runs.js'
import { instancesText } from '../analyzer/report-tables.js'
import { prepareRun } from './run.js'
import { createShapeRunner } from './shape-runner.js'
import { findCapacity } from './capacity.js'
import { invalidFlags } from './validity.js'
import { estimateBackend, estimatePlan } from './sweep-plan.js'

/** What a plan entry ran, in a few words: "cm x2 · page · c=25 (relaxed)", "hs x4 on 2 nodes · cpu · c=8". */
export function entryLabel (cell) {
  const c = cell.config
  const load = cell.capacity ? 'capacity' : c.rate !== undefined ? `r=${c.rate}/s` : `c=${c.concurrency ?? '?'}`
  return `${shapeText(c)} · ${benchmarkName(c)} · ${load}${cell.level ? ` (${cell.level})` : ''}`
}

/** Strategy, instances and, for a run on K worker nodes, K: "hs x4 on 2 nodes". */
export const shapeText = (c) => `${c.strategy} x${instancesText(c)}`

/** The benchmark's name, or a custom app's file name before the app names itself. */
export const benchmarkName = (c) => c.benchmark ?? basename(c.app ?? 'app', extname(c.app ?? ''))

/**
 * Creates the sweep folder and its sweep.json with every run pending.
 * @param {{ exp: any, cells: any[], plan: any[], seed: number, out: string, backend?: string, calibration?: any,
 *   estimate?: { runs: number, deployments: number, seconds: number } }} spec planSweep's plan (the estimate is
 *   worked out when it is not given)
 */
export async function createSweep ({ exp, cells, plan, seed, out, backend, calibration, estimate }) {
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
    calibration: calibration ? { file: exp.calibration, relaxed: calibration.relaxed, exhausted: calibration.exhausted, cores: calibration.cores } : null,
    estimate: estimate ?? estimatePlan(plan, cells, { backendName: estimateBackend(exp, backend) }),
    counts: null,
    deployments: 0,
    cells: cells.map(c => ({ index: c.index, label: entryLabel(c), level: c.level, capacity: c.capacity ?? null, shape: c.shape, values: withoutOut(c.values) })),
    plan: plan.map(e => ({ ...e, label: entryLabel(cells[e.cell]), status: 'pending', run: null, reason: null, seconds: null, attempts: [] }))
  }
  await saveSweep(sweep)
  return sweep
}

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
  if (counts.done === counts.runs) return 'done'
  return counts.failed || counts.degraded ? 'failed' : 'interrupted'
}

/**
 * Opens a sweep folder to resume it: finished runs stay done (a run folder whose run.json says done counts even when
 * sweep.json did not record it, e.g. after kill -9); running, interrupted, failed and degraded entries become pending.
 * @param {string} dir
 */
export async function openSweep (dir) {
  const file = join(resolve(dir), SWEEP_FILE)
  let sweep
  try {
    sweep = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw new NsError('NS_ERR_BAD_FILE', `--resume ${dir}: no readable sweep.json there (${err.code ?? err.message}); give a folder made by executor sweep`)
  }
  if (sweep?.schema !== SWEEP_SCHEMA || !Array.isArray(sweep.plan) || !Array.isArray(sweep.cells)) {
    throw new NsError('NS_ERR_BAD_FILE', `--resume ${dir}: sweep.json is not a ${SWEEP_SCHEMA} file`)
  }
  sweep.dir = resolve(dir)
  const finished = await finishedRuns(sweep.dir, sweep.id)
  for (const e of sweep.plan) {
    const done = finished.get(e.index)
    if (done) Object.assign(e, { status: 'done', run: done })
    else if (e.status !== 'pending') Object.assign(e, { status: 'pending', reason: e.reason ?? `was ${e.status}` })
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
      await writeJsonAtomic(file, { ...run, status: 'interrupted', error: { code: 'NS_ERR_INTERRUPTED', message: 'the sweep process stopped during this run (found on --resume)' } })
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
  const argv = Object.entries(texts).flatMap(([flag, v]) => (v === undefined || v === false ? [] : v === true ? [`--${flag}`] : [].concat(v).map(x => `--${flag}=${x}`)))
  return parseCommandLine(argv, RUN_OPTIONS).values
}

/**
 * Runs the plan's pending entries in order, one deployment per shape kept across its runs. Each run folder and
 * sweep.json are written as soon as a run ends. A failed run is recorded with its reason and the sweep goes on
 * (unless failFast); when the signal aborts, the current run stops, everything is torn down and the entry is
 * marked interrupted, so `--resume` redoes it.
 * @param {any} sweep from createSweep or openSweep
 * @param {{ log?: (line: string) => void, signal?: AbortSignal, failFast?: boolean,
 *   onStart?: (entry: any, cell: any) => void, onEnd?: (entry: any, run: any) => void,
 *   onProgress?: (entry: any, p: any) => void }} [opts]
 */
export async function executeSweep (sweep, { log = () => {}, signal, failFast = false, onStart, onEnd, onProgress } = {}) {
  const cells = cellConfigs(sweep)
  const todo = sweep.plan.filter(e => e.status !== 'done')
  // everything a run checks before it starts, for every shape still to run, before the first run
  const prepared = new Map()
  for (const e of todo) {
    const cell = cells[e.cell]
    if (!prepared.has(cell.shape)) prepared.set(cell.shape, await prepareRun(cell.config, { log }))
  }
  const runner = createShapeRunner({ log, signal })
  sweep.status = 'running'
  await saveSweep(sweep)
  let deployFailed = null
  try {
    for (const e of todo) {
      if (signal?.aborted) break
      const cell = cells[e.cell]
      const started = Date.now()
      onStart?.(e, cell)
      if (deployFailed?.shape === cell.shape && runner.live === null) {
        Object.assign(e, { status: 'failed', reason: `not run: deploying this shape failed just before (${deployFailed.reason.split('\n')[0]})` })
        e.attempts.push({ run: null, status: 'failed', reason: e.reason })
        await saveSweep(sweep)
        onEnd?.(e, null)
        continue
      }
      Object.assign(e, { status: 'running', startedAt: new Date().toISOString() })
      await saveSweep(sweep)
      const entry = { id: sweep.id, index: e.index, repeat: e.repeat, level: cell.level }
      let run = null
      try {
        if (cell.capacity) {
          run = await searchCapacity(sweep, e, cell, { runner, prepared: prepared.get(cell.shape), signal, entry, onProgress })
          Object.assign(e, { status: 'done', run: run.id, capacity: run.capacity, reason: run.confirmed ? null : run.notes.join('; ') || null, invalid: run.confirmed ? [] : ['capacity-not-found'] })
        } else {
          run = await runner.runOn({ ...cell.config, sweep: entry }, { prepared: prepared.get(cell.shape), onProgress: p => onProgress?.(e, p) })
          // a degraded run (a node lost mid-run) is no steady-state measurement: like a failed one, --resume redoes it
          Object.assign(e, { status: run.status, run: run.id, reason: run.status === 'degraded' ? degradedReason(run) : run.error?.message ?? null, invalid: invalidFlags(run) })
        }
        deployFailed = null
      } catch (err) {
        Object.assign(e, { status: signal?.aborted ? 'interrupted' : 'failed', reason: `${err.code ? `${err.code}: ` : ''}${err.message}` })
        if (err.phase === 'deploy') deployFailed = { shape: cell.shape, reason: err.message }
      }
      e.seconds = Math.round((Date.now() - started) / 100) / 10
      e.attempts.push({ run: e.run, status: e.status, reason: e.reason })
      await saveSweep(sweep)
      onEnd?.(e, run)
      if (e.status === 'interrupted' || signal?.aborted) break
      if ((e.status === 'failed' || e.status === 'degraded') && failFast) break
    }
  } finally {
    await runner.close()
    sweep.deployments = (sweep.deployments ?? 0) + runner.deploys
    sweep.status = sweepStatus(countEntries(sweep.plan), { aborted: signal?.aborted })
    sweep.finishedAt = new Date().toISOString()
    await saveSweep(sweep)
  }
  return sweep
}

/**
 * A capacity entry: one search on the cell's shape, its probes in a folder of the sweep's, started at the capacity an
 * earlier repeat of the cell found when there is one (fewer probes, the same bracket rule).
 * @returns {Promise<any>} the capacity record
 */
function searchCapacity (sweep, e, cell, { runner, prepared, signal, entry, onProgress }) {
  const near = sweep.plan.find(x => x.cell === e.cell && x.status === 'done' && x.capacity)?.capacity
  const id = stampedId(`capacity-${String(e.index + 1).padStart(String(sweep.plan.length).length, '0')}`)
  return findCapacity(cell.config, { ...cell.capacity, runner, prepared, signal, near, id, sweep: entry, onProbe: p => onProgress?.(e, { probe: p }) })
}
