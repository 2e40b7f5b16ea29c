// An adaptive experiment's question and looks in words (sweep.json's adaptive record): what the sweep prints as it
// goes and what the report shows afterwards.

/** A ratio or a bound: "2.04", "181", "3.4e+9"; an unbounded end (Infinity, or null as JSON keeps it) "∞". */
export const num = (x) => (x === Infinity || x === null ? '∞' : Math.abs(x) >= 1e6 ? x.toPrecision(2) : Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))
/** A share as a percentage with two significant digits: "38%". */
export const pct = (x) => `${+(x * 100).toPrecision(2)}%`
/** A level such as 0.99991 as 99.9911%: enough digits to tell it from 100%. */
export const levelText = (level) => `${(level * 100).toFixed(Math.min(10, Math.max(0, Math.ceil(-Math.log10((1 - level) * 100))) + 1))}%`
/** A small probability with its first two significant digits: 0.012, 3.4e-5. */
export const small = (x) => (x === null || x === undefined ? '-' : x === 0 ? '0' : x < 1e-3 ? x.toExponential(1) : x.toPrecision(2))

/**
 * @typedef {{ compare?: [string, string], quantity?: 'throughput' | 'speedup', at?: number, from?: number,
 *   margin?: number | null, precision?: number | null, estimate?: string, knee?: string, between?: [number, number] }}
 *   QuestionLike
 */

/**
 * A compared side: "cm" (at the question's N) or "cm@2" (a strategy at an N of its own, a throughput question only).
 * @param {string} entry
 * @param {number} [at] the question's N
 * @returns {{ strategy: string, at: number | undefined, own: boolean }}
 */
export function sideOf (entry, at) {
  const m = /^([^@]+)@(\d+)$/.exec(String(entry))
  return m ? { strategy: m[1], at: Number(m[2]), own: true } : { strategy: String(entry), at, own: false }
}

/** A side's cell: "cm@2". @param {{ strategy: string, at?: number }} side */
const cellOf = (side) => `${side.strategy}@${side.at}`

/** Whether the two sides are at one N: "cm/up at N=4"; else each says its own: "cm@2/up@1". @param {QuestionLike} q */
const oneN = (q) => !(q.compare ?? []).some(e => sideOf(e).own)

/**
 * What the question compares, as the ratio's name: "cm/up at N=4", "cm@2/up@1", "cm/up speedup N=1→4".
 * @param {QuestionLike} q
 */
export const ratioName = (q) => q.knee
  ? `${q.knee}'s peak N*`
  : q.estimate
    ? cellOf(sideOf(q.estimate, q.at))
    : q.quantity === 'speedup'
      ? `${q.compare[0]}/${q.compare[1]} speedup N=${q.from}→${q.at}`
      : oneN(q) ? `${q.compare[0]}/${q.compare[1]} at N=${q.at}` : q.compare.map(e => cellOf(sideOf(e, q.at))).join('/')

/**
 * The question in words: "does cm differ from up in throughput at N=4? (equivalent: within ±5%)".
 * @param {QuestionLike} q
 */
export function questionText (q) {
  if (q.knee) {
    return `where does ${q.knee}'s throughput peak (the USL's N*), measured between N=${q.between[0]} and ${q.between[1]}, ` +
      `to within ±${pct(q.precision)}? (its 95% repeated interval)`
  }
  if (q.estimate) {
    const side = sideOf(q.estimate, q.at)
    return `how large is ${side.strategy}'s throughput at N=${side.at}, to within ±${pct(q.precision)}? (its 95% repeated interval)`
  }
  if (q.precision) return `how large is the ratio ${ratioName(q)}, to within ±${pct(q.precision)}? (its 95% repeated interval)`
  if (q.quantity === 'throughput' && !oneN(q)) {
    const [a, b] = q.compare.map(e => sideOf(e, q.at))
    return `does ${a.strategy} at N=${a.at} differ from ${b.strategy} at N=${b.at} in throughput? ` +
      `(the ratio ${ratioName(q)}; equivalent: within ±${pct(q.margin)})`
  }
  const what = q.quantity === 'speedup' ? `speedup from N=${q.from} to N=${q.at}` : `throughput at N=${q.at}`
  return `does ${q.compare[0]} differ from ${q.compare[1]} in ${what}? (the ratio ${ratioName(q)}; equivalent: within ±${pct(q.margin)})`
}

/**
 * A block of deployments: "cm@4 ×2, up@4 ×1".
 * @param {{ cell: string, deployments: number }[]} next
 */
export const blockText = (next) => next.map(n => `${n.cell} ×${n.deployments}`).join(', ')

/**
 * The ratio and its interval: "2.04 [1.39, 2.99]", or why there is none yet.
 * @param {{ estimate: { ratio: number, lo: number, hi: number } | null }} look
 */
export const estimateText = (look) => (look.estimate
  ? `${num(look.estimate.ratio)} [${num(look.estimate.lo)}, ${num(look.estimate.hi)}]`
  : 'no interval yet')

/**
 * The looks as a table: one row a look, with the deployments measured per cell, the ratio and its repeated interval,
 * the alpha spent, the verdict and the block it chose next.
 * @param {any} a sweep.json's adaptive
 * @returns {{ header: string[], rows: string[][] }}
 */
export function looksTable (a) {
  // the cells measured at some look (a knee question may measure any of dozens)
  const cells = Object.keys(a.cells ?? {}).filter(c => a.looks.some(look => look.values?.[c]?.length))
  return {
    header: ['look', ...cells.map(c => `${c} deployments`), `${ratioName(a.question)} [interval]`, 'α spent', 'verdict', 'next block'],
    rows: a.looks.map(look => [
      `${look.look}/${a.maxLooks}`,
      ...cells.map(c => String(look.values?.[c]?.length ?? 0)),
      estimateText(look),
      small(look.alphaSpent),
      look.verdict,
      look.verdict === 'continue' && look.next?.length ? blockText(look.next) : '-'
    ])
  }
}

/** What the looks table shows, for the report. */
export const ADAPTIVE_HINT = 'After each block of fresh deployments the sweep looked: the ratio (or the value estimated) with its repeated 95% interval ' +
  '(valid at whichever look the sweep stops), the share of alpha spent so far (Lan–DeMets spending over the planned looks), ' +
  'and the verdict; it stops at the first look that answers (docs/statistics/adaptive.md).'

/**
 * The experiment's outcome in one line: "verdict: different at look 2 of 10 (answered): …", or that it has none yet.
 * @param {any} a sweep.json's adaptive
 */
export function adaptiveVerdict (a) {
  if (!a.verdict) return `no verdict yet: ${a.looks.length} look${a.looks.length === 1 ? '' : 's'} of at most ${a.maxLooks} taken`
  return `verdict: ${a.verdict} at look ${a.looks.at(-1).look} of ${a.maxLooks} (${a.ended})${a.why ? `: ${a.why}` : ''}`
}
