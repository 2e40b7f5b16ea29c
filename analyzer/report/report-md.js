// The report as Markdown for a terminal or a CI summary: the same tables and verdicts as the HTML, no charts.
import {
  fitsTable, verdictLines, pointsTable, fitNote, cpuTableOf, environmentTable, runsTable, overviewLine, cellText, correlationsTable,
  correlationNotes, CORRELATIONS_HINT, pairsTable, PAIRS_HINT, searchesTable, SEARCHES_HINT, bendsTable, BENDS_HINT
} from './report-tables.js'
import { excludedLine } from '../run-validity.js'
import { perCoreWhy } from '../diagnosis/why-bends.js'
import { replicationTable, REPLICATION_HINT, verdictMeanings } from '../replication/text.js'
import { looksTable, questionText, ADAPTIVE_HINT, adaptiveVerdict } from '../stats/adaptive-text.js'

const mdCell = c => cellText(c).replace(/\|/g, '\\|').replace(/\n/g, ' ') || ' '

/** A GitHub-flavoured Markdown table. */
export function mdTable (/** @type {import('./report-tables.js').Table} */ t) {
  return [
    `| ${t.header.map(mdCell).join(' | ')} |`,
    `|${t.header.map(() => ' --- ').join('|')}|`,
    ...t.rows.map(r => `| ${r.map(mdCell).join(' | ')} |`)
  ].join('\n')
}

/**
 * @param {import('./report.js').Report} report
 * @returns {string}
 */
export function renderMarkdown (report) {
  const out = [`# ${report.title}`, '', overviewLine(report), '']
  for (const n of report.notes) out.push(`> ${n}`, '')
  out.push('## Scalability fits', '')
  if (report.comparison) {
    out.push(mdTable(fitsTable(report)), '')
    const v = verdictLines(report)
    out.push(...v.rows.map(r => `- ${r.line}`), '')
    const excluded = report.groups.filter(g => excludedLine(g)).map(g => `- ${g.name}: ${excludedLine(g)}`)
    if (excluded.length) out.push(...excluded, '')
    if (report.comparison.pairs?.length) out.push('### Tests between groups', '', PAIRS_HINT, '', mdTable(pairsTable(report.comparison)), '')
    for (const g of report.groups) {
      const note = fitNote(g)
      if (note) out.push(`> ${note}`, '')
    }
  } else {
    out.push('> no group has points to fit', '')
  }
  if (report.groups.length) {
    out.push('## Points', '')
    for (const g of report.groups) {
      out.push(`### ${g.name}`, '', `${g.points.length} points from ${g.runsUsed} runs (N = ${g.unit})`, '', mdTable(pointsTable(g)), '')
      for (const n of g.notes) out.push(`- note: ${n}`)
      if (g.notes.length) out.push('')
    }
  }
  const bends = (report.comparison?.bends ?? []).filter(b => b.kind)
  if (bends.length) out.push('## Why the curves bend', '', ...bends.map(b => `- ${b.sentence}`), '', BENDS_HINT, '', mdTable(bendsTable(bends)), '')
  if (report.searches.length) out.push('## Capacity searches', '', SEARCHES_HINT, '', mdTable(searchesTable(report)), '')
  for (const a of report.adaptive ?? []) {
    out.push(`## Adaptive experiment: ${questionText(a.question)}`, '', ADAPTIVE_HINT, '', mdTable(looksTable(a)), '', `- ${adaptiveVerdict(a)}`, '')
  }
  if (report.correlations) {
    out.push('## Correlations', '', CORRELATIONS_HINT, '', mdTable(correlationsTable(report.correlations)), '')
    const notes = correlationNotes(report.correlations)
    if (notes.length) out.push(...notes.map(n => `- ${n}`), '')
  }
  for (const r of report.replications ?? []) {
    out.push(`## Replication: ${r.title}`, '', `Reference ${r.reference}; ${r.order.says}.`, '', REPLICATION_HINT, '', mdTable(replicationTable(r)), '',
      `Verdicts: ${Object.entries(r.counts).map(([k, n]) => `${n} ${k}`).join(', ')}.`, '', ...verdictMeanings().map(m => `- ${m}`), '',
      ...r.notes.map(n => `- note: ${n}`), '')
  }
  out.push('## Per-core CPU', '')
  out.push(report.cpu.length ? mdTable(cpuTableOf(report)) : '> no per-core CPU in these runs', '')
  const why = report.cpu.map(perCoreWhy).filter(Boolean)
  if (why.length) out.push(...why.map(w => `- ${w}`), '')
  out.push('## Environment', '')
  out.push(report.environments.length ? mdTable(environmentTable(report)) : '> no run recorded its environment', '')
  out.push('## Runs', '')
  const notDone = report.runs.filter(r => r.status !== 'done')
  if (notDone.length) {
    const degraded = notDone.some(r => r.status === 'degraded')
    out.push(`${notDone.length} of ${report.runs.length} runs did not finish${degraded ? ' or were degraded (a node lost: not points)' : ''}:`, '')
    out.push(...notDone.map(r => `- ${r.id}: ${r.status}${r.reason ? ` (${r.reason})` : ''}`), '')
  }
  out.push(report.runs.length ? mdTable(runsTable(report)) : '> no run.json found (points from CSV only)', '')
  return out.join('\n')
}
