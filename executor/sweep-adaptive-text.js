// What an adaptive sweep (executor sweep --until answered) says: its question, each look, the next block, its verdict.
import { formatDuration as duration } from './sweep-text.js'

/** A ratio or a bound: "2.04", "181", "3.4e+9"; an interval's unbounded end "∞". */
const num = (x) => (x === Infinity ? '∞' : Math.abs(x) >= 1e6 ? x.toPrecision(2) : Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))
const pct = (x) => `${+(x * 100).toPrecision(2)}%`
/** A small probability with its first two significant digits: 0.012, 3.4e-5. */
const small = (x) => (x === null || x === undefined ? '-' : x === 0 ? '0' : x < 1e-3 ? x.toExponential(1) : x.toPrecision(2))

/**
 * What the question compares, as the ratio's name: "cm/up at N=4", "cm/up speedup N=1→4".
 * @param {import('./experiment.js').Question} q
 */
export const ratioName = (q) => `${q.compare[0]}/${q.compare[1]} ${q.quantity === 'speedup' ? `speedup N=${q.from}→${q.at}` : `at N=${q.at}`}`

/**
 * The question in words: "does cm differ from up in throughput at N=4? (equivalent: within ±5%)".
 * @param {import('./experiment.js').Question} q
 */
export function questionText (q) {
  const what = q.quantity === 'speedup' ? `speedup from N=${q.from} to N=${q.at}` : `throughput at N=${q.at}`
  return `does ${q.compare[0]} differ from ${q.compare[1]} in ${what}? (the ratio ${ratioName(q)}; equivalent: within ±${pct(q.margin)})`
}

/**
 * A block of deployments: "cm@4 ×2, up@4 ×1".
 * @param {{ cell: string, deployments: number }[]} next
 */
export const blockText = (next) => next.map(n => `${n.cell} ×${n.deployments}`).join(', ')

/** The next block and what it buys: "cm@4 ×2 (narrows by 38% for 40 s)". */
export function nextText (look) {
  if (!look.next?.length) return 'one deployment of each cell'
  const g = look.gain
  const gain = g ? ` (narrows by ${pct(g.narrowsBy)}${g.seconds === null || g.seconds === undefined ? '' : ` for ${duration(g.seconds)}`})` : ''
  return `${blockText(look.next)}${gain}`
}

/** The ratio and its interval: "2.04 [1.39, 2.99]", or why there is none yet. */
const estimateText = (look) => (look.estimate
  ? `${num(look.estimate.ratio)} [${num(look.estimate.lo)}, ${num(look.estimate.hi)}]`
  : 'no interval yet')

/**
 * One look's line: "look 2/5: cm/up at N=4 = 2.04 [1.39, 2.99] (α spent 0.012) → continue; next: cm@4 ×2 (narrows by
 * 38% for 40 s)".
 * @param {any} look a look of sweep.json's adaptive.looks
 * @param {{ question: any, maxLooks: number }} a sweep.json's adaptive
 */
export function lookLine (look, a) {
  const left = look.invalid?.length ? ` (${look.invalid.length} run${look.invalid.length === 1 ? '' : 's'} not valid, left out)` : ''
  const then = look.verdict === 'continue' ? `; next: ${nextText(look)}` : ''
  return `look ${look.look}/${a.maxLooks}: ${ratioName(a.question)} = ${estimateText(look)} (α spent ${small(look.alphaSpent)}) → ${look.verdict}${then}${left}`
}

/** Why the sweep ended, in words. */
const ENDED = {
  answered: 'answered',
  'last look': 'its last planned look taken',
  'budget spent': 'the budget spent'
}

/**
 * The verdict's lines at the end of the sweep (and in --status once there is one).
 * @param {any} a sweep.json's adaptive
 * @param {{ skipped?: number }} [counts]
 */
export function verdictLines (a, { skipped = 0 } = {}) {
  if (!a.verdict) return []
  const last = a.looks.at(-1)
  const lines = [`verdict: ${a.verdict.toUpperCase()} at look ${last.look} of ${a.maxLooks} (${ENDED[a.ended] ?? a.ended})${skipped ? ` · ${skipped} planned run${skipped === 1 ? '' : 's'} not run` : ''}`]
  if (a.why) lines.push(`  ${a.why}`)
  if (a.verdict === 'undecided') {
    const more = a.needed ? `a fixed experiment of ${a.needed.deployments} deployments a cell (a ${pct(a.needed.effect)} difference, 80% power)` : null
    const next = last.next?.length ? `the next block the rule chose: ${nextText(last)}` : null
    lines.push(`  what more would be needed: ${[next, more].filter(Boolean).join('; ') || 'more deployments than the rule can size (see above)'}`)
    if (a.ended === 'budget spent') lines.push('  a larger --budget (a new sweep: the looks are planned from it) gives the rule more looks')
  }
  return lines
}

/**
 * The dry run's and --status's lines of the question and its plan: "question: ..." and "until answered: K looks at
 * most, ...".
 * @param {any} a planAdaptive's adaptive (sweep.json's)
 */
export function adaptivePlanLines (a) {
  const budget = a.budget === null ? 'no --budget: the file\'s repeats' : `--budget ${duration(a.budget)}`
  return [
    `question: ${questionText(a.question)}`,
    `until answered: up to ${a.maxLooks} looks (K, from ${budget}; a block of ${a.block.runs} fresh deployments is about ${duration(a.block.seconds)}), ` +
      `a look after each block; cells ${Object.keys(a.cells).join(', ')}; the plan holds the most it runs`
  ]
}
