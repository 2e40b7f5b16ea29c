#!/usr/bin/env node
// Benchmark of the instance telemetry's cost: req/s of the baseline app (the cheapest request: the worst case) with
// the telemetry on and off (NODESCALE_TELEMETRY=0), the server pinned to one core and wrk to the other, in
// alternating rounds; the paired ratio is what it costs.
import { median } from 'simple-statistics'
import { launch } from '../register/launch.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { TELEMETRY_ENV } from '../lib/telemetry.js'
import { runWrk } from './wrk.js'

const SERVER_CPU = 1
const TARGET = 0.98 // at most 2% of throughput

const OPTIONS = [
  option({ flag: 'duration', type: 'number', min: 0, above: true, max: 600, default: 5 }),
  option({ flag: 'rounds', type: 'whole', min: 1, max: 50, default: 5 }),
  option({ flag: 'json', type: 'boolean', default: false })
]

/** One round's measurement: a fresh server, telemetry on or off, warmed up for a second, then measured. */
async function measure (on, duration) {
  const server = await launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [SERVER_CPU], env: on ? {} : { [TELEMETRY_ENV]: '0' } })
  try {
    const url = `${server.url}/baseline/`
    runWrk(url, 1)
    const rps = runWrk(url, duration)
    // wrk ran synchronously: the server's lines are waiting in the pipe, read them before counting
    await new Promise(resolve => setTimeout(resolve, 300))
    return { rps, records: server.telemetry().length }
  } finally {
    await server.stop()
  }
}

async function main () {
  const { duration, rounds, json } = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
  const on = []
  const off = []
  console.log(`baseline app, single process pinned to cpu ${SERVER_CPU}; wrk on the other core; ${duration} s per measurement, ${rounds} rounds`)
  for (let round = 0; round < rounds; round++) {
    // alternate which goes first: neither always gets the machine's warmer or cooler half
    const order = round % 2 ? [false, true] : [true, false]
    for (const telemetry of order) {
      const m = await measure(telemetry, duration)
      ;(telemetry ? on : off).push(m.rps)
      if (telemetry && m.records < duration) throw new Error(`telemetry on, but only ${m.records} records in ${duration + 1} s: it is not running`)
      console.log(`  round ${round + 1}  telemetry ${telemetry ? 'on ' : 'off'}  ` +
        `${Math.round(m.rps).toLocaleString('en').padStart(8)} req/s${telemetry ? `  (${m.records} records)` : ''}`)
    }
  }
  const paired = median(on.map((x, i) => x / off[i]))
  const pass = paired >= TARGET
  console.log(`\ntelemetry on / off: median of per-round ratios ${paired.toFixed(3)}, ratio of medians ${(median(on) / median(off)).toFixed(3)} ` +
    `(target >= ${TARGET}, i.e. at most ${Math.round((1 - TARGET) * 100)}% of throughput): ${pass ? 'PASS' : 'FAIL'}`)
  if (json) {
    console.log(JSON.stringify({
      bench: 'telemetry',
      duration,
      rounds,
      on: on.map(Math.round),
      off: off.map(Math.round),
      pairedRatio: Number(paired.toFixed(3)),
      target: TARGET,
      pass
    }))
  }
  process.exitCode = pass ? 0 : 1
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch(err => { console.error(err); process.exit(1) })
}
