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

/**
 * Each study's rows from its sweep: the folder (for fits), its finished runs with their timelines and levels.
 * @type {Readonly<Record<string, (input: { dir: string, runs: any[], includeInvalid: boolean }) => any[] |
 *   Promise<any[]>>>}
 */
const ROWS = Object.freeze({
  multicore: ({ runs }) => multicoreRows(runs),
  'ibench-smisn': ibenchSmisnRows,
  'ibench-mimn': ibenchMimnRows
})

/** What each order of a sweep's runs means for drift (executor/sweep-plan.js builds them). */
const ORDER_MEANS = Object.freeze({
  shapes: 'each shape deployed once in a random order, its cells shuffled anew for every repeat',
  blocks: 'every repeat a block holding each cell once, shapes and cells shuffled per block'
})

async function readJson (file) {
  return JSON.parse(await readFile(file, 'utf8'))
}

/**
 * The replication of a study by a sweep folder.
 * @param {string} dir a sweep folder (executor sweep's output)
 * @param {{ study: string, includeInvalid?: boolean }} opts
 */
export async function replicate (dir, { study, includeInvalid = false }) {
  if (!STUDY_IDS.includes(study)) throw new NsError('NS_ERR_BAD_FLAG', `--study: "${study}" is not allowed; one of: ${STUDY_IDS.join(', ')}`)
  if (!ROWS[study]) throw new NsError('NS_ERR_BAD_FLAG', `--study ${study}: its comparison rules are not built yet; one of: ${Object.keys(ROWS).join(', ')}`)
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
  const rows = await ROWS[study]({ dir, runs: details, includeInvalid })
  const counts = Object.fromEntries(VERDICTS.map(v => [v, rows.filter(r => r.verdict === v).length]))
  const notes = []
  if (!studies[study].experiments.includes(sweep.experiment?.name)) notes.push(`the sweep ran experiment "${sweep.experiment?.name}", not one of ${studies[study].experiments.join(', ')}: rows compare what it has`)
  if (mine.length > used.length) notes.push(`${mine.length - used.length} of ${mine.length} finished runs left out as not valid (their flags in run.json; --include-invalid takes them)`)
  return {
    study,
    title: studies[study].title,
    reference: studies[study].file,
    sweep: { id: sweep.id, experiment: sweep.experiment?.name ?? null, profile: sweep.experiment?.profile ?? null, runs: used.length },
    order: {
      order: sweep.experiment?.order ?? null,
      seed: sweep.seed ?? null,
      says: `runs in order ${sweep.experiment?.order} (${ORDER_MEANS[sweep.experiment?.order] ?? 'as planned'}), seed ${sweep.seed}: drift over time is spread over the strategies, not lined up with one`
    },
    environment: details[0]?.detail.run.environment ?? null,
    setup: studies[study].data.setup ?? null,
    // this machine beside the study's stated set-up, row by row (the first run's fingerprint; the sweep ran on one)
    fingerprint: details.length ? fingerprintRows(fingerprintOf(details[0].detail.run), studies[study].stated) : [],
    rows,
    counts,
    notes
  }
}
