// The plain-language reading of a fit: what limits scaling (contention or coherency), where it peaks, how sure we are.

/** Numbers for people: 3 significant digits, thousands separated. */
export function human (v, digits = 3) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-'
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (a >= 1000) return Math.round(v).toLocaleString('en')
  if (a >= 1) return Number(v.toPrecision(digits)).toLocaleString('en', { maximumFractionDigits: 6 })
  return Number(v.toPrecision(digits)).toString()
}

/**
 * Which term dominates the denominator where it matters (at N*, or at the largest N measured when there is no
 * peak): contention sigma (N-1), coherency lambda N (N-1), or neither (linear scaling).
 * @param {{ sigma: number, lambda: number, nStar: number|null, range: { max: number } }} f
 * @returns {'contention'|'coherency'|'none'}
 */
export function limitOf (f) {
  const n = f.nStar ?? f.range.max
  const contention = f.sigma * (n - 1)
  const coherency = f.lambda * n * (n - 1)
  if (contention < 1e-3 && coherency < 1e-3) return 'none'
  return coherency > contention ? 'coherency' : 'contention'
}

/**
 * One line a capacity planner reads first.
 * @param {import('./fit-stats.js').FitResult} f
 */
export function verdictOf (f) {
  const unit = f.unit
  const max = f.range.max
  if (f.limitedBy === 'none') {
    return `scales linearly up to ${human(max)} ${unit}: no contention or coherency penalty measured (sigma ≈ 0, lambda ≈ 0); measure larger N to find the limit`
  }
  if (f.nStar === null) {
    const head = f.model === 'amdahl' ? 'contention-limited (Amdahl)' : 'Amdahl-limited (lambda = 0: no coherency penalty)'
    const serial = `${human(f.sigma * 100, 2)}% of the work is serialised`
    return f.ceiling !== null
      ? `${head}: throughput approaches ${human(f.ceiling)}/s as ${unit} grow, never falls; ${serial}`
      : `${head}: ${serial}`
  }
  let line = `${f.limitedBy}-limited, peak ${human(f.xStar)}/s at ${human(f.nStar, 2)} ${unit}`
  if (f.nStar < max) line += `; beyond it throughput falls (retrograde), as measured up to ${human(max)}`
  else if (f.nStar > 3 * max) line += ` (extrapolated far beyond the measured ${human(f.range.min)}..${human(max)})`
  else line += ` (extrapolated beyond the measured ${human(f.range.min)}..${human(max)})`
  if (f.bounds.includes('sigma=0')) line += '; sigma = 0 (no contention)'
  return line
}
