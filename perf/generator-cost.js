#!/usr/bin/env node
// Benchmark of what a request costs the load generator: requests per CPU-second of the generator's processes, wrk
// against nodescale's autocannon driver as a run drives it (closed model, and open model at 80% of what wrk reached),
// recording its JTL, each pinned to the same core while one pinned server answers. Alternated over rounds in one
// invocation; prints each side's median and its ratio to wrk (issue 26's target: >= 0.5). The CPU is the kernel's
// account of the command and everything it started (a shell's waited-for children, /proc/<pid>/stat), start-up
// included, as a user's run pays it: a side lasts as long as a run with the default --duration and --warmup (12 s; a
// generator process's start-up, ~0.34 CPU-s of imports and compiling, weighs twice as much in a 6-s side). Then the
// wall: the requests a second one process of each (wrk, the closed model) drives from its core against a raw server
// faster than it, which is what sizes the generators of a fast server.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from 'simple-statistics'
import { normalizeLoadOptions } from '../executor/drivers/index.js'
import { launch } from '../register/launch.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { RUN_OPTION } from '../lib/run-options.js'

const SERVER_CPU = 1
const LOAD_CPU = 0
const CONNECTIONS = 10
const TARGET = 0.5
const TICKS = 100
/** a side's load as a default run's: its warm-up, and its seconds in all (the measured ones and the warm-up) */
const WARMUP = RUN_OPTION.warmup.default
const RUN_SECONDS = RUN_OPTION.duration.default + WARMUP

const OPTIONS = [
  option({
    flag: 'duration',
    type: 'whole',
    min: WARMUP + 2,
    max: 600,
    default: RUN_SECONDS,
    help: `seconds of load a side, its ${WARMUP}-s warm-up included (default: a default run's, ${RUN_SECONDS})`
  }),
  option({ flag: 'rounds', type: 'whole', min: 1, max: 50, default: 3 }),
  option({ flag: 'json', type: 'boolean', default: false })
]

/**
 * Runs a command pinned to the load's core and answers its requests (read from its last stdout line by `count`) and
 * the CPU-seconds it and its children used: a shell runs it and then prints its own stat line, whose cutime and cstime
 * hold every child it waited for.
 * @param {string[]} argv @param {(stdout: string) => number} count
 */
function measured (argv, count) {
  const quoted = argv.map(a => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  const r = spawnSync('sh', ['-c', `taskset -c ${LOAD_CPU} ${quoted}; echo; cat /proc/$$/stat`], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${argv[0]} failed: ${r.stderr.slice(-2000)}`)
  const lines = r.stdout.trim().split('\n')
  const stat = lines.pop() ?? ''
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields from the state on (the third of proc(5)): cutime and cstime are the 16th and 17th of the line
  const user = Number(fields[13]) / TICKS
  const cpu = user + Number(fields[14]) / TICKS
  const requests = count(lines.join('\n'))
  return { requests, cpu, user, perCpuSecond: requests / cpu }
}

function wrk (url, duration) {
  return measured(['wrk', '-t1', `-c${CONNECTIONS}`, `-d${duration}s`, url], (out) => {
    const m = /(\d+) requests in/.exec(out)
    if (!m) throw new Error(`wrk printed no request count:\n${out}`)
    return Number(m[1])
  })
}

/**
 * The side measured: nodescale's driver as a run drives it, its JTL and latency histograms written, in a process of
 * its own that loads what a run's generator process loads (perf/generator-child.js), its options normalized here as
 * the executor normalizes them.
 * @param {'closed'|'open'} model @param {string} url @param {number} duration @param {number|undefined} rate
 * @param {string} dir
 */
function driver (model, url, duration, rate, dir) {
  const jtlPath = join(dir, `${model}.jtl`)
  const o = normalizeLoadOptions({
    driver: 'autocannon',
    url,
    ...(model === 'open' ? { rate: Math.round(rate ?? 0) } : { concurrency: CONNECTIONS }),
    duration: duration - WARMUP,
    warmup: WARMUP,
    jtlPath,
    // a run's generator writes the run's latency histograms from its rows too (executor/run.js)
    histogramPath: join(dir, `${model}-latency.json`),
    label: 'baseline'
  })
  const child = fileURLToPath(new URL('./generator-child.js', import.meta.url))
  return measured([process.execPath, child, JSON.stringify({ ...o, jtlPath })], (out) => Number(out.trim().split('\n').pop()))
}

/** Starts perf/canned-server.js (a raw server faster than any generator) pinned to the server's core. */
async function cannedServer () {
  const script = fileURLToPath(new URL('./canned-server.js', import.meta.url))
  const child = spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, script], { stdio: ['ignore', 'pipe', 'inherit'] })
  const [port] = await once(child.stdout.setEncoding('utf8'), 'data')
  return { url: `http://127.0.0.1:${Number(port)}/`, stop: () => child.kill() }
}

/**
 * A side's round: requests per CPU-second, and what they came from (its requests a second and the share of its core it
 * used: a generator that waits on the server pays its wake-ups per answer, one that is busy batches them).
 * @param {ReturnType<typeof measured>} r @param {number} duration
 */
const sideFigures = (r, duration) => `${Math.round(r.perCpuSecond).toLocaleString('en')}/CPU-s ` +
  `(${Math.round(r.requests / duration).toLocaleString('en')} req/s, ${Math.round(100 * r.cpu / duration)}% of its core, ` +
  `${Math.round(100 * r.user / r.cpu)}% user)`

async function main () {
  const o = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
  const server = await launch({ shape: 'single', instances: 1, benchmark: 'baseline', affinity: [SERVER_CPU] })
  const url = `${server.url.replace(/\/$/, '')}/baseline/`
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-bench-cost-'))
  const sides = ['wrk', 'closed', 'open']
  const runs = Object.fromEntries(sides.map(s => [s, /** @type {ReturnType<typeof measured>[]} */ ([])]))
  const say = (line) => { if (!o.json) console.log(line) }
  say(`server: register's baseline app, one process pinned to cpu ${SERVER_CPU}; generators pinned to cpu ${LOAD_CPU}, ` +
    `${CONNECTIONS} connections, ${o.duration} s a side, ${o.rounds} rounds`)
  try {
    for (let round = 0; round < o.rounds; round++) {
      const w = wrk(url, o.duration)
      runs.wrk.push(w)
      // the closed and open models in turn, the open one at 80% of what wrk reached this round
      for (const model of /** @type {('open'|'closed')[]} */ (round % 2 ? ['open', 'closed'] : ['closed', 'open'])) {
        runs[model].push(driver(model, url, o.duration, model === 'open' ? 0.8 * w.requests / o.duration : undefined, dir))
      }
      say(`  round ${round + 1}  ${sides.map(s => `${s} ${sideFigures(runs[s][round], o.duration)}`).join('  ')}`)
    }
  } finally {
    await server.stop()
  }
  // the wall: requests a second of one generator process on its core against the canned server on the other, wrk's
  // and the closed model's in turn (wrk may be held by the server: then the ratio is at least what it says)
  const wall = { wrk: /** @type {number[]} */ ([]), closed: /** @type {number[]} */ ([]) }
  const canned = await cannedServer()
  try {
    for (let round = 0; round < o.rounds; round++) {
      wall.wrk.push(wrk(canned.url, o.duration).requests / o.duration)
      wall.closed.push(driver('closed', canned.url, o.duration, undefined, dir).requests / o.duration)
    }
  } finally {
    canned.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  const wallRatio = median(wall.closed.map((c, i) => c / wall.wrk[i]))
  const med = Object.fromEntries(sides.map(s => [s, median(runs[s].map(r => r.perCpuSecond))]))
  // each round's ratio (the tools a minute apart at most) is steadier than the ratio of medians on a drifting machine
  const paired = (s) => median(runs[s].map((r, i) => r.perCpuSecond / runs.wrk[i].perCpuSecond))
  say('\nside      requests per CPU-second (median)   vs wrk (median of rounds)')
  for (const s of sides) say(`${s.padEnd(9)} ${Math.round(med[s]).toLocaleString('en').padStart(34)}   ${paired(s).toFixed(3).padStart(6)}`)
  const pass = paired('closed') >= TARGET && paired('open') >= TARGET
  say(`\nthe driver's closed and open models against wrk: target >= ${TARGET}: ${pass ? 'PASS' : 'FAIL'}`)
  say(`the wall (one process, ${CONNECTIONS} connections, against a raw server faster than it): wrk ` +
    `${Math.round(median(wall.wrk)).toLocaleString('en')} req/s, closed ${Math.round(median(wall.closed)).toLocaleString('en')} req/s ` +
    `(${wallRatio.toFixed(3)} of wrk's, median of rounds)`)
  console.log(JSON.stringify({
    bench: 'generator-cost',
    connections: CONNECTIONS,
    duration: o.duration,
    rounds: o.rounds,
    perCpuSecond: Object.fromEntries(sides.map(s => [s, Math.round(med[s])])),
    ratio: { closed: Number(paired('closed').toFixed(3)), open: Number(paired('open').toFixed(3)) },
    target: TARGET,
    pass,
    wall: { wrk: Math.round(median(wall.wrk)), closed: Math.round(median(wall.closed)), ratio: Number(wallRatio.toFixed(3)) }
  }))
  process.exitCode = pass ? 0 : 1
}

main().catch(err => { console.error(err); process.exit(1) })
