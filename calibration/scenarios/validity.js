// Run validity and duration: the `unstable` check (executor/validity.js judgeRun on the analyzer's stabilityOf) and
// --duration auto's stopping rule (analyzer/samples/steady-state.js autoDurationReached), on synthetic completions per
// tenth
// of a second with a known truth (calibration/synth.js tenthSeries: a per-second variation, its lag-1
// autocorrelation, Poisson counting noise per tenth, warm-ups and drifts).
import { stabilityOf } from '../../analyzer/samples/summary.js'
import { autoDurationReached } from '../../analyzer/samples/steady-state.js'
import { judgeRun } from '../../executor/validity.js'
import { dispersedTenthSeries, tenthSeries } from '../synth.js'

const AREA = 'run validity'
/** Every steady duration the shipped experiments (experiments/*.yml) and the README's default use, in seconds. */
const DURATIONS = [2, 4, 5, 6, 8, 10, 30, 60]
const CVS = [0.01, 0.05, 0.1]
const RHOS = [0, 0.25, 0.5]
const RATE = 1000
const pct = (x) => `${Math.round(x * 100)}%`
/** A cell whose figure is a share of fewer trials than this (runs judged, runs stopped) is listed, not held. */
const MIN_COUNTED = 30

/** The figures of one series as a run would have them: its summary's stability, judged by the `unstable` row. */
function judge (perTenth) {
  const stability = stabilityOf(perTenth)
  const v = judgeRun({ summary: { stability }, generator: {}, slo: { errors: 1 } }, { only: ['unstable'] })
  return { stability, flagged: v.flags.some(f => f.name === 'unstable' && f.severity === 'invalid'), unchecked: v.unchecked.length > 0 }
}

/**
 * The share of trials of each cell for which `event` holds; the worst cell by `worse`.
 * @template C
 * @param {C[]} cells
 * @param {(c: C) => string} name
 * @param {number} trials
 * @param {any} rng
 * @param {(c: C, rng: any) => boolean | null} event null: the trial does not count (not judged, not stopped)
 * @param {'max'|'min'} worst
 */
function byCell (cells, name, trials, rng, event, worst) {
  const out = cells.map(c => {
    const r = rng.fork()
    let hits = 0
    let counted = 0
    for (let i = 0; i < trials; i++) {
      const e = event(c, r)
      if (e === null) continue
      counted++
      if (e) hits++
    }
    return { case: `${name(c)} (${counted} counted)`, value: counted ? hits / counted : worst === 'max' ? 0 : 1, counted }
  })
  // a share of the trials that count (runs judged, runs stopped) is held against the target only where at least
  // MIN_COUNTED trials counted: the others are listed
  const held = out.filter(c => c.counted >= MIN_COUNTED)
  const w = (held.length ? held : out).reduce((a, c) => ((worst === 'max' ? c.value > a.value : c.value < a.value) ? c : a))
  return { value: w.value, worst: w.case, cells: out.map(({ counted, ...c }) => c) }
}

const grid = (durations, cvs, rhos) => durations.flatMap(seconds => cvs.flatMap(cv => rhos.map(rho => ({ seconds, cv, rho }))))
const cellName = (c) => `${c.seconds} s, cv ${pct(c.cv)}, ρ ${c.rho}`

/** @type {import('../harness.js').Scenario[]} */
export const SCENARIOS = [
  {
    id: 'validity.unstable-false-alarms',
    area: AREA,
    figure: 'false alarms of `unstable` on stationary throughput (share of runs flagged)',
    grid: `${DURATIONS.join(', ')} s; per-second cv 1–10%, ρ 0–0.5; Poisson counts per tenth at ${RATE} req/s (quick: cv 10%, ρ 0 and 0.5)`,
    target: { max: 0.05 },
    trials: { quick: 150, full: 600 },
    run ({ trials, rng }) {
      const cells = trials < 600 ? grid(DURATIONS, [0.1], [0, 0.5]) : grid(DURATIONS, CVS, RHOS)
      const r = byCell(cells, cellName, trials, rng, (c, g) => judge(tenthSeries(g, { seconds: c.seconds, rate: RATE, cv: c.cv, rho: c.rho })).flagged, 'max')
      return { ...r, note: 'runs too short to judge are neither flagged nor valid: counted as not flagged' }
    }
  },
  {
    id: 'validity.drift-detected',
    area: AREA,
    figure: 'a 10% drift over 20 s flagged `unstable` (detection)',
    grid: '21 s (20 judged), drift 10% over them; cv 1–2%, ρ 0–0.25; Poisson at 5000 req/s (per-second variation 1.7–2.4% in all)',
    target: { min: 0.8 },
    trials: { quick: 80, full: 500 },
    run ({ trials, rng }) {
      // the drift is linear from the first tenth to the last: 10% over the 20 judged seconds is 10.5% over 21
      return byCell(grid([21], [0.01, 0.02], [0, 0.25]), cellName, trials, rng,
        (c, g) => judge(tenthSeries(g, { seconds: 21, rate: 5000, cv: c.cv, rho: c.rho, drift: 0.105 })).flagged, 'min')
    }
  },
  {
    id: 'validity.unstable-false-alarms-dispersion',
    area: AREA,
    figure: 'false alarms of `unstable` where the counting noise is not Poisson (share of runs flagged)',
    grid: `10, 20, 60 s; counts per tenth with 0, 0.25 and 3 times the Poisson variance at ${RATE} req/s (none: the ` +
      'AR(1) at the tenth alone; under-dispersed, as a closed model\'s; bursts); per-second cv 2–10%, ρ 0.5 (quick: 10, 20 s, 0 and 0.25, cv 5%)',
    target: { max: 0.05 },
    trials: { quick: 150, full: 800 },
    run ({ trials, rng }) {
      // the drift test reads the white part of the seconds' variance from the tenths themselves (whiteNoiseOf): these
      // cells hold it where that part is absent, smaller than Poisson's, or larger
      const cells = (trials < 800 ? [10, 20] : [10, 20, 60]).flatMap(seconds => (trials < 800 ? [0, 0.25] : [0, 0.25, 3])
        .flatMap(dispersion => (trials < 800 ? [0.05] : [0.02, 0.05, 0.1]).map(cv => ({ seconds, dispersion, cv, rho: 0.5 }))))
      return byCell(cells, (c) => `${cellName(c)}, dispersion ${c.dispersion}`, trials, rng,
        (c, g) => judge(dispersedTenthSeries(g, { ...c, rate: RATE })).flagged, 'max')
    }
  },
  {
    id: 'validity.drift-detected-1000',
    area: AREA,
    figure: 'a 10% drift over 20 s flagged `unstable` where counting noise is most of the variation (detection)',
    grid: `21 s (20 judged), drift 10% over them; cv 1–2%, ρ 0–0.25; Poisson at ${RATE} req/s (per-second variation 3.3–3.7% in all; ` +
      'quick: cv 2%)',
    // what the split of the white part reaches (docs/statistics/validity.md: 61–77% over 500 runs a cell, 35–55% before
    // it), held with room for the Monte Carlo error of the quick form's 200; a test that knew the noise white would
    // reach 93–97%, one that must allow for a coloured part as correlated as ρ 0.5 cannot
    target: { min: 0.5 },
    trials: { quick: 200, full: 500 },
    run ({ trials, rng }) {
      return byCell(grid([21], trials < 500 ? [0.02] : [0.01, 0.02], [0, 0.25]), cellName, trials, rng,
        (c, g) => judge(tenthSeries(g, { seconds: 21, rate: RATE, cv: c.cv, rho: c.rho, drift: 0.105 })).flagged, 'min')
    }
  },
  {
    id: 'validity.interval-coverage',
    area: AREA,
    figure: 'coverage of the mean throughput\'s 95% interval (runs judged), independent seconds',
    grid: `10, 30, 60 s; cv 1–10%, ρ 0; Poisson at ${RATE} req/s`,
    target: { min: 0.93 },
    trials: { quick: 100, full: 800 },
    run ({ trials, rng }) {
      return byCell(grid([10, 30, 60], CVS, [0]), cellName, trials, rng, (c, g) => {
        const { stability: s } = judge(tenthSeries(g, { seconds: c.seconds, rate: RATE, cv: c.cv }))
        return s.judged ? Math.abs(s.mean - RATE) <= s.halfWidth : null
      }, 'min')
    }
  },
  {
    id: 'validity.interval-coverage-correlated',
    area: AREA,
    figure: 'coverage of the mean throughput\'s 95% interval (runs judged), correlated seconds',
    grid: `10, 30, 60 s; cv 1–10%, ρ 0.25–0.5; Poisson at ${RATE} req/s (quick: 10, 30 s, cv 5–10%)`,
    // the issue's 93%: its worst cells (cv 10%, ρ 0.5) cover 92.9–93.4% over 4,000 runs (docs/statistics/validity.md);
    // held at 90% here, the Monte Carlo error of the ~70–100 runs judged in them at 800 being ±5 points
    target: { min: 0.9 },
    trials: { quick: 100, full: 800 },
    run ({ trials, rng }) {
      const r = byCell(trials < 800 ? grid([10, 30], [0.05, 0.1], [0.25, 0.5]) : grid([10, 30, 60], CVS, [0.25, 0.5]), cellName, trials, rng, (c, g) => {
        const { stability: s } = judge(tenthSeries(g, { seconds: c.seconds, rate: RATE, cv: c.cv, rho: c.rho }))
        return s.judged ? Math.abs(s.mean - RATE) <= s.halfWidth : null
      }, 'min')
      return { ...r, note: 'below 95% where the correlation spans seconds: the runs that look short-correlated are judged, and their variance is the low one' }
    }
  },
  {
    id: 'validity.auto-duration',
    area: AREA,
    figure: '`--duration auto` stopped at ±2%: share of stopped runs whose mean is off by more than 2%',
    grid: 'checked from 5 s, max 30 s; cv 1–5%, ρ 0–0.5; Poisson at 5000 req/s (quick: cv 2%)',
    target: { max: 0.05 },
    trials: { quick: 120, full: 400 },
    run ({ trials, rng }) {
      const target = 0.02
      return byCell(grid([30], trials < 400 ? [0.02] : [0.01, 0.02, 0.05], [0, 0.5]), (c) => `cv ${pct(c.cv)}, ρ ${c.rho}`, trials, rng, (c, g) => {
        const series = tenthSeries(g, { seconds: c.seconds, rate: 5000, cv: c.cv, rho: c.rho })
        for (let k = 5; k < c.seconds; k++) {
          const { reached, state } = autoDurationReached(series.slice(0, k * 10), target)
          if (reached) return Math.abs(state.mean - 5000) / 5000 > target
        }
        return null
      }, 'max')
    }
  },
  {
    id: 'validity.warmup-coverage',
    area: AREA,
    figure: 'a warm-up left in the window: share of judged runs whose reported mean (after the MSER-5 cut) is within its interval',
    grid: `30 s, the first 3 s rising from 30% below; cv 1–5%, ρ 0–0.25; Poisson at ${RATE} req/s`,
    target: { min: 0.93 },
    trials: { quick: 100, full: 600 },
    run ({ trials, rng }) {
      return byCell(grid([30], [0.01, 0.05], [0, 0.25]), cellName, trials, rng, (c, g) => {
        const { stability: s } = judge(tenthSeries(g, { seconds: c.seconds, rate: RATE, cv: c.cv, rho: c.rho, warmup: 4, warmupDepth: 0.3 }))
        return s.judged ? Math.abs(s.mean - RATE) <= s.halfWidth : null
      }, 'min')
    }
  }
]
