#!/usr/bin/env node
// Benchmark of nodescale's own memory over a long run: the peak resident memory of the executor, the load driver
// (autocannon's child process) and the RC (the control plane's container) during a short and a long run at full load
// on the Swarm backend, sampled every second from /proc. Memory bounded in the run's length shows as a long/short
// ratio near 1.
import { spawn, execFileSync } from 'node:child_process'
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { listProcesses } from '../register/proc-tree.js'

const EXECUTOR = resolve(import.meta.dirname, '..', 'bin', 'executor.js')
const RC_SERVICE = 'nodescale_rc'

const OPTIONS = [
  option({ flag: 'short', type: 'whole', min: 5, max: 3600, default: 60, help: 'the short run, seconds' }),
  option({ flag: 'long', type: 'whole', min: 5, max: 7200, default: 600, help: 'the long run, seconds' }),
  option({ flag: 'concurrency', type: 'whole', min: 1, max: 1000, default: 32 }),
  option({ flag: 'json', type: 'boolean', default: false })
]

/** Resident and peak resident memory of a process in KiB (null when it is gone). */
function memoryOf (pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') }
  } catch {
    return null
  }
}

/** Pids of the processes whose parent is pid. */
const childrenOf = (pid) => listProcesses().filter(p => p.ppid === pid).map(p => p.pid)

const cmdline = (pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') } catch { return '' } }

/** The host pid of the RC container's main process on this node (null before the control plane runs). */
function rcPid () {
  try {
    const id = execFileSync('docker', ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${RC_SERVICE}`], { encoding: 'utf8' }).trim().split('\n')[0]
    return id ? Number(execFileSync('docker', ['inspect', '-f', '{{.State.Pid}}', id], { encoding: 'utf8' }).trim()) : null
  } catch {
    return null
  }
}

/** One run of `seconds` at full load; the peak of each part's resident memory, in MiB. */
async function measure (seconds, concurrency) {
  const out = mkdtempSync(join(tmpdir(), 'nodescale-memory-'))
  const args = [EXECUTOR, 'run', '--backend', 'swarm', '--strategy', 'cm', '--instances', '2', '--benchmark', 'baseline',
    '--concurrency', String(concurrency), '--duration', String(seconds), '--out', out, '--quiet', '--json']
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', d => { stdout += d })
  child.stderr.on('data', d => { stderr += d })
  const peak = { executor: 0, driver: 0, rc: 0 }
  const series = { executor: [], driver: [], rc: [] }
  let rc = null
  const tick = () => {
    const e = memoryOf(child.pid)
    if (e) { peak.executor = Math.max(peak.executor, e.hwm, e.rss); series.executor.push(e.rss) }
    for (const pid of childrenOf(child.pid)) {
      if (!cmdline(pid).includes('load-child.js')) continue
      const d = memoryOf(pid)
      if (d) { peak.driver = Math.max(peak.driver, d.hwm, d.rss); series.driver.push(d.rss) }
    }
    rc ??= rcPid()
    const r = rc ? memoryOf(rc) : null
    if (r) { peak.rc = Math.max(peak.rc, r.rss); series.rc.push(r.rss) }
  }
  const timer = setInterval(tick, 1000)
  const code = await new Promise(resolve => child.on('close', resolve))
  clearInterval(timer)
  rmSync(out, { recursive: true, force: true })
  if (code !== 0) throw new Error(`executor run exited ${code}:\n${stderr.slice(-2000)}`)
  const run = JSON.parse(stdout)
  const mib = (kib) => Math.round(kib / 102.4) / 10
  // the last tenth of the samples against the first tenth after the warm-up: growth while the load runs
  const growth = (xs) => { const k = Math.max(1, Math.floor(xs.length / 10)); return mib(Math.max(...xs.slice(-k)) - Math.max(...xs.slice(k, 2 * k))) }
  return {
    seconds,
    requests: run.summary?.requests ?? null,
    throughput: Math.round(run.summary?.throughput ?? 0),
    peakMiB: { executor: mib(peak.executor), driver: mib(peak.driver), rc: mib(peak.rc) },
    growthMiB: { executor: growth(series.executor), driver: growth(series.driver), rc: growth(series.rc) },
    samples: series.executor.length
  }
}

async function main () {
  const { short, long, concurrency, json } = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
  console.log(`cm x2, baseline app, ${concurrency} connections, Swarm backend; peak resident memory sampled every second`)
  // the RC is a long-lived service: one started just before would still be growing its heap during the short run
  // (measured: 54.9 MiB then, 61.9 once warm), which is no growth with the run's length
  await measure(10, concurrency)
  const results = []
  for (const seconds of [short, long]) {
    const r = await measure(seconds, concurrency)
    results.push(r)
    console.log(`  ${String(seconds).padStart(4)} s  ${r.requests?.toLocaleString('en')} requests at ${r.throughput.toLocaleString('en')} req/s  ` +
      `peak MiB: executor ${r.peakMiB.executor}, driver ${r.peakMiB.driver}, RC ${r.peakMiB.rc}  ` +
      `(growth over the run: ${r.growthMiB.executor} / ${r.growthMiB.driver} / ${r.growthMiB.rc})`)
  }
  const [a, b] = results
  const ratio = (k) => (a.peakMiB[k] ? Math.round(b.peakMiB[k] / a.peakMiB[k] * 100) / 100 : null)
  const ratios = { executor: ratio('executor'), driver: ratio('driver'), rc: ratio('rc') }
  console.log(`\npeak RSS ${long} s / ${short} s: executor ${ratios.executor}, driver ${ratios.driver}, RC ${ratios.rc} ` +
    `(for ${Math.round(long / short)}x the requests)`)
  if (json) console.log(JSON.stringify({ bench: 'memory', concurrency, results, ratios }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch(err => { console.error(err); process.exit(1) })
}
