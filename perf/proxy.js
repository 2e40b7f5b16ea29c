#!/usr/bin/env node
// What docker-proxy costs on the Swarm path: one stack deployed (cm x2 on the baseline app by default), driven in
// alternate rounds at the published port through loopback (docker-proxy, the engine's userland relay, carries every
// connection) and through this node's docker_gwbridge address (the kernel's NAT carries them: what nodescale sends its
// load to, executor/docker/stack-deploy.js localAddress). For each side it prints the median throughput, the
// docker-proxy processes' CPU and the host's busy cores, each per 10k req/s, and the cores saved.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { validateRunConfig } from '../lib/run-options.js'
import { prepareRun, deployFor } from '../executor/run.js'
import { runLoad } from '../executor/drivers/index.js'
import { readProcStat } from '../rc/proc-stat.js'
import { dockerProxyPids, readProcessTicks } from '../rc/role-cpu.js'
import { CLOCK_TICKS } from '../rc/thread-cpu.js'

const OPTIONS = [
  option({ flag: 'rounds', type: 'whole', min: 1, max: 20, default: 3, help: 'runs of each side, alternated' }),
  option({ flag: 'duration', type: 'whole', min: 2, max: 600, default: 6, help: 'steady seconds of each run' }),
  option({ flag: 'concurrency', type: 'whole', min: 1, max: 1000, default: 16 }),
  option({ flag: 'strategy', type: 'text', default: 'cm' }),
  option({ flag: 'instances', type: 'whole', min: 1, max: 64, default: 2 }),
  option({ flag: 'cpus', type: 'number', min: 0, above: true, max: 64, default: 0.5, help: '--cpus-per-instance' }),
  option({ flag: 'json', type: 'boolean', default: false })
]

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
/** CPU seconds used so far by the docker-proxy processes of the published port (found and read by rc/role-cpu.js). */
function proxySeconds (port) {
  return dockerProxyPids(port).reduce((sum, pid) => sum + (readProcessTicks(pid, '/proc') ?? 0), 0) / CLOCK_TICKS
}

/** The host's busy cores between two readings of /proc/stat (busy ticks over each core's elapsed ticks, summed). */
function busyCores (a, b) {
  const sum = (xs, key) => xs.reduce((s, c) => s + c[key], 0)
  return (sum(b, 'busy') - sum(a, 'busy')) / ((sum(b, 'total') - sum(a, 'total')) / b.length)
}

/** One load at `url`: its throughput, docker-proxy's cores and the host's over the whole load. */
async function side (url, o, dir) {
  const port = Number(new URL(url).port)
  const p0 = proxySeconds(port)
  const h0 = readProcStat()
  const t0 = Date.now()
  const load = await runLoad({
    driver: 'autocannon',
    url,
    concurrency: o.concurrency,
    duration: o.duration,
    warmup: 1,
    jtlPath: join(dir, 's.jtl'),
    samples: 'none',
    label: 'proxy'
  })
  const seconds = (Date.now() - t0) / 1000
  const proxy = (proxySeconds(port) - p0) / seconds
  const host = busyCores(h0, readProcStat())
  const throughput = load.requests / ((load.steadyEnd - load.steadyStart) / 1000)
  return { throughput, proxy, host }
}

const o = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
const dir = mkdtempSync(join(tmpdir(), 'ns-perf-proxy-'))
const config = validateRunConfig({ strategy: o.strategy, instances: o.instances, benchmark: 'baseline', backend: 'swarm', cpusPerInstance: o.cpus, out: dir })
const prepared = await prepareRun(config)
const deployment = await deployFor({ ...config, benchmark: prepared.benchmark }, { prepared, id: 'perf-proxy', dir })
const path = `${prepared.mount}${prepared.request.path}`
const nat = `${deployment.url.replace(/\/$/, '')}${path}`
const loopback = nat.replace(new URL(nat).hostname, '127.0.0.1')
/** @type {Record<string, Array<{ throughput: number, proxy: number, host: number }>>} */
const rounds = { loopback: [], nat: [] }
try {
  if (new URL(nat).hostname === '127.0.0.1') throw new Error('the deployment answers on loopback only: no docker_gwbridge address to compare with')
  for (let i = 0; i < o.rounds; i++) {
    rounds.loopback.push(await side(loopback, o, dir))
    rounds.nat.push(await side(nat, o, dir))
  }
} finally {
  await deployment.teardown()
  rmSync(dir, { recursive: true, force: true })
}
const per10k = (xs, key) => median(xs.map(r => r[key] / r.throughput * 10_000))
const summary = Object.fromEntries(Object.entries(rounds).map(([k, xs]) => [k, {
  throughput: Math.round(median(xs.map(r => r.throughput))),
  proxyCoresPer10k: Number(per10k(xs, 'proxy').toFixed(3)),
  hostCoresPer10k: Number(per10k(xs, 'host').toFixed(3))
}]))
const saved = Number((summary.loopback.hostCoresPer10k - summary.nat.hostCoresPer10k).toFixed(3))
const result = {
  strategy: o.strategy,
  instances: o.instances,
  cpusPerInstance: o.cpus,
  concurrency: o.concurrency,
  rounds: o.rounds,
  ...summary,
  hostCoresSavedPer10k: saved,
  throughputRatio: Number((summary.nat.throughput / summary.loopback.throughput).toFixed(2))
}
if (o.json) {
  process.stdout.write(JSON.stringify(result, null, 2) + '\n')
} else {
  for (const k of ['loopback', 'nat']) {
    const s = summary[k]
    process.stdout.write(`${k.padEnd(8)} ${String(s.throughput).padStart(7)} req/s  docker-proxy ${s.proxyCoresPer10k.toFixed(3)} cores per 10k req/s  ` +
      `host ${s.hostCoresPer10k.toFixed(3)} cores per 10k req/s\n`)
  }
  process.stdout.write(`saved: ${saved.toFixed(3)} host cores per 10k req/s; throughput nat/loopback ${result.throughputRatio}× ` +
    `(medians of ${o.rounds} rounds, ${o.strategy} x${o.instances} at ${o.cpus} CPU each)\n`)
}
