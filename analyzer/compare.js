// `analyzer fit` and `analyzer compare` as library calls: points per group, fits per model, and how groups differ.
import { NsError } from '../lib/errors.js'
import { fail, within } from '../lib/messages.js'
import { loadPoints } from './points.js'
import { fitUsl } from './fit/usl-fit.js'
import { fTest1 } from './stats/stats-math.js'
import { testGroups, COMPARE_DEFAULTS, ALPHA } from './stats/group-tests.js'
import { readRunList } from './report/report-runs.js'
import { whyCurvesBend } from './diagnosis/why-bends.js'
import { printedInterval, intervalKind } from './fit/fit-verdict.js'

/**
 * Fits each group of points with the requested models. A group that cannot be fitted keeps its error message;
 * when no group can be fitted at all, the first error is thrown (bad data: exit 2).
 * @param {string | string[]} sources sweep folders and/or CSV files
 * Every finished run is an observation (fits use each repeat); invalid runs are left out unless includeInvalid.
 * @param {{ model?: 'usl'|'amdahl'|'both', x?: string, groupBy?: string|string[], bootstrap?: number, seed?: number,
 *   weights?: 'relative'|'none'|'sd', includeInvalid?: boolean }} [opts]
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
        firstError ??= within(err, g.name)
        fits[m] = { error: { code: err.code, message: err.message } }
      }
    }
    const ok = models.filter(m => !fits[m].error)
    const test = ok.length === 2 ? coherencyTest(fits.usl, fits.amdahl) : null
    return { ...g, fits, better: test?.better ?? null, test }
  })
  if (firstError && groups.every(g => Object.values(g.fits).every(f => f.error))) throw firstError
  if (!groups.length) throw fail('NO_POINTS_TO_FIT', { sources })
  return { sources: [sources].flat(), x: loaded.x, groupBy: loaded.groupBy, skipped: loaded.skipped, groups }
}

/**
 * Does the coherency term earn its place? Amdahl is USL with lambda = 0, so the extra-sum-of-squares F test of
 * nested models answers it: F = (SSR_amdahl - SSR_usl) / (SSR_usl / (n - 3)) against F(1, n - 3).
 * @param {import('./fit/fit-stats.js').FitResult} usl
 * @param {import('./fit/fit-stats.js').FitResult} amdahl
 */
export function coherencyTest (usl, amdahl) {
  const dof = usl.dof
  if (dof < 1) return null
  const { f, p } = fTest1(amdahl.ssr, usl.ssr, dof)
  return { name: 'extra-sum-of-squares F (lambda = 0?)', f: Number.isFinite(f) ? f : null, dof: [1, dof], p, better: p < 0.05 ? 'usl' : 'amdahl' }
}

/**
 * One table of sigma, lambda, gamma, N*, X(N*) with intervals per group, sorted by benchmark and then by the most
 * throughput each group can reach; a plain-language line per row; and, per benchmark, every pair of groups tested on
 * what the design identifies (throughput at each N, speedup, ceiling, the ratio over N) with the deployment as the
 * unit, Holm's correction over the benchmark's tests, and the power for a stated effect (`pairs`,
 * analyzer/stats/group-tests.js). USL is fitted; a group with too few points for it falls back to Amdahl.
 * @param {string[]} sources
 * @param {{ model?: 'usl'|'amdahl', x?: string, groupBy?: string|string[], bootstrap?: number, seed?: number, weights?:
 *   'none'|'sd', includeInvalid?: boolean, margin?: number, effect?: number }} [opts] margin, effect: in percent
 *   (equivalence within ±margin; the power stated for an effect this large)
 */
export async function compare (sources, opts = {}) {
  const { x, groupBy, includeInvalid = false } = opts
  const loaded = await loadPoints(sources, { x, groupBy, includeInvalid })
  const { rows, pairs } = compareGroups(loaded.groups, opts)
  if (!rows.length) throw fail('NO_GROUPS_TO_COMPARE', { sources })
  // why each curve bends: the bottleneck its runs name at each N (sweep folders only: a CSV has no runs)
  const { runs } = await readRunList(sources)
  const fitted = new Map(rows.filter(r => r.model === 'usl').map(r => [r.name, r]))
  const bends = whyCurvesBend(loaded.groups.map(g => ({ ...g, fits: fitted.has(g.name) ? { usl: fitted.get(g.name) } : {} })), runs)
  const { margin, effect } = settingsOf(opts)
  return { sources, x: loaded.x, groupBy: loaded.groupBy, skipped: loaded.skipped, rows, pairs, settings: { margin, effect, alpha: ALPHA }, bends }
}

/**
 * --margin and --effect (percent) as fractions, their defaults where not given.
 * @param {{ margin?: number, effect?: number }} o
 */
function settingsOf ({ margin, effect }) {
  return { margin: margin === undefined ? COMPARE_DEFAULTS.margin : margin / 100, effect: effect === undefined ? COMPARE_DEFAULTS.effect : effect / 100 }
}

/**
 * The comparison of groups of points in memory (loadPoints' groups): each group's fit row, in the order of the
 * table, and the tests between them (group-tests.js testGroups).
 * @param {import('./points.js').PointGroup[]} groups
 * @param {{ model?: 'usl'|'amdahl', bootstrap?: number, seed?: number, weights?: 'relative'|'none'|'sd',
 *   margin?: number, effect?: number }} [opts] margin, effect: in percent
 * @returns {{ rows: any[], pairs: import('./stats/group-tests.js').Pair[] }}
 */
export function compareGroups (groups, { model = 'usl', bootstrap = 0, seed = 1, weights, margin, effect } = {}) {
  /** @type {any[]} */
  const rows = groups.map(g => compareRow(g, { model, bootstrap, seed, weights }))
  const context = r => JSON.stringify(Object.fromEntries(Object.entries(r.key).filter(([k]) => k !== 'strategy')))
  rows.sort((a, b) => context(a).localeCompare(context(b)) || (b.reach ?? -1) - (a.reach ?? -1) || a.name.localeCompare(b.name))
  const byName = new Map(groups.map(g => [g.name, g]))
  const pairs = testGroups(rows.map(r => byName.get(r.name)), settingsOf({ margin, effect }))
  return { rows, pairs }
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
  const interval = name => printedInterval(fit, name)
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
    ci95: {
      sigma: interval('sigma'),
      lambda: interval('lambda'),
      gamma: interval('gamma'),
      nStar: interval('nStar'),
      xStar: interval('xStar'),
      ceiling: interval('ceiling')
    },
    intervals: intervalKind(fit),
    bounds: fit.bounds,
    limitedBy: fit.limitedBy,
    verdict: fit.verdict,
    line: `${g.name}: ${fit.verdict}`,
    reach: fit.xStar ?? fit.ceiling ?? Math.max(...g.points.map(p => p.throughput))
  }
}
