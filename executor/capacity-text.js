// The human views of a capacity search: one line per probe while it runs, and what it found.
import { formatDuration } from './sweep-text.js'

const rate = (x) => (x === null || x === undefined ? '-' : Math.round(x).toLocaleString('en'))

/** One stderr line per probe. */
export function formatCapacityProbe (p, n) {
  const offered = p.rate === null ? 'closed model' : `${rate(p.rate)} req/s offered`
  const why = p.why.length ? ` (${p.why.join('; ')})` : ''
  return `probe ${String(n).padStart(2)}  ${p.phase.padEnd(8)} ${offered.padEnd(22)} ${rate(p.throughput).padStart(7)} req/s served · p99 ${p.p99 === null || p.p99 === undefined ? '-' : Math.round(p.p99)} ms · ${(p.errorRate * 100).toFixed(2)}% errors  ${p.verdict.toUpperCase()}${why}${p.bottleneck ? ` · ${p.bottleneck}` : ''}`
}

/** The human view of a capacity record. */
export function formatCapacity (c) {
  const k = c.config
  const lines = [`capacity of ${k.strategy} x${k.instances} (${c.benchmark}, ${k.driver}) at ${c.objective}, at least ${Math.round(c.served * 100)}% of the rate served:`]
  lines.push(c.capacity === null
    ? `  not found: between ${rate(c.bounds.lo)} and ${rate(c.bounds.hi)} req/s`
    : `  ${rate(c.capacity)} req/s (the next rate up, ${rate(c.bounds.hi)} req/s, misses it; precision ${Math.round(c.precision * 100)}%, ${confirmedText(c.probes.filter(p => p.phase === 'confirm' && p.rate === c.capacity).length)})`)
  if (c.limit) lines.push(`  limit: ${c.limit.bottleneck.kind} — ${c.limit.bottleneck.line} (read at ${rate(c.limit.rate)} req/s, which ${c.limit.verdict === 'misses' ? 'missed' : 'met'})`)
  lines.push(`  ${c.probes.length} probes in ${formatDuration(c.seconds)}`)
  for (const n of c.notes) lines.push(`  note: ${n}`)
  lines.push(`  written: ${c.dir}/capacity.json (and every probe's run folder)`)
  return lines.join('\n')
}

const confirmedText = (n) => (n === 0 ? 'not repeated (--confirm 0)' : n === 1 ? 'met again on a repeat' : `met again on ${n} repeats`)
