// How groups differ (strategies, usually), on what the design identifies: the throughput at each N, the speedup
// X(N)/X(1), the ceiling (the highest throughput over N) and the ratio over all N. The unit of replication is the
// deployment: a deployment's repeats share what it got at deploy time (placement, caches, neighbours), so their mean
// is one unit (points.js deploymentsOf says which runs share one). Ratios are tested on logs
// (analyzer/stats/inference.js),
// Holm's correction holds the family-wise error of one comparison (every pair and quantity of a benchmark) at α, and
// each test ends different, equivalent within ±margin (TOST) or inconclusive, with the power for a stated effect.
// σ and λ are not tested between groups: at 4 to 8 values of N they trade off against each other, so a test of either
// answers a question the design cannot (docs/statistics/comparisons.md).
import { ALPHA, logContrast, holm } from './inference.js'
import { pooledSpread, powerOf, powerNow } from './power.js'
import { human } from '../fit/fit-verdict.js'

export { ALPHA }

/** Defaults: equivalence within ±5%, power stated for a 10% difference. */
export const COMPARE_DEFAULTS = Object.freeze({ margin: 0.05, effect: 0.1 })

/**
 * @typedef {{ n: number, throughput: number, deployment?: string|null }} UnitRow one run (or CSV row)
 * @typedef {{ name: string, key: Record<string, any>, observations: UnitRow[] }} TestGroup
 * @typedef {{ units: number[], runs: number, shared: number }} Cell one group at one N: a unit per deployment (the
 *   mean of its runs), how many runs, and how many deployments held more than one run
 * @typedef {'throughput'|'speedup'|'ceiling'|'overall'} Quantity
 * @typedef {{ quantity: Quantity, n: number|number[]|null, label: string, units: [number, number], ratio: number|null,
 *   ci95: [number, number]|null, p: number|null, pEquivalence: number|null, pHolm: number|null,
 *   pEquivalenceHolm: number|null, outcome: 'different'|'equivalent'|'inconclusive'|'untestable', why: string|null,
 *   power: import('./power.js').Power, line: string }} GroupTest units: deployments a side (the fewest over the cells
 *   it reads); ratio: a over b
 * @typedef {{ benchmark: string|null, context: string, a: string, b: string, family: number, tests: GroupTest[] }} Pair
 */

/** N in words: a whole N as it is (most are), others as people read numbers. */
const nText = n => (Number.isInteger(n) ? String(n) : human(n))
const logMean = xs => xs.reduce((s, x) => s + Math.log(x), 0) / xs.length

/**
 * A group's runs per N as units: the runs of one deployment averaged into one (a run with no deployment is its own).
 * @param {TestGroup} g
 * @returns {{ cells: Map<number, Cell>, spansN: boolean }} spansN: a deployment measured at more than one N (over
 *   concurrency one deployment serves every level), so cells at different N are not independent
 */
export function cellsOf (g) {
  /** @type {Map<number, Map<string, number[]>>} */
  const byN = new Map()
  const nsOf = new Map()
  g.observations.forEach((o, i) => {
    if (!(o.throughput > 0)) return
    const d = o.deployment ?? `row:${i}`
    if (!byN.has(o.n)) byN.set(o.n, new Map())
    byN.get(o.n).set(d, [...(byN.get(o.n).get(d) ?? []), o.throughput])
    nsOf.set(d, new Set([...(nsOf.get(d) ?? []), o.n]))
  })
  const cells = new Map([...byN].sort((x, y) => x[0] - y[0]).map(([n, deps]) => {
    const lists = [...deps.values()]
    return [n, { units: lists.map(l => l.reduce((s, x) => s + x, 0) / l.length), runs: lists.flat().length, shared: lists.filter(l => l.length > 1).length }]
  }))
  return { cells, spansN: [...nsOf.values()].some(s => s.size > 1) }
}

/** Why a cell cannot be a side of a test, or null. */
function tooFew (name, n, cell) {
  if (cell.units.length >= 2) return null
  const runs = cell.runs > 1 ? ` (its ${cell.runs} runs share one deployment)` : ''
  return `${name} has ${cell.units.length} deployment at N = ${nText(n)}${runs}; a test needs 2 or more a side`
}

/**
 * The tests of one pair, before Holm: each quantity the two groups' cells identify.
 * @param {ReturnType<typeof cellsOf>} ca
 * @param {ReturnType<typeof cellsOf>} cb
 * @param {[string, string]} names
 * @param {{ margin: number }} opts
 */
function pairTests (ca, cb, names, { margin }) {
  const common = [...ca.cells.keys()].filter(n => cb.cells.has(n))
  /** @type {any[]} */
  const tests = []
  const side = (n) => [ca.cells.get(n), cb.cells.get(n)]
  const whyOf = (...ns) => ns.flatMap(n => side(n).map((c, i) => tooFew(names[i], n, c))).find(Boolean) ?? null
  const unitsOf = (...ns) => /** @type {[number, number]} */ ([0, 1].map(i => Math.min(...ns.map(n => side(n)[i].units.length))))
  for (const n of common) {
    const [a, b] = side(n)
    tests.push({
      quantity: 'throughput',
      n,
      label: `throughput at N = ${nText(n)}`,
      units: unitsOf(n),
      cells: [[a, b]],
      why: whyOf(n),
      ...logContrast([a.units, b.units], [1, -1], { margin })
    })
  }
  if (common.length >= 2) {
    const [lo, hi] = [common[0], common.at(-1)]
    const [aLo, bLo] = side(lo)
    const [aHi, bHi] = side(hi)
    tests.push({
      quantity: 'speedup',
      n: [lo, hi],
      label: `speedup X(${nText(hi)})/X(${nText(lo)})`,
      units: unitsOf(lo, hi),
      cells: [[aHi, bHi], [aLo, bLo]],
      why: whyOf(lo, hi),
      ...logContrast([aHi.units, aLo.units, bHi.units, bLo.units], [1, -1, -1, 1], { margin })
    })
    // the ceiling: each group's highest throughput over the common N (a max of noisy cells is tested as its cell)
    const top = (c) => common.reduce((best, n) => (logMean(c.cells.get(n).units) > logMean(c.cells.get(best).units) ? n : best), common[0])
    const [ta, tb] = [top(ca), top(cb)]
    const [a, b] = [ca.cells.get(ta), cb.cells.get(tb)]
    tests.push({
      quantity: 'ceiling',
      n: [ta, tb],
      label: `ceiling (the highest throughput over N: at N = ${ta === tb ? nText(ta) : `${nText(ta)} and ${nText(tb)}`})`,
      units: /** @type {[number, number]} */ ([a.units.length, b.units.length]),
      cells: [[a, b]],
      why: tooFew(names[0], ta, a) ?? tooFew(names[1], tb, b),
      ...logContrast([a.units, b.units], [1, -1], { margin })
    })
  }
  // over all N: the mean of the per-N log ratios, N as the unit (each N's deployments are its own), so it can be made
  // with one deployment per cell; not when a deployment spans N
  if (common.length >= 3) {
    const ratios = common.map(n => Math.exp(logMean(side(n)[0].units) - logMean(side(n)[1].units)))
    const why = ca.spansN || cb.spansN ? 'a deployment measured several N, so the N are not independent units' : null
    tests.push({
      quantity: 'overall',
      n: null,
      label: `throughput over N = ${common.map(nText).join(', ')} (the mean ratio)`,
      units: unitsOf(...common),
      cells: common.map(side),
      common: common.length,
      why,
      ...(why
        ? { ratio: ratios.reduce((s, r) => s * r, 1) ** (1 / ratios.length), ci95: null, p: null, pEquivalence: null, se: null, df: null }
        : logContrast([ratios], [1], { margin }))
    })
  }
  return tests.map(t => (t.why ? { ...t, p: null, pEquivalence: null, ci95: null } : t))
}

const pText = p => (p < 0.001 ? '< 0.001' : `= ${human(p, 2)}`)
const ratioText = (t, names) => `${names[0]} / ${names[1]} = ${human(t.ratio, 3)}${t.ci95 ? ` [${human(t.ci95[0], 3)}, ${human(t.ci95[1], 3)}]` : ''}`

/** The outcome of a test in words: different (which is higher), equivalent within the margin, inconclusive. */
function outcomeLine (t, names, { margin, family }) {
  const holmText = `Holm over ${family} test${family === 1 ? '' : 's'}`
  if (t.outcome === 'untestable') return `${t.label}: cannot be tested: ${t.why ?? 'no spread between deployments'}`
  if (t.outcome === 'different') {
    const hi = t.ratio >= 1 ? names[0] : names[1]
    return `${t.label}: different: ${hi} is higher (${ratioText(t, names)}; p ${pText(t.pHolm)}, ${holmText})`
  }
  if (t.outcome === 'equivalent') {
    return `${t.label}: equivalent within ±${human(margin * 100)}% (${ratioText(t, names)}; TOST p ${pText(t.pEquivalenceHolm)}, ${holmText})`
  }
  return `${t.label}: inconclusive: neither different nor shown within ±${human(margin * 100)}% ` +
    `(${ratioText(t, names)}; p ${pText(t.pHolm)}, TOST p ${pText(t.pEquivalenceHolm)}, ${holmText})`
}

/**
 * Every pair of groups in one context (the same key but the strategy: one benchmark), tested on every quantity the
 * design identifies; one family per context for Holm's correction (the difference and the equivalence p-values each).
 * @param {TestGroup[]} groups in the order pairs are named (a before b)
 * @param {{ margin?: number, effect?: number|null, alpha?: number, words?: boolean }} [opts] margin: relative
 *   (±5%: 0.05); effect: the relative difference the power is stated for (null: no power); words: false leaves out
 *   what only a person reads (each test's line, the power's text and the deployments for 80%), the figures stay
 * @returns {Pair[]}
 */
export function testGroups (groups, { margin = COMPARE_DEFAULTS.margin, effect = COMPARE_DEFAULTS.effect, alpha = ALPHA, words = true } = {}) {
  const context = g => JSON.stringify(Object.fromEntries(Object.entries(g.key ?? {}).filter(([k]) => k !== 'strategy')))
  const cells = new Map(groups.map(g => [g.name, cellsOf(g)]))
  /** @type {Pair[]} */
  const pairs = []
  for (const ctx of [...new Set(groups.map(context))]) {
    const members = groups.filter(g => context(g) === ctx)
    const spread = pooledSpread(members.flatMap(g => [...cells.get(g.name).cells.values()]))
    /** @type {any[]} */
    const family = []
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        const [a, b] = [members[i], members[j]]
        const tests = pairTests(cells.get(a.name), cells.get(b.name), [a.name, b.name], { margin })
        pairs.push({ benchmark: a.key?.benchmark ?? null, context: ctx, a: a.name, b: b.name, family: 0, tests: /** @type {any[]} */ (tests) })
        family.push(...tests)
      }
    }
    const size = family.filter(t => t.p !== null).length
    const adjusted = holm(family.map(t => t.p))
    const equivalence = holm(family.map(t => t.pEquivalence))
    const memo = new Map()
    family.forEach((t, k) => {
      t.pHolm = adjusted[k]
      t.pEquivalenceHolm = equivalence[k]
      t.outcome = t.p === null ? 'untestable' : t.pHolm < alpha ? 'different' : t.pEquivalenceHolm < alpha ? 'equivalent' : 'inconclusive'
      const o = { spread, effect, alpha, family: Math.max(size, 1), planned: family.length, memo }
      t.power = effect === null ? null : words ? powerOf(t, o) : { effect, value: powerNow(t, o) }
    })
    for (const p of pairs.filter(x => x.context === ctx)) {
      p.family = size
      p.tests = p.tests.map((/** @type {any} */ { cells: _, common: __, se: ___, df: ____, ...t }) =>
        (words ? { ...t, line: outcomeLine(t, [p.a, p.b], { margin, family: size }) } : t))
    }
  }
  return pairs
}
