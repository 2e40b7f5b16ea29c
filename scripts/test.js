#!/usr/bin/env node
// The test suite in three parts. The files that need nothing but Node (no server under load, Docker, JMeter or cores
// of their own: FAST) and a few serial files that measure nothing (QUIET: local runs whose assertions hold on a busy
// host) run one at a time beside the two multi-node Swarm files (HOSTS), whose runs leave the 2-core host about half
// idle (56% idle on average, sampled every 5 s through test/load-nodes.test.js); then every other file one at a time,
// as the machine is theirs alone.
// `node scripts/test.js --fast` runs FAST only, two at a time: the inner loop. Each file's time is printed at the
// end, slowest first (where the suite's time goes).
// A file is in FAST only when it starts no load, no Docker service and measures no core; in QUIET only when it runs on
// the local backend and asserts no throughput, CPU, timing or host state; a new file is serial until someone adds it.
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

export const FAST = Object.freeze([
  'adaptive', 'analyzer-cli', 'analyzer-correlate', 'analyzer-fit-relative', 'analyzer-mimn', 'analyzer-replicate', 'analyzer-report-adaptive', 'analyzer-replicate-ibench',
  'analyzer-sweep', 'analyzer-tests', 'analyzer-usl-fit', 'architecture', 'compare-inference', 'docs',
  'errors-documented', 'executor-config', 'export-fits', 'experiment-validation', 'host-busy', 'inference', 'jtl-writer', 'parsers-fuzz', 'rc-cgroup', 'rc-cpu-summary',
  'load-service-spec', 'rc-container-pid', 'rc-proc-stat', 'rc-sampler', 'registry-probe', 'server-image-context', 'replication-published', 'replication-rules', 'request-auth', 'stats-calibration',
  'steady-state', 'swarm-render', 'sweep-degraded', 'sweep-folder', 'sweep-plan', 'tenth-series', 'with-timeout'
].map(name => `test/${name}.test.js`))

/** Serial files that run on the local backend and assert nothing a busy host changes: they run beside HOSTS. */
export const QUIET = Object.freeze([
  'agent-samples', 'analyzer-report', 'analyzer-summary', 'benchmarks-apps', 'benchmarks-custom', 'capacity-search',
  'jmeter-literal', 'samples-formats', 'schemas', 'sweep-blocks', 'sweep-status'
].map(name => `test/${name}.test.js`))

/** The serial files that wait on Docker more than they compute: the beside lane runs while they do. */
export const HOSTS = Object.freeze(['cluster-run', 'load-nodes'].map(name => `test/${name}.test.js`))

const all = readdirSync(join(ROOT, 'test')).filter(f => f.endsWith('.test.js')).sort().map(f => `test/${f}`)
const fast = all.filter(f => FAST.includes(f))
const quiet = all.filter(f => QUIET.includes(f))
const hosts = all.filter(f => HOSTS.includes(f))
const serial = all.filter(f => !FAST.includes(f) && !QUIET.includes(f) && !HOSTS.includes(f))
const only = process.argv.includes('--fast')

/** @param {string[]} files @param {number} concurrency */
function args (files, concurrency) {
  return ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files]
}

/** @param {string[]} files @param {number} concurrency */
function runFiles (files, concurrency) {
  if (!files.length) return 0
  return spawnSync(process.execPath, args(files, concurrency), { cwd: ROOT, stdio: 'inherit' }).status ?? 1
}

/**
 * The beside lane: its files one at a time in one process, its output kept apart (printed once it ends, so that the
 * two lanes' lines do not interleave).
 * @param {string[]} files
 * @returns {Promise<{ code: number, output: string }>}
 */
function runBeside (files) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, args(files, 1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', d => { output += d })
    child.stderr.on('data', d => { output += d })
    child.on('close', code => resolve({ code: code ?? 1, output }))
  })
}

const started = Date.now()
/** @type {Array<[string, number]>} */
const times = []
const failed = []
let status = 0
/** @param {string} label @param {number} code @param {number} t0 */
function record (label, code, t0) {
  if (code) failed.push(label)
  status = code || status
  times.push([label, Date.now() - t0])
}

if (only) {
  record(`${fast.length} files two at a time`, runFiles(fast, 2), started)
} else {
  const lane = runBeside([...fast, ...quiet])
  for (const file of hosts) {
    const t0 = Date.now()
    record(file, await new Promise(resolve => spawn(process.execPath, args([file], 1), { cwd: ROOT, stdio: 'inherit' })
      .on('close', code => resolve(code ?? 1))), t0)
  }
  const beside = await lane
  process.stdout.write(beside.output)
  record(`${fast.length + quiet.length} files one at a time beside ${hosts.length}`, beside.code, started)
  for (const file of serial) {
    const t0 = Date.now()
    record(file, runFiles([file], 1), t0)
  }
}
const s = (ms) => `${Math.round(ms / 1000)} s`
process.stdout.write(times.sort((a, b) => b[1] - a[1]).map(([f, ms]) => `test: ${s(ms).padStart(6)}  ${f}\n`).join(''))
if (failed.length) process.stdout.write(`test: failed in ${failed.join(', ')}\n`)
process.stdout.write(`test: ${only ? fast.length : all.length} files in ${s(Date.now() - started)}\n`)
process.exitCode = status
