// The human view of a run.json: a few lines a person reads at the end of a run.
import { formatLoss } from './degraded.js'
import { microText } from '../analyzer/samples/micro-latency.js'

const f1 = n => (n ?? 0).toFixed(1)
const int = n => Math.round(n ?? 0).toLocaleString('en')

/** @param {any} run a run.json object */
export function formatRunSummary (run) {
  const c = run.config
  const s = run.summary
  const lines = []
  const load = `${c.rate !== undefined ? `rate ${c.rate}/s` : `concurrency ${c.concurrency}`}${c.connection === 'close' ? ' (a connection per request)' : ''}`
  lines.push(`run ${run.id}: ${run.status}${c.tag ? ` · ${c.tag}` : ''}`)
  lines.push(`  ${c.strategy} x${c.instances} · ${c.benchmark} · ${load} · ${durationText(run)} (+${c.warmup} s warm-up) · ` +
    `${c.driver} · ${run.environment?.backend}`)
  if (s) {
    lines.push(`  throughput ${int(s.throughput)} req/s · ${int(s.requests)} requests · ${int(s.errors)} errors (${(s.errorRate * 100).toFixed(2)}%)`)
    const u = s.latencyUs
    if (u) {
      lines.push(`  latency  mean ${microText(u.mean)}  p50 ${microText(u.p50)}  p90 ${microText(u.p90)}  p95 ${microText(u.p95)}  ` +
        `p99 ${microText(u.p99)}  max ${microText(u.max)}  (the driver's µs clock)`)
    } else {
      const l = s.latency
      lines.push(`  latency ms  mean ${f1(l.mean)}  p50 ${f1(l.p50)}  p90 ${f1(l.p90)}  p95 ${f1(l.p95)}  p99 ${f1(l.p99)}  max ${f1(l.max)}  (whole ms)`)
    }
  }
  if (run.cpu && run.cpu.samples > 0) {
    const cores = run.cpu.cores.map(x => `core${x.core} ${f1(x.usage)}%`).join('  ')
    lines.push(`  server CPU (${run.cpu.source})  ${cores}  · total ${run.cpu.total.toFixed(2)} cores · spread ${f1(run.cpu.spread)}`)
    if (run.cpu.host) lines.push(`  host CPU   ${run.cpu.host.cores.map(x => `core${x.core} ${f1(x.usage)}%`).join('  ')}`)
    // a multi-node run: each node's own cores (numbered from 0 on every node), the server's share and the node's host
    // CPU
    for (const n of run.cpu.nodes?.length > 1 ? run.cpu.nodes : []) {
      const part = n.partial ? ` (${n.samples} samples: lost during the run)` : ''
      lines.push(`  node ${n.label ?? n.hostname ?? n.node}  server ${n.cores.map(x => `core${x.core} ${f1(x.usage)}%`).join('  ')}  · ` +
        `${n.total.toFixed(2)} cores · host ${f1(n.host.overall)}%${part}`)
    }
  }
  if (run.partition) lines.push(partitionLine(run.partition))
  if (run.load?.procs?.mode === 'auto') lines.push(`  generators: ${run.load.procs.count} (--load-procs auto): ${run.load.procs.why}`)
  for (const g of run.load?.generators ?? []) lines.push(generatorLine(g))
  if (run.degraded) lines.push(formatLoss(run.degraded))
  lines.push(...validityLines(run.validity, run.load?.generator))
  lines.push(...diagnosisLines(run.diagnosis))
  if (run.error) lines.push(`  error ${run.error.code ?? ''}: ${run.error.message}`)
  lines.push(`  results: ${run.dir}`)
  return lines.join('\n')
}

/**
 * One generator of a run's several: where it ran, its share of the load, its throughput, its CPU, its clock, its
 * verdict; or that it was lost.
 * @param {any} g an entry of run.json's load.generators
 */
export function generatorLine (g) {
  const where = g.kind === 'agent' ? `node ${g.label ?? g.node}` : `${g.host} cpu ${g.cpus.join(',')}`
  const share = g.load.concurrency !== undefined ? `c=${g.load.concurrency}` : `r=${f1(g.load.rate)}/s`
  const head = `  generator ${g.name} on ${where} (${share})`
  if (g.lost) return `${head}  lost: ${g.lost.message}`
  const cpu = g.cpu?.share === null || g.cpu?.share === undefined
    ? 'CPU not measured'
    : `${Math.round(g.cpu.share * 100)}% of its core${g.cpu.processes?.[0]?.usable > 1 ? 's' : ''}`
  const clock = g.clock ? ` · clock ${g.clock.offsetMs >= 0 ? '+' : ''}${g.clock.offsetMs.toFixed(2)} ms ±${(g.clock.rttMs / 2).toFixed(2)}` : ''
  const flags = (g.validity?.flags ?? []).map(x => x.name)
  return `${head}  ${int(g.throughput)} req/s · ${cpu}${clock}${flags.length ? ` · flagged: ${flags.join(', ')}` : ''}`
}

/**
 * The cores partitioned (run.json's `partition`, --server-cpus): the server's, the load's, HAProxy's.
 * @param {{ server: number[], load: number[], lb: number[] | null, derived: string[], lbAllowed?: number[] | null }} p
 */
export function partitionLine (p) {
  const list = (cores) => cores.join(',')
  const said = (k) => (p.derived.includes(k) ? ' (the rest)' : '')
  const lb = p.lb ? ` · HAProxy cpu ${list(p.lbAllowed ?? p.lb)}${said('lb')}` : ''
  return `  cores: server cpu ${list(p.server)} · load cpu ${list(p.load)}${said('load')}${lb}`
}

/** "10 s", or what --duration auto came to: "auto: 14 s, throughput known to ±1.6% (target ±2%)". */
function durationText (run) {
  const c = run.config
  if (c.duration !== 'auto') return `${c.duration} s`
  const a = run.autoDuration
  if (!a) return `auto (${c.minDuration}–${c.maxDuration} s)`
  const known = a.relHalfWidth === null ? 'throughput not judged' : `throughput known to ±${(a.relHalfWidth * 100).toFixed(1)}%`
  return `auto: ${a.seconds} s, ${known} (target ±${a.target * 100}%${a.reached ? '' : `, not reached in ${a.max} s`})`
}

/**
 * What the run's validity says, for a person: "valid" with what was checked, or each flag with its figure.
 * @param {import('./validity.js').Validity | null | undefined} validity
 * @param {{ share: number|null, cores: number|null, hostIdle: number|null } | undefined} generator
 */
export function validityLines (validity, generator) {
  if (!validity) return []
  const figures = generator?.share === null || generator?.share === undefined
    ? ''
    : ` (generator at ${Math.round(generator.share * 100)}% of its cores, host ${generator.hostIdle}% idle)`
  const head = validity.ok
    ? `  validity: ok${validity.flags.length ? ', with a warning' : ''}${figures}`
    : `  validity: NOT VALID: ${validity.flags.filter(f => f.severity === 'invalid').map(f => f.name).join(', ')}${figures}`
  // a steady window too short to judge is neither flagged nor valid on it: said (executor/validity.js, unstable)
  const unjudged = (validity.unchecked ?? []).filter(u => u.name === 'unstable').map(u => `    not judged ${u.name}: ${u.why}`)
  return [head, ...validity.flags.map(f => `    ${f.severity === 'warning' ? 'warning' : 'flag'} ${f.name}: ${f.message}`), ...unjudged]
}

/**
 * What limited the run, in one line, and where the cores went (the roles), in another.
 * @param {any} diagnosis run.json's `diagnosis`
 */
export function diagnosisLines (diagnosis) {
  if (!diagnosis?.bottleneck) return []
  const b = diagnosis.bottleneck
  const lines = [`  bottleneck: ${b.kind} — ${b.line}` +
    `${b.confidence === 'high' ? '' : ` (confidence ${b.confidence}${b.also.length ? `; also ${b.also.map(a => a.kind).join(', ')}` : ''})`}`]
  if (diagnosis.roles && diagnosis.host) {
    const parts = Object.entries(diagnosis.roles).filter(([, c]) => c >= 0.005).map(([r, c]) => `${r} ${c.toFixed(2)}`)
    lines.push(`  cores by role: ${parts.join(' · ')} (host ${diagnosis.host.busy.toFixed(2)} of ${diagnosis.host.cores} busy)`)
  }
  if (diagnosis.instancesUnseen) lines.push(`  instances: not seen: ${diagnosis.instancesUnseen}`)
  return lines
}
