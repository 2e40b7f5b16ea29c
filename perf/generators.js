#!/usr/bin/env node
// Benchmark of distributed load generation: the same server driven by one generator process and by two (--load-procs
// 1 vs 2, each pinned to a core), alternated over rounds in one invocation; prints each side's median throughput, its
// generators' CPU share, and the ratio. A server one generator cannot saturate shows a ratio above 1; on a machine
// whose cores the server and the generators share, the gain is bounded by the cores the server loses to them.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'

const EXECUTOR = resolve(import.meta.dirname, '..', 'bin', 'executor.js')

const OPTIONS = [
  option({ flag: 'rounds', type: 'whole', min: 1, max: 20, default: 3, help: 'runs of each side, alternated' }),
  option({ flag: 'duration', type: 'whole', min: 2, max: 600, default: 8, help: 'steady seconds of each run' }),
  option({ flag: 'concurrency', type: 'whole', min: 2, max: 1000, default: 64 }),
  option({ flag: 'strategy', type: 'text', default: 'hs', help: 'the server: a strategy one generator cannot saturate' }),
  option({ flag: 'instances', type: 'whole', min: 1, max: 64, default: 2 }),
  option({ flag: 'driver', type: 'text', default: 'autocannon', help: 'autocannon or jmeter (a JVM costs more a request)' }),
  option({ flag: 'json', type: 'boolean', default: false })
]

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }

/** One run with `procs` generator processes: its throughput, its busiest generator's share, its host's idle. */
function runWith (procs, o) {
  const out = mkdtempSync(join(tmpdir(), 'ns-perf-gen-'))
  try {
    const r = spawnSync(process.execPath, [
      EXECUTOR, 'run', '--backend', 'local', '--strategy', o.strategy, '--instances', String(o.instances), '--benchmark', 'baseline',
      '--load-procs', String(procs), '--driver', o.driver, '--concurrency', String(o.concurrency), '--duration', String(o.duration),
      '--warmup', '2', '--samples', 'none', '--out', out, '--quiet'
    ], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`executor run --load-procs ${procs} exited ${r.status}: ${r.stderr.slice(-2000)}`)
    const dir = readdirSync(out)[0]
    const run = JSON.parse(readFileSync(join(out, dir, 'run.json'), 'utf8'))
    return { throughput: run.summary.throughput, share: run.load.generator.share, hostIdle: run.load.generator.hostIdle, valid: run.validity.ok }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

export function main () {
  const o = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
  const sides = { 1: [], 2: [] }
  for (let i = 0; i < o.rounds; i++) {
    for (const procs of i % 2 ? [2, 1] : [1, 2]) {
      const r = runWith(procs, o)
      sides[procs].push(r)
      if (!o.json) {
        process.stderr.write(`round ${i + 1}: ${procs} generator${procs > 1 ? 's' : ''}: ${Math.round(r.throughput)} req/s, ` +
          `busiest generator ${Math.round(r.share * 100)}% of its core, host ${r.hostIdle}% idle\n`)
      }
    }
  }
  const of = (procs) => ({
    throughput: median(sides[procs].map(r => r.throughput)),
    share: median(sides[procs].map(r => r.share)),
    hostIdle: median(sides[procs].map(r => r.hostIdle))
  })
  const result = { server: `${o.strategy} x${o.instances} baseline, concurrency ${o.concurrency}, ${o.driver}`, rounds: o.rounds, one: of(1), two: of(2) }
  const ratio = Math.round(result.two.throughput / result.one.throughput * 100) / 100
  if (o.json) process.stdout.write(JSON.stringify({ ...result, ratio }, null, 2) + '\n')
  else {
    process.stdout.write(`${result.server}, ${o.rounds} rounds of ${o.duration} s (medians)\n`)
    for (const [name, s] of /** @type {[string, any][]} */ ([['1 generator ', result.one], ['2 generators', result.two]])) {
      process.stdout.write(`  ${name}  ${Math.round(s.throughput)} req/s  busiest generator ${Math.round(s.share * 100)}% of its core  ` +
        `host ${s.hostIdle}% idle\n`)
    }
    process.stdout.write(`  ratio 2/1: ${ratio}\n`)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main()
