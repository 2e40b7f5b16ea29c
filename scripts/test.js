#!/usr/bin/env node
// The test suite in three parts. The files that need nothing but Node (no server under load, Docker, JMeter or cores
// of their own: FAST) and a few serial files that measure nothing (QUIET: local runs whose assertions hold on a busy
// host) run one at a time beside the two multi-node Swarm files (HOSTS), whose runs leave the 2-core host about half
// idle (56% idle on average, sampled every 5 s through test/load-nodes.test.js); then PAIRED's two lanes at once; then
// every other file one at a time, as the machine is theirs alone.
// `node scripts/test.js --fast` runs FAST only, two at a time: the inner loop. Each file's time is printed at the
// end, slowest first (where the suite's time goes).
// A file is in FAST only when it starts no load, no Docker service and measures no core; in QUIET only when it runs on
// the local backend and asserts no throughput, CPU, timing or host state, and is light enough not to slow the HOSTS
// files' own runs (package's npm install and connection-close's JMeter were not: beside them, a JMeter on a load node
// started after its window and the lane ended 455 s in, after the hosts' 448); a new file is serial until someone adds
// it.
import { spawn } from 'node:child_process'
import { readdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sumLedger } from '../test/helpers/run-ledger.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

export const FAST = Object.freeze([
  'adaptive', 'analyzer-cli', 'analyzer-correlate', 'analyzer-fit-relative', 'analyzer-mimn', 'analyzer-replicate',
  'analyzer-replicate-ibench', 'analyzer-report-adaptive', 'analyzer-sweep', 'analyzer-tests', 'analyzer-usl-fit',
  'architecture', 'compare-inference', 'docs', 'errors-documented', 'executor-config', 'experiment-validation',
  'export-fits', 'host-busy', 'http-connection', 'inference', 'jtl-writer', 'load-service-spec', 'micro-latency', 'parsers-fuzz', 'rc-cgroup',
  'rc-container-pid', 'rc-cpu-summary', 'rc-proc-stat', 'rc-sampler', 'registry-probe', 'replication-published',
  'replication-rules', 'request-auth', 'server-image-context', 'stats-calibration', 'steady-state', 'swarm-render',
  'sweep-degraded', 'sweep-folder', 'sweep-plan', 'tenth-series', 'with-timeout'
].map(name => `test/${name}.test.js`))

/** Serial files that run on the local backend and assert nothing a busy host changes: they run beside HOSTS. */
export const QUIET = Object.freeze([
  'affinity', 'agent-samples', 'analyzer-report', 'analyzer-summary', 'benchmarks-apps', 'benchmarks-custom',
  'capacity-search', 'executor-contract', 'jmeter-literal', 'partition', 'register-launch', 'register-serve',
  'samples-formats', 'schemas', 'sweep-blocks', 'sweep-local', 'sweep-status'
].map(name => `test/${name}.test.js`))

/** The serial files that wait on Docker more than they compute: the beside lane runs while they do. */
export const HOSTS = Object.freeze(['cluster-run', 'load-nodes'].map(name => `test/${name}.test.js`))

/**
 * After the hosts, two lanes at once, each one file at a time: single-node Swarm files that assert no throughput, CPU
 * share or bottleneck of a kind, and local files that deploy nothing on the swarm and assert only that what they
 * installed runs. Neither lane lists or removes what the other deploys. (sweep-calibrate is not one: its relaxed level
 * is where the busiest core is 75-85% busy, and beside the Swarm lane and another busy process it came out at 128
 * connections, above the 30 its server refuses past.)
 */
export const PAIRED = Object.freeze([
  ['registry-security', 'swarm-image', 'swarm-stacks', 'whole-server-swarm'],
  ['package']
].map(lane => lane.map(name => `test/${name}.test.js`)))

const all = readdirSync(join(ROOT, 'test')).filter(f => f.endsWith('.test.js')).sort().map(f => `test/${f}`)
const fast = all.filter(f => FAST.includes(f))
const quiet = all.filter(f => QUIET.includes(f))
const hosts = all.filter(f => HOSTS.includes(f))
const paired = PAIRED.map(lane => all.filter(f => lane.includes(f)))
const serial = all.filter(f => !FAST.includes(f) && !QUIET.includes(f) && !HOSTS.includes(f) && !PAIRED.flat().includes(f))
const only = process.argv.includes('--fast')

/**
 * --test-force-exit: a file ends once its tests have (their after hooks run), whatever it left running: a test whose
 * load model never finished kept a timer alive, and its file, and the lane after it, hung until CI's limit.
 * @param {string[]} files @param {number} concurrency
 */
function args (files, concurrency) {
  return ['--test', `--test-concurrency=${concurrency}`, '--test-force-exit', '--test-reporter=spec', ...files]
}

/**
 * Runs files in one test process. Its output is printed as it comes (live) or once it ends (the beside lane, so that
 * the two lanes' lines do not interleave), and kept: a failed file's failures are printed again at the very end, where
 * a CI log's tail shows them.
 * @param {string[]} files @param {number} concurrency @param {boolean} live
 * @returns {Promise<{ code: number, output: string }>}
 */
function runFiles (files, concurrency, live) {
  if (!files.length) return Promise.resolve({ code: 0, output: '' })
  return new Promise(resolve => {
    const child = spawn(process.execPath, args(files, concurrency), {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODESCALE_TEST_LEDGER: LEDGER }
    })
    let output = ''
    const keep = (d) => { output += d; if (live) process.stdout.write(d) }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.on('close', code => {
      if (!live) process.stdout.write(output)
      resolve({ code: code ?? 1, output })
    })
  })
}

/** What a failed run printed about its failures: the reporter's summary, else its last lines. @param {string} output */
function failuresOf (output) {
  const at = output.lastIndexOf('failing tests:')
  const text = at >= 0 ? output.slice(output.lastIndexOf('\n', at) + 1) : output.split('\n').slice(-40).join('\n')
  return text.length > 6000 ? `${text.slice(0, 6000)}\n…` : text
}

/** Every executor command the tests spawn adds a line here: how much of a lane's time is real runs (run-ledger.js). */
const LEDGER_DIR = mkdtempSync(join(tmpdir(), 'nodescale-suite-'))
const LEDGER = join(LEDGER_DIR, 'ledger.ndjson')
const started = Date.now()
/** @type {Array<[string, number]>} */
const times = []
/** @type {Array<[string, string]>} the label and what it printed of its failures */
const failed = []
let status = 0
/** @param {string} label @param {{ code: number, output: string }} result @param {number} t0 */
function record (label, { code, output }, t0) {
  if (code) failed.push([label, failuresOf(output)])
  status = code || status
  times.push([label, Date.now() - t0])
}

let serialMs = 0
if (only) {
  record(`${fast.length} files two at a time`, await runFiles(fast, 2, true), started)
} else {
  // the beside lane's own end is kept apart from when it is awaited: what it leaves idle of the hosts' time is the room
  // a file moved into it has
  let laneEnded = 0
  const lane = runFiles([...fast, ...quiet], 1, false).then(result => { laneEnded = Date.now(); return result })
  for (const file of hosts) {
    const t0 = Date.now()
    record(file, await runFiles([file], 1, true), t0)
  }
  const besideLane = await lane
  record(`${fast.length + quiet.length} files one at a time beside ${hosts.length} (ended after ${Math.round((laneEnded - started) / 1000)} s)`,
    besideLane, started)
  // the first paired lane prints as it goes, the other each file's output once it ends
  await Promise.all(paired.map((files, i) => oneAtATime(files, i === 0, ` (paired lane ${i + 1})`)))
  const serialStarted = Date.now()
  await oneAtATime(serial, true, '')
  serialMs = Date.now() - serialStarted
}

/** @param {string[]} files @param {boolean} live @param {string} note */
async function oneAtATime (files, live, note) {
  for (const file of files) {
    const t0 = Date.now()
    record(`${file}${note}`, await runFiles([file], 1, live), t0)
  }
}
const s = (ms) => `${Math.round(ms / 1000)} s`
process.stdout.write(times.sort((a, b) => b[1] - a[1]).map(([f, ms]) => `test: ${s(ms).padStart(6)}  ${f}\n`).join(''))
if (!only) {
  // the serial files run alone: the time their real runs take is a floor under the suite's (the runs' own start to end,
  // as run.json says; a test's library runs and removed folders are not seen)
  const ledger = sumLedger(LEDGER, serial)
  process.stdout.write(`test: ${serial.length} serial files in ${s(serialMs)}: ${ledger.commands} executor commands ${s(ledger.commandMs)}, ` +
    `${ledger.runs} runs in them ${s(ledger.runMs)} (their warm-up and duration ${Math.round(ledger.loadS)} s)\n`)
}
rmSync(LEDGER_DIR, { recursive: true, force: true })
for (const [label, text] of failed) process.stdout.write(`test: what failed in ${label}:\n${text.trimEnd()}\n`)
if (failed.length) process.stdout.write(`test: failed in ${failed.map(([label]) => label).join(', ')}\n`)
process.stdout.write(`test: ${only ? fast.length : all.length} files in ${s(Date.now() - started)}\n`)
process.exitCode = status
