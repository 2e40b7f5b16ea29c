#!/usr/bin/env node
// How long the RC takes to find its containers' pids now that it has no Docker socket: from the cgroup and proc files
// (the group's cgroup.procs where the RC shares the pid namespace; one pass over /proc where it does not, as in its
// container) against what it did before, a GET /containers/<id>/json per container over the engine's socket.
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { pathToFileURL } from 'node:url'
import { median } from 'simple-statistics'
import { connectDocker } from '../executor/docker/engine.js'
import { buildImage } from '../executor/docker/image-build.js'
import { containerPids } from '../rc/container-pid.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'

const OPTIONS = [
  option({ flag: 'containers', type: 'whole', min: 1, max: 32, default: 8 }),
  option({ flag: 'rounds', type: 'whole', min: 1, max: 1000, default: 50 }),
  option({ flag: 'json', type: 'boolean', default: false })
]

/** Milliseconds that fn takes, over rounds, and its last answer. */
async function timed (rounds, fn) {
  const ms = []
  let last
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint()
    last = await fn()
    ms.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return { ms, last }
}

export async function main (argv = process.argv.slice(2)) {
  const values = withDefaults(parseCommandLine(argv, OPTIONS).values, OPTIONS)
  const docker = await connectDocker()
  const image = (await buildImage(docker, { kind: 'rc', log: () => {} })).tag
  const started = []
  try {
    for (let i = 0; i < values.containers; i++) {
      const c = await docker.createContainer({
        Image: image,
        Entrypoint: ['node'],
        Cmd: ['-e', 'setInterval(() => {}, 1000)'],
        Labels: { 'io.nodescale.perf': 'pid-lookup' }
      })
      started.push(c)
      await c.start()
    }
    const ids = started.map(c => c.id)
    const inspectAll = async () => new Map(await Promise.all(ids.map(async id =>
      /** @type {[string, number]} */ ([id, (await docker.getContainer(id).inspect()).State.Pid]))))
    const truth = await inspectAll()
    const group = await timed(values.rounds, () => containerPids(ids))
    // a cgroup root with no groups: every container is found by the pass over /proc, as in the RC's own pid namespace
    const none = mkdtempSync(`${tmpdir()}/ns-no-cgroup-`)
    const scan = await timed(values.rounds, () => containerPids(ids, { cgroupRoot: none }))
    const socket = await timed(values.rounds, inspectAll)
    for (const [name, r] of /** @type {[string, { last: Map<string, number | null> }][]} */ ([['cgroup.procs', group], ['/proc scan', scan]])) {
      for (const id of ids) {
        if (r.last.get(id) !== truth.get(id)) throw new Error(`${name} found pid ${r.last.get(id)} for ${id.slice(0, 12)}, the engine says ${truth.get(id)}`)
      }
    }
    const result = {
      containers: ids.length,
      processes: readdirSync('/proc').filter(n => /^\d+$/.test(n)).length,
      rounds: values.rounds,
      medianMs: { cgroupProcs: median(group.ms), procScan: median(scan.ms), dockerApi: median(socket.ms) },
      ratio: { procScanVsApi: median(socket.ms) / median(scan.ms), cgroupProcsVsApi: median(socket.ms) / median(group.ms) }
    }
    if (values.json) console.log(JSON.stringify(result, null, 2))
    else {
      console.log(`pid lookup of ${result.containers} containers (${result.processes} processes on this host), median of ${result.rounds} rounds:`)
      console.log(`  cgroup.procs (RC in the host's pid namespace)  ${result.medianMs.cgroupProcs.toFixed(2)} ms  ` +
        `${result.ratio.cgroupProcsVsApi.toFixed(1)}x the API`)
      console.log(`  one pass over /proc (the RC in its container)  ${result.medianMs.procScan.toFixed(2)} ms  ` +
        `${result.ratio.procScanVsApi.toFixed(1)}x the API`)
      console.log(`  Docker API inspect per container (before)      ${result.medianMs.dockerApi.toFixed(2)} ms`)
    }
    return result
  } finally {
    await Promise.all(started.map(c => c.remove({ force: true }).catch(() => {})))
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main().catch(err => { console.error(err); process.exit(1) })
