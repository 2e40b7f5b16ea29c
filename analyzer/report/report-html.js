// The report as one self-contained HTML file: inline CSS, inline SVG charts, no script and nothing fetched at view
// time.
import {
  fitsTable, verdictLines, pointsTable, fitNote, cpuTableOf, environmentTable, runsTable, overviewLine, cellText, correlationsTable,
  correlationNotes, CORRELATIONS_HINT, pairsTable, PAIRS_HINT, searchesTable, SEARCHES_HINT, bendsTable, BENDS_HINT
} from './report-tables.js'
import { excludedLine } from '../run-validity.js'
import { perCoreWhy } from '../diagnosis/why-bends.js'
import { replicationTable, REPLICATION_HINT, verdictMeanings } from '../replication/text.js'
import { looksTable, questionText, ADAPTIVE_HINT, adaptiveVerdict } from '../stats/adaptive-text.js'

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
/** Text for HTML content and attribute values. */
export const esc = v => String(v ?? '').replace(/[&<>"']/g, c => ESCAPES[c])

const BODY_FONT = '14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
const CSS = `
:root { color-scheme: light; --ink: #1d1d1f; --muted: #5f6368; --line: #dadce0; --bad: #b3261e; --soft: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 60px; font: ${BODY_FONT}; color: var(--ink); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; }
p.meta, p.hint { color: var(--muted); margin: 2px 0; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; }
tr.failed td, tr.interrupted td, tr.running td { color: var(--bad); }
tr.degraded td, tr.invalid td { color: #8a5a00; }
tr.verdict-not-reproduced td { color: var(--bad); }
tr.verdict-not-comparable td { color: var(--muted); }
tr.verdict-inconclusive td { font-style: italic; }
ul.verdicts { padding-left: 18px; margin: 6px 0; }
ul.verdicts li.nofit { color: var(--muted); }
.note { background: #fff8e1; border-left: 3px solid #f9a825; padding: 6px 10px; margin: 8px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; }
details { margin: 4px 0 10px; }
summary { cursor: pointer; color: var(--muted); }
`

/**
 * A table of report-tables cells; numeric-looking cells align right, figures stay in data attributes.
 * @param {import('./report-tables.js').Table} t
 * @param {{ cls?: string, rowClass?: (i: number) => string }} [opts]
 */
function htmlTable (t, { cls = '', rowClass = () => '' } = {}) {
  const cell = c => {
    const text = cellText(c)
    const numeric = /^[-+]?[\d,.]+(e[-+]?\d+)?%?( \[.*\])?( \(.*\))?$/.test(text)
    const data = typeof c === 'string'
      ? ''
      : (c.value !== undefined && c.value !== null ? ` data-value="${c.value}"` : '') +
        (c.ci ? ` data-ci="${c.ci.map(v => (v === null ? 'open' : v)).join(',')}"` : '')
    return `<td${numeric ? ' class="num"' : ''}${data}>${esc(text)}</td>`
  }
  return `<table${cls ? ` class="${cls}"` : ''}><thead><tr>${t.header.map(h => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
    t.rows.map((r, i) => `<tr${rowClass(i) ? ` class="${esc(rowClass(i))}"` : ''}>${r.map(cell).join('')}</tr>`).join('') + '</tbody></table>'
}

const figure = (svg, name) => (svg ? `<figure data-chart="${esc(name)}">${svg}</figure>` : '')
const noteBox = text => `<p class="note">${esc(text)}</p>`

/** How a fit's intervals were made (intervalKind in analyzer/fit/fit-verdict.js), in words. */
const INTERVAL_WORDS = {
  profile: 'profile likelihood on log throughput (calibrated: docs/STATISTICS.md)',
  bootstrap: 'residual bootstrap (not calibrated)',
  t: 't (Jacobian; not calibrated)'
}

function fitsSection (report, charts) {
  const out = ['<section id="fits"><h2>Scalability fits: σ, λ and N* per group</h2>']
  if (!report.comparison) {
    out.push(noteBox('no group has points to fit'), '</section>')
    return out.join('')
  }
  out.push(htmlTable(fitsTable(report), { cls: 'fits' }))
  out.push('<p class="hint">USL: X(N) = γN / (1 + σ(N−1) + λN(N−1)); Amdahl: λ = 0. N* = √((1−σ)/λ) is where USL throughput peaks. ' +
    `Intervals: ${INTERVAL_WORDS[report.comparison.rows.find(r => r.intervals)?.intervals ?? 'profile']} 95%. ` +
    'A group with too few points for USL (4 distinct N) is fitted with Amdahl (3).</p>')
  const v = verdictLines(report)
  out.push('<ul class="verdicts">' + v.rows.map(r => `<li${r.fitted ? '' : ' class="nofit"'}>${esc(r.line)}</li>`).join('') + '</ul>')
  const excluded = report.groups.filter(g => excludedLine(g)).map(g => `${g.name}: ${excludedLine(g)}`)
  if (excluded.length) out.push('<ul class="verdicts excluded">' + excluded.map(l => `<li>${esc(l)}</li>`).join('') + '</ul>')
  if (report.comparison.pairs?.length) {
    out.push('<h3>Tests between groups</h3>', `<p class="hint">${esc(PAIRS_HINT)}</p>`, htmlTable(pairsTable(report.comparison), { cls: 'pairs' }))
  }
  out.push('<h3>Fitted curves</h3><div class="charts">')
  for (const g of report.groups) {
    const note = fitNote(g)
    out.push(note ? `<div class="nofit">${noteBox(note)}</div>` : figure(charts.fits.get(g.name), `fit:${g.name}`))
  }
  out.push('</div>')
  for (const g of report.groups) {
    const beyond = g.peaks.filter(p => !p.inChart)
      .map(p => `${p.model === 'usl' ? 'USL' : 'Amdahl'} N* = ${p.nStar.toFixed(1)} ${g.unit} lies beyond the chart (more than twice the largest N measured)`)
    if (beyond.length) out.push(`<p class="hint">${esc(g.name)}: ${esc(beyond.join('; '))}</p>`)
  }
  out.push('</section>')
  return out.join('')
}

function pointsSection (report, charts) {
  const out = ['<section id="points"><h2>Throughput and latency vs N</h2>']
  if (!report.groups.length) return out.join('') + noteBox('no finished runs: nothing to plot') + '</section>'
  out.push(`<div class="charts">${figure(charts.throughput, 'throughput')}${figure(charts.latency, 'latency')}` +
    `${figure(charts.clusterCpu, 'cluster-cpu')}</div>`)
  if (!charts.latency) out.push('<p class="hint">no latency in these points (a CSV carries throughput only)</p>')
  for (const g of report.groups) {
    out.push(`<details><summary>${esc(g.name)}: ${g.points.length} points from ${g.runsUsed} runs (N = ${esc(g.unit)})</summary>`)
    out.push(htmlTable(pointsTable(g), { cls: 'points' }))
    for (const n of g.notes) out.push(`<p class="hint">note: ${esc(n)}</p>`)
    out.push('</details>')
  }
  out.push('</section>')
  return out.join('')
}

function replicationSections (report) {
  return (report.replications ?? []).map(r => `<section class="replication"><h2>Replication: ${esc(r.title)}</h2>` +
    `<p class="hint">Reference ${esc(r.reference)}; ${esc(r.order.says)}.</p><p class="hint">${esc(REPLICATION_HINT)}</p>` +
    htmlTable(replicationTable(r), { cls: 'replication', rowClass: i => `verdict-${r.rows[i].verdict}` }) +
    `<p>Verdicts: ${esc(Object.entries(r.counts).map(([k, n]) => `${n} ${k}`).join(', '))}.</p>` +
    `<ul class="verdicts">${verdictMeanings().map(m => `<li>${esc(m)}</li>`).join('')}</ul>` +
    r.notes.map(n => `<p class="hint">note: ${esc(n)}</p>`).join('') + '</section>').join('')
}

function correlationsSection (report) {
  const c = report.correlations
  if (!c) return ''
  return '<section id="correlations"><h2>Correlations: nodes and instances vs throughput</h2>' +
    `<p class="hint">${esc(CORRELATIONS_HINT)}</p>` + htmlTable(correlationsTable(c), { cls: 'correlations' }) +
    correlationNotes(c).map(n => `<p class="hint">${esc(n)}</p>`).join('') + '</section>'
}

function bendsSection (report, charts) {
  const bends = (report.comparison?.bends ?? []).filter(b => b.kind)
  if (!bends.length) return ''
  return '<section id="why"><h2>Why the curves bend</h2>' + '<ul class="verdicts">' + bends.map(b => `<li>${esc(b.sentence)}</li>`).join('') + '</ul>' +
    `<p class="hint">${esc(BENDS_HINT)}</p>` + htmlTable(bendsTable(bends), { cls: 'bends' }) +
    `<div class="charts">${figure(charts.roles, 'roles')}</div></section>`
}

function searchesSection (report) {
  if (!report.searches.length) return ''
  return '<section id="capacity"><h2>Capacity searches</h2>' + `<p class="hint">${esc(SEARCHES_HINT)}</p>` +
    htmlTable(searchesTable(report), { cls: 'searches', rowClass: i => (report.searches[i].confirmed ? '' : 'invalid') }) + '</section>'
}

function adaptiveSections (report, charts) {
  return (report.adaptive ?? []).map((a, i) => `<section id="adaptive-${i + 1}"><h2>Adaptive experiment: ${esc(questionText(a.question))}</h2>` +
    `<p class="hint">${esc(ADAPTIVE_HINT)}</p>` + htmlTable(looksTable(a), { cls: 'looks' }) +
    `<ul class="verdicts"><li>${esc(adaptiveVerdict(a))}</li></ul>` +
    `<div class="charts">${figure(charts.adaptive?.[i], 'adaptive')}</div></section>`).join('\n')
}

function cpuSection (report, charts) {
  const out = ['<section id="cpu"><h2>Per-core CPU</h2>']
  if (!report.cpu.length) return out.join('') + noteBox('no per-core CPU in these runs (run.json cpu is missing or the runs did not finish)') + '</section>'
  out.push('<p class="hint">The server\'s own CPU per core over the steady window (% of one core), as in the ' +
    'multi-core study: the busiest and the idlest core, their difference, and the mean over all cores; averaged over ' +
    'repeats.</p>')
  out.push(htmlTable(cpuTableOf(report), { cls: 'cpu' }))
  const why = report.cpu.map(perCoreWhy).filter(Boolean)
  if (why.length) out.push('<ul class="verdicts">' + why.map(w => `<li>${esc(w)}</li>`).join('') + '</ul>')
  out.push(`<div class="charts">${figure(charts.cpu, 'cpu')}</div></section>`)
  return out.join('')
}

function environmentSection (report) {
  if (!report.environments.length) return '<section id="environment"><h2>Environment</h2>' + noteBox('no run recorded its environment') + '</section>'
  return '<section id="environment"><h2>Environment</h2>' + htmlTable(environmentTable(report), { cls: 'environment' }) + '</section>'
}

function runsSection (report) {
  const t = runsTable(report)
  const failed = report.runs.filter(r => r.status !== 'done').length
  const invalid = report.runs.filter(r => r.status === 'done' && !r.valid).length
  return `<section id="runs"><h2>Runs</h2><p class="hint">${report.runs.length} runs` +
    `${failed ? `, ${failed} not finished${report.status.degraded ? ' or degraded (a node lost)' : ''} (reason in the last column)` : ''}` +
    `${invalid ? `, ${invalid} finished but flagged invalid (why in the last column)` : ''}; ` +
    'only finished, valid runs are points unless --include-invalid.</p>' +
    htmlTable(t, { cls: 'runs', rowClass: i => report.runs[i].status }) + '</section>'
}

/**
 * The whole report page.
 * @param {import('./report.js').Report} report
 * @param {Awaited<ReturnType<typeof import('./report-charts.js').renderCharts>>} charts
 */
export function renderHtml (report, charts) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="nodescale analyzer report">
<title>${esc(report.title)}</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>${esc(report.title)}</h1>
<p class="meta">${esc(overviewLine(report))}</p>
<p class="meta">generated ${esc(report.generatedAt)} from ${report.sources.map(s => `<code>${esc(s)}</code>`).join(', ')}</p>
${report.notes.map(noteBox).join('\n')}
</header>
${fitsSection(report, charts)}
${pointsSection(report, charts)}
${bendsSection(report, charts)}
${searchesSection(report)}
${adaptiveSections(report, charts)}
${correlationsSection(report)}
${replicationSections(report)}
${cpuSection(report, charts)}
${environmentSection(report)}
${runsSection(report)}
</body>
</html>
`
}
