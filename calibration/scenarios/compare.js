// The tests between groups of `analyzer compare` (analyzer/stats/group-tests.js testGroups, the function compare calls
// on
// its groups of points), on synthetic sweeps whose repeats share deployments: the family-wise false-positive rate
// when the strategies are the same, the power printed against the detections it promises, and the false equivalence
// when the true difference sits on the margin.
import { testGroups } from '../../analyzer/stats/group-tests.js'
import { designRows } from '../synth.js'

const AREA = 'comparisons'
const TRUTH = /** @type {const} */ ({ kind: 'usl', gamma: 1000, sigma: 0.05, lambda: 0.002 })

/**
 * One synthetic sweep: each strategy's runs as a group of points, `deployments` per N with `repeats` each, the
 * strategy's curve `scale` times the truth.
 * @param {ReturnType<import('../synth.js').randomSource>} rng
 * @param {{ scales: Record<string, number>, ns: number[], deployments: number, repeats: number, cv: number,
 *   icc: number }} o
 */
function sweep (rng, { scales, ns, deployments, repeats, cv, icc }) {
  return Object.entries(scales).map(([strategy, scale]) => ({
    name: strategy,
    key: { strategy, benchmark: 'synthetic' },
    observations: designRows(rng, { truth: { ...TRUTH, gamma: TRUTH.gamma * scale }, ns, deployments, repeats, cv, icc })
      .map(r => ({ n: r.n, throughput: r.throughput, deployment: `${strategy}:${r.deployment}` }))
  }))
}

const designText = d => `${d.deployments} dep × ${d.repeats} rep`
const pct = v => `${(v * 100).toFixed(1)}%`

/** Each cell of a grid run for `trials` trials on its own random stream. */
function overGrid (rng, cells, trials, trial) {
  return cells.map(cell => {
    const r = rng.fork()
    const out = []
    for (let i = 0; i < trials * (cell.weight ?? 1); i++) out.push(trial(r, cell))
    return { cell, out }
  })
}

/** @type {import('../harness.js').Scenario[]} */
export const SCENARIOS = [
  {
    id: 'compare.family-size',
    area: AREA,
    figure: 'family-wise false positives of the tests between 3 identical strategies (every pair and quantity, Holm)',
    grid: 'ICC 0–0.5; 1×3, 2×3, 3×2, 5×1 deployments × repeats; N = 1,2,4,8; cv 5%',
    target: { max: 0.05 },
    trials: { quick: 300, full: 3000 },
    run ({ trials, rng }) {
      // with one deployment a cell (order: shapes) only the ratio over N can be made, and the ICC only scales each
      // cell's one unit, which the t test does not see: one cell for every ICC, with 12 times the trials (its size
      // sits near the bound Holm guarantees, 4.5-4.8% in 20,000 trials, so it needs the precision)
      /** @type {{ icc: number, ns: number[], deployments: number, repeats: number, weight?: number }[]} */
      const cells = [{ icc: 0.5, ns: [1, 2, 4, 8], deployments: 1, repeats: 3, weight: 12 }]
      for (const icc of [0, 0.25, 0.5]) {
        for (const design of [{ deployments: 2, repeats: 3 }, { deployments: 3, repeats: 2 }, { deployments: 5, repeats: 1 }]) {
          cells.push({ icc, ns: [1, 2, 4, 8], ...design })
        }
      }
      const results = overGrid(rng, cells, trials, (r, c) => {
        const pairs = testGroups(sweep(r, { scales: { a: 1, b: 1, c: 1 }, cv: 0.05, ...c }), { words: false, effect: null })
        return pairs.some(p => p.tests.some(t => t.outcome === 'different'))
      })
      const figures = results.map(({ cell, out }) => ({
        case: cell.deployments === 1 ? `ICC 0–0.5, ${designText(cell)}` : `ICC ${cell.icc}, ${designText(cell)}`,
        value: out.filter(Boolean).length / out.length
      }))
      const worst = figures.reduce((a, b) => (b.value > a.value ? b : a))
      return {
        value: worst.value,
        worst: worst.case,
        cells: figures,
        note: '21 tests a family (3 pairs × 4 N, speedup, ceiling, ratio over N); 1 deployment a cell leaves only the ratio over N'
      }
    }
  },
  {
    id: 'compare.power-printed',
    area: AREA,
    figure: 'detections of a true 10% difference in throughput at N = 4 minus the power printed for it (floor: -10 points)',
    grid: 'ICC 0–0.5; 3×2, 6×2 deployments × repeats; 2 and 3 strategies; N = 1,2,4,8; cv 5%',
    target: { min: -0.1 },
    trials: { quick: 150, full: 2000 },
    run ({ trials, rng }) {
      const cells = []
      for (const icc of [0, 0.5]) {
        for (const design of [{ deployments: 3, repeats: 2 }, { deployments: 6, repeats: 2 }]) {
          for (const scales of [{ a: 1, b: 1.1 }, { a: 1, b: 1.1, c: 1 }]) cells.push({ icc, scales, ns: [1, 2, 4, 8], ...design })
        }
      }
      const results = overGrid(rng, cells, trials, (r, c) => {
        const pairs = testGroups(sweep(r, { cv: 0.05, ...c }), { words: false })
        const t = pairs.find(p => p.a === 'a' && p.b === 'b').tests.find(x => x.quantity === 'throughput' && x.n === 4)
        return { detected: t.outcome === 'different' && t.ratio < 1, printed: t.power.value ?? 0 }
      })
      const figures = results.map(({ cell, out }) => {
        const detected = out.filter(o => o.detected).length / out.length
        const printed = out.reduce((s, o) => s + o.printed, 0) / out.length
        return {
          case: `ICC ${cell.icc}, ${designText(cell)}, ${Object.keys(cell.scales).length} strategies: detected ${pct(detected)}, printed ${pct(printed)}`,
          value: detected - printed
        }
      })
      const worst = figures.reduce((a, b) => (b.value < a.value ? b : a))
      return {
        value: worst.value,
        worst: worst.case,
        cells: figures,
        note: 'the power printed is a floor: at α over the family (Bonferroni), which Holm never rejects less often than'
      }
    }
  },
  {
    id: 'compare.false-equivalence',
    area: AREA,
    figure: 'false "equivalent within ±5%" when the true ratio is 1.05 (any such quantity of the family)',
    grid: 'ICC 0–0.5; 4×2, 8×2, 15×1 deployments × repeats; N = 1,2,4,8; cv 3%',
    target: { max: 0.05 },
    trials: { quick: 300, full: 3000 },
    run ({ trials, rng }) {
      const cells = []
      for (const icc of [0, 0.5]) {
        for (const design of [{ deployments: 4, repeats: 2 }, { deployments: 8, repeats: 2 }, { deployments: 15, repeats: 1 }]) {
          cells.push({ icc, cv: 0.03, ns: [1, 2, 4, 8], ...design })
        }
      }
      // the speedup's true ratio is 1 (both curves have the same shape): its equivalence is right, not counted
      const results = overGrid(rng, cells, trials, (r, c) => {
        const pairs = testGroups(sweep(r, { scales: { a: 1.05, b: 1 }, ...c }), { margin: 0.05, words: false, effect: null })
        return pairs[0].tests.some(t => t.quantity !== 'speedup' && t.outcome === 'equivalent')
      })
      const figures = results.map(({ cell, out }) => ({
        case: `ICC ${cell.icc}, ${designText(cell)}`,
        value: out.filter(Boolean).length / out.length
      }))
      const worst = figures.reduce((a, b) => (b.value > a.value ? b : a))
      return { value: worst.value, worst: worst.case, cells: figures }
    }
  }
]
