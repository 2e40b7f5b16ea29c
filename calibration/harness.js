// The calibration harness: runs nodescale's own statistical code (the analyzer's and the executor's, never copies)
// over synthetic data with a known truth, and holds each figure it prints against its target: the coverage of every
// interval, the false alarms and detections of every validity rule, the size and power of every test, the error rates
// of every replication verdict, the bias of capacity. One scenario module per area in calibration/scenarios/.
import { readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { randomSource } from './synth.js'

const HERE = dirname(fileURLToPath(import.meta.url))

/**
 * @typedef {({ max: number } | { min: number } | { between: [number, number] }) & { unit?: '×' }} Target
 *   unit ×: a ratio, printed 1.27×; else a share, printed as a percentage
 * @typedef {{ value: number, worst?: string, cells?: { case: string, value: number }[], note?: string }} Outcome
 *   value: the figure held against the target (the worst cell of the grid where the target is a bound on every cell);
 *   worst: which cell gave it; cells: every cell's figure (the full table); note: what the figure left out
 * @typedef {{ id: string, area: string, figure: string, grid: string, target: Target, trials: { quick: number, full:
 *   number }, run: (o: { trials: number, rng: ReturnType<typeof randomSource> }) => Outcome | Promise<Outcome> }}
 *   Scenario id: stable name (area.figure); figure: what is measured, in plain words; grid: the scenarios it spans
 * @typedef {Scenario & Outcome & { ok: boolean, trialsRun: number, seconds: number }} Result
 */

/** Every scenario of every module in calibration/scenarios/, in file then declaration order. */
export async function loadScenarios (dir = join(HERE, 'scenarios')) {
  const files = readdirSync(dir).filter(f => f.endsWith('.js')).sort()
  /** @type {Scenario[]} */
  const all = []
  for (const f of files) all.push(...(await import(pathToFileURL(join(dir, f)).href)).SCENARIOS)
  return all
}

/** @param {Target} t @param {number} v */
export function meets (t, v) {
  if (!Number.isFinite(v)) return false
  if ('max' in t) return v <= t.max
  if ('min' in t) return v >= t.min
  return v >= t.between[0] && v <= t.between[1]
}

/** @param {Target} t */
export function targetText (t) {
  const p = (x) => (t.unit === '×' ? `${x}×` : Math.abs(x) <= 1 ? `${+(x * 100).toFixed(1)}%` : String(x))
  if ('max' in t) return `≤ ${p(t.max)}`
  if ('min' in t) return `≥ ${p(t.min)}`
  return `${p(t.between[0])}–${p(t.between[1])}`
}

/**
 * Runs the scenarios. Each gets its own random stream from (seed, id), so one scenario's result does not depend on
 * which others ran.
 * @param {{ mode?: 'quick'|'full', seed?: number, only?: string[], scenarios?: Scenario[],
 *   onResult?: (r: Result) => void }} [opts]
 *   only: ids or id prefixes (an area's prefix runs the area)
 * @returns {Promise<Result[]>}
 */
export async function calibrate ({ mode = 'full', seed = 20261126, only, scenarios, onResult } = {}) {
  const list = (scenarios ?? await loadScenarios()).filter(s => !only?.length || only.some(o => s.id === o || s.id.startsWith(`${o}.`)))
  const results = []
  for (const s of list) {
    const trials = s.trials[mode]
    const started = process.hrtime.bigint()
    const out = await s.run({ trials, rng: randomSource(seed ^ hashOf(s.id)) })
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const r = { ...s, ...out, ok: meets(s.target, out.value), trialsRun: trials, seconds }
    onResult?.(r)
    results.push(r)
  }
  return results
}

/** FNV-1a of a string: a scenario's id as a seed. */
function hashOf (text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** A figure as its target reads: a ratio (unit ×) as 1.27×, a share as a percentage. */
const fmt = (/** @type {number} */ v, /** @type {Partial<Target>} */ t = {}) => (t.unit === '×'
  ? `${v.toFixed(2)}×`
  : Math.abs(v) <= 1.5 ? `${(v * 100).toFixed(1)}%` : v.toFixed(3))

/**
 * The table as Markdown: one row per target, achieved against target, the grid and the worst cell.
 * @param {Result[]} results
 */
export function markdownTable (results) {
  const lines = ['| id | figure | scenarios | target | achieved | worst cell | trials | met |', '|---|---|---|---|---|---|---|---|']
  for (const r of results) {
    const cells = [`\`${r.id}\``, r.figure, r.grid, targetText(r.target), fmt(r.value, r.target), r.worst ?? '', r.trialsRun, r.ok ? 'yes' : '**no**']
    lines.push(`| ${cells.map(c => String(c).replace(/\|/g, '\\|')).join(' | ')} |`)
  }
  return lines.join('\n')
}

/** Where docs/STATISTICS.md holds the table: between these two lines. */
export const TABLE_MARKS = Object.freeze(['<!-- calibration table: npm run stats:calibrate -- --write-docs -->', '<!-- end of table -->'])

/**
 * The document with its table replaced by this one.
 * @param {string} doc
 * @param {string} table
 */
export function withTable (doc, table) {
  const [open, close] = TABLE_MARKS
  const a = doc.indexOf(open)
  const b = doc.indexOf(close)
  if (a < 0 || b < a) throw new Error(`the document has no table between ${open} and ${close}`)
  return doc.slice(0, a + open.length) + '\n' + table + '\n' + doc.slice(b)
}

/**
 * The table for a terminal: one line per target.
 * @param {Result[]} results
 */
export function textTable (results) {
  const rows = results.map(r => [r.ok ? 'ok ' : 'NO ', r.id, targetText(r.target), fmt(r.value, r.target), r.worst ?? '', `${r.seconds.toFixed(1)} s`])
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(row => String(row[i]).length))) ?? []
  return rows.map(row => row.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd()).join('\n')
}
