// Gunther's Universal Scalability Law and Amdahl's law: the curve, its partial derivatives, its peak and ceiling.

/** The models and the parameters each one fits (Amdahl = USL with lambda fixed at 0). */
export const MODELS = Object.freeze({
  usl: Object.freeze(['gamma', 'sigma', 'lambda']),
  amdahl: Object.freeze(['gamma', 'sigma'])
})

/**
 * X(N) = gamma N / (1 + sigma (N - 1) + lambda N (N - 1)).
 * @param {number} n
 * @param {{ gamma: number, sigma: number, lambda?: number }} p
 */
export function throughputAt (n, { gamma, sigma, lambda = 0 }) {
  return gamma * n / (1 + sigma * (n - 1) + lambda * n * (n - 1))
}

/**
 * Partial derivatives of X(N) by gamma, sigma, lambda (in that order; the first two for Amdahl).
 * @param {number} n
 * @param {{ gamma: number, sigma: number, lambda?: number }} p
 * @param {number} [k] how many parameters (3 USL, 2 Amdahl)
 * @returns {number[]}
 */
export function gradientAt (n, { gamma, sigma, lambda = 0 }, k = 3) {
  const d = 1 + sigma * (n - 1) + lambda * n * (n - 1)
  const g = [n / d, -gamma * n * (n - 1) / (d * d), -gamma * n * n * (n - 1) / (d * d)]
  return g.slice(0, k)
}

/**
 * Where throughput peaks: N* = sqrt((1 - sigma) / lambda) and X(N*); null without a coherency term.
 * @param {{ gamma: number, sigma: number, lambda?: number }} p
 * @returns {{ nStar: number, xStar: number } | null}
 */
export function peakOf (p) {
  if (!(p.lambda > 0) || p.sigma >= 1) return null
  const nStar = Math.sqrt((1 - p.sigma) / p.lambda)
  return { nStar, xStar: throughputAt(nStar, p) }
}

/**
 * Amdahl's asymptote gamma / sigma (throughput as N grows without bound); null when sigma = 0 (no limit).
 * @param {{ gamma: number, sigma: number }} p
 */
export function ceilingOf (p) {
  return p.sigma > 0 ? p.gamma / p.sigma : null
}
