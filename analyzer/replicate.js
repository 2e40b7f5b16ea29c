// `analyzer replicate`: a finished sweep of one of the studies nodescale reproduces, set row by row beside the study's
// published figures (analyzer/replication/published.js), each row with the rule it was compared by and a verdict;
// with the sweep's order of runs and this machine's fingerprint beside the study's stated set-up.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { NsError } from '../lib/errors.js'
import { RUN_FILES, SWEEP_FILE } from '../lib/run-files.js'
import { readRunList } from './report-runs.js'
import { studies, STUDY_IDS } from './replication/published.js'
import { multicoreRows } from './replication/multicore.js'
import { ibenchSmisnRows } from './replication/ibench-smisn.js'
import { ibenchMimnRows } from './replication/ibench-mimn.js'
import { VERDICTS } from './replication/rules.js'
import { fingerprintOf, fingerprintRows } from './fingerprint.js'
import { leftOutCounts } from './replication/rules.js'

/**
 * Each study's rows from its sweep: the folder (for fits), its finished runs with their timelines and levels, and the
 * finished runs left out as not valid (strategy, level, flags), so a row without runs can say why it has none.
 * @type {Readonly<Record<string, (input: { dir: string, runs: any[], leftOut: LeftOut[], includeInvalid: boolean })
 *   => any[] | Promise<any[]>>>}
 */
const ROWS = Object.freeze({
  multicore: ({ runs, leftOut }) => multicoreRows(runs, leftOut),
  'ibench-smisn': ibenchSmisnRows,
  'ibench-mimn': ibenchMimnRows
})

/** @typedef {import('./replication/rules.js').LeftOut} LeftOut */

/** What each order of a sweep's runs means for drift (executor/sweep-plan.js builds them). */
const ORDER_MEANS = Object.freeze({
  shapes: 'each shape deployed once in a random order, its cells shuffled anew for every repeat',
  blocks: 'every repeat a block holding each cell once, shapes and cells shuffled per block'
})

async function readJson (file) {
  return JSON.parse(await readFile(file, 'utf8'))
}

/**
 * The replication of a study by one or more sweep folders (a study's figures may need several experiments: findings
 * over instances, Table 5 over workloads). Each row is judged by the first sweep that can judge it (the others'
 * verdicts on it, where they differ, are said in a note); a row none can judge gives the reason of a sweep that had
 * runs for it (a row marked absent: the sweep had none of what it needs).
 * @param {string | string[]} dirs sweep folders (executor sweep's output)
 * @param {{ study: string, includeInvalid?: boolean }} opts
 */
export async function replicate (dirs, { study, includeInvalid = false }) {
  if (!STUDY_IDS.includes(study)) throw new NsError('NS_ERR_BAD_FLAG', `--study: "${study}" is not allowed; one of: ${STUDY_IDS.join(', ')}`)
  if (!ROWS[study]) throw new NsError('NS_ERR_BAD_FLAG', `--study ${study}: its comparison rules are not built yet; one of: ${Object.keys(ROWS).join(', ')}`)
  const list = Array.isArray(dirs) ? dirs : [dirs]
  const each = []
  for (const dir of list) each.push(await replicateOne(dir, study, includeInvalid))
  return each.length === 1 ? each[0] : merged(each)
}

/**
 * Several sweeps' replications of one study as one: each row from the first sweep that could judge it.
 * @param {any[]} each replicateOne's results, in the order given
 */
function merged (each) {
  const notes = []
  // every row any sweep has, in the order they first appear (a sweep of another app adds its own rows)
  const ids = [...new Set(each.flatMap(r => r.rows.map(row => row.id)))]
  const rows = ids.map(id => {
    const all = each.map(r => r.rows.find(row => row.id === id)).filter(Boolean)
    // a verdict first; else the reason of a sweep that had something for the row, not one that had none of it (absent)
    const chosen = all.find(row => row.verdict !== 'not-comparable') ?? all.find(row => !row.absent) ?? all[0]
    const others = all.filter(row => row !== chosen && row.verdict !== 'not-comparable' && row.verdict !== chosen.verdict)
    if (others.length) notes.push(`${id}: shown from sweep ${chosen.sweep} (${chosen.verdict}); sweep ${others.map(o => `${o.sweep} says ${o.verdict}`).join(', ')}`)
    return chosen
  })
  const withRuns = each.find(r => r.fingerprint.length) ?? each[0]
  return {
    ...withRuns,
    sweeps: each.flatMap(r => r.sweeps),
    order: { says: each.map(r => `sweep ${r.sweeps[0].id}: ${r.order.says}`).join('; ') },
    rows,
    counts: countVerdicts(rows),
    notes: [...each.flatMap(r => r.notes.map(n => `sweep ${r.sweeps[0].id}: ${n}`)), ...notes]
  }
}

const countVerdicts = (rows) => Object.fromEntries(VERDICTS.map(v => [v, rows.filter(r => r.verdict === v).length]))

/**
 * The replication of a study by one sweep folder.
 * @param {string} dir
 * @param {string} study
 * @param {boolean} includeInvalid
 */
async function replicateOne (dir, study, includeInvalid) {
  let sweep
  try {
    sweep = await readJson(join(dir, SWEEP_FILE))
  } catch (err) {
    throw new NsError('NS_ERR_BAD_FILE', `${dir}: not a sweep folder (no readable ${SWEEP_FILE}: ${err.code ?? err.message})`, { hint: `executor sweep ${studies[study].experiment} makes one` })
  }
  const { runs } = await readRunList([dir])
  const mine = runs.filter(r => r.config?.sweep?.id === sweep.id && r.status === 'done')
  const used = mine.filter(r => includeInvalid || r.valid)
  const details = await Promise.all(used.map(async r => ({
    detail: { run: await readJson(r.file), timeline: await readJson(join(r.dir, RUN_FILES.timeline)).catch(() => null) },
    level: r.config.sweep.level ?? null
  })))
  /** @type {LeftOut[]} */
  const leftOut = mine.filter(r => !used.includes(r)).map(r => ({ strategy: r.config.strategy, benchmark: r.config.benchmark, instances: r.config.instances, level: r.config.sweep.level ?? null, flags: r.invalidFlags }))
  const rows = (await ROWS[study]({ dir, runs: details, leftOut, includeInvalid })).map(row => ({ ...row, sweep: sweep.id }))
  const notes = []
  if (!studies[study].experiments.includes(sweep.experiment?.name)) notes.push(`the sweep ran experiment "${sweep.experiment?.name}", not one of ${studies[study].experiments.join(', ')}: rows compare what it has`)
  if (leftOut.length) notes.push(`${leftOut.length} of ${mine.length} finished runs left out as not valid: ${leftOutCounts(leftOut)} (their flags in run.json; --include-invalid takes them)`)
  return {
    study,
    title: studies[study].title,
    reference: studies[study].file,
    sweeps: [{ id: sweep.id, experiment: sweep.experiment?.name ?? null, profile: sweep.experiment?.profile ?? null, runs: used.length, order: sweep.experiment?.order ?? null, seed: sweep.seed ?? null }],
    order: {
      says: `runs in order ${sweep.experiment?.order} (${ORDER_MEANS[sweep.experiment?.order] ?? 'as planned'}), seed ${sweep.seed}: drift over time is spread over the strategies, not lined up with one`
    },
    environment: details[0]?.detail.run.environment ?? null,
    setup: studies[study].data.setup ?? null,
    // this machine beside the study's stated set-up, row by row (the first run's fingerprint; the sweep ran on one)
    fingerprint: details.length ? fingerprintRows(fingerprintOf(details[0].detail.run), studies[study].stated) : [],
    rows,
    counts: countVerdicts(rows),
    notes
  }
}
