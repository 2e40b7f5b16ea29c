// The report's tables as header + rows of text cells, shared by the HTML and Markdown renderers (same data, same
// words).
import { human } from '../fit/fit-verdict.js'
import { loadLevelOf } from './report-runs.js'
import { ROLES } from '../diagnosis/diagnosis-figures.js'
import { kindText } from '../diagnosis/why-bends.js'
import { fingerprintFacts } from '../fingerprint.js'

/**
 * A cell: its text, and optionally the exact figures behind it (the HTML keeps them as data attributes).
 * @typedef {string | { text: string, value?: number|null, ci?: [number, number|null]|null }} Cell
 * @typedef {{ header: string[], rows: Cell[][] }} Table
 */

const ok = v => Number.isFinite(v)
export const cellText = (/** @type {Cell} */ c) => (typeof c === 'string' ? c : c.text)
const pct = v => (ok(v) ? `${v.toFixed(1)}%` : '-')
const ms = v => (!ok(v) ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1))
const ciText = iv => (iv ? `[${human(iv[0])}, ${iv[1] === null ? 'open' : human(iv[1])}]` : '-')

/** A parameter with its 95% interval: "0.0123 [0.01, 0.015]". */
function estimate (value, ci) {
  if (!ok(value)) return { text: '-', value: null, ci: null }
  return { text: `${human(value)} ${ciText(ci)}`, value, ci: ci ?? null }
}

/**
 * The sigma/lambda comparison of `analyzer compare` (its rows, in its order) with how many points and runs each fit
 * used.
 * @param {import('./report.js').Report} report
 * @returns {Table}
 */
export function fitsTable (report) {
  const runsOf = new Map(report.groups.map(g => [g.name, g.runsUsed]))
  const rows = (report.comparison?.rows ?? []).map(r => {
    const used = `${r.points} (${runsOf.get(r.name) ?? r.points} runs)`
    if (!r.model) return [r.name, '-', '-', '-', '-', '-', '-', '-', used]
    const reach = ok(r.xStar) ? human(r.xStar) : ok(r.ceiling) ? `${human(r.ceiling)} (ceiling)` : '-'
    return [r.name, r.model === 'usl' ? 'USL' : 'Amdahl', estimate(r.sigma, r.ci95.sigma), r.model === 'usl' ? estimate(r.lambda, r.ci95.lambda) : '-',
      estimate(r.gamma, r.ci95.gamma), ok(r.nStar) ? estimate(r.nStar, r.ci95.nStar) : '-', reach, ok(r.r2) ? r.r2.toFixed(4) : '-', used]
  })
  return {
    header: ['group', 'model', 'σ (contention) [95% CI]', 'λ (coherency) [95% CI]', 'γ (req/s at N=1) [95% CI]', 'N* [95% CI]',
      'X(N*) req/s', 'R²', 'points used (runs)'],
    rows
  }
}

/** The plain-language line of each comparison row. */
export function verdictLines (report) {
  const c = report.comparison
  if (!c) return { rows: [] }
  return { rows: c.rows.map(r => ({ name: r.name, line: r.line + (r.fallback ? ` (Amdahl, because USL: ${r.fallback})` : ''), fitted: Boolean(r.model) })) }
}

/** How the tests between groups are made, in one sentence (the report's hint, the text's heading). */
export function pairsHint (settings) {
  const { margin = 0.05, effect = 0.1, alpha = 0.05 } = settings ?? {}
  return 'Each pair of groups of a benchmark on what the design identifies: the throughput at each N, the speedup ' +
    'X(N)/X(N₀), the ceiling (the highest throughput over N) and the mean ratio over N. A deployment is one unit (its ' +
    `repeats averaged): Welch's t on logs, Holm's correction over the benchmark's tests, α = ${human(alpha)}; ` +
    `"equivalent" when the ratio is shown within ±${human(margin * 100)}% (TOST), else "inconclusive". The power is for ` +
    `a ${human(effect * 100)}% difference, at the deployments measured (σ and λ are not tested: at a few N they trade off).`
}
export const PAIRS_HINT = pairsHint()

const pText = p => (p === null ? '-' : p < 0.001 ? '< 0.001' : human(p, 2))
const ratioCell = t => (Number.isFinite(t.ratio) ? `${human(t.ratio, 3)}${t.ci95 ? ` [${human(t.ci95[0], 3)}, ${human(t.ci95[1], 3)}]` : ''}` : '-')
const OUTCOME = { different: 'different', equivalent: 'equivalent', inconclusive: 'inconclusive', untestable: 'cannot be tested' }

/**
 * The tests between groups of `analyzer compare`: one row per pair and quantity, with the deployments a side, the
 * ratio and its interval, the p-values after Holm, the outcome in words and the power for the stated effect.
 * @param {{ pairs?: any[], settings?: any } | null} comparison
 * @returns {Table}
 */
export function pairsTable (comparison) {
  const rows = []
  for (const p of comparison?.pairs ?? []) {
    if (!p.tests.length) rows.push([String(p.benchmark ?? '-'), `${p.a} vs ${p.b}`, '-', '-', '-', '-', '-', 'no N measured by both: nothing to test', '-'])
    for (const t of p.tests) {
      const outcome = t.outcome === 'different'
        ? `different: ${t.ratio >= 1 ? p.a : p.b} is higher`
        : t.outcome === 'untestable' ? `cannot be tested: ${t.why ?? 'no spread'}` : OUTCOME[t.outcome]
      rows.push([String(p.benchmark ?? '-'), `${p.a} vs ${p.b}`, t.label, t.units.join(' / '), ratioCell(t),
        { text: pText(t.pHolm), value: t.pHolm }, { text: pText(t.pEquivalenceHolm), value: t.pEquivalenceHolm }, outcome, t.power.text])
    }
  }
  return {
    header: ['benchmark', 'groups (a vs b)', 'quantity', 'deployments (a / b)', 'a / b [95% CI]', 'p (Holm)', 'TOST p (Holm)', 'outcome',
      'power'],
    rows
  }
}

/**
 * The same tests as lines for a terminal: per pair, each quantity's outcome, and under one that found no difference
 * the power it had for the stated effect.
 * @param {{ pairs?: any[], settings?: any }} comparison
 * @returns {string[]}
 */
export function pairLines (comparison) {
  const out = []
  for (const p of comparison.pairs ?? []) {
    out.push(`  ${p.a} vs ${p.b}${p.benchmark === null ? '' : ` (${p.benchmark})`}:${p.tests.length ? '' : ' no N measured by both: nothing to test'}`)
    for (const t of p.tests) out.push(`    ${t.line}`, ...(t.outcome === 'different' ? [] : [`      power: ${t.power.text}`]))
  }
  return out.length ? [`tests between groups: ${pairsHint(comparison.settings)}`, ...out] : []
}

/**
 * A group's points: mean throughput, its sd over repeats, the runs behind it, p95, errors, and both fitted curves
 * there.
 * @param {import('./report.js').ReportGroup} g
 * @returns {Table}
 */
export function pointsTable (g) {
  const fitted = ['usl', 'amdahl'].filter(m => g.fits[m] && !g.fits[m].error)
  const at = (m, n) => g.fits[m].residuals.find(r => r.n === n)?.fitted
  const cpu = g.points.some(p => ok(p.cpuTotal))
  // over nodes a point is the best configuration of its node count: which one (Ibenchjs Table 4's instances at max)
  const best = g.unit === 'nodes'
  return {
    header: ['N', 'throughput (req/s)', 'sd', 'runs', 'p95 (ms)', 'errors', ...(cpu ? ['server CPU (cores)'] : []),
      ...(best ? ['instances at max', 'load at max'] : []), ...fitted.map(m => `${m === 'usl' ? 'USL' : 'Amdahl'} fit`)],
    rows: g.points.map(p => [human(p.n), { text: human(p.throughput), value: p.throughput },
      { text: ok(p.sd) ? human(p.sd) : '-', value: ok(p.sd) ? p.sd : null },
      String(p.count ?? 1), ms(p.p95), ok(p.errorRate) ? `${(p.errorRate * 100).toFixed(2)}%` : '-',
      ...(cpu ? [ok(p.cpuTotal) ? p.cpuTotal.toFixed(2) : '-'] : []),
      ...(best ? [String(p.config?.instances ?? '-'), p.config ? loadLevelOf(p.config) : '-'] : []), ...fitted.map(m => human(at(m, p.n)))])
  }
}

/**
 * Why a group has no curve: the fit errors (too few points, flat throughput), one line.
 * @param {import('./report.js').ReportGroup} g
 */
export function fitNote (g) {
  const failed = ['usl', 'amdahl'].filter(m => g.fits[m]?.error)
  if (failed.length < 2) return null
  const ns = g.points.map(p => human(p.n)).join(', ')
  const reasons = [...new Set(failed.map(m => g.fits[m].error.message))]
  return `no fitted curve for ${g.name}: ${g.points.length} point${g.points.length === 1 ? '' : 's'} (N = ${ns || 'none'}); ${reasons.join('; ')}`
}

/** Instances, and the worker nodes they ran on when --nodes was given: "4 on 2 nodes". */
export const instancesText = c => String(c.instances ?? '-') + (c.nodes ? ` on ${c.nodes} node${c.nodes === 1 ? '' : 's'}` : '')

/**
 * The multi-core study's per-core table: highest core, lowest core, their difference and overall, per strategy and
 * load.
 * @param {import('./report.js').Report} report
 * @returns {Table}
 */
export function cpuTableOf (report) {
  const maxCores = Math.max(0, ...report.cpu.map(r => r.cores.length))
  return {
    header: ['benchmark', 'strategy', 'N', 'load', 'runs', 'highest core', 'lowest core', 'difference', 'overall',
      ...Array.from({ length: maxCores }, (_, i) => `core ${i}`), 'host overall', 'bottleneck', 'source'],
    rows: report.cpu.map(r => [String(r.benchmark ?? '-'), String(r.strategy ?? '-'),
      instancesText(r) + (ok(r.cpusPerInstance) ? ` (${r.cpusPerInstance} CPU each)` : ''),
      r.load, String(r.runs), { text: pct(r.highest), value: r.highest }, { text: pct(r.lowest), value: r.lowest }, { text: pct(r.spread), value: r.spread },
      { text: pct(r.overall), value: r.overall }, ...Array.from({ length: maxCores }, (_, i) => pct(r.cores[i]?.usage)),
      pct(r.hostOverall), r.bottleneck ?? '-', r.source ?? '-'])
  }
}

const ENV_FIELDS = [['host', 'host'], ['platform', 'platform'], ['kernel', 'kernel'], ['arch', 'arch'], ['cpus', 'CPUs'], ['cpuModel', 'CPU model'],
  ['memoryBytes', 'memory'], ['node', 'Node.js'], ['docker', 'Docker'], ['image', 'image'], ['swarmNodes', 'Swarm nodes'], ['backend', 'backend']]

function envValue (key, v) {
  if (v === null || v === undefined || v === '') return '-'
  if (key === 'memoryBytes' && ok(v)) return `${(v / 2 ** 30).toFixed(1)} GiB`
  if (Array.isArray(v)) return v.map(x => (typeof x === 'object' ? (x.hostname ?? x.name ?? x.id ?? JSON.stringify(x)) : String(x))).join(', ') || '-'
  return typeof v === 'object' ? JSON.stringify(v) : String(v)
}

/**
 * The run environment: one column per distinct environment (one when the sweep ran on one machine).
 * @param {import('./report.js').Report} report
 * @returns {Table}
 */
export function environmentTable (report) {
  const envs = report.environments
  const known = new Set(ENV_FIELDS.map(([k]) => k))
  const extra = [...new Set(envs.flatMap(e => Object.keys(e.environment)))].filter(k => !known.has(k) && k !== 'fingerprint').map(k => [k, k])
  const fields = [...ENV_FIELDS, ...extra].filter(([k]) => envs.some(e => e.environment[k] !== undefined))
  // the fingerprint's machine facts (environment.fingerprint), for the runs that recorded one
  const facts = envs.map(e => fingerprintFacts(e.environment.fingerprint))
  const factRows = (facts.find(f => f.length) ?? []).map(([label], i) => [label, ...facts.map(f => f[i]?.[1] ?? '-')])
  return {
    header: ['', ...envs.map((e, i) => (envs.length > 1 ? `environment ${i + 1} (${e.runs} runs)` : `all ${e.runs} runs`))],
    rows: [...fields.map(([k, label]) => [label, ...envs.map(e => envValue(k, e.environment[k]))]), ...factRows]
  }
}

/**
 * Every run with its status; a run that did not finish says why.
 * @param {import('./report.js').Report} report
 * @returns {Table}
 */
export function runsTable (report) {
  return {
    header: ['run', 'status', 'strategy', 'N', 'benchmark', 'load', 'throughput (req/s)', 'p95 (ms)', 'errors', 'reason'],
    rows: report.runs.map(r => [r.id, r.status, String(r.config.strategy ?? '-'),
      instancesText(r.config), String(r.config.benchmark ?? '-'),
      loadLevelOf(r.config), human(r.throughput), ms(r.p95),
      ok(r.errorRate) ? `${(r.errorRate * 100).toFixed(2)}%` : '-', r.reason ?? ''])
  }
}

export const SEARCHES_HINT = 'Each capacity search: the highest offered rate (open model) its shape served within the objective, ' +
  'the rate above it that missed (the bounds), how many probe runs it took, whether a repeat at the capacity met the objective ' +
  'again, and the latency and errors measured there. An unconfirmed search is not a point unless --include-invalid.'

/**
 * The capacity searches of the sweep folders.
 * @param {import('./report.js').Report} report
 * @returns {Table}
 */
export function searchesTable (report) {
  return {
    header: ['search', 'strategy', 'N', 'benchmark', 'objective', 'capacity (req/s)', 'bounds (req/s)', 'probes', 'confirmed',
      'p99 at capacity (ms)', 'errors', 'notes'],
    rows: report.searches.map(s => [s.id, String(s.config.strategy ?? '-'), instancesText(s.config), String(s.config.benchmark ?? '-'),
      s.objective, human(s.capacity), `${human(s.bounds.lo)} – ${human(s.bounds.hi)}`, String(s.probes), s.confirmed ? 'yes' : 'no',
      ms(s.p99), ok(s.errorRate) ? `${(s.errorRate * 100).toFixed(2)}%` : '-', s.notes.join('; ')])
  }
}

/** One line on what the report covers: runs by status, groups, what N is. */
export function overviewLine (report) {
  const status = Object.entries(report.status).map(([s, n]) => `${n} ${s}`).join(', ')
  return `${report.runs.length} runs${status ? ` (${status})` : ''} · ${report.groups.length} group${report.groups.length === 1 ? '' : 's'} of points ` +
    `(by ${report.groupBy.join(', ') || 'nothing'}) · N = ${report.x}`
}

/** A factor and the values it took: "nodes (1–4)", "instances (1, 2, 4)". */
function factorText (row) {
  const v = row.values
  const consecutive = v.length > 3 && v.every((x, i) => i === 0 || x === v[i - 1] + 1)
  return `${row.factor} (${!v.length ? 'none' : consecutive ? `${v[0]}–${v.at(-1)}` : v.join(', ')})`
}

export const CORRELATIONS_HINT = 'Pearson r of each factor with the mean throughput of each cell (one configuration, its repeats aggregated), ' +
  'its standard deviation and its relative standard deviation (sd / mean), per benchmark, as in Ibenchjs Figure 21. ' +
  'Near 1: more of the factor goes with more; near 0: no linear relation. Only finished runs count.'

const rText = c => (c.r === null ? 'n/a' : c.r.toFixed(2))

/**
 * Ibenchjs Figure 21: per benchmark and factor, Pearson r with each cell's mean throughput, sd and relative sd.
 * @param {Awaited<ReturnType<typeof import('../correlate.js').correlate>>} corr
 * @returns {Table}
 */
export function correlationsTable (corr) {
  return {
    header: ['benchmark', 'factor (values)', 'cells (runs)', 'r: throughput', 'r: sd', 'r: relative sd'],
    rows: corr.rows.map(r => [String(r.benchmark ?? '-'), factorText(r), `${r.cells} (${r.runs})`,
      ...corr.metrics.map(m => ({ text: rText(r[m]), value: r[m].r }))])
  }
}

/** Why each "n/a" of the correlation table is one, a line per benchmark, factor and reason. */
export function correlationNotes (corr) {
  const words = { throughput: 'throughput', sd: 'sd', relSd: 'relative sd' }
  const lines = []
  for (const r of corr.rows) {
    const byWhy = new Map()
    for (const m of corr.metrics) if (r[m].why) byWhy.set(r[m].why, [...(byWhy.get(r[m].why) ?? []), words[m]])
    for (const [why, metrics] of byWhy) lines.push(`n/a for ${r.benchmark ?? '-'} · ${r.factor} · ${metrics.join(', ')}: ${why}`)
  }
  return lines
}

export const BENDS_HINT = 'What limited each group\'s runs at each N (the bottleneck most of its runs name; a capacity ' +
  'search reads it beyond its capacity, where it missed), and where the host\'s cores went, role by role, in cores: the ' +
  'server\'s workers, a cluster\'s primary, PM2\'s daemon, the load balancer, the RC, the load generator, and the rest.'

/**
 * Why the curves bend: per group and N, the bottleneck and the cores by role (the roles any step has, in order).
 * @param {import('../diagnosis/why-bends.js').Bend[]} bends
 * @returns {Table}
 */
export function bendsTable (bends) {
  const said = bends.filter(b => b.kind)
  const roles = [...new Set(said.flatMap(b => b.steps.flatMap(s => Object.keys(s.roles ?? {}))))]
    .sort((a, b) => (ROLES.indexOf(a) + 1 || 99) - (ROLES.indexOf(b) + 1 || 99))
  return {
    header: ['group', 'N', 'runs', 'bottleneck', ...roles.map(r => `${r} (cores)`), 'evidence'],
    rows: said.flatMap(b => b.steps.map(s => [b.group, String(s.n), String(s.runs), kindText(s),
      ...roles.map(r => (s.roles && ok(s.roles[r]) ? { text: s.roles[r].toFixed(2), value: s.roles[r] } : '-')), s.line ?? '-']))
  }
}
