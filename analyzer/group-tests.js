// Does one group contend (sigma) or pay for coherency (lambda) more than another? Both groups are fitted jointly, the
// parameter shared versus separate, and the extra-sum-of-squares F test of the two nested models answers.
import { startsOf } from './usl-fit.js'
import { solve, solveProjected, curveParams, ssrOf } from './usl-solve.js'
import { fTest1 } from './stats-math.js'
import { human } from './fit-verdict.js'

/** The significance level of every test between groups. */
export const ALPHA = 0.05

const WORDS = {
  sigma: { symbol: 'σ', less: 'less contention', what: 'contention' },
  lambda: { symbol: 'λ', less: 'a smaller coherency penalty', what: 'coherency' }
}

/**
 * @typedef {'usl'|'amdahl'} Model
 * @typedef {import('./usl-solve.js').FitData} FitData
 * @typedef {import('./usl-solve.js').Params} Params
 * @typedef {{ n: number, throughput: number, sd?: number, count?: number }} Row
 * @typedef {{ data: FitData, models: [Model, Model] }} Joint two groups' rows in one data set (group 0 and 1)
 * @typedef {{ a: number, b: number, shared: number, F: number|null, df: [number, number], pValue: number, verdict:
 *   string, significant: boolean, less: string|null, advice: any }} TestResult
 */

/**
 * Two groups' rows as one data set, each row tagged with its group and weighing the same (the tests assume one
 * residual spread: weights estimated from a few repeats per N would make them reject far too often).
 * @param {Row[]} rowsA
 * @param {Row[]} rowsB
 * @param {[Model, Model]} models
 * @returns {Joint}
 */
export function jointData (rowsA, rowsB, models) {
  const rows = [...rowsA.map(r => ({ ...r, group: 0 })), ...rowsB.map(r => ({ ...r, group: 1 }))]
  const xs = rows.map(r => r.throughput)
  const data = { ns: rows.map(r => r.n), xs, w: rows.map(() => 1), group: rows.map(r => r.group), scale: Math.max(...xs), model: /** @type {Model} */ ('usl') }
  return { data, models }
}

/** One group's rows of a joint data set, fitted alone (a layout of one curve). */
function groupData (joint, g) {
  const ix = joint.data.ns.map((_, i) => i).filter(i => joint.data.group[i] === g)
  const xs = ix.map(i => joint.data.xs[i])
  return { ns: ix.map(i => joint.data.ns[i]), xs, w: ix.map(i => joint.data.w[i]), scale: Math.max(...xs), model: joint.models[g] }
}

const parameterCount = (/** @type {Model} */ m) => (m === 'usl' ? 3 : 2)

/**
 * The full model: every parameter separate, which is each group fitted alone. `known`: each group's parameters as
 * already fitted alone on the same rows (only the sums of squares are computed). `fast` (simulations) starts at
 * `starts` and uses the projected search.
 * @param {Joint} joint
 * @param {{ fast?: boolean, starts?: Params[], known?: Params[] }} [opts] starts, known: one per group
 * @returns {{ params: Params[], ssr: number, df: number }}
 */
export function fitSeparate (joint, { fast = false, starts, known } = {}) {
  const fits = [0, 1].map(g => {
    const data = groupData(joint, g)
    if (known) return { params: known[g], ssr: ssrOf(data, known[g]) }
    return fast ? solveProjected(data, [starts[g]]) : solve(data, starts ? [starts[g], ...startsOf(data)] : startsOf(data))
  })
  const params = fits.map(f => /** @type {Params} */ ({ lambda: 0, ...f.params }))
  const df = joint.data.ns.length - parameterCount(joint.models[0]) - parameterCount(joint.models[1])
  return { params, ssr: fits[0].ssr + fits[1].ssr, df }
}

/**
 * The restricted model: `kind` (sigma or lambda) shared by both groups, the other parameters separate.
 * @param {Joint} joint
 * @param {'sigma'|'lambda'} kind
 * @param {Params[]} separate each group's parameters in the full model (where the search starts)
 * @param {{ fast?: boolean, start?: Record<string, number>, passes?: number }} [opts] fast: the projected search
 *   (`passes` per start, default 1), from `start` alone when given (the values of an earlier restricted fit)
 * @returns {{ params: Params[], ssr: number, values: Record<string, number> }}
 */
export function fitShared (joint, kind, separate, { fast = false, start, passes = 1 } = {}) {
  const curves = joint.models.map((m, g) => ({
    gamma: `gamma${g}`,
    sigma: kind === 'sigma' ? 'sigma' : `sigma${g}`,
    lambda: m === 'amdahl' ? null : kind === 'lambda' ? 'lambda' : `lambda${g}`
  }))
  const names = [...new Set(curves.flatMap(c => [c.gamma, c.sigma, c.lambda]).filter(Boolean))]
  const data = { ...joint.data, layout: { names, curves } }
  // start from the separate fits, the shared parameter at either group's value
  const starts = separate.map(shared => {
    /** @type {Record<string, number>} */
    const v = {}
    curves.forEach((c, g) => {
      v[c.gamma] = separate[g].gamma
      v[c.sigma] = separate[g].sigma
      if (c.lambda) v[c.lambda] = separate[g].lambda
    })
    v[kind] = shared[kind]
    return v
  })
  const r = fast ? solveProjected(data, start ? [start] : starts, { passes }) : solve(data, starts)
  return { params: curves.map(c => curveParams(c, r.params)), ssr: r.ssr, values: r.params }
}

const pText = p => (p < 0.001 ? 'p < 0.001' : `p = ${human(p, 2)}`)

/**
 * Tests whether `kind` differs between two groups: the extra-sum-of-squares F of shared versus separate (df1 = 1,
 * df2 = observations - parameters of the full model) and a plain verdict at α = 0.05.
 * @param {Joint} joint
 * @param {'sigma'|'lambda'} kind
 * @param {{ names: [string, string], full?: ReturnType<typeof fitSeparate> }} opts the groups' names; the full model
 *   when already fitted
 * @returns {TestResult}
 */
export function testShared (joint, kind, { names, full = fitSeparate(joint) }) {
  const shared = fitShared(joint, kind, full.params)
  const { f, p } = fTest1(shared.ssr, full.ssr, full.df)
  const [a, b] = full.params.map(q => q[kind])
  const w = WORDS[kind]
  const values = (x, y) => `${w.symbol} ${human(x)} vs ${human(y)}, ${pText(p)}`
  const significant = p < ALPHA
  const lessIsA = a < b
  const verdict = significant
    ? `${lessIsA ? names[0] : names[1]} has ${w.less} than ${lessIsA ? names[1] : names[0]} (${lessIsA ? values(a, b) : values(b, a)})`
    : `no difference in ${w.what} detectable (${values(a, b)})`
  return {
    a,
    b,
    shared: shared.params[0][kind],
    F: Number.isFinite(f) ? f : null,
    df: [1, full.df],
    pValue: p,
    verdict,
    significant,
    less: significant ? (lessIsA ? names[0] : names[1]) : null,
    advice: null
  }
}
