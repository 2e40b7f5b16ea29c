// Fits (issue 25, item 3): analyzer/fit/usl-fit.js's fitUsl on seeded designs with a known truth
// (calibration/synth.js):
// the coverage of every interval it prints, how often it prints one for a term the truth lacks, whether AICc names a
// true ceiling, and how often it says "retrograde" of a curve that does not fall. All scenarios read one simulation.
import { fitUsl } from '../../analyzer/fit/usl-fit.js'
import { randomSource, designRows, trueThroughput } from '../synth.js'

const GAMMA = 100
/** The truths: linear, contention-limited (Amdahl), coherency-limited (N* = 11) and a hard ceiling at N = 3.5. */
/** @type {Readonly<Record<string, any>>} */
export const TRUTHS = Object.freeze({
  linear: { kind: 'usl', gamma: GAMMA, sigma: 0, lambda: 0 },
  contention: { kind: 'usl', gamma: GAMMA, sigma: 0.1, lambda: 0 },
  coherency: { kind: 'usl', gamma: GAMMA, sigma: 0.03, lambda: 0.008 },
  ceiling: { kind: 'ceiling', gamma: GAMMA, ceiling: 3.5 * GAMMA }
})
export const DESIGNS = Object.freeze({ '1..4': [1, 2, 3, 4], '1..8': [1, 2, 3, 4, 6, 8], '1..16': [1, 2, 4, 6, 8, 12, 16] })
/** Runs per N (each on its own deployment) and multiplicative noise: every pair in full mode, one per design quick. */
const FULL = [[1, 0.02], [1, 0.05], [3, 0.02], [3, 0.05], [5, 0.02], [5, 0.05]]
const QUICK = { '1..4': [[3, 0.02]], '1..8': [[1, 0.05]], '1..16': [[2, 0.035]] }

/** @param {any} iv @param {number} v */
const inside = (iv, v) => (iv[0] ?? 0) <= v * (1 + 1e-9) && v <= (iv[1] ?? Infinity) * (1 + 1e-9)
const peakOf = t => (t.kind === 'usl' && t.lambda > 0 ? Math.sqrt((1 - t.sigma) / t.lambda) : null)
/** Does the true curve fall somewhere over the N measured? */
const falls = (t, ns) => ns.some((n, i) => i > 0 && trueThroughput(t, n) < Math.max(...ns.slice(0, i).map(m => trueThroughput(t, m))) * (1 - 1e-9))

/**
 * One trial's figures: for each interval, whether it was printed and covered the truth; false claims; choice; fall.
 * @param {keyof typeof TRUTHS} name
 * @param {number[]} ns
 * @param {ReturnType<typeof randomSource>} rng
 * @param {number} repeats
 * @param {number} cv
 */
function trial (name, ns, rng, repeats, cv) {
  const truth = TRUTHS[name]
  const rows = designRows(rng, { truth, ns, deployments: repeats, cv })
  const f = /** @type {any} */ (fitUsl(rows, { model: 'usl' }))
  const out = {}
  if (truth.kind === 'usl') {
    for (const k of ['sigma', 'lambda']) {
      const printed = f.ci95[k] !== null
      out[k] = { printed, covered: printed && inside(f.ci95[k], truth[k]) }
      // the one-sided bound printed for a term not identifiable (a truth at 0 is always under it: the false claims
      // below judge those)
      const bound = f.bound95[k]
      if (truth[k] > 0 && bound !== null) out[`${k}Bound`] = { printed: true, covered: truth[k] <= bound * (1 + 1e-9) }
      // whichever is printed, the interval or the bound: every fit says one (not a selection)
      if (truth[k] > 0 && (printed || bound !== null)) out[`${k}Either`] = { printed: true, covered: printed ? out[k].covered : out[`${k}Bound`].covered }
      // the term is absent from the truth: an interval clear of 0 is a false claim
      if (truth[k] === 0) out[`${k}Absent`] = printed
    }
    if (f.ci95.gamma) out.gamma = { printed: true, covered: inside(f.ci95.gamma, truth.gamma) }
    const peak = peakOf(truth)
    // N*: a two-sided interval, or "N* ≥ lo" when no peak (lambda = 0) is within the region
    if (peak !== null && f.ci95.nStar) {
      out[f.ci95.nStar[1] === null ? 'nStarBound' : 'nStar'] = { printed: true, covered: inside(f.ci95.nStar, peak) }
      out.nStarEither = { printed: true, covered: inside(f.ci95.nStar, peak) }
    }
    if (peak === null) out.peakAbsent = f.ci95.nStar !== null && f.ci95.nStar[1] !== null
    if (name === 'linear' && f.ceilingFit?.ci95) out.ceilingAbsent = f.ceilingFit.ci95.changePoint[1] !== null
    if (name === 'contention') {
      const a = /** @type {any} */ (fitUsl(rows, { model: 'amdahl' }))
      if (a.ci95.ceiling) out.asymptote = { printed: true, covered: inside(a.ci95.ceiling, truth.gamma / truth.sigma) }
    }
  } else if (f.ceilingFit?.ci95) {
    const ci = f.ceilingFit.ci95
    out.changePoint = { printed: true, covered: inside(ci.changePoint, truth.ceiling / truth.gamma) }
    out.ceiling = { printed: true, covered: inside(ci.ceiling, truth.ceiling) }
  }
  // the N said to identify lambda, with what it was said of (checked by fit.identifying-n)
  if (f.identifyAt?.lambda && f.bound95.lambda > 0) {
    out.suggestion = {
      ns,
      repeats,
      at: f.identifyAt.lambda,
      truth: { kind: 'usl', gamma: f.gamma, sigma: f.sigma, lambda: f.bound95.lambda },
      cv: Math.sqrt(f.ssr / f.dof)
    }
  }
  out.choseCeiling = f.choice.model === 'ceiling'
  out.retrograde = /retrograde/.test(f.verdict)
  out.falls = falls(truth, ns)
  return out
}

const memo = new Map()

/**
 * Every cell (truth x design x runs per N x noise) simulated once per trial count, from a fixed seed (the same
 * numbers whichever scenario asks first).
 * @param {number} trials per cell
 * @param {boolean} full every (runs, noise) pair, or one per design
 */
function simulate (trials, full) {
  const key = `${trials}:${full}`
  if (memo.has(key)) return memo.get(key)
  const rng = randomSource(25003 + trials)
  const cells = []
  for (const [design, ns] of Object.entries(DESIGNS)) {
    for (const [repeats, cv] of full ? FULL : QUICK[design]) {
      for (const name of /** @type {(keyof typeof TRUTHS)[]} */ (Object.keys(TRUTHS))) {
        const cell = rng.fork()
        const results = Array.from({ length: trials }, () => trial(name, ns, cell, repeats, cv))
        cells.push({
          truth: name,
          design,
          repeats,
          cv,
          results,
          label: `${name}, N = ${design}, ${repeats} run${repeats > 1 ? 's' : ''}/N, ${+(cv * 100).toFixed(1)}%`
        })
      }
    }
  }
  memo.set(key, cells)
  return cells
}

const share = (xs, pick) => {
  const v = xs.map(pick).filter(x => x !== undefined)
  return { n: v.length, p: v.length ? v.filter(Boolean).length / v.length : NaN }
}
/** Cells whose coverage rests on at least this many printed intervals. */
const MIN_PRINTED = 40
/**
 * A cell's design identifies a term when the fit prints its interval in at least this share of the trials (80%, the
 * usual power). Below it, the intervals printed are those whose data happened to clear 0: a selection, whose coverage
 * is listed, not judged (it fell to 82–89% for σ where printed in 8–35% of the trials, issue 25's N = 1..8 case).
 */
const IDENTIFIES = 0.8
/** A bound is judged where it is printed in at least half of the trials (where it is rare, it is the selection). */
const BOUNDS = 0.5

/**
 * Coverage of one printed interval per cell where it was printed often enough; the value is the cell farthest from
 * 95% (the lowest for a one-sided bound). Where the interval is printed only when the data happen to clear 0 (a
 * design that does not identify the term) — or a bound only when they happen not to — what is printed is a
 * selection: its coverage is listed, not judged.
 * @param {string} key
 * @param {number} identifies the share of trials a cell must print it in to be judged
 * @param {boolean} twoSided
 */
function coverage (key, identifies = IDENTIFIES, twoSided = true) {
  return ({ trials, full }) => {
    const all = simulate(trials, full).map(c => {
      const printed = c.results.filter(r => r[key]?.printed)
      const judged = printed.length >= Math.max(MIN_PRINTED, identifies * c.results.length)
      return {
        case: `${c.label} (printed ${printed.length}/${c.results.length})${judged ? '' : ', not judged'}`,
        value: printed.filter(r => r[key].covered).length / printed.length,
        n: printed.length,
        judged
      }
    }).filter(c => c.n > 0)
    const cells = all.filter(c => c.judged)
    if (!cells.length) return { value: NaN, worst: 'never printed' }
    // a two-sided target: the cell farthest from 95%; a lower bound: the lowest
    const far = twoSided ? c => Math.abs(c.value - 0.95) : c => 1 - c.value
    const worst = cells.reduce((a, c) => (far(c) > far(a) ? c : a), cells[0])
    return {
      value: worst.value,
      worst: worst.case,
      cells: all.map(c => ({ case: c.case, value: c.value })),
      note: `judged where printed in ≥ ${identifies * 100}% of the trials and ≥ ${MIN_PRINTED} times; the rest listed`
    }
  }
}

/** The largest share per cell of an event over the trials where it is defined. */
function worstShare (pick, keep = () => true) {
  return ({ trials, full }) => {
    const cells = simulate(trials, full).filter(keep).map(c => ({ case: c.label, ...share(c.results, pick) })).filter(c => c.n > 0)
    const worst = cells.reduce((a, c) => (c.p > a.p ? c : a), cells[0])
    return { value: worst.p, worst: worst.case, cells: cells.map(c => ({ case: c.case, value: c.p })) }
  }
}

const AREA = 'fits'
const trials = { quick: 150, full: 400 }
const grid = 'truths linear, contention, coherency (N* 11), ceiling (N 3.5); N = 1..4, 1..8, 1..16; 1–5 runs/N; 2–5% noise'
/** @param {any} run */
const withMode = run => ({ trials: t, rng }) => run({ trials: t, rng, full: t >= trials.full })

/** @type {import('../harness.js').Scenario[]} */
const COVERAGE = [
  ['sigma', 'σ'], ['lambda', 'λ'], ['gamma', 'γ (X at N = 1)'], ['nStar', 'N* (both ends)'], ['changePoint', 'the change point of linear-to-ceiling'],
  ['ceiling', 'the ceiling C of linear-to-ceiling'], ['asymptote', 'the Amdahl asymptote γ/σ']
].map(([key, name]) => ({
  id: `fit.coverage-${key.toLowerCase()}`,
  area: AREA,
  figure: `coverage of the printed 95% interval of ${name} (${key === 'gamma' ? 'a t interval on log γ' : 'profile likelihood'})`,
  grid,
  target: /** @type {import('../harness.js').Target} */ ({ between: [0.9, 0.98] }),
  trials,
  run: withMode(coverage(key))
})).concat([
  ['sigmaEither', 'σ: its interval, or its bound where not identifiable'], ['lambdaEither', 'λ: its interval, or its bound where not identifiable'],
  ['nStarEither', 'N*: its interval, or "N* ≥ bound" where no peak is excluded']
].map(([key, name]) => ({
  id: `fit.coverage-${key.toLowerCase()}`,
  area: AREA,
  figure: `coverage of what is printed of ${name} (every fit says one: no selection; the bounds are conservative)`,
  grid,
  target: /** @type {import('../harness.js').Target} */ ({ min: 0.9 }),
  trials,
  run: withMode(coverage(key, 0, false))
}))).concat([
  ['sigmaBound', 'σ ≤ bound, printed where σ is not identifiable'], ['lambdaBound', 'λ ≤ bound, printed where λ is not identifiable'],
  ['nStarBound', 'N* ≥ bound, printed where no peak is within the region']
].map(([key, name]) => ({
  id: `fit.coverage-${key.toLowerCase()}`,
  area: AREA,
  figure: `coverage of the one-sided 95% bound ${name}, where the design mostly cannot identify it (conservative)`,
  grid,
  target: /** @type {import('../harness.js').Target} */ ({ min: 0.9 }),
  trials,
  run: withMode(coverage(key, BOUNDS, false))
})))

/** @type {import('../harness.js').Scenario[]} */
export const SCENARIOS = COVERAGE.concat([
  {
    id: 'fit.unidentified-printed',
    area: AREA,
    figure: 'an interval printed for a term the truth lacks (σ or λ clear of 0, a bounded N*, a ceiling inside a linear range)',
    grid,
    target: { max: 0.06 },
    trials,
    run: withMode(worstShare(r => {
      const claims = ['sigmaAbsent', 'lambdaAbsent', 'peakAbsent', 'ceilingAbsent'].filter(k => r[k] !== undefined)
      return claims.length ? claims.some(k => r[k]) : undefined
    }))
  },
  {
    id: 'fit.identifying-n',
    area: AREA,
    figure: '"a λ as large as the bound would be told from 0 with N up to M": λ identified when that curve is measured so',
    grid: 'every fit above that printed it (up to 60 per cell): its curve with λ at its bound, its noise and runs per N, N doubled up to M',
    target: { min: 0.7 },
    trials,
    run: withMode(({ trials: t, full, rng }) => {
      const cells = simulate(t, full).map(c => {
        const said = c.results.map(r => r.suggestion).filter(Boolean).slice(0, 60)
        const told = said.filter(x => {
          const ns = [...x.ns]
          for (let m = ns.at(-1) * 2; m <= x.at; m *= 2) ns.push(m)
          const f = /** @type {any} */ (fitUsl(designRows(rng, { truth: x.truth, ns, deployments: x.repeats, cv: x.cv }), { model: 'usl' }))
          return f.ci95.lambda !== null
        }).length
        return { case: `${c.label} (${said.length} said)`, value: told / said.length, n: said.length }
      }).filter(c => c.n >= 10)
      const worst = cells.reduce((a, c) => (c.value < a.value ? c : a), cells[0])
      return {
        value: worst.value,
        worst: worst.case,
        cells: cells.map(c => ({ case: c.case, value: c.value })),
        note: 'the expected information promises about 80%; cells with at least 10 suggestions'
      }
    })
  },
  {
    id: 'fit.model-choice',
    area: AREA,
    figure: 'a true ceiling named by AICc (linear-to-ceiling chosen), at N = 1..8 and 1..16',
    grid: 'ceiling truth at N 3.5; N = 1..8, 1..16; 1–5 runs/N; 2–5% noise',
    target: { min: 0.8 },
    trials,
    run: withMode(({ trials: t, full }) => {
      const cells = simulate(t, full).filter(c => c.truth === 'ceiling')
        .map(c => ({ case: c.label, design: c.design, ...share(c.results, r => r.choseCeiling) }))
      const judged = cells.filter(c => c.design !== '1..4')
      const worst = judged.reduce((a, c) => (c.p < a.p ? c : a), judged[0])
      const wrong = simulate(t, full).filter(c => c.truth !== 'ceiling')
        .map(c => ({ case: `${c.label}: ceiling chosen`, value: share(c.results, r => r.choseCeiling).p }))
      return {
        value: worst.p,
        worst: worst.case,
        cells: [...cells.map(c => ({ case: c.case, value: c.p })), ...wrong],
        note: 'N = 1..4 and the other truths listed, not held to the target'
      }
    })
  },
  {
    id: 'fit.false-retrograde',
    area: AREA,
    figure: '"retrograde" said of a curve that does not fall over the N measured',
    grid,
    target: { max: 0.05 },
    trials,
    run: withMode(({ trials: t, full }) => {
      const out = worstShare(r => (r.falls ? undefined : r.retrograde))({ trials: t, full })
      const power = simulate(t, full).filter(c => c.results[0].falls)
        .map(c => ({ case: `${c.label}: falls, said`, value: share(c.results, r => r.retrograde).p }))
      return {
        ...out,
        cells: [...out.cells, ...power],
        note: 'the cells where the truth falls (coherency at N = 1..16) give the detection rate, not held to the target'
      }
    })
  }
])
