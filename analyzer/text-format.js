// Human views of the analyzer's results: aligned tables over exactly the data --json prints.
import { table } from './text-table.js'
import { human, printedInterval } from './fit/fit-verdict.js'
import { correlationsTable, correlationNotes, cellText, pairLines } from './report/report-tables.js'
import { excludedLine } from './run-validity.js'
import { kindText } from './diagnosis/why-bends.js'
import { microText } from './samples/micro-latency.js'

const ms = v => (v === null || v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1))
const MICROS_SAID = 'the driver\'s own clock (latency.json\'s µs histograms, within 0.1%); the JTL\'s whole ms are in --json\'s latency'
const pct = v => `${(v * 100).toFixed(2)}%`
const ci = iv => (iv ? `[${human(iv[0])}, ${iv[1] === null ? 'open' : human(iv[1])}]` : '-')

/** @param {Awaited<ReturnType<typeof import('./samples/summary.js').summarize>>} s */
export function formatSummary (s) {
  const lines = [`${s.file}: ${s.rows.toLocaleString('en')} rows` +
    (s.header?.assumed ? ' (no header line: JMeter\'s default columns assumed)' : '') +
    (s.outsideWindow ? `, ${s.outsideWindow} outside the window` : '')]
  if (s.source === 'histogram') {
    lines.push('the run kept no samples file (--samples none): these figures, per label and in total, come from its latency ' +
      'histograms, built from every row as it was written')
  }
  // a group's latency from the driver's µs histograms where the run kept them for exactly its samples (each cell with
  // its unit), else the JTL's whole ms (in ms columns when no group has µs)
  const groups = Object.entries(s.labels)
  const fine = groups.filter(([, x]) => x.latencyUs).length
  const keys = ['mean', 'p50', 'p90', 'p95', 'p99', 'max']
  const latencyCells = (x) => x.latencyUs ? keys.map(k => microText(x.latencyUs[k])) : keys.map(k => `${ms(x.latency[k])}${fine ? ' ms' : ''}`)
  const row = (name, x) => [name, x.requests.toLocaleString('en'), x.errors.toLocaleString('en'), pct(x.errorRate), human(x.throughput),
    ...latencyCells(x)]
  const rows = groups.map(([name, x]) => row(name, x))
  if (rows.length !== 1) rows.push(row('TOTAL', s.total))
  lines.push('', table(['label', 'requests', 'errors', 'error %', 'req/s', fine ? 'mean' : 'mean ms', ...keys.slice(1)], rows))
  lines.push(fine
    ? `latency in µs below 10 ms: ${MICROS_SAID}${fine < groups.length ? ` (${fine} of ${groups.length} labels; the others in the JTL's whole ms)` : ''}`
    : 'latency in the JTL\'s whole ms (JMeter\'s definition): the run kept no µs histograms for these samples')
  if (s.malformed.count) {
    lines.push('', `${s.malformed.count} malformed row${s.malformed.count > 1 ? 's' : ''} skipped, e.g.:`)
    for (const e of s.malformed.examples) lines.push(`  line ${e.line}: ${e.reason}${e.text ? `: ${JSON.stringify(e.text.slice(0, 100))}` : ''}`)
  }
  return lines.join('\n')
}

/** The change point's interval: open below if the ceiling may hold from the first N, above if it may be unreached. */
const changeCi = iv => (iv ? `[${iv[0] === null ? 'first N' : human(iv[0])}, ${iv[1] === null ? 'open' : human(iv[1])}]` : '-')

/** A term's interval, or that the N measured cannot identify it (its one-sided bound beside). */
function termCell (f, name) {
  const iv = printedInterval(f, name)
  if (iv || f.weighting !== 'relative') return `${human(f[name])} ${ci(iv)}`
  const bound = f.bound95?.[name]
  return `${human(f[name])} ${bound === null || bound === undefined ? '[not identifiable]' : `[≤ ${human(bound)}: not identifiable]`}`
}

function paramRows (fits) {
  const rows = Object.entries(fits).filter(([, f]) => !f.error).map(([m, f]) => {
    const pick = name => printedInterval(f, name)
    return [
      m,
      termCell(f, 'sigma'),
      m === 'amdahl' ? '-' : termCell(f, 'lambda'),
      `${human(f.gamma)} ${ci(pick('gamma'))}`,
      f.nStar === null ? '-' : `${human(f.nStar)} ${ci(pick('nStar'))}`,
      f.xStar !== null ? human(f.xStar) : f.ceiling !== null ? `${human(f.ceiling)} ${ci(pick('ceiling'))} (ceiling)` : '-',
      f.r2 === null ? '-' : f.r2.toFixed(4),
      f.choice?.aicc?.[m] === null || f.choice?.aicc?.[m] === undefined ? '-' : f.choice.aicc[m].toFixed(1)
    ]
  })
  // linear up to a ceiling (the same for every model fitted): its change point in the N* column, C in the next
  const c = Object.values(fits).find(f => !f.error && f.ceilingFit)?.ceilingFit
  const any = Object.values(fits).find(f => !f.error)
  if (c) {
    rows.push(['ceiling', '-', '-', human(c.gamma), `${human(c.changePoint)} ${changeCi(c.ci95?.changePoint)} (change)`,
      `${human(c.ceiling)} ${ci(c.ci95?.ceiling ?? null)} (ceiling)`, '-', c.aicc === null ? '-' : c.aicc.toFixed(1)])
  }
  return { rows, scale: any?.weighting === 'relative' ? 'log' : 'throughput' }
}

/** @param {Awaited<ReturnType<typeof import('./compare.js').fitSources>>} r */
export function formatFit (r) {
  const out = []
  for (const g of r.groups) {
    const runs = g.points.reduce((a, p) => a + (p.count ?? 1), 0)
    out.push(`${g.name}  (N = ${g.unit}; ${g.points.length} points from ${runs} ${runs === g.points.length ? 'rows' : 'runs'})`)
    const fitted = Object.entries(g.fits).filter(([, f]) => !f.error)
    const at = (f, n) => f.residuals.find(x => x.n === n)?.fitted
    const efficiency = n => fitted[0]?.[1].efficiency.find(e => e.n === n)?.efficiency
    out.push(table(['N', 'throughput', 'sd', 'runs', ...fitted.map(([m]) => `${m} fit`), 'efficiency'],
      g.points.map(p => [human(p.n), human(p.throughput), p.sd === undefined ? '-' : human(p.sd), p.count ?? 1,
        ...fitted.map(([, f]) => human(at(f, p.n))), efficiency(p.n)?.toFixed(3) ?? '-']), { indent: '  ' }))
    if (fitted.length) {
      const { rows, scale } = paramRows(g.fits)
      out.push('', table(['model', 'sigma [95% CI]', 'lambda [95% CI]', 'gamma [95% CI]', 'N* [95% CI]', 'X(N*)', `R² (${scale})`, 'AICc'],
        rows, { indent: '  ' }))
      const f0 = fitted[0][1]
      const how = f0.weighting === 'relative'
        ? 'relative-error fit (least squares on log throughput); 95% profile-likelihood intervals'
        : `weights ${f0.weighting ?? 'none'} (throughput units); 95% t intervals from the Jacobian`
      out.push(`  ${how}; ${f0.choice.line}`)
      // every model's fit reads the data by the same choice: the first model's line
      out.push(`  reading: ${f0.verdict}`)
      for (const [m, f] of fitted) for (const text of Object.values(f.identify ?? {}).filter(Boolean)) out.push(`  ${m}: ${text}`)
    }
    for (const [m, f] of Object.entries(g.fits)) if (f.error) out.push(`  ${m}: cannot fit: ${f.error.message}`)
    if (fitted.some(([, f]) => f.bootstrapCi)) {
      const b = fitted[0][1].bootstrapCi
      const how = b.method === 'cases' ? 'bootstrap of the repeats within each N' : 'residual bootstrap'
      const where = fitted[0][1].weighting === 'relative' ? ' (in --json as bootstrapCi; not calibrated: the table shows the profile intervals)' : ''
      out.push(`  intervals: ${how}, ${b.samples - b.failed} refits, seed ${b.seed}${where}`)
    }
    if (g.test) {
      out.push(g.better === 'usl'
        ? `  USL: the coherency term is significant (F test p = ${human(g.test.p, 2)}): there is a penalty beyond Amdahl's`
        : `  Amdahl is enough: the coherency term is not significant (F test p = ${human(g.test.p, 2)})`)
    }
    for (const n of g.notes) out.push(`  note: ${n}`)
    if (excludedLine(g)) out.push(`  ${excludedLine(g)}`)
    out.push('')
  }
  const skipped = skippedLine(r.skipped, r.x)
  if (skipped) out.push(skipped)
  return out.join('\n').trimEnd()
}

/** The runs a result left out and why, in one line (null when none). */
export function skippedLine (s, x) {
  const parts = [s.notDone && `${s.notDone} runs not done`, s.degraded && `${s.degraded} degraded runs (a node was lost)`,
    s.unreadable && `${s.unreadable} unreadable run.json`, s.noSummary && `${s.noSummary} runs without throughput`,
    s.invalid && `${s.invalid} invalid runs (--include-invalid puts them back)`,
    s.probes && `${s.probes} capacity probes (each search's capacity is its point)`, s.noX && `${s.noX} runs without ${x}`].filter(Boolean)
  return parts.length ? `skipped: ${parts.join(', ')}` : null
}

/** @param {Awaited<ReturnType<typeof import('./correlate.js').correlate>>} r */
export function formatCorrelate (r) {
  const t = correlationsTable(r)
  const runs = r.cells.reduce((a, c) => a + c.runs, 0)
  const out = [`Pearson r of ${r.factors.join(' and ')} with each cell's mean throughput, its sd and relative sd, per benchmark (Ibenchjs Figure 21):`,
    `${runs} finished runs in ${r.cells.length} cells (a cell: one strategy x nodes x instances x load, its repeats aggregated)`,
    '', table(t.header, t.rows.map(row => row.map(cellText)))]
  const notes = correlationNotes(r)
  if (notes.length) out.push('', ...notes)
  const skipped = skippedLine(r.skipped, 'a config')
  if (skipped) out.push('', skipped)
  return out.join('\n')
}

/** @param {Awaited<ReturnType<typeof import('./compare.js').compare>>} r */
export function formatCompare (r) {
  const rows = r.rows.map(x => x.model
    ? [x.name, x.model, `${human(x.sigma)} ${ci(x.ci95.sigma)}`, x.model === 'usl' ? `${human(x.lambda)} ${ci(x.ci95.lambda)}` : '-',
        `${human(x.gamma)} ${ci(x.ci95.gamma)}`, x.nStar === null ? '-' : `${human(x.nStar)} ${ci(x.ci95.nStar)}`,
        x.xStar !== null ? human(x.xStar) : x.ceiling !== null ? `${human(x.ceiling)} (ceiling)` : '-', x.r2 === null ? '-' : x.r2.toFixed(4), x.points]
    : [x.name, '-', '-', '-', '-', '-', '-', '-', x.points])
  const out = [table(['group', 'model', 'sigma [95% CI]', 'lambda [95% CI]', 'gamma [95% CI]', 'N* [95% CI]', 'X(N*)', 'R²', 'points'], rows), '']
  for (const x of r.rows) out.push(x.line + (x.fallback ? ` (Amdahl: ${x.fallback})` : ''))
  const tests = pairLines(r)
  if (tests.length) out.push('', ...tests)
  const bends = bendLines(r.bends)
  if (bends.length) out.push('', ...bends)
  const excluded = r.rows.filter(x => excludedLine(x)).map(x => `${x.name}: ${excludedLine(x)}`)
  if (excluded.length) out.push('', ...excluded)
  const skipped = skippedLine(r.skipped, r.x)
  if (skipped) out.push('', skipped)
  return out.join('\n')
}

/**
 * Why each curve bends: the sentence per group, then the bottleneck at each N.
 * @param {import('./diagnosis/why-bends.js').Bend[] | undefined} bends
 */
export function bendLines (bends) {
  const said = (bends ?? []).filter(b => b.kind)
  if (!said.length) return []
  const out = ['why the curves bend (the bottleneck each N\'s runs name; analyzer report charts the cores by role):']
  for (const b of said) {
    out.push(`  ${b.sentence}`)
    out.push(`    ${b.steps.map(s => `N=${s.n} ${kindText(s)}`).join(' · ')}`)
  }
  return out
}
