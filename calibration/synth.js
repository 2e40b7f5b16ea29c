// Synthetic data with a known truth, seeded: the series, curves, deployments and probes that the calibration
// scenarios feed to nodescale's own statistical code.
import { seededRandom } from '../lib/random.js'

/**
 * A seeded source of randomness: uniforms, standard normals (Box-Muller) and Poisson counts.
 * @param {number} seed
 */
export function randomSource (seed) {
  const uniform = seededRandom(seed)
  let spare = null
  const normal = () => {
    if (spare !== null) { const s = spare; spare = null; return s }
    let u = 0
    while (u === 0) u = uniform()
    const v = uniform()
    const r = Math.sqrt(-2 * Math.log(u))
    spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }
  /** Poisson(mean): Knuth's product for small means, the normal approximation (rounded, >= 0) above 500. */
  const poisson = (mean) => {
    if (mean > 500) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal()))
    const l = Math.exp(-mean)
    let k = 0
    let p = 1
    do { k++; p *= uniform() } while (p > l)
    return k - 1
  }
  /** A child source whose stream does not depend on how much of this one is used later (for one trial, one cell). */
  const fork = () => randomSource(Math.floor(uniform() * 2 ** 32))
  return { uniform, normal, poisson, fork }
}

/**
 * A stationary Gaussian AR(1) series around `mean` with marginal coefficient of variation `cv` and lag-1
 * autocorrelation `rho`, started in its stationary distribution; optional warm-up (the first `warmup` steps start
 * `warmupDepth` below the mean, decaying linearly) and linear drift (`drift`: the relative change from the first step
 * to the last).
 * @param {ReturnType<typeof randomSource>} rng
 * @param {{ length: number, mean: number, cv: number, rho?: number, drift?: number, warmup?: number,
 *   warmupDepth?: number }} o
 * @returns {number[]}
 */
export function ar1Series (rng, { length, mean, cv, rho = 0, drift = 0, warmup = 0, warmupDepth = 0.5 }) {
  const sd = cv * mean
  const innovation = sd * Math.sqrt(1 - rho * rho)
  let e = sd * rng.normal()
  const out = []
  for (let i = 0; i < length; i++) {
    if (i > 0) e = rho * e + innovation * rng.normal()
    const trend = length > 1 ? drift * i / (length - 1) : 0
    const warm = i < warmup ? -warmupDepth * (1 - i / warmup) : 0
    out.push(Math.max(0, mean * (1 + trend + warm) + e))
  }
  return out
}

/**
 * Throughput of the true curves the fits are checked on, at N (per unit of gamma): USL, Amdahl, and a hard ceiling.
 * @param {{ kind: 'usl', gamma: number, sigma: number, lambda: number } | { kind: 'ceiling', gamma: number, ceiling:
 *   number }} truth
 * @param {number} n
 */
export function trueThroughput (truth, n) {
  if (truth.kind === 'ceiling') return Math.min(truth.gamma * n, truth.ceiling)
  return truth.gamma * n / (1 + truth.sigma * (n - 1) + truth.lambda * n * (n - 1))
}

/**
 * Measured throughput of a design: for each N, `deployments` deployments, each with a shared multiplicative effect
 * (intra-class correlation `icc` of the total log-variance `cv`²) and `repeats` repeats on it.
 * @param {ReturnType<typeof randomSource>} rng
 * @param {{ truth: Parameters<typeof trueThroughput>[0], ns: number[], deployments?: number, repeats?: number, cv:
 *   number, icc?: number }} o
 * @returns {{ n: number, throughput: number, deployment: number, repeat: number }[]}
 */
export function designRows (rng, { truth, ns, deployments = 1, repeats = 1, cv, icc = 0 }) {
  const between = cv * Math.sqrt(icc)
  const within = cv * Math.sqrt(1 - icc)
  const rows = []
  let id = 0
  for (const n of ns) {
    for (let d = 0; d < deployments; d++) {
      const effect = between * rng.normal()
      id++
      for (let r = 0; r < repeats; r++) {
        rows.push({ n, throughput: trueThroughput(truth, n) * Math.exp(effect + within * rng.normal()), deployment: id, repeat: r })
      }
    }
  }
  return rows
}

/**
 * The share of trials in which `event` holds, with its Monte Carlo standard error.
 * @param {number} trials
 * @param {(i: number) => boolean} event
 */
export function rate (trials, event) {
  let hits = 0
  for (let i = 0; i < trials; i++) if (event(i)) hits++
  const p = hits / trials
  return { rate: p, se: Math.sqrt(p * (1 - p) / trials), trials }
}

/**
 * The tenth-of-a-second autoregression whose per-second sums have lag-1 autocorrelation `rho`: φ found by bisection
 * on the AR(1) aggregate's autocorrelation φ (Σ_{k<m} φ^k)² / (m + 2 Σ_{j<m} (m − j) φ^j), m = 10; and the tenths' sd
 * that gives the per-second sums the coefficient of variation `cv`.
 * @param {number} cv
 * @param {number} rho
 */
export function tenthProcess (cv, rho) {
  const m = 10
  const agg = (phi) => {
    let geo = 0
    let v = 0
    for (let k = 0; k < m; k++) geo += phi ** k
    for (let j = 1; j < m; j++) v += (m - j) * phi ** j
    return { cov: phi * geo * geo, variance: m + 2 * v }
  }
  let lo = 0
  let hi = 0.999999
  const steps = rho > 0 ? 60 : 0
  for (let i = 0; i < steps; i++) {
    const mid = (lo + hi) / 2
    const a = agg(mid)
    if (a.cov / a.variance < rho) lo = mid
    else hi = mid
  }
  const phi = rho > 0 ? (lo + hi) / 2 : 0
  // the per-second sum of tenths of mean 1/m each: its sd relative to its mean 1 is cv
  return { phi, sd: cv / Math.sqrt(agg(phi).variance) }
}

/**
 * Completions per tenth of a second of a server whose throughput per second has mean `rate` (req/s), coefficient of
 * variation `cv` and lag-1 autocorrelation `rho` (a Gaussian AR(1) at the tenth, tenthProcess), counted with Poisson
 * noise (`poisson`, default true: the completions of a tenth are a Poisson count of its rate); optional linear drift
 * (the relative change from the first tenth to the last) and warm-up (the first `warmup` seconds start `warmupDepth`
 * below the rate, rising linearly).
 * @param {ReturnType<typeof randomSource>} rng
 * @param {{ seconds: number, rate: number, cv: number, rho?: number, poisson?: boolean, drift?: number, warmup?:
 *   number, warmupDepth?: number }} o
 * @returns {number[]}
 */
export function tenthSeries (rng, { seconds, rate, cv, rho = 0, poisson = true, drift = 0, warmup = 0, warmupDepth = 0.5 }) {
  const { phi, sd } = tenthProcess(cv, rho)
  const n = Math.round(seconds * 10)
  const innovation = sd * Math.sqrt(1 - phi * phi)
  let e = sd * rng.normal()
  const out = []
  for (let i = 0; i < n; i++) {
    if (i > 0) e = phi * e + innovation * rng.normal()
    const trend = n > 1 ? drift * i / (n - 1) : 0
    const warm = i < warmup * 10 ? -warmupDepth * (1 - i / (warmup * 10)) : 0
    const level = Math.max(0, (rate / 10) * (1 + trend + warm) + rate * e)
    out.push(poisson ? rng.poisson(level) : level)
  }
  return out
}

/**
 * One value per independent deployment for each cell of a block (an adaptive experiment's next block): the cell's
 * true value times exp(spread · z), z standard normal — a log-normal spread between deployments of log-SD `spread`
 * (`spreads`: a cell's own).
 * @param {ReturnType<typeof randomSource>} rng
 * @param {{ truth: Record<string, number>, spread: number, spreads?: Record<string, number>, block: { cell: string,
 *   deployments: number }[] }} o
 * @returns {Record<string, number[]>}
 */
export function deploymentValues (rng, { truth, spread, spreads = {}, block }) {
  /** @type {Record<string, number[]>} */
  const out = {}
  for (const { cell, deployments } of block) {
    if (!(truth[cell] > 0)) throw new Error(`no true value for cell ${cell}`)
    for (let i = 0; i < deployments; i++) (out[cell] ??= []).push(truth[cell] * Math.exp((spreads[cell] ?? spread) * rng.normal()))
  }
  return out
}

/**
 * Completions per tenth of a second as tenthSeries makes them (a per-second variation `cv` with lag-1 autocorrelation
 * `rho`, an AR(1) at the tenth; optional drift and warm-up), counted with a noise of `dispersion` times the Poisson
 * variance: each tenth's count is its level plus a normal of variance dispersion · level, rounded, at least 0 (under 1:
 * under-dispersed, as a closed model's completions are; over 1: over-dispersed, bursts; 0: no counting noise).
 * @param {ReturnType<typeof randomSource>} rng
 * @param {Parameters<typeof tenthSeries>[1] & { dispersion?: number }} o
 * @returns {number[]}
 */
export function dispersedTenthSeries (rng, { dispersion = 1, ...o }) {
  const level = tenthSeries(rng, { ...o, poisson: false })
  return level.map(l => Math.max(0, Math.round(l + Math.sqrt(dispersion * l) * rng.normal())))
}
