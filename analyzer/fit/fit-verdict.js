// The plain-language reading of a fit: what limits scaling (contention or coherency), where it peaks, how sure we are.

// toLocaleString builds a formatter per call: these are built once (the same output)
const WHOLE = new Intl.NumberFormat('en')
const FRACTION = new Intl.NumberFormat('en', { maximumFractionDigits: 6 })

/** Numbers for people: 3 significant digits, thousands separated. */
export function human (v, digits = 3) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-'
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (a >= 1000) return WHOLE.format(Math.round(v))
  if (a >= 1) return FRACTION.format(Number(v.toPrecision(digits)))
  return Number(v.toPrecision(digits)).toString()
}

/**
 * Which term dominates the denominator where it matters (at N*, or at the largest N measured when there is no
 * peak): contention sigma (N-1), coherency lambda N (N-1), or neither (linear scaling); 'ceiling' when the
 * linear-to-ceiling model fits best (the choice of analyzer/fit/fit-relative.js).
 * @param {{ sigma: number, lambda: number, nStar: number|null, range: { max: number }, choice?: { model: string } }} f
 * @returns {'contention'|'coherency'|'none'|'ceiling'}
 */
export function limitOf (f) {
  if (f.choice?.model === 'ceiling') return 'ceiling'
  return termOf(f.sigma, f.lambda, f.nStar ?? f.range.max)
}

function termOf (sigma, lambda, n) {
  const contention = sigma * (n - 1)
  const coherency = lambda * n * (n - 1)
  if (contention < 1e-3 && coherency < 1e-3) return 'none'
  return coherency > contention ? 'coherency' : 'contention'
}

const interval = iv => (iv ? ` [${human(iv[0])}, ${iv[1] === null ? 'open' : human(iv[1])}]` : '')
/** "core" from "cores": the unit of one N. */
const one = unit => (unit === 'N' ? 'the first N' : `one ${unit.replace(/s$/, '')}`)

/** Whether throughput fell, as the data show it (analyzer/fit/fit-relative.js fellOf). */
function fellText (f) {
  if (!f.fell) return 'no measured point lies significantly below an earlier one'
  return `throughput falls (retrograde): N = ${human(f.fell.to)} measured ${human(f.fell.drop * 100, 2)}% below N = ${human(f.fell.from)}` +
    ' (significant at 5% across every pair of N)'
}

/** The reading of the linear-to-ceiling model. */
function ceilingLine (f) {
  const c = f.ceilingFit
  const ci = c.ci95
  const first = f.range.min
  const second = f.residuals?.map(r => r.n).find(n => n > first) ?? Infinity
  // reached by the second N: only the first N lies on the linear part
  if (c.changePoint < second) {
    const share = Math.min(1, first / c.changePoint)
    return `ceiling: about ${one(f.unit)}'s worth from N = ${human(first)}: ${human(c.ceiling)}/s${interval(ci?.ceiling)}, reached by N = ` +
      `${human(second)} (N = ${human(first)} gives ${human(share * 100, 2)}% of it) and held up to ${human(f.range.max)} ${f.unit}; ${fellText(f)}`
  }
  return `linear up to N ≈ ${human(c.changePoint, 2)}${interval(ci?.changePoint)}, then a ceiling of ${human(c.ceiling)}/s${interval(ci?.ceiling)}:` +
    ` more ${f.unit} add nothing beyond it, as measured up to ${human(f.range.max)}; ${fellText(f)}`
}

/**
 * One line a capacity planner reads first: what the model that fits best (by AICc, when the fit chose one) says, and
 * only what the data show: a fall ("retrograde") only when a measured point lies significantly below an earlier one.
 * @param {import('./fit-stats.js').FitResult & { choice?: any, ceilingFit?: any, fell?: any, identify?: any }} f
 */
export function verdictOf (f) {
  const unit = f.unit
  const max = f.range.max
  const chosen = f.choice?.model ?? f.model
  const prefix = f.choice && chosen !== f.model
    ? `${chosen === 'ceiling' ? 'linear up to a ceiling' : chosen === 'usl' ? 'USL' : 'Amdahl'} fits better (AICc): `
    : ''
  if (chosen === 'ceiling' && f.ceilingFit) return prefix + ceilingLine(f)
  // the parameters of the chosen curve: this fit's own, or (when AICc prefers the other of USL/Amdahl) that one's
  const own = chosen === f.model || !f.choice?.fits?.[chosen]
  const p = own ? f : { ...f, ...f.choice.fits[chosen], model: chosen }
  // what the chosen curve identifies (a fit without profiles, weights none or sd, takes its estimates as they are)
  const read = own ? (f.identified ? f : null) : f.choice?.read ?? null
  const sigma = !read || read.identified.sigma ? p.sigma : 0
  const lambda = p.model === 'usl' && (!read || read.identified.lambda) ? p.lambda ?? 0 : 0
  const nStar = lambda > 0 && p.sigma < 1 ? (own ? f.nStar : Math.sqrt((1 - p.sigma) / p.lambda)) : null
  const limit = termOf(sigma, lambda, nStar ?? max)
  const fell = f.choice ? `; ${fellText(f)}` : ''
  if (limit === 'none') {
    const bounds = read
      ? ['sigma', 'lambda'].filter(k => read.bound95?.[k] > 0).map(k => `${k === 'sigma' ? 'σ' : 'λ'} ≤ ${human(read.bound95[k], 2)}`)
      : []
    return `${prefix}scales linearly up to ${human(max)} ${unit}: no contention or coherency penalty ` +
      `${read ? 'told from 0' : 'measured (sigma ≈ 0, lambda ≈ 0)'}` +
      `${bounds.length ? ` (${bounds.join(', ')} at 95%)` : ''}; measure larger N to find the limit`
  }
  if (nStar === null) {
    const head = p.model === 'amdahl' ? 'contention-limited (Amdahl)' : 'Amdahl-limited (lambda = 0: no coherency penalty)'
    const serial = `${human(p.sigma * 100, 2)}% of the work is serialised`
    const asymptote = p.sigma > 0 ? p.gamma / p.sigma : null
    return prefix + (asymptote !== null
      ? `${head}: throughput approaches ${human(asymptote)}/s${interval(read?.ci95?.ceiling)} as ${unit} grow; ${serial}${fell}`
      : `${head}: ${serial}${fell}`)
  }
  const xStar = p.gamma * nStar / (1 + p.sigma * (nStar - 1) + p.lambda * nStar * (nStar - 1))
  let line = `${prefix}${limit}-limited, peak ${human(xStar)}/s at ${human(nStar, 2)} ${unit}${interval(read?.ci95?.nStar)}`
  if (!f.choice) {
    // a fit without the reading (callers of describeFit alone): the old wording, but no fall claimed
    if (nStar > max) line += ` (extrapolated beyond the measured ${human(f.range.min)}..${human(max)})`
    return line
  }
  if (nStar < max) line += fell
  else line += ` (extrapolated beyond the measured ${human(f.range.min)}..${human(max)})${fell}`
  if (sigma === 0) line += '; sigma = 0 (no contention)'
  return line
}

/**
 * The interval a fit prints for a figure: the calibrated profile interval of a relative-error fit (a bootstrap beside
 * it is not calibrated), else the bootstrap's when one was asked for, else the t interval.
 * @param {any} f a fit result
 * @param {string} name sigma, lambda, gamma, nStar, xStar, ceiling
 * @returns {[number, number] | null}
 */
export const printedInterval = (f, name) => (f.weighting === 'relative' ? f.ci95[name] : f.bootstrapCi?.[name] ?? f.ci95[name])

/** Which intervals printedInterval gives for a fit: profile likelihood, bootstrap or t. */
export const intervalKind = (f) => (f.weighting === 'relative' ? 'profile' : f.bootstrapCi ? 'bootstrap' : 't')
