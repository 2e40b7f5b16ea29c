// What an adaptive sweep (executor sweep --until answered) says: its question, each look, the next block, its verdict.
import { formatDuration as duration } from './sweep-text.js'
import { blockText, estimateText, pct, questionText, ratioName, small } from '../../analyzer/stats/adaptive-text.js'

/** The next block and what it buys: "cm@4 ×2 (narrows by 38% for 40 s)". */
export function nextText (look) {
  if (!look.next?.length) return 'one deployment of each cell'
  const g = look.gain
  const gain = g ? ` (narrows by ${pct(g.narrowsBy)}${g.seconds === null || g.seconds === undefined ? '' : ` for ${duration(g.seconds)}`})` : ''
  return `${blockText(look.next)}${gain}`
}

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
  'budget spent': 'the budget spent',
  'not measurable': 'a cell this set-up does not measure'
}

/**
 * The verdict's lines at the end of the sweep (and in --status once there is one).
 * @param {any} a sweep.json's adaptive
 * @param {{ skipped?: number }} [counts]
 */
export function verdictLines (a, { skipped = 0 } = {}) {
  if (!a.verdict) return []
  const last = a.looks.at(-1)
  const lines = [`verdict: ${a.verdict.toUpperCase()} at look ${last.look} of ${a.maxLooks} (${ENDED[a.ended] ?? a.ended})` +
    `${skipped ? ` · ${skipped} planned run${skipped === 1 ? '' : 's'} not run` : ''}`]
  if (a.why) lines.push(`  ${a.why}`)
  if (a.ended === 'not measurable') {
    lines.push('  what more would be needed: a set-up whose runs of that cell are valid (analyzer summary on one of them says why ' +
      'it was not: e.g. the load generator on cores or nodes of its own, --server-cpus or --load-nodes)')
  } else if (a.verdict === 'undecided') {
    const sized = a.needed?.precision ? `its 95% interval ±${pct(a.needed.precision)}` : `a ${pct(a.needed?.effect)} difference, 80% power`
    const more = a.needed ? `a fixed experiment of ${a.needed.deployments} deployments a cell (${sized})` : null
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
  const keys = Object.keys(a.cells)
  // a knee question's cells are every N within its bounds; its first block is larger than the ones the looks place
  const cells = a.question.knee ? `any of ${keys[0]}..${keys.at(-1).split('@')[1]}` : keys.join(', ')
  const first = a.first ? `a first block of ${a.first.runs} about ${duration(a.first.seconds)}, then ` : ''
  return [
    `question: ${questionText(a.question)}`,
    `until answered: up to ${a.maxLooks} looks (K, from ${budget}; ${first}a block of ${a.block.runs} fresh deployments is about ` +
      `${duration(a.block.seconds)}), a look after each block; cells ${cells}; the plan holds the most it runs`
  ]
}
