// An adaptive sweep (executor sweep --until answered): only the cells the experiment's question needs, in blocks of
// fresh deployments; after each block a look at one value per finished deployment decides, by the analyzer's
// sequential rule (analyzer/stats/adaptive.js), whether the question is answered or which block comes next, within a
// budget.
import { relative } from 'node:path'
import { badFlag } from '../../lib/errors.js'
import { badOption } from '../../lib/options.js'
import { seededRandom } from '../../lib/random.js'
import { checkQuestion, decideQuestion } from '../../analyzer/stats/adaptive.js'
import { FIRST_DEPLOYMENTS, KNEE_BLOCK, firstBlock } from '../../analyzer/stats/adaptive-knee.js'
import { MAX_LOOKS } from '../../analyzer/stats/adaptive-spending.js'
import { readRuns } from '../../analyzer/points.js'
import { questionInGrid, questionCells, withQuestionCells } from './experiment.js'
import { buildPlan, estimateBackend, estimatePlan, shuffle } from './sweep-plan.js'
import { cellConfigs, countEntries, isLeft, pendingEntry, saveSweep, sweepStatus } from './sweep.js'
import { measuredCosts } from './sweep-estimate.js'
import { timeSpent } from './sweep-status.js'

/** The fewest looks a sweep plans, however small its budget: one look cannot stop early. */
export const MIN_LOOKS = 2

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 }

/**
 * A budget's text as seconds: "90s", "30m", "1.5h", "1h30m" (each part a number and s, m or h).
 * @param {string} text
 * @param {import('../../lib/options.js').Option} option the --budget row, for its error
 */
export function budgetSeconds (text, option) {
  const parts = /^(\s*\d+(\.\d+)?\s*[smh])+\s*$/.test(String(text)) ? [...String(text).matchAll(/(\d+(?:\.\d+)?)\s*([smh])/g)] : []
  if (!parts.length) throw badOption(option, `"${text}" is not a duration; write it in s, m or h: 90s, 30m, 1.5h, 1h30m`)
  return parts.reduce((t, m) => t + Number(m[1]) * UNIT_SECONDS[m[2]], 0)
}

/**
 * The question's check for --until answered: the file has one, and this profile's grid has its cells (the question's
 * own line named when not). Returns the experiment to plan: a knee question's N within its bounds added to the grid.
 * @param {import('./experiment.js').Experiment} exp
 */
export function checkUntil (exp) {
  if (!exp.question) {
    throw badFlag('--until', `answered needs a question in ${exp.file}, and it has no question: key; ` +
      'add one, e.g. question: { compare: [cm, up], quantity: throughput, at: 4 }')
  }
  questionInGrid(exp)
  return withQuestionCells(exp)
}

/**
 * A new adaptive sweep's plan from planSweep's: the question's cells, one fresh deployment each per block in a seeded
 * order (a knee question: its first N twice each, then KNEE_BLOCK deployments a block, placed by the looks), as many
 * blocks as the budget holds by the plan's own estimate (at least MIN_LOOKS, at most MAX_LOOKS; without a budget, the
 * file's repeats), each block a look.
 * @param {Awaited<ReturnType<typeof import('./sweep-plan.js').planSweep>>} planned
 * @param {{ budget?: number }} opts budget: seconds
 */
export function planAdaptive (planned, { budget }) {
  const { exp, cells, seed, calibration, backend } = planned
  const question = questionInGrid(exp)
  const needed = questionCells(question).map(q => ({
    ...q,
    cell: cells.find(c => c.config.strategy === q.strategy && c.config.instances === q.instances).index
  }))
  const keyCell = Object.fromEntries(needed.map(n => [n.key, n.cell]))
  const backendName = estimateBackend(exp, backend)
  const seconds = (entries) => estimatePlan(entries, cells, { backendName, calibration, sweepBytes: false })
  const neededCells = needed.map(n => cells[n.cell])
  // a knee question's first block (its first N, twice each) and later ones (placed by each look) differ
  const first = question.knee ? seconds(specEntries(firstKneeBlock(question), 1, keyCell, seed)) : null
  const block = seconds(question.knee ? specEntries(laterBlock({ question, cells: keyCell }), 2, keyCell, seed) : blockEntries(neededCells, 1, seed))
  const room = budget ? Math.floor((budget - (first?.seconds ?? 0)) / Math.max(1, block.seconds)) + (first ? 1 : 0) : exp.repeats
  // a budget of many small blocks holds at most MAX_LOOKS looks (beyond, the alpha of a look is next to nothing)
  const maxLooks = Math.min(MAX_LOOKS, Math.max(MIN_LOOKS, room))
  const plan = question.knee
    ? kneeEntries({ question, cells: keyCell }, maxLooks, seed)
    : blockEntries(neededCells, maxLooks, seed)
  return {
    ...planned,
    plan,
    estimate: estimatePlan(plan, cells, { backendName, calibration }),
    adaptive: {
      question,
      cells: keyCell,
      maxLooks,
      budget: budget ?? null,
      block: { runs: block.runs, seconds: block.seconds },
      ...(first ? { first: { runs: first.runs, seconds: first.seconds } } : {}),
      looks: [],
      verdict: null,
      ended: null,
      why: null,
      needed: null
    }
  }
}

/**
 * Blocks of one fresh deployment per cell, each block in its own seeded order: entries numbered from `first`.
 * @param {{ index: number, shape: string }[]} cells
 * @param {number} blocks
 * @param {number} seed
 * @param {number} [after] the blocks already planned before these
 */
function blockEntries (cells, blocks, seed, after = 0) {
  return buildPlan(cells, { repeats: blocks, order: 'blocks', seed }).map(e => ({ ...e, repeat: e.repeat + after, block: e.repeat + after, fresh: true }))
}

/**
 * Entries of a block given as cells and deployments (`strategy@N` ×k), in a seeded order, numbered from `from`.
 * @param {{ cell: string, deployments: number }[]} block
 * @param {number} no the block's number
 * @param {Record<string, number>} keyCell `strategy@N` → the cell's index
 * @param {number} seed
 * @param {number} [from]
 */
function specEntries (block, no, keyCell, seed, from = 0) {
  const cells = block.flatMap(b => Array.from({ length: b.deployments }, () => keyCell[b.cell]))
  return shuffle(cells, seededRandom(seed + no)).map((cell, i) => ({ index: from + i, cell, repeat: no, block: no, fresh: true }))
}

/** A knee question's first block: its first N, FIRST_DEPLOYMENTS each. @param {any} question */
const firstKneeBlock = (question) => firstBlock(checkQuestion(question), FIRST_DEPLOYMENTS)

/**
 * A later block as planned before the look that places it: one deployment of each cell, or a knee question's
 * KNEE_BLOCK deployments, held at its most instances until a look places them (the plan's time is then an upper bound).
 * @param {{ question: any, cells: Record<string, number> }} a
 * @returns {{ cell: string, deployments: number }[]}
 */
function laterBlock (a) {
  if (a.question.knee) return [{ cell: `${a.question.knee}@${a.question.between[1]}`, deployments: KNEE_BLOCK }]
  return Object.keys(a.cells).map(cell => ({ cell, deployments: 1 }))
}

/**
 * A knee question's plan from block `after` + 1 to maxLooks: the first block (when it is among them), then placeholder
 * later blocks; numbered from `from`.
 * @param {{ question: any, cells: Record<string, number> }} a
 * @param {number} maxLooks @param {number} seed @param {number} [after] @param {number} [from]
 */
function kneeEntries (a, maxLooks, seed, after = 0, from = 0) {
  const out = []
  for (let no = after + 1; no <= maxLooks; no++) {
    out.push(...specEntries(no === 1 ? firstKneeBlock(a.question) : laterBlock(a), no, a.cells, seed, from + out.length))
  }
  return out
}

/**
 * One value per finished deployment of the question's cells (`strategy@N` -> values): a capacity search's capacity or
 * a run's throughput, read by the analyzer's loader; a run whose measurement is not valid is left out and counted.
 * @param {any} sweep
 */
export async function deploymentValues (sweep) {
  const keys = new Set(Object.keys(sweep.adaptive.cells))
  const { runs, invalid } = await readRuns([sweep.dir])
  const keyOf = r => `${r.config.strategy}@${r.config.instances}`
  const mine = r => r.config.sweep?.id === sweep.id && keys.has(keyOf(r))
  /** @type {Map<string, { key: string, values: number[] }>} */
  const byDeployment = new Map()
  for (const r of runs.filter(mine)) {
    const d = byDeployment.get(r.deployment) ?? { key: keyOf(r), values: [] }
    d.values.push(r.summary.throughput)
    byDeployment.set(r.deployment, d)
  }
  /** @type {Record<string, number[]>} */
  const cells = Object.fromEntries([...keys].map(k => [k, []]))
  for (const { key, values } of byDeployment.values()) cells[key].push(values.reduce((a, b) => a + b, 0) / values.length)
  const left = invalid.filter(mine)
  return { cells, invalid: left.map(r => ({ run: relative(sweep.dir, r.dir), cell: keyOf(r), flags: r.validity.flags })) }
}

/**
 * Seconds a deployment of each question cell costs: what its finished entries took, else their mean over the cells,
 * else the plan's estimate.
 * @param {any} sweep
 */
async function cellCosts (sweep) {
  const cells = cellConfigs(sweep)
  const measured = await measuredCosts(sweep)
  const backendName = sweep.backendUsed ?? 'local'
  return Object.fromEntries(Object.entries(sweep.adaptive.cells).map(([key, cell]) => {
    const m = measured.byCell.get(cell) ?? (measured.all.n ? measured.all : null)
    return [key, m ? m.seconds / m.n : estimatePlan([{ cell }], cells, { backendName, sweepBytes: false }).seconds]
  }))
}

/**
 * A look after block `look`: the finished deployments' values put to the question.
 * @param {any} sweep
 * @param {number} look
 */
export async function takeLook (sweep, look) {
  const a = sweep.adaptive
  const { cells, invalid } = await deploymentValues(sweep)
  const costs = await cellCosts(sweep)
  const d = decideQuestion(a.question, cells, { look, maxLooks: a.maxLooks, costs, spending: a.question.spending ?? 'obrien-fleming' })
  return {
    look,
    verdict: d.verdict,
    stop: d.stop,
    estimate: d.estimate,
    p: d.p,
    alphaSpent: d.alphaSpent,
    direction: d.direction ?? null,
    next: d.next ?? [],
    gain: d.gain ?? null,
    why: d.why ?? null,
    needed: d.needed ?? null,
    values: cells,
    invalid,
    at: new Date().toISOString()
  }
}

/** The verdicts that answer a question (a knee's "beyond": its peak lies above the bounds). */
const ANSWERS = Object.freeze(['different', 'equivalent', 'estimated', 'beyond'])

/** Deployments of a cell, every one flagged not valid, after which this set-up is taken not to measure it. */
export const UNMEASURABLE_AFTER = 3

/** Flags that say the host's other work disturbed a run: chance's, not the set-up's (unmeasurableCell). */
const CHANCE_FLAGS = ['disturbed']

/**
 * A cell this set-up does not measure: UNMEASURABLE_AFTER deployments or more flagged not valid by the set-up and none
 * valid (a flag that repeats on every deployment is the set-up's, not chance's: on 2 cores cm x2 beside its load
 * generator is host-saturated each time; a run flagged only for other work on the host is not counted), with its
 * flags counted; null when every cell has a valid value or too few such tries.
 * @param {{ values: Record<string, number[]>, invalid: { cell: string, flags: string[] }[] }} look
 */
export function unmeasurableCell (look) {
  for (const [cell, values] of Object.entries(look.values)) {
    const bad = look.invalid.filter(x => x.cell === cell && x.flags.some(f => !CHANCE_FLAGS.includes(f)))
    if (values.length || bad.length < UNMEASURABLE_AFTER) continue
    const counts = new Map()
    for (const flag of bad.flatMap(x => x.flags)) counts.set(flag, (counts.get(flag) ?? 0) + 1)
    const flags = [...counts].sort((x, y) => y[1] - x[1]).map(([flag, n]) => `${flag} ×${n}`).join(', ')
    return { cell, runs: bad.length, flags }
  }
  return null
}

/**
 * Why the sweep ends after this look, or null when it goes on: the question answered (or the rule's last word), the
 * planned looks all taken, a cell this set-up does not measure, or the budget unable to hold the next block.
 * @param {any} a sweep.adaptive with this look recorded
 * @param {{ spent: number, nextSeconds: number }} time
 * @returns {null | 'answered' | 'last look' | 'not measurable' | 'budget spent'}
 */
function endOf (a, { spent, nextSeconds }) {
  const last = a.looks.at(-1)
  if (last.stop || last.verdict !== 'continue') return ANSWERS.includes(last.verdict) ? 'answered' : 'last look'
  if (last.look >= a.maxLooks) return 'last look'
  if (unmeasurableCell(last)) return 'not measurable'
  if (a.budget !== null && spent + nextSeconds > a.budget) return 'budget spent'
  return null
}

/**
 * The plan after a look that goes on: the blocks after it, never tried, replaced by the block the look chose (its
 * `next`, else one deployment per cell) and default blocks up to maxLooks; entries numbered by their place.
 * @param {any} sweep
 * @param {any} look
 */
function planAfter (sweep, look) {
  const a = sweep.adaptive
  const cells = cellConfigs(sweep)
  const kept = sweep.plan.filter(e => !(e.block > look.look && e.status === 'pending' && !e.attempts.length))
  const random = seededRandom(sweep.seed + look.look)
  const next = shuffle(blockAfter(look, a).flatMap(n => Array.from({ length: n.deployments }, () => a.cells[n.cell])), random)
    .map(cell => ({ cell, repeat: look.look + 1, block: look.look + 1, fresh: true }))
  const rest = a.maxLooks - look.look - 1
  const later = rest <= 0
    ? []
    : a.question.knee
      ? kneeEntries(a, a.maxLooks, sweep.seed + look.look, look.look + 1)
      : blockEntries(Object.values(a.cells).map(i => cells[i]), rest, sweep.seed + look.look, look.look + 1)
  const tail = [...next, ...later].map((e, i) => pendingEntry({ ...e, index: kept.length + i }, cells))
  sweep.plan = [...kept, ...tail]
}

/**
 * The block after a look: the one it chose, else the default later block (laterBlock).
 * @returns {{ cell: string, deployments: number }[]}
 */
const blockAfter = (look, a) => (look.next.length ? look.next : laterBlock(a))

/** The seconds the next block takes by the cells' costs. */
const blockSeconds = (look, a, costs) => blockAfter(look, a).reduce((t, n) => t + (costs[n.cell] ?? 0) * n.deployments, 0)

/**
 * Runs an adaptive sweep from where it stands to its end: each block's entries (execute), then its look, recorded in
 * sweep.json before the next block is planned; a look already recorded is kept as it was (a resumed sweep goes on
 * from the next block). Returns when the sweep has its verdict, or when a block did not finish (Ctrl-C, a full disk,
 * --fail-fast): --resume goes on from there.
 * @param {any} sweep with its `adaptive` record
 * @param {{ execute: (only: (e: any) => boolean) => Promise<any>, say: (line: string) => void, signal?: AbortSignal,
 *   lookLine: (look: any, a: any) => string }} opts execute: executeSweep on the entries `only` keeps
 */
export async function runAdaptive (sweep, { execute, say, signal, lookLine }) {
  const a = sweep.adaptive
  while (!a.verdict) {
    const block = a.looks.length + 1
    const inBlock = e => e.block <= block
    if (sweep.plan.some(e => isLeft(e) && inBlock(e))) await execute(inBlock)
    if (signal?.aborted || sweep.plan.some(e => inBlock(e) && ['pending', 'running', 'interrupted'].includes(e.status))) return sweep
    const look = await takeLook(sweep, block)
    a.looks.push(look)
    say(lookLine(look, a))
    const costs = await cellCosts(sweep)
    const ended = endOf(a, { spent: timeSpent(sweep), nextSeconds: blockSeconds(look, a, costs) })
    if (ended) finish(sweep, look, ended)
    else planAfter(sweep, look)
    await saveSweep(sweep)
  }
  return sweep
}

/**
 * The verdict recorded, and every entry not done marked skipped with why (it is not run, nor redone on --resume).
 * @param {any} sweep
 * @param {any} look the last look
 * @param {'answered'|'last look'|'not measurable'|'budget spent'} ended
 */
function finish (sweep, look, ended) {
  const a = sweep.adaptive
  const verdict = look.verdict === 'continue' ? 'undecided' : look.verdict
  const cell = ended === 'not measurable' ? unmeasurableCell(look) : null
  const why = cell
    ? `${cell.cell}: its ${cell.runs} deployments were all flagged not valid (${cell.flags}); more of them would be too`
    : look.why
  Object.assign(a, { verdict, ended, why, needed: verdict === 'undecided' && !cell ? look.needed : null })
  const because = ended === 'answered'
    ? `answered at look ${look.look} (${verdict})`
    : ended === 'budget spent'
      ? `the budget was spent at look ${look.look}`
      : cell ? `${cell.cell} was not measurable (look ${look.look})` : `look ${look.look} was the last`
  for (const e of sweep.plan.filter(isLeft)) {
    e.reason = e.attempts.length
      ? `not redone: ${because}; it was ${e.status}${e.reason ? ` (${String(e.reason).split('\n')[0]})` : ''}`
      : `not run: ${because}`
    e.status = 'skipped'
  }
  sweep.status = sweepStatus(countEntries(sweep.plan))
}
