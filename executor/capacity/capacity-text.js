// The human views of a capacity search: one line per probe while it runs, and what it found.
import { formatDuration } from '../sweep/sweep-text.js'

const rate = (x) => (x === null || x === undefined ? '-' : Math.round(x).toLocaleString('en'))

/** One stderr line per probe. */
export function formatCapacityProbe (p, n) {
  const offered = p.rate === null ? 'closed model' : `${rate(p.rate)} req/s offered`
  const why = p.why.length ? ` (${p.why.join('; ')})` : ''
  const p99 = p.p99 === null || p.p99 === undefined ? '-' : Math.round(p.p99)
  return `probe ${String(n).padStart(2)}  ${p.phase.padEnd(8)} ${offered.padEnd(22)} ${rate(p.throughput).padStart(7)} req/s served` +
    ` · p99 ${p99} ms · ${(p.errorRate * 100).toFixed(2)}% errors  ${p.verdict.toUpperCase()}${why}${p.bottleneck ? ` · ${p.bottleneck}` : ''}`
}

/** The human view of a capacity record (one written before the probit search has no interval: said as it was). */
export function formatCapacity (c) {
  const k = c.config
  const lines = [`capacity of ${k.strategy} x${k.instances} (${c.benchmark}, ${k.driver}) at ${c.objective}:`]
  if (c.capacity === null) lines.push(`  not found${c.bounds?.lo || c.bounds?.hi ? `: between ${rate(c.bounds.lo)} and ${rate(c.bounds.hi)} req/s` : ''}`)
  else if (c.interval) {
    lines.push(`  ${rate(c.capacity)} req/s, 95% interval ${rate(c.interval.lo)}–${rate(c.interval.hi)} req/s`)
    lines.push(`  meaning: ${c.meaning}`)
    const above = c.bounds.hi === null ? 'none above it missed' : `${rate(c.bounds.hi)} the lowest missed above`
    lines.push(`  probes near it: ${rate(c.bounds.lo)} req/s the highest met below, ${above}; ` +
      `the rate where a probe stops meeting varies by about ${(c.noise * 100).toFixed(1)}% from probe to probe`)
  } else lines.push(`  ${rate(c.capacity)} req/s (the highest rate met, confirmed; the next rate up, ${rate(c.bounds.hi)} req/s, missed)`)
  if (c.limit) {
    const which = c.limit.verdict === 'misses' ? 'missed' : 'met'
    lines.push(`  limit: ${c.limit.bottleneck.kind} — ${c.limit.bottleneck.line} (read at ${rate(c.limit.rate)} req/s, which ${which})`)
  }
  lines.push(`  ${c.probes.length} probes in ${formatDuration(c.seconds)}`)
  for (const n of c.notes) lines.push(`  note: ${n}`)
  lines.push(`  written: ${c.dir}/capacity.json (and every probe's run folder)`)
  return lines.join('\n')
}
