#!/usr/bin/env node
// The test suite in two parts: the files that need nothing but Node (no server under load, Docker, JMeter or cores of
// their own) run two at a time, then every other file one at a time, as the machine is theirs alone.
// `node scripts/test.js --fast` runs the first part only: the inner loop. Each serial file's time is printed at the
// end, slowest first (where the suite's time goes).
// A file is in FAST only when it starts no load, no Docker service and measures no core; a new file is serial until
// someone adds it here.
import { spawnSync } from 'node:child_process'
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

const all = readdirSync(join(ROOT, 'test')).filter(f => f.endsWith('.test.js')).sort().map(f => `test/${f}`)
const fast = all.filter(f => FAST.includes(f))
const serial = all.filter(f => !FAST.includes(f))
const only = process.argv.includes('--fast')

/** @param {string[]} files @param {number} concurrency */
function runFiles (files, concurrency) {
  if (!files.length) return 0
  const args = ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files]
  return spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' }).status ?? 1
}

const started = Date.now()
let status = runFiles(fast, 2)
const failed = status ? ['(one of the files two at a time)'] : []
/** @type {Array<[string, number]>} */
const times = [[`${fast.length} files two at a time`, Date.now() - started]]
if (!only) {
  for (const file of serial) {
    const t0 = Date.now()
    const code = runFiles([file], 1)
    if (code) failed.push(file)
    status = code || status
    times.push([file, Date.now() - t0])
  }
}
const s = (ms) => `${Math.round(ms / 1000)} s`
process.stdout.write(times.sort((a, b) => b[1] - a[1]).map(([f, ms]) => `test: ${s(ms).padStart(6)}  ${f}\n`).join(''))
if (failed.length) process.stdout.write(`test: failed in ${failed.join(', ')}\n`)
process.stdout.write(`test: ${only ? fast.length : all.length} files in ${s(Date.now() - started)}\n`)
process.exitCode = status
