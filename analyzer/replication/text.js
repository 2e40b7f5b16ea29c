// The human view of `analyzer replicate` (its --json carries the same data): the study and the sweep, the order of its
// runs, the study's stated set-up beside this machine, then one line per published figure with its verdict and why.
import { table } from '../text-table.js'
import { VERDICTS, VERDICT_MEANS } from './rules.js'

/** A value with its 95% interval, as `41.2 [39.0, 43.4]` (no interval from one run). */
export const withCi = (ci) => (ci ? `${ci.mean}${ci.lo === null ? '' : ` [${ci.lo}, ${ci.hi}]`}` : '-')

/** A number in a few significant digits (fits' coefficients, p values and their intervals come unrounded). */
const short = (v) => (typeof v === 'number' && Number.isFinite(v) ? String(Number(v.toPrecision(4))) : v ?? '-')

/** A record's fields as `key value` pairs, intervals written out (claims and conditions left to the why). */
const shortly = (o) => Object.entries(o).filter(([k]) => !['says', 'claim', 'conditions', 'group'].includes(k))
  .map(([k, v]) => `${k} ${v && typeof v === 'object' && 'mean' in v ? withCi(v) : Array.isArray(v) ? `[${v.map(short).join(', ')}]` : short(v)}`)
  .join('; ') || '-'

/** What a row shows of the published side and of ours, in a few words. */
function sides (row) {
  const p = row.published
  const o = row.ours
  if (p.direction) return [`${p.direction} (${p.a} vs ${p.b})`, `${withCi(o.a)} vs ${withCi(o.b)}`]
  if (p.says) return [p.says, o ? shortly(o) : '-']
  if (p.exists === undefined) return [shortly(p), o ? shortly(o) : '-']
  return [
    `${p.exists}; hi ${p.highest} lo ${p.lowest} diff ${p.difference} all ${p.overall}`,
    `${o.exists === null ? '-' : o.exists ? 'Yes' : 'No'}; hi ${withCi(o.highest)} lo ${withCi(o.lowest)} diff ` +
      `${withCi(o.difference)} all ${withCi(o.overall)} (${o.runs} runs)`
  ]
}

/** The hint the report prints above a replication's table. */
export const REPLICATION_HINT = 'One row per published figure or finding: the study\'s value beside ours (95% interval over the repeats), ' +
  'the effect the study printed beside the one measured, judged by the rule named (what survives a change of machine: yes/no, ' +
  'directions by Welch\'s one-sided t-test, "no rise" by ruling out a rise over a stated margin, model tests) on the runs ' +
  'of every sweep given, pooled.'

/** What each verdict means, one line each: `reproduced: positive evidence ...`. */
export const verdictMeanings = () => VERDICTS.map(v => `${v}: ${VERDICT_MEANS[v]}`)

/** A row's effect: the study's beside ours. */
const effectOf = (row) => [row.effect?.published ?? '-', row.effect?.here ?? '-']

/**
 * A replication's rows as a table of the report (analyzer/report/report-tables.js's shape): figure, source, published,
 * here,
 * effect (published, here), verdict, why, and the sweeps that had runs for it when several were given.
 * @param {any} r replicate()'s result
 * @returns {{ header: string[], rows: string[][] }}
 */
export function replicationTable (r) {
  const many = r.sweeps.length > 1
  return {
    header: ['figure', 'source', 'published', 'here', 'effect published', 'effect here', 'verdict', 'why', ...(many ? ['sweep'] : [])],
    rows: r.rows.map(row => [row.id, row.source.where, ...sides(row), ...effectOf(row), row.verdict, row.why, ...(many ? [row.sweep] : [])])
  }
}

/**
 * @param {any} r replicate()'s result
 * @returns {string}
 */
export function formatReplication (r) {
  const lines = [
    `replication of ${r.title}`,
    `  reference: ${r.reference}; ` +
      `${r.sweeps.map(sw => `sweep ${sw.id} (${sw.experiment}${sw.profile ? `, profile ${sw.profile}` : ''}), ${sw.runs} runs`).join('; ')}`,
    `  order: ${r.order.says}`,
    '',
    'this machine beside the study (≠ differs, = agrees, ? not said or not comparable):',
    table(['', 'what', 'here', 'the study'], r.fingerprint.map(f => [
      f.differs === true ? '≠' : f.differs === false ? '=' : '?', f.label, f.ours,
      f.theirs + (f.why ? ` (${f.why})` : '')
    ]), { indent: '  ' }),
    '',
    'the study\'s set-up, as it states it:'
  ]
  for (const item of Object.values(r.setup ?? {})) lines.push(`  ${item.label}: ${item.value}`)
  const many = r.sweeps.length > 1
  lines.push('', table(['figure', 'source', 'published', 'here', 'effect published', 'effect here', 'verdict', ...(many ? ['sweeps'] : [])],
    r.rows.map(row => [row.id, row.source.where, ...sides(row), ...effectOf(row), row.verdict, ...(many ? [row.sweep] : [])])))
  lines.push('', 'why:')
  for (const row of r.rows) lines.push(`  ${row.id}: ${row.why}`)
  lines.push('', `rules: ${[...new Set(r.rows.map(row => row.rule))].join('; ')}`)
  lines.push(`verdicts: ${Object.entries(r.counts).map(([k, n]) => `${n} ${k}`).join(', ')}`)
  for (const meaning of verdictMeanings()) lines.push(`  ${meaning}`)
  for (const note of r.notes) lines.push(`note: ${note}`)
  return lines.join('\n')
}
