// What a sweep's runs cost on disk and in time, from the plan or from the runs already done, and whether the --out
// file system has room for them.
import { readdir, lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { badFlag } from '../../lib/errors.js'
import { longestSeconds } from '../../lib/run-options.js'

/**
 * Bytes a request costs in the run's samples, by samples format, measured on baseline, cm x1: `jtl` 2,990,317 bytes
 * for 28,209 requests; `gz` 303,240 bytes for 125,809 (2.4), rounded up for apps whose rows vary more; `none` keeps
 * no samples (latency.json is one of the run's fixed files).
 */
export const SAMPLE_BYTES = Object.freeze({ jtl: 106, gz: 4, none: 0 })
/** The samples format a sweep's run writes when its cell names none. */
export const SWEEP_SAMPLES_DEFAULT = 'gz'

/**
 * A run folder's other files as disk blocks (du): run.json (8 KiB), the folder, latency.json and haproxy.cfg for hs
 * (4 KiB each), and timeline.json's 1 s samples (~570 bytes a second on 2 cores), measured on local runs.
 */
export const RUN_BYTES = Object.freeze({ fixed: 24 * 1024, perSecond: 600 })
/** A capacity search's own folder and capacity.json; the sweep's sweep.json (and its atomic copy), report.html. */
export const SEARCH_BYTES = 12 * 1024
export const SWEEP_BYTES = Object.freeze({ fixed: 2 * 1024 * 1024, perEntry: 2 * 1024 })

/**
 * Requests a second a closed-model or capacity run is assumed to serve when nothing measured says (no calibration,
 * no finished run): baseline measured on cm x1 here, cpu at its ibench-smisn cost; the rest one figure.
 */
export const ASSUMED_RATES = Object.freeze({ baseline: 14000, cpu: 500, other: 3000 })

/** The share of the free space a sweep leaves unused: the estimate is an estimate. */
export const DISK_MARGIN = 0.05

/** @param {{ samples?: string }} config */
export const samplesFormat = (config) => config.samples ?? SWEEP_SAMPLES_DEFAULT

/**
 * The requests a second a cell's runs will see, and whether that is an assumption: a rate run offers its rate; a
 * closed-model run at a calibrated concurrency serves what the calibration's nearest probe served.
 * @param {{ config: any, capacity?: any }} cell
 * @param {any} [calibration] a calibration file's content (its probes), or null
 * @returns {{ rate: number, assumed: boolean }}
 */
export function requestRate (cell, calibration) {
  const c = cell.config
  if (!cell.capacity && typeof c.rate === 'number') return { rate: c.rate, assumed: false }
  const probes = (calibration?.probes ?? []).filter(p => p.throughput > 0 && p.concurrency > 0)
  if (!cell.capacity && c.concurrency && probes.length) {
    const distance = p => Math.abs(Math.log(p.concurrency / c.concurrency))
    const nearest = probes.reduce((a, b) => (distance(b) < distance(a) ? b : a))
    return { rate: nearest.throughput, assumed: false }
  }
  return { rate: ASSUMED_RATES[c.benchmark] ?? ASSUMED_RATES.other, assumed: true }
}

/**
 * One plan entry's seconds (without its deployment) and bytes, as the plan sees it: a capacity entry is a search of
 * `runs` probes.
 * @param {{ config: any, capacity?: any }} cell
 * @param {{ runs: number, calibration?: any, overhead: number }} opts overhead: seconds a run costs beyond its load
 */
export function plannedCost (cell, { runs, calibration, overhead }) {
  const c = cell.config
  const loadSeconds = longestSeconds(c)
  const seconds = c.warmup + loadSeconds
  const { rate, assumed } = requestRate(cell, calibration)
  const perRun = RUN_BYTES.fixed + RUN_BYTES.perSecond * seconds + rate * loadSeconds * SAMPLE_BYTES[samplesFormat(c)]
  return {
    seconds: runs * (seconds + overhead),
    bytes: runs * perRun + (cell.capacity ? SEARCH_BYTES : 0),
    assumed: assumed && SAMPLE_BYTES[samplesFormat(c)] > 0
  }
}

/**
 * What the finished entries of a sweep cost: their seconds (sweep.json) and the disk blocks of their folders, per
 * cell and over all.
 * @param {{ dir: string, plan: any[] }} sweep
 * @returns {Promise<Measured>}
 */
export async function measuredCosts (sweep) {
  /** @type {Map<number, { seconds: number, bytes: number, n: number }>} */
  const byCell = new Map()
  const all = { seconds: 0, bytes: 0, n: 0 }
  for (const e of sweep.plan) {
    if (e.status !== 'done' || !e.run || typeof e.seconds !== 'number') continue
    const bytes = await dirBytes(join(sweep.dir, e.run))
    const cell = byCell.get(e.cell) ?? { seconds: 0, bytes: 0, n: 0 }
    for (const m of [cell, all]) { m.seconds += e.seconds; m.bytes += bytes; m.n++ }
    byCell.set(e.cell, cell)
  }
  return { byCell, all }
}

/** @typedef {{ byCell: Map<number, { seconds: number, bytes: number, n: number }>, all: { seconds: number,
 *   bytes: number, n: number } }} Measured */

/**
 * The disk blocks (as du counts them) of a folder and everything in it; files that vanish while it is read (a run
 * writing beside it) count as nothing.
 * @param {string} dir
 */
export async function dirBytes (dir) {
  let total = 0
  const stack = [dir]
  while (stack.length) {
    const d = stack.pop()
    const st = await lstat(d).catch(() => null)
    if (!st) continue
    total += st.blocks * 512
    if (!st.isDirectory()) continue
    const names = await readdir(d).catch(() => [])
    for (const n of names) stack.push(join(d, n))
  }
  return total
}

/**
 * Refuses (exit 2) when the estimated bytes do not fit in the free space less the margin, naming the folder, both
 * figures and the ways out.
 * @param {{ bytes: number, free: number, dir: string, flag: string, what?: string }} need
 */
export function checkRoom ({ bytes, free, dir, flag, what = 'this sweep' }) {
  if (bytes <= free * (1 - DISK_MARGIN)) return
  throw badFlag(flag, `${dir} has ${formatBytes(free)} free but ${what} is estimated to write ${formatBytes(bytes)} ` +
    `(${Math.round(DISK_MARGIN * 100)}% of the free space kept in reserve); nothing was started`, {
    key: 'out',
    hint: 'write fewer samples (samples: none in the experiment file), fewer runs (fewer repeats, a smaller --profile), ' +
      'or give another --out on a larger file system'
  })
}

/** "1.2 GB", "640 MB", "12 kB" (powers of 1000, as df -H). */
export function formatBytes (bytes) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB']
  let v = Math.max(0, bytes)
  let i = 0
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++ }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`
}
