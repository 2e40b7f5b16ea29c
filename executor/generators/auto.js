// --load-procs auto (the default): as many pinned generator processes as the load needs for none to pass the
// generator-saturated threshold, on the cores the server is not given. Probe, then settle: one generator first; while a
// short probe shows the busiest above the settle share and a core is free, as many more as that share asks for; the
// probes' figures are kept.
import { THRESHOLDS } from '../validity.js'

/** A probe's load: seconds measured after its warm-up (the CPU meter samples each second: two samples at least). */
export const PROBE = Object.freeze({ duration: 2, warmup: 0.5 })

/**
 * The share of its core a probed generator may use and be kept: below the run's generator-saturated threshold (90%),
 * since a probe is short and early, while the server still warms up and answers slower than it will. On 16 cores
 * (cm x8, baseline app, 512 connections, one generator) a generator at 77% of its core in the probe used 94% in the
 * run: 1.22x. Two thirds of the threshold leaves room for 1.5x.
 */
export const SETTLE_SHARE = 0.6

/**
 * @typedef {{ procs: number, shares: (number | null)[], throughput: number | null }} ProbeFigures
 * @typedef {{ mode: 'auto' | 'fixed', count: number, cores: number[], why: string, probes: ProbeFigures[],
 *   threshold: number, settle?: number }} LoadProcs run.json's `load.procs`: how many generator processes ran, on which
 *   cores, and why; `settle`, where a probe chose, the share it settled under
 */

/**
 * How many generators to run, from probes of the real load: one, then, while the busiest of the last probe used more
 * than `settle` of its core and a free core is left (and a connection for each), as many as its share asks for (at
 * least one more): the busiest's share times the count, over `settle`.
 * @param {{ free: readonly number[], most?: number, threshold?: number, settle?: number, probe: (count: number) =>
 *   Promise<ProbeFigures> }} opts free: the cores the generators may take; most: the most generators the load allows
 *   (its connections); threshold: the run's flag, recorded; settle: the share a probe settles under
 * @returns {Promise<LoadProcs>}
 */
export async function settleLoadProcs ({ free, most = Infinity, threshold = THRESHOLDS.generatorBusy, settle = SETTLE_SHARE, probe }) {
  const limit = Math.max(1, Math.min(free.length, most))
  /** @type {ProbeFigures[]} */
  const probes = []
  let count = 1
  for (;;) {
    const figures = await probe(count)
    probes.push(figures)
    const known = figures.shares.filter(s => s !== null && s !== undefined)
    const busiest = known.length ? Math.max(...(known)) : null
    const pct = (x) => `${Math.round(x * 100)}%`
    if (busiest === null) return settled(count, `the probe of ${count} could not measure the generators' CPU: ${count} kept`)
    if (busiest < settle) {
      return settled(count, `the probe of ${count} generator${count === 1 ? '' : 's'}: ` +
        `the busiest at ${pct(busiest)} of its core, under the ${pct(settle)} a probe settles at (the run's flag: ${pct(threshold)})`)
    }
    if (count >= limit) {
      const cap = count >= free.length ? `no free core left (${free.length} free of the server)` : `no connection left for another (${most})`
      return settled(count, `the probe of ${count}: the busiest at ${pct(busiest)} of its core, over the ${pct(settle)} a probe settles at, ` +
        `but ${cap}: the run may be flagged generator-saturated (at ${pct(threshold)})`)
    }
    count = Math.min(limit, Math.max(count + 1, Math.ceil(count * busiest / settle)))
  }
  /** @returns {LoadProcs} */
  function settled (n, why) {
    return { mode: 'auto', count: n, cores: free.slice(0, n), why, probes, threshold, settle }
  }
}

/**
 * The decision without a probe: one generator, when there is nothing to choose (no core or one core free, or a load
 * one generator must drive alone).
 * @param {readonly number[]} cores the cores it is pinned to ([]: not pinned)
 * @param {string} why
 * @returns {LoadProcs}
 */
export const oneGenerator = (cores, why) => ({ mode: 'auto', count: 1, cores: [...cores], why, probes: [], threshold: THRESHOLDS.generatorBusy })
