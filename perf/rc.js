#!/usr/bin/env node
// Benchmark of the CPU sampler's own cost: each source samples a busy process tree at 1 s in a process of its own.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createCpuGroup } from '../rc/cpu-group.js'
import { detectCgroup, readCgroupProcs } from '../rc/cgroup.js'
import { createSampler } from '../rc/sampler.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'

const TARGET_PCT = 1 // of one core
const SELF = fileURLToPath(import.meta.url)

const OPTIONS = [
  option({ flag: 'duration', type: 'number', min: 0, above: true, max: 3600, default: 20 }),
  option({ flag: 'interval', type: 'whole', min: 10, max: 60000, default: 1000 }),
  option({ flag: 'workers', type: 'whole', min: 1, max: 64, default: 2 }),
  option({ flag: 'json', type: 'boolean', default: false }),
  option({ flag: 'child', type: 'text' })
]

/**
 * @param {string[]} argv
 * @returns {{ duration: number, intervalMs: number, workers: number, json: boolean, child?: string }}
 */
export function parseBenchArgs (argv) {
  const { duration, interval, workers, json, child } = withDefaults(parseCommandLine(argv, OPTIONS).values, OPTIONS)
  return { duration, intervalMs: interval, workers, json, child }
}

/**
 * The measuring child: only a sampler (or, for source 'idle', only an empty timer, node's own floor), for `duration`;
 * prints its CPU time over exactly that span.
 */
async function child ({ source, path, rootPid, duration, intervalMs }) {
  const group = source === 'threads' || source === 'idle'
    ? undefined
    : { kind: source, path, wrap: (cmd, args) => ({ cmd, args }), addPid () {}, pids: () => readCgroupProcs(path), remove: async () => {} }
  // as a run samples: the server, one more process by role (the load balancer's, here the same tree's root) and itself
  const sampler = source === 'idle'
    ? null
    : createSampler({ group, pids: () => [rootPid], roles: () => ({ 'load-balancer': [rootPid] }), self: 'rc', intervalMs })
  const keep = setInterval(() => {}, intervalMs) // idle: a timer of the same rate; otherwise it only keeps the process up
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  sampler?.start()
  await new Promise(resolve => setTimeout(resolve, duration * 1000))
  const timeline = await sampler?.stop()
  const cpu = process.cpuUsage(cpu0)
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
  clearInterval(keep)
  const samples = timeline?.samples ?? []
  process.stdout.write(JSON.stringify({
    source,
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    samples: samples.length,
    serverCores: samples.length ? samples.reduce((s, x) => s + x.serverTotal, 0) / samples.length : null
  }) + '\n')
}

/** Runs this file in child mode and resolves with its JSON line. */
function measure (spec) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SELF, '--child', JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    p.stdout.setEncoding('utf8').on('data', d => { out += d })
    p.on('error', reject)
    p.on('exit', code => code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`sampler child for ${spec.source} exited ${code}`)))
  })
}

/** The busy server: a node primary that forks `workers` spinning children (a cluster's shape), for `seconds`. */
function startBusyTree (wrap, workers, seconds) {
  const spin = `const e = Date.now() + ${seconds * 1000}; while (Date.now() < e);`
  const js = `const { spawn } = require('node:child_process')
    const kids = Array.from({ length: ${workers} }, () => spawn(process.execPath, ['-e', ${JSON.stringify(spin)}], { stdio: 'ignore' }))
    let left = kids.length
    for (const k of kids) k.on('exit', () => { if (--left === 0) process.exit(0) })
    process.on('SIGTERM', () => { for (const k of kids) k.kill('SIGKILL'); process.exit(0) })`
  const w = wrap(process.execPath, ['-e', js])
  return spawn(w.cmd, w.args, { stdio: 'inherit' })
}

async function main () {
  const opts = parseBenchArgs(process.argv.slice(2))
  if (opts.child) return child(JSON.parse(opts.child))
  const name = `bench-rc-${process.pid}`
  const groups = []
  const v1 = detectCgroup() === 'v1' ? await createCpuGroup({ name }) : null
  if (v1) groups.push(v1)
  // a hybrid host also has a v2 hierarchy: the busy tree joins both, so the v2 source is measured on the same load
  const v2root = detectCgroup() === 'v2' ? '/sys/fs/cgroup' : detectCgroup('/sys/fs/cgroup/unified') === 'v2' ? '/sys/fs/cgroup/unified' : null
  const v2 = v2root ? await createCpuGroup({ name, cgroupRoot: v2root }) : null
  if (v2) groups.push(v2)
  const usable = groups.filter(g => g.kind !== 'threads')
  const wrap = (cmd, args) => usable.reduceRight((acc, g) => g.wrap(acc.cmd, acc.args), { cmd, args })
  const busy = startBusyTree(wrap, opts.workers, opts.duration + 5)
  const cleanup = () => { try { busy.kill('SIGTERM') } catch {} }
  process.once('SIGINT', () => { cleanup(); process.exit(130) })
  try {
    await new Promise(resolve => setTimeout(resolve, 500)) // the workers are forked and spinning
    const specs = [
      ...usable.map(g => ({ source: g.kind, path: g.path })),
      { source: 'threads' },
      { source: 'idle' }
    ].map(s => ({ ...s, rootPid: busy.pid, duration: opts.duration, intervalMs: opts.intervalMs }))
    if (!opts.json) {
      console.error(`sampling a ${opts.workers}-worker busy tree for ${opts.duration} s at ${opts.intervalMs} ms with: ` +
        `${specs.map(s => s.source).join(', ')} (in parallel, one process each)`)
    }
    const results = await Promise.all(specs.map(measure))
    const idle = results.find(r => r.source === 'idle')
    const rows = results.map(r => ({
      ...r,
      pctOfCore: r.cpuMs / r.wallMs * 100,
      msPerSample: r.samples ? r.cpuMs / r.samples : null,
      // what sampling adds on top of an idle node process with the same timer
      pctAboveIdle: (r.cpuMs - idle.cpuMs) / r.wallMs * 100
    }))
    const ok = rows.filter(r => r.source !== 'idle').every(r => r.pctOfCore < TARGET_PCT)
    if (opts.json) {
      console.log(JSON.stringify({ target: TARGET_PCT, ok, durationSec: opts.duration, intervalMs: opts.intervalMs, workers: opts.workers, rows }))
    } else {
      console.log('source      samples  server cores  CPU ms  % of one core  above idle node  ms per sample')
      for (const r of rows) {
        console.log([
          r.source.padEnd(10),
          String(r.samples).padStart(8),
          (r.serverCores === null ? '-' : r.serverCores.toFixed(2)).padStart(13),
          r.cpuMs.toFixed(0).padStart(7),
          r.pctOfCore.toFixed(3).padStart(14),
          (r.source === 'idle' ? '-' : r.pctAboveIdle.toFixed(3)).padStart(16),
          (r.msPerSample === null ? '-' : r.msPerSample.toFixed(2)).padStart(14)
        ].join(' '))
      }
      console.log(ok ? `every source costs under ${TARGET_PCT}% of one core` : `over the ${TARGET_PCT}% target`)
    }
    process.exitCode = ok ? 0 : 1
  } finally {
    cleanup()
    await new Promise(resolve => busy.exitCode !== null ? resolve(undefined) : busy.once('exit', resolve))
    for (const g of groups) await g.remove().catch(err => console.error(`remove ${g.path}: ${err.message}`))
  }
}

main().catch(err => { console.error(err.stack || err.message); process.exit(1) })
