// The multi-core thesis's Table 4.3.1 against a sweep of experiments/multicore.yml: one row per approach and load (its
// published cores beside ours, with intervals) judged on the column that survives a change of machine (does the
// approach use both cores?), and the table's directions between approaches checked for significance.
import { median } from 'simple-statistics'
import { samplesInWindow } from '../../rc/cpu-summary.js'
import { multicore as published } from './published.js'
import { meanCi, directionVerdict, leftOutWhy, signedPct } from './rules.js'

/** In a typical second the least-used core is at least this busy (percent): the approach uses both cores. */
export const BOTH_CORES_PCT = 10
/** The busiest core counts as busy from this percent (for telling alternation from idling). */
const BUSY_PCT = 20

/**
 * What one run shows of multi-core use, from its 1 s per-core samples in the steady window: the least-used core's
 * median, whether the busiest core moved between cores, and whether the server could use every core.
 * @param {{ run: any, timeline: any }} detail the run's run.json and timeline.json
 */
export function runCores ({ run, timeline }) {
  const samples = samplesInWindow(timeline, { from: run.load?.steadyStart, to: run.load?.steadyEnd })
    .map(s => s.server).filter(a => Array.isArray(a) && a.length)
  const cores = samples[0]?.length ?? run.cpu?.cores?.length ?? 0
  const busiest = samples.filter(s => Math.max(...s) >= BUSY_PCT).map(s => s.indexOf(Math.max(...s)))
  let moves = 0
  for (let i = 1; i < busiest.length; i++) if (busiest[i] !== busiest[i - 1]) moves++
  // the cores the server's processes may run on (placement[].cpus, from /proc/<pid>/status; absent on older runs)
  const allowed = run.placement?.some(p => Array.isArray(p.cpus)) ? [...new Set(run.placement.flatMap(p => p.cpus ?? []))] : null
  return {
    seconds: samples.length,
    cores,
    minCore: samples.length ? median(samples.map(s => Math.min(...s))) : null,
    moves: busiest.length > 1 ? moves / (busiest.length - 1) : null,
    pinned: Array.isArray(allowed) && cores > 0 && allowed.length < cores ? allowed : null,
    highest: run.cpu?.highest,
    lowest: run.cpu?.lowest,
    difference: run.cpu?.spread,
    overall: run.cpu?.overall
  }
}

const RULE = `multi-core utilisation exists when, in a typical second of the steady window, the least-used core is at least ${BOTH_CORES_PCT}% busy ` +
  '(median over the seconds); compared as yes or no. The percentages are shown, not compared: each load is a level calibrated on its own machine'

/**
 * Table 4.3.1's nine rows and its directions, judged on a multicore sweep's runs.
 * @param {{ detail: { run: any, timeline: any }, level: string | null }[]} runs finished runs of the sweep with their
 *   calibration level (relaxed, relaxed*cores, exhausted, exhausted*cores)
 * @param {import('./rules.js').LeftOut[]} [leftOut] finished runs left out as not valid
 */
export function multicoreRows (runs, leftOut = []) {
  const measured = runs.map(r => ({ strategy: r.detail.run.config.strategy, level: r.level, ...runCores(r.detail) }))
  const of = (strategy, load) => {
    const level = published.loads.find(l => l.id === load)?.runLevel[{ up: 'raw', cm: 'cluster', pm2: 'pm2' }[strategy]]
    return measured.filter(m => m.strategy === strategy && m.level === level)
  }
  const rows = published.rows.map(row => {
    const list = of(row.strategy, row.load)
    const ours = {
      runs: list.length,
      exists: list.length ? list.filter(m => m.minCore !== null && m.minCore >= BOTH_CORES_PCT).length > list.length / 2 : null,
      minCore: meanCi(list.map(m => m.minCore)),
      moves: meanCi(list.map(m => (m.moves === null ? NaN : m.moves * 100))),
      highest: meanCi(list.map(m => m.highest)),
      lowest: meanCi(list.map(m => m.lowest)),
      difference: meanCi(list.map(m => m.difference)),
      overall: meanCi(list.map(m => m.overall)),
      cores: list[0]?.cores ?? null
    }
    const base = {
      id: `${row.approach} at ${row.load} load`,
      source: row.source,
      published: {
        exists: row.utilisation.printed,
        words: row.utilisation.words,
        highest: row.highest.usage.printed,
        lowest: row.lowest.usage.printed,
        difference: row.difference.printed,
        overall: row.overall.printed
      },
      ours,
      rule: RULE,
      // the lowest core's share beside ours: what the yes or no is read from (shown, not compared)
      effect: { published: `lowest core ${row.lowest.usage.printed}`, here: ours.minCore ? `least-used core ${ours.minCore.mean}% (median second)` : '-' }
    }
    const pinned = list.find(m => m.pinned)
    if (!list.length) {
      const level = published.loads.find(l => l.id === row.load)?.runLevel[row.approach]
      const left = leftOut.filter(r => r.strategy === row.strategy && r.level === level)
      const why = left.length
        ? `no valid run of ${row.strategy} at the ${level} level: ${leftOutWhy(left)}`
        : `no finished run of ${row.strategy} at the ${level} level in this sweep`
      return { ...base, verdict: 'not-comparable', absent: !left.length, why }
    }
    if (pinned) {
      return {
        ...base,
        verdict: 'not-comparable',
        why: `the server was pinned to cores ${pinned.pinned.join(',')} of ${pinned.cores}: an idle core is idle by ` +
          'construction (run it with affinity none, as experiments/multicore.yml does)'
      }
    }
    const same = ours.exists === row.utilisation.exists
    let why = `both cores in use in a typical second: published ${row.utilisation.printed}, here ` +
      `${ours.exists ? 'yes' : 'no'} (least-used core ${ours.minCore?.mean}% median)`
    let verdict = same ? 'reproduced' : 'not-reproduced'
    if (row.approach === 'raw' && row.load === 'exhausting' && ours.cores) {
      // The thesis's own account of this cell's "No": its CPU "only alternated between the CPU-cores with always half
      // the total CPU usage". So the rule here is that account: one core's worth in all, the busiest core moving.
      // Whether a second's samples split the moving core's time over both cores depends on how often the OS
      // migrates it and how long a sample is (htop's ~2 s there, 1 s here): shown, not judged.
      const half = 100 / ours.cores
      const atHalf = ours.overall !== null && ours.overall.mean <= half + 10
      const moving = (ours.moves?.mean ?? 0) > 0
      why = 'the thesis\'s account of its No, "only alternated between the CPU-cores with always half the total CPU usage": ' +
        `overall ${ours.overall?.mean}% against one core's worth (${half.toFixed(0)}%): ${atHalf ? 'at it' : 'above it'}; ` +
        `the busiest core moved in ${ours.moves?.mean ?? '-'}% of the seconds; the least-used core's median second ${ours.minCore?.mean}%`
      verdict = atHalf && moving ? 'reproduced' : 'not-reproduced'
    }
    if (ours.cores && ours.cores !== 2) why += `; ${ours.cores} cores here, 2 in the thesis`
    return { ...base, verdict, why }
  })
  return [...rows, ...directions(of)]
}

/** The table's directions between approaches: which uses more of the CPU, whose cores differ more. */
function directions (of) {
  const pick = (strategy, load, key) => of(strategy, load).map(m => m[key]).filter(Number.isFinite)
  const cases = [
    { a: 'cm', b: 'up', load: 'exhausting', key: 'overall', what: 'at exhausting load the cluster module uses more of the CPU overall than raw Node' },
    { a: 'pm2', b: 'up', load: 'exhausting', key: 'overall', what: 'at exhausting load PM2 uses more of the CPU overall than raw Node' },
    { a: 'cm', b: 'pm2', load: 'exhausting', key: 'overall', what: 'at exhausting load the cluster module uses slightly more CPU than PM2' },
    { a: 'up', b: 'cm', load: 'average', key: 'difference', what: 'at average load raw Node\'s cores differ more than the cluster module\'s' },
    { a: 'up', b: 'pm2', load: 'average', key: 'difference', what: 'at average load raw Node\'s cores differ more than PM2\'s' }
  ]
  const approach = { up: 'raw', cm: 'cluster', pm2: 'pm2' }
  return cases.map(c => {
    const pa = published.rows.find(r => r.strategy === c.a && r.load === c.load)
    const pb = published.rows.find(r => r.strategy === c.b && r.load === c.load)
    const field = c.key === 'overall' ? 'overall' : 'difference'
    const a = pick(c.a, c.load, c.key)
    const b = pick(c.b, c.load, c.key)
    const judged = directionVerdict({ a, b, aName: c.a, bName: c.b, what: c.what })
    return {
      id: `${approach[c.a]} vs ${approach[c.b]}: ${c.key} at ${c.load} load`,
      source: { file: published.file, where: `Table 4.3.1, ${pa?.loadPrinted}` },
      published: { direction: `${c.a} > ${c.b}`, a: pa?.[field]?.printed ?? null, b: pb?.[field]?.printed ?? null },
      ours: { a: meanCi(a), b: meanCi(b), p: judged.p },
      rule: 'the direction of the published difference, significant by Welch\'s one-sided t-test over the runs at α = 0.05',
      verdict: judged.verdict,
      why: judged.why,
      effect: { published: pa?.[field]?.value && pb?.[field]?.value ? signedPct(pa[field].value / pb[field].value - 1) : '-', here: judged.effect ?? '-' }
    }
  })
}
