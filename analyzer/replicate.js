// `analyzer replicate`: a finished sweep of one of the studies nodescale reproduces, set row by row beside the study's
// published figures (analyzer/replication/published.js), each row with the rule it was compared by and a verdict;
// with the sweep's order of runs and this machine's fingerprint beside the study's stated set-up. Several sweeps are
// judged on their runs pooled, never by whichever folder came first.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fail } from '../lib/messages.js'
import { RUN_FILES, SWEEP_FILE, readJsonBounded, sweepFolder } from '../lib/run-files.js'
import { readRunList } from './report/report-runs.js'
import { studies, STUDY_IDS } from './replication/published.js'
import { multicoreRows } from './replication/multicore.js'
import { ibenchSmisnRows } from './replication/ibench-smisn.js'
import { ibenchMimnRows } from './replication/ibench-mimn.js'
import { VERDICTS, leftOutCounts } from './replication/rules.js'
import { fingerprintOf, fingerprintRows } from './fingerprint.js'

/**
 * Each study's rows from its sweeps, pooled: the folders (for fits), their finished runs with their timelines and
 * levels, and the finished runs left out as not valid (strategy, level, flags), so a row without runs can say why.
 * @type {Readonly<Record<string, (input: { dir: string[], runs: any[], leftOut: LeftOut[], includeInvalid: boolean })
 *   => any[] | Promise<any[]>>>}
 */
const ROWS = Object.freeze({
  multicore: ({ runs, leftOut }) => multicoreRows(runs, leftOut),
  'ibench-smisn': ibenchSmisnRows,
  'ibench-mimn': ibenchMimnRows
})

/** @typedef {import('./replication/rules.js').LeftOut} LeftOut */

/** What each order of a sweep's runs means for drift (executor/sweep/sweep-plan.js builds them). */
const ORDER_MEANS = Object.freeze({
  shapes: 'each shape deployed once in a random order, its cells shuffled anew for every repeat',
  blocks: 'every repeat a block holding each cell once, shapes and cells shuffled per block'
})

async function readJson (file) {
  return JSON.parse(await readFile(file, 'utf8'))
}

/**
 * A sweep folder as read for a replication: its sweep.json, how many of its runs finished, the finished runs used
 * (valid, or all with --include-invalid) with their timelines and levels, and those left out as not valid.
 * @typedef {{ dir: string, sweep: any, finished: number, details: { detail: { run: any, timeline: any },
 *   level: string | null }[], leftOut: LeftOut[] }} SweepRead
 */

/**
 * The replication of a study by one or more sweep folders (a study's figures may need several experiments: findings
 * over instances, Table 5 over workloads). Every row is judged on the runs of all the sweeps given, pooled, so that no
 * folder's place among the arguments chooses a verdict; where the sweeps judged alone disagree, a note says so.
 * @param {string | string[]} dirs sweep folders (executor sweep's output)
 * @param {{ study: string, includeInvalid?: boolean }} opts
 */
export async function replicate (dirs, { study, includeInvalid = false }) {
  if (!STUDY_IDS.includes(study)) throw fail('VALUE_NOT_ALLOWED', { flag: '--study', value: study, allowed: STUDY_IDS })
  if (!ROWS[study]) throw fail('STUDY_NOT_BUILT', { study, built: Object.keys(ROWS) })
  const list = Array.isArray(dirs) ? dirs : [dirs]
  const read = []
  for (const dir of list) read.push(await readSweep(await sweepFolder(dir), study, includeInvalid))
  return judgeSweeps(study, read, { includeInvalid })
}

/** Sweeps in one order whatever the arguments' (by sweep id, then folder): what the rows are computed in. */
const canonical = (sweeps) => [...sweeps].sort((x, y) =>
  (x.sweep.id < y.sweep.id ? -1 : x.sweep.id > y.sweep.id ? 1 : x.dir < y.dir ? -1 : x.dir > y.dir ? 1 : 0))

/** The rows of a study over some sweeps' runs, pooled (each row tagged with nothing yet). */
async function rowsOf (study, sweeps, includeInvalid) {
  return ROWS[study]({
    dir: sweeps.map(s => s.dir),
    runs: sweeps.flatMap(s => s.details),
    leftOut: sweeps.flatMap(s => s.leftOut),
    includeInvalid
  })
}

/**
 * The replication of a study by sweeps already read: the rows from their runs pooled, in an order that does not
 * depend on theirs; each row names the sweeps that had runs for it; a note for each row on which the sweeps judged
 * alone reach different verdicts. The sweeps are listed in the order given.
 * @param {string} study
 * @param {SweepRead[]} sweeps
 * @param {{ includeInvalid?: boolean }} [opts]
 */
export async function judgeSweeps (study, sweeps, { includeInvalid = false } = {}) {
  const canon = canonical(sweeps)
  const pooled = await rowsOf(study, canon, includeInvalid)
  const alone = canon.length > 1 ? await Promise.all(canon.map(s => rowsOf(study, [s], includeInvalid))) : [pooled]
  const notes = []
  const rows = pooled.map(row => {
    const own = canon.map((s, i) => ({ id: s.sweep.id, row: alone[i].find(r => r.id === row.id) })).filter(x => x.row && !x.row.absent)
    const judged = own.filter(x => x.row.verdict !== 'not-comparable')
    if (new Set(judged.map(x => x.row.verdict)).size > 1) {
      notes.push(`${row.id}: the sweeps alone disagree (${judged.map(x => `${x.id} ${x.row.verdict}`).join(', ')}); the row pools their runs: ${row.verdict}`)
    }
    return { ...row, sweep: own.map(x => x.id).join(', ') || '-' }
  })
  const first = canon.find(s => s.details.length) ?? canon[0]
  const many = sweeps.length > 1
  // pooling assumes one machine: say so when the sweeps' runs say otherwise
  const machines = [...new Set(canon.filter(s => s.details.length).map(s => machineOf(s.details[0].detail.run)))]
  if (machines.length > 1) notes.push(`the sweeps ran on different machines (${machines.join('; ')}): their runs are pooled as if on one`)
  return {
    study,
    title: studies[study].title,
    reference: studies[study].file,
    sweeps: sweeps.map(({ sweep, details }) => ({
      id: sweep.id,
      experiment: sweep.experiment?.name ?? null,
      profile: sweep.experiment?.profile ?? null,
      runs: details.length,
      order: sweep.experiment?.order ?? null,
      seed: sweep.seed ?? null
    })),
    order: { says: sweeps.map(({ sweep }) => `${many ? `sweep ${sweep.id}: ` : ''}${orderSays(sweep)}`).join('; ') },
    environment: first.details[0]?.detail.run.environment ?? null,
    setup: studies[study].data.setup ?? null,
    // this machine beside the study's stated set-up, row by row (a sweep's first run's fingerprint; a sweep ran on one)
    fingerprint: first.details.length ? fingerprintRows(fingerprintOf(first.details[0].detail.run), studies[study].stated) : [],
    rows,
    counts: countVerdicts(rows),
    notes: [...sweeps.flatMap(s => sweepNotes(study, s).map(n => (many ? `sweep ${s.sweep.id}: ${n}` : n))), ...notes]
  }
}

/** A run's machine in a few words: its CPU model and cores. */
const machineOf = (run) => `${run.environment?.cpuModel ?? 'CPU not recorded'}, ${run.environment?.cpus ?? '?'} cores`

const countVerdicts = (rows) => Object.fromEntries(VERDICTS.map(v => [v, rows.filter(r => r.verdict === v).length]))

const orderSays = (sweep) => `runs in order ${sweep.experiment?.order} (${ORDER_MEANS[sweep.experiment?.order] ?? 'as planned'}), seed ${sweep.seed}: ` +
  'drift over time is spread over the strategies, not lined up with one'

/** What a sweep's own notes say: an experiment not the study's, runs left out as not valid. */
function sweepNotes (study, { sweep, finished, leftOut }) {
  const notes = []
  if (!studies[study].experiments.includes(sweep.experiment?.name)) {
    notes.push(`the sweep ran experiment "${sweep.experiment?.name}", not one of ${studies[study].experiments.join(', ')}: rows compare what it has`)
  }
  if (leftOut.length) {
    notes.push(`${leftOut.length} of ${finished} finished runs left out as not valid: ${leftOutCounts(leftOut)} ` +
      '(their flags in run.json; --include-invalid takes them)')
  }
  // the rules count each run as independent; repeats on one deployment share its effect, so their tests are too sure
  if (sweep.experiment?.order === 'shapes' && (sweep.experiment?.repeats ?? 1) > 1) {
    notes.push('the repeats of each shape ran on one deployment (order shapes): the tests count them as independent runs, so what ' +
      'varies from one deployment to the next is not in their p-values, which are then too small; order blocks deploys each repeat afresh')
  }
  return notes
}

/**
 * A sweep folder read for a replication.
 * @param {string} dir
 * @param {string} study
 * @param {boolean} includeInvalid
 * @returns {Promise<SweepRead>}
 */
async function readSweep (dir, study, includeInvalid) {
  let sweep
  try {
    sweep = await readJson(join(dir, SWEEP_FILE))
  } catch (err) {
    throw fail('NOT_A_SWEEP_FOLDER', { dir, file: SWEEP_FILE, why: err.code ?? err.message, experiment: studies[study].experiment })
  }
  const { runs } = await readRunList([dir])
  const mine = runs.filter(r => r.config?.sweep?.id === sweep.id && r.status === 'done')
  const used = mine.filter(r => includeInvalid || r.valid)
  const details = await Promise.all(used.map(async r => ({
    detail: { run: await readJson(r.file), timeline: await readJsonBounded(join(r.dir, RUN_FILES.timeline)).catch(() => null) },
    level: r.config.sweep.level ?? null
  })))
  /** @type {LeftOut[]} */
  const leftOut = mine.filter(r => !used.includes(r)).map(r => ({
    strategy: r.config.strategy,
    benchmark: r.config.benchmark,
    instances: r.config.instances,
    level: r.config.sweep.level ?? null,
    flags: r.invalidFlags
  }))
  return { dir, sweep, finished: mine.length, details, leftOut }
}
