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
