// Spawns nodescale's CLIs as a user would, and reads what a run leaves behind.
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import assert from 'node:assert/strict'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BOTTLENECK_RULES } from '../../analyzer/diagnosis/bottleneck.js'
import { deploymentShape } from '../../lib/strategies.js'
import { assertValidRunFolder } from './schemas.js'
import { noteCommand } from './run-ledger.js'

const BOTTLENECK_KINDS = [...BOTTLENECK_RULES.map(r => r.kind), 'none']
export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))

/**
 * Runs `bin/<name>.js args` and resolves with its exit code and output.
 * @param {string} name executor | analyzer
 * @param {string[]} args
 * @param {{ env?: object, timeoutMs?: number, onStderr?: (text: string, child:
 *   import('node:child_process').ChildProcess) => void, onStart?: (child: import('node:child_process').ChildProcess) =>
 *   void }} [opts]
 */
export function runCli (name, args, { env, timeoutMs = 120000, onStderr, onStart } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, [join(ROOT, 'bin', `${name}.js`), ...args], { env: { ...process.env, ...env }, cwd: ROOT })
    onStart?.(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', d => { stderr += d; onStderr?.(stderr, child) })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${name} ${args.join(' ')} timed out\n${stderr}`)) }, timeoutMs)
    child.on('error', reject)
    child.on('close', async (code, signal) => {
      clearTimeout(timer)
      if (name === 'executor') await noteCommand(args, Date.now() - started, ROOT).catch(err => process.stderr.write(`run ledger: ${err.message}\n`))
      resolve({ code, signal, stdout, stderr, pid: child.pid })
    })
  })
}

/** The one run folder under out, and its parsed run.json. */
export function readRun (out) {
  const dirs = readdirSync(out).filter(d => existsSync(join(out, d, 'run.json')))
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.length}`)
  const dir = join(out, dirs[0])
  return { dir, run: JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) }
}

/** A process's command line, its arguments joined by spaces; '' once it is gone (it may exit while it is read). */
export function commandLine (pid) {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') } catch { return '' }
}

/** A process's parent pid (field 4 of /proc/<pid>/stat); null when it is gone. */
export function parentOf (pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch { return null }
}

/** Every descendant pid of a process, from /proc (ppid is field 4 of /proc/<pid>/stat). */
export function descendants (rootPid) {
  const children = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (!children.has(ppid)) children.set(ppid, [])
      children.get(ppid).push(Number(d))
    } catch {}
  }
  const out = []
  const stack = [rootPid]
  while (stack.length) {
    const pid = stack.pop()
    for (const c of children.get(pid) ?? []) { out.push(c); stack.push(c) }
  }
  return out
}

/** The pids of the list that are still alive (zombies count as gone). */
export function alive (pids) {
  return pids.filter(pid => {
    try { return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) } catch { return false }
  })
}

/** Rows of a CSV JTL without its header (fast, for tests: the answer's fields never hold commas here). */
export function jtlRows (path) {
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean)
  const header = lines.shift().split(',')
  return lines.map(l => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])))
}

/**
 * Asserts what every finished run folder holds: run.json done, a JTL whose rows are the summary's requests, CPU sampled
 * per core.
 * @param {string} out
 * @param {{ strategy: string, instances: number }} expected
 */
export function assertCompleteRun (out, { strategy, instances }) {
  const { dir, run } = readRun(out)
  assert.equal(run.schema, 'nodescale.run/v1')
  assert.equal(run.status, 'done', JSON.stringify(run.error))
  assert.equal(run.config.strategy, strategy)
  assert.equal(run.config.instances, instances)
  const rows = jtlRows(join(dir, 'samples.jtl'))
  assert.ok(rows.length > 50, `only ${rows.length} rows`)
  assert.equal(run.summary.requests, rows.length)
  assert.equal(run.summary.errors, rows.filter(r => r.success !== 'true').length)
  assert.ok(run.summary.throughput > 0)
  for (const k of ['mean', 'p50', 'p90', 'p95', 'p99', 'max']) assert.ok(Number.isFinite(run.summary.latency[k]), k)
  assert.equal(run.cpu.cores.length, run.environment.cpus)
  assert.ok(run.cpu.samples >= 1, 'CPU was sampled in the steady window')
  assert.ok(run.cpu.total > 0.05, `server CPU total ${run.cpu.total}`)
  const timeline = JSON.parse(readFileSync(join(dir, 'timeline.json'), 'utf8'))
  assert.ok(timeline.samples.length >= 2)
  assert.deepEqual(readdirSync(dir).filter(f => f.endsWith('.tmp')), [], 'no temp files left')
  assertDiagnosis(run)
  assertValidRunFolder(dir)
  return { dir, run }
}

/** The role each process shape adds to the workers' (a cluster's primary, PM2's daemon), and the balancer's. */
const SHAPE_ROLE = { up: null, cm: 'primary', pm2: 'pm2-daemon', hs: 'load-balancer' }

/**
 * A run's diagnosis: a bottleneck of a known kind with its evidence; every instance's telemetry (one per worker, a
 * cluster's primary too); the strategy's own role among the roles, which sum to the host's busy cores.
 * @param {any} run
 */
export function assertDiagnosis (run) {
  const d = run.diagnosis
  assert.ok(d, 'run.json has a diagnosis')
  assert.ok(BOTTLENECK_KINDS.includes(d.bottleneck.kind), d.bottleneck.kind)
  assert.ok(['high', 'medium', 'low'].includes(d.bottleneck.confidence))
  assert.ok(d.bottleneck.evidence.length > 0 || d.bottleneck.kind === 'none', JSON.stringify(d.bottleneck))
  const { strategy } = run.config
  const workers = d.instances.filter(i => i.role === 'worker')
  // one per process that serves: up's one process whatever its vCPUs, each worker, PM2 instance or replica
  const serving = deploymentShape(run.config).answering
  assert.equal(new Set(workers.map(i => i.id)).size, serving, `one telemetry per serving process: ${JSON.stringify(d.instances.map(i => i.id))}`)
  for (const i of workers) assert.ok(i.samples >= 1 && i.elu >= 0 && i.elu <= 1 && i.heapMB > 0, JSON.stringify(i))
  assert.equal(d.instances.some(i => i.role === 'primary'), strategy === 'cm', 'a cluster\'s primary says its own')
  const role = SHAPE_ROLE[strategy]
  if (role) assert.ok(role in d.roles, `${strategy}: ${role} among ${JSON.stringify(d.roles)}`)
  assert.ok(d.roles.workers > 0.02, JSON.stringify(d.roles))
  const sum = Object.values(d.roles).reduce((a, b) => a + b, 0)
  // `other` is the host's rest, never negative: the roles make the host's busy cores, or a little more when the
  // processes' own counters ran ahead of /proc/stat's
  assert.ok(sum >= d.host.busy - 0.02 && sum <= d.host.busy + 0.3, `roles ${sum} vs host ${d.host.busy}`)
}
