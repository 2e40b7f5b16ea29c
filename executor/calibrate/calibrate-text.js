// The human views of a calibration: one line per probe while it runs, and the levels it found.
import { formatDuration } from '../sweep/sweep-text.js'

/** One stderr line per probe. */
export function formatProbe (p, n) {
  const phase = p.phase.padEnd(17)
  return `probe ${String(n).padStart(2)}  ${phase} c=${String(p.concurrency).padEnd(6)} busiest core ${p.highest.toFixed(1).padStart(5)}%  ` +
    `${p.errors.toLocaleString('en')} errors  ${Math.round(p.throughput).toLocaleString('en')} req/s`
}

/** The human view of a calibration file. */
export function formatCalibration (cal) {
  const c = cal.config
  const lines = [`calibration: ${c.benchmark} on ${c.strategy} x${c.instances} (${c.backend}) · probes of ${cal.probe.duration} s · ` +
    `${cal.probes.length} probes in ${formatDuration(cal.seconds)} · ${cal.cores} cores`]
  const r = cal.relaxed
  lines.push(`  relaxed    c=${r.concurrency}  busiest core ${r.highest}% (repeats ${r.repeats.join(', ')}: ` +
    `${r.confirmed ? `confirmed in ${cal.window.join('-')}%` : `NOT all in ${cal.window.join('-')}%`})`)
  const e = cal.exhausted
  if (!e) lines.push('  exhausted  not found (the probe budget ran out first)')
  else if (e.concurrency === null) lines.push('  exhausted  none: requests failed even at the lowest concurrency')
  else {
    lines.push(`  exhausted  c=${e.concurrency}  ${e.confirmed ? `no failed request in ${e.repeats.length} repeats` : 'not confirmed'}` +
      `${e.bounded ? ' (the probe limit, --max-concurrency)' : ''}`)
  }
  for (const n of cal.notes) lines.push(`  note: ${n}`)
  lines.push(`  written: ${cal.file} (probe runs in ${cal.probeRuns})`)
  return lines.join('\n')
}
