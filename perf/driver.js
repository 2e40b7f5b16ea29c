#!/usr/bin/env node
// Benchmark of the load drivers: req/s of wrk, the autocannon driver (recording its JTL) and the JMeter driver on one
// pinned server.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from 'simple-statistics'
import { runLoad } from '../executor/drivers/index.js'
import { launch } from '../register/launch.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { runWrk } from './wrk.js'

const SERVER_CPU = 1
const LOAD_CPU = 0
const CONNECTIONS = 10
const TARGET = 0.9

const OPTIONS = [
  option({ flag: 'duration', type: 'number', min: 0, above: true, max: 600, default: 5 }),
  option({ flag: 'rounds', type: 'whole', min: 1, max: 50, default: 3 }),
  option({ flag: 'warmup', type: 'number', min: 0, max: 600, default: 1 }),
  option({ flag: 'skip-jmeter', type: 'boolean', default: false })
]

/**
 * @param {string[]} argv
 * @returns {{ duration: number, rounds: number, warmup: number, jmeter: boolean }}
 */
export function parseBenchArgs (argv) {
  const { duration, rounds, warmup, skipJmeter } = withDefaults(parseCommandLine(argv, OPTIONS).values, OPTIONS)
  return { duration, rounds, warmup, jmeter: !skipJmeter }
}

/** The server under test: register's single-process baseline app, pinned to its own core. */
async function startServer () {
  const server = await launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [SERVER_CPU] })
  return {
    what: `register single-process baseline app, pinned to cpu ${SERVER_CPU}`,
    url: `${server.url.replace(/\/$/, '')}/baseline/`,
    stop: () => server.stop()
  }
}

async function runDriver (driver, url, { duration, warmup }, dir) {
  const r = await runLoad({
    driver,
    url,
    concurrency: CONNECTIONS,
    duration,
    warmup: driver === 'jmeter' ? Math.max(2, warmup) : warmup,
    jtlPath: join(dir, `${driver}.jtl`),
    cpus: [LOAD_CPU],
    label: 'baseline'
  })
  return r.requests / ((r.steadyEnd - r.steadyStart) / 1000)
}

async function main () {
  const opts = parseBenchArgs(process.argv.slice(2))
  const tools = ['wrk', 'autocannon', ...(opts.jmeter ? ['jmeter'] : [])]
  const server = await startServer()
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-bench-driver-'))
  const figures = Object.fromEntries(tools.map(t => [t, []]))
  console.log(`server: ${server.what} at ${server.url}`)
  console.log(`load generators pinned to cpu ${LOAD_CPU}, ${CONNECTIONS} connections/threads, ${opts.duration} s per measurement, ${opts.rounds} rounds`)
  try {
    for (let round = 0; round < opts.rounds; round++) {
      // rotate the order so that no tool always runs first (or right after JMeter's JVM)
      const order = tools.map((_, i) => tools[(i + round) % tools.length])
      for (const tool of order) {
        const rps = tool === 'wrk'
          ? runWrk(server.url, opts.duration, { cpu: LOAD_CPU, connections: CONNECTIONS })
          : await runDriver(tool, server.url, opts, dir)
        figures[tool].push(rps)
        console.log(`  round ${round + 1}  ${tool.padEnd(10)} ${Math.round(rps).toLocaleString('en').padStart(9)} req/s`)
      }
    }
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  const med = Object.fromEntries(tools.map(t => [t, median(figures[t])]))
  const ratio = (t) => med[t] / med.wrk
  console.log('\ntool        median req/s   vs wrk   rounds')
  for (const t of tools) {
    console.log(`${t.padEnd(10)} ${Math.round(med[t]).toLocaleString('en').padStart(13)}   ${ratio(t).toFixed(3).padStart(6)}   ` +
      `${figures[t].map(x => Math.round(x)).join(' ')}`)
  }
  // the machine drifts between rounds: the ratio within each round (both tools minutes apart at most) is the steadier
  // figure
  const paired = (t) => median(figures[t].map((x, i) => x / figures.wrk[i]))
  const pass = paired('autocannon') >= TARGET
  console.log(`\nautocannon driver / wrk: median of per-round ratios ${paired('autocannon').toFixed(3)}, ` +
    `ratio of medians ${ratio('autocannon').toFixed(3)} (target >= ${TARGET}): ${pass ? 'PASS' : 'FAIL'}`)
  console.log(JSON.stringify({
    bench: 'driver',
    server: server.what,
    connections: CONNECTIONS,
    duration: opts.duration,
    rounds: opts.rounds,
    median: Object.fromEntries(tools.map(t => [t, Math.round(med[t])])),
    runs: Object.fromEntries(tools.map(t => [t, figures[t].map(Math.round)])),
    ratioAutocannonWrk: Number(ratio('autocannon').toFixed(3)),
    pairedRatioAutocannonWrk: Number(paired('autocannon').toFixed(3)),
    ratioJmeterWrk: opts.jmeter ? Number(ratio('jmeter').toFixed(3)) : null,
    pairedRatioJmeterWrk: opts.jmeter ? Number(paired('jmeter').toFixed(3)) : null,
    target: TARGET,
    pass
  }))
  process.exitCode = pass ? 0 : 1
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch(err => { console.error(err); process.exit(1) })
}
