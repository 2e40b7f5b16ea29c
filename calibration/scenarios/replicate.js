// Replication verdicts (issue 25, item 6): analyzer/replication/rules.js's own rules on seeded runs with a known truth
// (calibration/synth.js) — how often a "no rise" is called reproduced when the throughput truly rises, how often a
// direction is called reproduced when there is none and when there is one, how often the primary-CPU row calls a share
// at its margin spent — and analyzer/replicate.js's pooling of several sweeps, whose verdicts must not depend on the
// order the folders are given in.
import { directionVerdict, noRiseVerdict, aboveMarginVerdict, NO_RISE_MARGIN } from '../../analyzer/replication/rules.js'
import { PRIMARY_MARGIN } from '../../analyzer/replication/ibench-smisn.js'
import { judgeSweeps } from '../../analyzer/replicate.js'
import { multicore } from '../../analyzer/replication/published.js'

const RUNS = [2, 3, 4, 5]
const CVS = [0.02, 0.05, 0.1]
const BASE = 1000

/** `runs` throughputs with multiplicative noise: the log of each is normal with sd `cv` around log(mean). */
const draw = (rng, runs, mean, cv) => Array.from({ length: runs }, () => mean * Math.exp(cv * rng.normal()))

/**
 * The share of trials, per cell of runs a side x cv, in which `judge` calls the truth's runs reproduced.
 * @param {{ trials: number, rng: any, truth: number, judge: (hi: number[], lo: number[]) => { verdict: string },
 *   runs?: number[], cvs?: number[], worst: 'max' | 'min' }} o truth: the true ratio of the two sides' means
 */
function reproducedRate ({ trials, rng, truth, judge, runs = RUNS, cvs = CVS, worst }) {
  const cells = []
  for (const n of runs) {
    for (const cv of cvs) {
      const cellRng = rng.fork()
      let hits = 0
      for (let i = 0; i < trials; i++) if (judge(draw(cellRng, n, BASE * truth, cv), draw(cellRng, n, BASE, cv)).verdict === 'reproduced') hits++
      cells.push({ case: `${n} runs a side, cv ${cv * 100}%`, value: hits / trials })
    }
  }
  const pick = cells.reduce((a, c) => (worst === 'max' ? (c.value > a.value ? c : a) : (c.value < a.value ? c : a)))
  return { value: pick.value, worst: pick.case, cells }
}

/**
 * A test's size over a grid, for a truth on the null's boundary, where an exact test's rate in every cell is α itself:
 * the rate over all cells (its Monte Carlo error small), unless a cell exceeds α by more than three of its standard
 * errors — then that cell, which fails the target. (The worst cell alone would sit above α half the time by chance.)
 * @param {{ value: number, worst?: string, cells: { case: string, value: number }[] }} grid
 * @param {number} trials per cell
 * @param {number} alpha
 */
function sizeOverGrid (grid, trials, alpha) {
  const se = Math.sqrt(alpha * (1 - alpha) / trials)
  const over = grid.cells.find(c => c.value > alpha + 3 * se)
  if (over) return { ...grid, value: over.value, worst: `${over.case} (above α by more than 3 Monte Carlo SE)` }
  const pooled = grid.cells.reduce((a, c) => a + c.value, 0) / grid.cells.length
  return { ...grid, value: pooled, worst: `over the grid; highest cell ${grid.worst} ${(grid.value * 100).toFixed(1)}% (MC SE ${(se * 100).toFixed(1)}%)` }
}

const noRise = (hi, lo) => noRiseVerdict({ hi, lo, what: 'synthetic' })
const direction = (a, b) => directionVerdict({ a, b, aName: 'a', bName: 'b', what: 'synthetic' })

/** The level each strategy runs at for a load of Table 4.3.1 (published.js's runLevel). */
const levelOf = (strategy, load) => multicore.loads.find(l => l.id === load)?.runLevel[{ up: 'raw', cm: 'cluster', pm2: 'pm2' }[strategy]] ?? null

/**
 * A synthetic multicore sweep read for a replication (analyzer/replicate.js's SweepRead): 1 to 3 runs of each strategy
 * at each load, their overall CPU and core difference drawn around levels close enough that verdicts vary by sweep.
 */
function multicoreSweep (rng, id) {
  const details = []
  for (const strategy of ['up', 'cm', 'pm2']) {
    for (const load of ['relaxed', 'average', 'exhausting']) {
      const overall = { up: 52, cm: 55, pm2: 54 }[strategy] + (load === 'exhausting' ? 40 : 0)
      const difference = { up: 30, cm: 27, pm2: 28 }[strategy]
      const runs = 1 + Math.floor(rng.uniform() * 3)
      for (let r = 0; r < runs; r++) {
        const run = {
          config: { strategy },
          load: {},
          cpu: { overall: overall * (1 + 0.05 * rng.normal()), spread: difference * (1 + 0.1 * rng.normal()), highest: 90, lowest: 10, cores: [0, 1] }
        }
        details.push({ detail: { run, timeline: null }, level: levelOf(strategy, load) })
      }
    }
  }
  return { dir: `synthetic/${id}`, sweep: { id, experiment: { name: 'multicore', order: 'blocks' }, seed: 1 }, finished: details.length, details, leftOut: [] }
}

/** Every order of a list (up to 3 items: 6 orders). */
const orders = (xs) => (xs.length <= 1 ? [xs] : xs.flatMap((x, i) => orders([...xs.slice(0, i), ...xs.slice(i + 1)]).map(rest => [x, ...rest])))

/** @type {import('../harness.js').Scenario[]} */
/** A power held at the lowest of the grid's cells that `held` keeps (the others shown, not judged). */
function lowestCell (grid, held, note) {
  const pick = grid.cells.filter(held).reduce((a, c) => (c.value < a.value ? c : a))
  return { value: pick.value, worst: pick.case, cells: grid.cells, note }
}

export const SCENARIOS = [
  {
    id: 'replicate.no-rise-at-20',
    area: 'replication',
    figure: 'a "no rise" finding called reproduced when the throughput truly rises 20%',
    grid: '2–5 runs a side, cv 2–10%',
    target: { max: 0.05 },
    trials: { quick: 1000, full: 20000 },
    run: ({ trials, rng }) => reproducedRate({ trials, rng, truth: 1.2, judge: noRise, worst: 'max' })
  },
  {
    id: 'replicate.no-rise-at-margin',
    area: 'replication',
    figure: `a "no rise" finding called reproduced when the throughput truly rises by the margin (${NO_RISE_MARGIN * 100}%): the test's size`,
    grid: '2–5 runs a side, cv 2–10%; the rate over the grid, no cell above α by 3 MC SE',
    target: { max: 0.05 },
    trials: { quick: 1000, full: 20000 },
    run: ({ trials, rng }) => sizeOverGrid(reproducedRate({ trials, rng, truth: 1 + NO_RISE_MARGIN, judge: noRise, worst: 'max' }), trials, 0.05)
  },
  {
    id: 'replicate.no-rise-power',
    area: 'replication',
    figure: 'a "no rise" finding called reproduced when the throughput truly does not rise',
    grid: '5 runs a side, cv 2–5% (cells at 2–5 runs, cv 2–10% in the full table)',
    target: { min: 0.8 },
    trials: { quick: 1000, full: 10000 },
    run: ({ trials, rng }) => {
      const grid = reproducedRate({ trials, rng, truth: 1, judge: noRise, worst: 'min' })
      return lowestCell(grid, c => /^5 runs/.test(c.case) && !/cv 10%/.test(c.case),
        'at fewer runs or more noise the rule says inconclusive more often: it cannot tell')
    }
  },
  {
    id: 'replicate.direction-size',
    area: 'replication',
    figure: 'a published direction called reproduced when the two sides truly do not differ (one-sided α): the size',
    grid: '2–5 runs a side, cv 2–10%; the rate over the grid, no cell above α by 3 MC SE',
    target: { max: 0.05 },
    trials: { quick: 1000, full: 20000 },
    run: ({ trials, rng }) => sizeOverGrid(reproducedRate({ trials, rng, truth: 1, judge: direction, worst: 'max' }), trials, 0.05)
  },
  {
    id: 'replicate.direction-power',
    area: 'replication',
    figure: 'a published direction called reproduced when it truly holds by 20%',
    grid: '3–5 runs a side, cv 2–5% (every cell of 2–5 runs, cv 2–10% in the full table)',
    target: { min: 0.8 },
    trials: { quick: 600, full: 10000 },
    run: ({ trials, rng }) => {
      const grid = reproducedRate({ trials, rng, truth: 1.2, judge: direction, worst: 'min' })
      return lowestCell(grid, c => !/^2 runs/.test(c.case) && !/cv 10%/.test(c.case), 'with 2 runs a side, or at cv 10%, detection is lower: see the cells')
    }
  },
  {
    id: 'replicate.primary-at-margin',
    area: 'replication',
    figure: `the primary-CPU row called reproduced when the primary's true share is the margin (${PRIMARY_MARGIN * 100}%): the size, α = 5%`,
    grid: '2–5 runs, the share varying by 20–50% of itself between runs; the rate over the grid, no cell above α by 3 MC SE',
    target: { between: [0.04, 0.06] },
    trials: { quick: 1500, full: 20000 },
    run: ({ trials, rng }) => {
      const cells = []
      for (const n of RUNS) {
        for (const spread of [0.2, 0.5]) {
          const cellRng = rng.fork()
          let hits = 0
          for (let i = 0; i < trials; i++) {
            const shares = Array.from({ length: n }, () => PRIMARY_MARGIN * (1 + spread * cellRng.normal()))
            if (aboveMarginVerdict({ shares, margin: PRIMARY_MARGIN, what: 'synthetic' }).verdict === 'reproduced') hits++
          }
          cells.push({ case: `${n} runs, spread ${spread * 100}%`, value: hits / trials })
        }
      }
      const pick = cells.reduce((a, c) => (c.value > a.value ? c : a))
      return sizeOverGrid({ value: pick.value, worst: pick.case, cells }, trials, 0.05)
    }
  },
  {
    id: 'replicate.order-independence',
    area: 'replication',
    figure: 'replications of several sweeps whose verdicts are the same in every order of the folders',
    grid: '2–3 multicore sweeps of 1–3 runs a cell, every order',
    target: { min: 1 },
    trials: { quick: 40, full: 600 },
    run: async ({ trials, rng }) => {
      let same = 0
      let disagree = 0
      for (let i = 0; i < trials; i++) {
        const sweeps = Array.from({ length: 2 + (i % 2) }, (_, k) => multicoreSweep(rng, `sweep-${i}-${k}`))
        const seen = new Set()
        let notes = 0
        for (const order of orders(sweeps)) {
          const r = await judgeSweeps('multicore', order)
          seen.add(JSON.stringify(r.rows.map(row => [row.id, row.verdict, row.why, row.sweep])))
          notes = r.notes.filter(n => /the sweeps alone disagree/.test(n)).length
        }
        if (seen.size === 1) same++
        if (notes) disagree++
      }
      return {
        value: same / trials,
        worst: `${trials - same} of ${trials} trials differ`,
        note: `in ${disagree} of ${trials} trials the sweeps judged alone disagreed on a row: there, "first folder wins" would have let the order choose`
      }
    }
  }
]
