// `analyzer fit` and `analyzer compare` as library calls: points per group, fits per model, and how groups differ.
import { NsError } from '../lib/errors.js'
import { loadPoints } from './points.js'
import { fitUsl } from './usl-fit.js'
import { fTest1 } from './stats-math.js'
import { jointData, fitSeparate, testShared } from './group-tests.js'
import { adviseTest } from './power.js'
import { readRunList } from './report-runs.js'
import { whyCurvesBend } from './why-bends.js'

/**
 * @typedef {import('./group-tests.js').TestResult} TestResult
 * @typedef {{ benchmark: string|null, a: string, b: string, models: ['usl'|'amdahl', 'usl'|'amdahl'], observations:
 *   [number, number], sigma: TestResult|null, lambda: TestResult|null, advice: import('./power.js').Advice|null,
 *   error?: string }} Pair two groups of a benchmark tested; error (and no tests) when the joint fit failed
 */

/**
 * Fits each group of points with the requested models. A group that cannot be fitted keeps its error message;
 * when no group can be fitted at all, the first error is thrown (bad data: exit 2).
 * @param {string | string[]} sources sweep folders and/or CSV files
 * Every finished run is an observation (fits use each repeat); invalid runs are left out unless includeInvalid.
 * @param {{ model?: 'usl'|'amdahl'|'both', x?: string, groupBy?: string|string[], bootstrap?: number, seed?: number,
 *   weights?: 'none'|'sd', includeInvalid?: boolean }} [opts]
 */
export async function fitSources (sources, { model = 'usl', x, groupBy, bootstrap = 0, seed = 1, weights, includeInvalid = false } = {}) {
  const models = model === 'both' ? ['usl', 'amdahl'] : [model]
  const loaded = await loadPoints(sources, { x, groupBy, includeInvalid })
  let firstError = null
  const groups = loaded.groups.map(g => {
    const fits = {}
    for (const m of models) {
      try {
        fits[m] = fitUsl(g.observations, { model: /** @type {'usl'|'amdahl'} */ (m), bootstrap, seed, weights, unit: g.unit })
      } catch (err) {
        if (!(err instanceof NsError)) throw err
        firstError ??= new NsError(err.code, `${g.name}: ${err.message}`)
        fits[m] = { error: { code: err.code, message: err.message } }
      }
    }
    const ok = models.filter(m => !fits[m].error)
    const test = ok.length === 2 ? coherencyTest(fits.usl, fits.amdahl) : null
    return { ...g, fits, better: test?.better ?? null, test }
  })
  if (firstError && groups.every(g => Object.values(g.fits).every(f => f.error))) throw firstError
  if (!groups.length) throw new NsError('NS_ERR_BAD_DATA', `${[sources].flat().join(', ')}: no points to fit`)
  return { sources: [sources].flat(), x: loaded.x, groupBy: loaded.groupBy, skipped: loaded.skipped, groups }
}

/**
 * Does the coherency term earn its place? Amdahl is USL with lambda = 0, so the extra-sum-of-squares F test of
 * nested models answers it: F = (SSR_amdahl - SSR_usl) / (SSR_usl / (n - 3)) against F(1, n - 3).
 * @param {import('./fit-stats.js').FitResult} usl
 * @param {import('./fit-stats.js').FitResult} amdahl
 */
export function coherencyTest (usl, amdahl) {
  const dof = usl.dof
  if (dof < 1) return null
  const { f, p } = fTest1(amdahl.ssr, usl.ssr, dof)
  return { name: 'extra-sum-of-squares F (lambda = 0?)', f: Number.isFinite(f) ? f : null, dof: [1, dof], p, better: p < 0.05 ? 'usl' : 'amdahl' }
}

const overlaps = (a, b) => a[0] <= b[1] && b[0] <= a[1]

/**
 * One table of sigma, lambda, gamma, N*, X(N*) with intervals per group, sorted by benchmark and then by the most
 * throughput each group can reach; a plain-language line per row; and, per benchmark, every pair of groups tested:
 * sigma (and lambda when both are USL) shared versus separate in a joint fit of both groups' runs, with an F test, a
 * verdict, and when no difference is found how many repeats or more N would find it (`pairs`). `overlaps` keeps the
 * older reading: whether the two sigma intervals overlap.
 * USL is fitted; a group with too few points for it falls back to Amdahl.
 * @param {string[]} sources
 * @param {{ model?: 'usl'|'amdahl', x?: string, groupBy?: string|string[], bootstrap?: number, seed?: number, weights?:
 *   'none'|'sd', includeInvalid?: boolean }} [opts]
 */
export async function compare (sources, { model = 'usl', x, groupBy, bootstrap = 0, seed = 1, weights, includeInvalid = false } = {}) {
  const loaded = await loadPoints(sources, { x, groupBy, includeInvalid })
  /** @type {any[]} */
  const rows = loaded.groups.map(g => compareRow(g, { model, bootstrap, seed, weights }))
  const context = r => JSON.stringify(Object.fromEntries(Object.entries(r.key).filter(([k]) => k !== 'strategy')))
  rows.sort((a, b) => context(a).localeCompare(context(b)) || (b.reach ?? -1) - (a.reach ?? -1) || a.name.localeCompare(b.name))
  const groups = new Map(loaded.groups.map(g => [g.name, g]))
  const overlapping = []
  /** @type {Pair[]} */
  const pairs = []
  for (let i = 0; i < rows.length; i++) {
    for (let j = i + 1; j < rows.length; j++) {
      const a = rows[i]
      const b = rows[j]
      if (context(a) !== context(b) || !a.model || !b.model) continue
      const [ga, gb] = [groups.get(a.name), groups.get(b.name)]
      try {
        // unweighted fits of the rows are the full model's already; weighted ones are not
        const known = weights === undefined || weights === 'none' ? [a, b] : undefined
        pairs.push(comparePair(ga, gb, [a.model, b.model], { seed, known }))
      } catch (err) {
        if (!(err instanceof NsError)) throw err
        const observations = /** @type {[number, number]} */ ([ga.observations.length, gb.observations.length])
        pairs.push({ benchmark: a.key.benchmark ?? null, a: a.name, b: b.name, models: [a.model, b.model], observations, sigma: null, lambda: null, advice: null, error: err.message })
      }
      if (!a.ci95?.sigma || !b.ci95?.sigma) continue
      const overlap = overlaps(a.ci95.sigma, b.ci95.sigma)
      const less = a.sigma < b.sigma ? a : b
      overlapping.push({
        a: a.name,
        b: b.name,
        sigma: { [a.name]: a.ci95.sigma, [b.name]: b.ci95.sigma },
        overlap,
        line: overlap
          ? `${a.name} vs ${b.name}: sigma intervals overlap: the data cannot tell their contention apart`
          : `${a.name} vs ${b.name}: sigma intervals do not overlap: ${less.name} has less contention`
      })
    }
  }
  if (!rows.length) throw new NsError('NS_ERR_BAD_DATA', `${sources.join(', ')}: no groups of points to compare`)
  // why each curve bends: the bottleneck its runs name at each N (sweep folders only: a CSV has no runs)
  const { runs } = await readRunList(sources)
  const fitted = new Map(rows.filter(r => r.model === 'usl').map(r => [r.name, r]))
  const bends = whyCurvesBend(loaded.groups.map(g => ({ ...g, fits: fitted.has(g.name) ? { usl: fitted.get(g.name) } : {} })), runs)
  return { sources, x: loaded.x, groupBy: loaded.groupBy, skipped: loaded.skipped, rows, overlaps: overlapping, pairs, bends }
}

/**
 * Two groups of one benchmark tested against each other on all their runs: sigma shared versus separate, and lambda
 * when both are USL (Amdahl has none); a test without a verdict gets advice (repeats per N, more N). `advice` is that
 * of the first test without a verdict (contention first), null when every test reached one.
 * Every run weighs the same in these tests, whatever --weights: weights estimated from two repeats per N made the F
 * test reject a true "no difference" about 23% of the time instead of 5%.
 * @param {import('./points.js').PointGroup} a
 * @param {import('./points.js').PointGroup} b
 * @param {['usl'|'amdahl', 'usl'|'amdahl']} models as each group was fitted
 * @param {{ seed?: number, known?: import('./usl-solve.js').Params[] }} opts known: each group's unweighted fit on
 *   these observations, when already made
 * @returns {Pair}
 */
export function comparePair (a, b, models, { seed = 1, known }) {
  const joint = jointData(a.observations, b.observations, models)
  const full = fitSeparate(joint, { known: known?.map(f => ({ gamma: f.gamma, sigma: f.sigma, lambda: f.lambda })) })
  const names = /** @type {[string, string]} */ ([a.name, b.name])
  const kinds = models.every(m => m === 'usl') ? ['sigma', 'lambda'] : ['sigma']
  const tests = Object.fromEntries(kinds.map(kind => {
    const t = testShared(joint, /** @type {'sigma'|'lambda'} */ (kind), { names, full })
    if (!t.significant) t.advice = adviseTest(joint, /** @type {'sigma'|'lambda'} */ (kind), { full, seed })
    return [kind, t]
  }))
  return {
    benchmark: a.key.benchmark ?? null,
    a: a.name,
    b: b.name,
    models,
    observations: /** @type {[number, number]} */ ([a.observations.length, b.observations.length]),
    sigma: tests.sigma,
    lambda: tests.lambda ?? null,
    advice: tests.sigma.advice ?? tests.lambda?.advice ?? null
  }
}

/**
 * One row of the comparison: USL (or Amdahl when there are too few points) for a group, intervals, verdict line.
 * @returns {any}
 */
function compareRow (g, { model, bootstrap, seed, weights }) {
  const base = { name: g.name, key: g.key, unit: g.unit, points: g.points.length, observations: g.observations.length, excluded: g.excluded, notes: g.notes }
  let fit = null
  let error = null
  for (const m of model === 'usl' ? ['usl', 'amdahl'] : ['amdahl']) {
    try {
      fit = fitUsl(g.observations, { model: /** @type {'usl'|'amdahl'} */ (m), bootstrap, seed, weights, unit: g.unit })
      break
    } catch (err) {
      if (!(err instanceof NsError)) throw err
      error ??= err.message
    }
  }
  if (!fit) return { ...base, model: null, error, line: `${g.name}: cannot fit (${error})`, reach: null }
  const interval = name => fit.bootstrapCi?.[name] ?? fit.ci95[name]
  return {
    ...base,
    model: fit.model,
    fallback: fit.model !== model ? error : undefined,
    sigma: fit.sigma,
    lambda: fit.lambda,
    gamma: fit.gamma,
    nStar: fit.nStar,
    xStar: fit.xStar,
    ceiling: fit.ceiling,
    r2: fit.r2,
    ci95: { sigma: interval('sigma'), lambda: interval('lambda'), gamma: interval('gamma'), nStar: interval('nStar'), xStar: interval('xStar'), ceiling: interval('ceiling') },
    intervals: fit.bootstrapCi ? 'bootstrap' : 't',
    bounds: fit.bounds,
    limitedBy: fit.limitedBy,
    verdict: fit.verdict,
    line: `${g.name}: ${fit.verdict}`,
    reach: fit.xStar ?? fit.ceiling ?? Math.max(...g.points.map(p => p.throughput))
  }
}
