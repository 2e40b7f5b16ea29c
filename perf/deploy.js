#!/usr/bin/env node
// Deploy and teardown time of an hs stack: nodescale's API library against the docker CLI loop of Ibenchjs's scripts
// (stack deploy, poll service ls, stack rm, poll until gone).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from 'simple-statistics'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectDocker, ensureSwarm } from '../executor/docker/engine.js'
import { buildImage } from '../executor/docker/image-build.js'
import { renderStack, writeStackFiles, NAMESPACE_LABEL } from '../executor/docker/stack-render.js'
import { deployStack, removeStack, removeLeftovers } from '../executor/docker/stack-deploy.js'
import { probe, freePort } from '../lib/net.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'

const OPTIONS = [
  option({ flag: 'rounds', type: 'whole', min: 1, max: 20, default: 3 }),
  option({ flag: 'instances', type: 'whole', min: 1, max: 16, default: 4 }),
  option({ flag: 'cpus', type: 'number', min: 0, above: true, max: 64, default: 0.25 }),
  option({ flag: 'poll', type: 'number', min: 0, above: true, max: 10, default: 1 }),
  option({ flag: 'timeout', type: 'number', min: 0, above: true, max: 3600, default: 120 }),
  option({ flag: 'json', type: 'boolean', default: false })
]

/** @param {string[]} argv */
export const parseBenchArgs = (argv) => withDefaults(parseCommandLine(argv, OPTIONS).values, OPTIONS)

function docker (args) {
  const r = spawnSync('docker', args, { encoding: 'utf8', timeout: 60_000 })
  if (r.error || r.status !== 0) throw new Error(`docker ${args.join(' ')}: ${r.error?.message ?? r.stderr.trim()}`)
  return r.stdout.trim()
}

/**
 * Polls url every pollMs (bounded by deadline) until `expect` distinct instances answered, as a script's curl loop
 * would.
 */
async function untilInstances (url, expect, pollMs, deadline) {
  const seen = new Set()
  while (Date.now() < deadline) {
    for (let i = 0; i < expect * 2 && seen.size < expect; i++) {
      try {
        const res = await probe(`${url}/healthz`, { timeoutMs: 1000 })
        if (res.status === 200 && res.instance) seen.add(res.instance)
      } catch { break }
    }
    if (seen.size >= expect) return
    await sleep(pollMs)
  }
  throw new Error(`${seen.size} of ${expect} instances answered ${url} before the deadline`)
}

/**
 * The Ibenchjs way: docker stack deploy -c, poll `docker service ls` until every service shows n/n, then wait for the
 * instances.
 */
async function cliRound (doc, { instances, pollMs, timeoutMs }) {
  const { stack } = doc['x-nodescale']
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-bench-'))
  try {
    const file = writeStackFiles(doc, dir)
    const port = doc.services.lb.ports[0].published
    const filter = `label=${NAMESPACE_LABEL}=${stack}`
    let t0 = Date.now()
    const deadline = t0 + timeoutMs
    docker(['stack', 'deploy', '--resolve-image', 'never', '-c', file, stack])
    for (;;) {
      const lines = docker(['service', 'ls', '--filter', filter, '--format', '{{.Replicas}}']).split('\n').filter(Boolean)
      if (lines.length === 2 && lines.every(l => { const m = /^(\d+)\/(\d+)/.exec(l); return m && m[1] === m[2] })) break
      if (Date.now() > deadline) throw new Error(`cli: services of ${stack} not running: ${lines.join(', ')}`)
      await sleep(pollMs)
    }
    await untilInstances(`http://127.0.0.1:${port}`, instances, pollMs, deadline)
    const deployMs = Date.now() - t0
    t0 = Date.now()
    docker(['stack', 'rm', stack])
    for (;;) {
      const left = [
        docker(['service', 'ls', '-q', '--filter', filter]),
        docker(['ps', '-aq', '--filter', filter]),
        docker(['network', 'ls', '-q', '--filter', filter])
      ].join('')
      if (!left) break
      if (Date.now() - t0 > timeoutMs) throw new Error(`cli: ${stack} not gone after ${timeoutMs} ms`)
      await sleep(pollMs)
    }
    return { deployMs, removeMs: Date.now() - t0 }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function libRound (client, doc, { timeoutMs }) {
  let t0 = Date.now()
  const out = await deployStack(client, doc, { readyTimeoutMs: timeoutMs })
  const deployMs = Date.now() - t0
  t0 = Date.now()
  await removeStack(client, out.stack, { timeoutMs })
  return { deployMs, removeMs: Date.now() - t0 }
}

async function main () {
  const opts = parseBenchArgs(process.argv.slice(2))
  const say = opts.json ? () => {} : (line) => console.log(line)
  const client = await connectDocker()
  await ensureSwarm(client, { log: say })
  await removeLeftovers(client, { log: say })
  const register = await buildImage(client, { kind: 'register', base: 'auto', log: say })
  const haproxy = await buildImage(client, { kind: 'haproxy', base: 'auto', log: say })
  const results = { lib: [], cli: [] }
  const stamp = Date.now().toString(36)
  for (let round = 0; round < opts.rounds; round++) {
    // alternate who goes first, so a warm cache or a busy moment does not always favour the same side
    const order = round % 2 ? ['cli', 'lib'] : ['lib', 'cli']
    for (const who of order) {
      const port = await freePort()
      const doc = renderStack({
        strategy: 'hs',
        instances: opts.instances,
        cpusPerInstance: opts.cpus,
        image: register.tag,
        lbImage: haproxy.tag,
        benchmark: 'baseline',
        lb: 'haproxy',
        port,
        runId: `bench-${stamp}-${who}-${round}`
      })
      const stack = doc['x-nodescale'].stack
      try {
        const r = who === 'lib'
          ? await libRound(client, doc, { timeoutMs: opts.timeout * 1000 })
          : await cliRound(doc, { instances: opts.instances, pollMs: opts.poll * 1000, timeoutMs: opts.timeout * 1000 })
        results[who].push(r)
        say(`round ${round + 1} ${who}: deploy -> all ${opts.instances} answer ${r.deployMs} ms, remove -> all gone ${r.removeMs} ms`)
      } finally {
        await removeStack(client, stack).catch(() => {})
      }
    }
  }
  const summary = {}
  for (const who of ['lib', 'cli']) {
    summary[who] = { deployMs: median(results[who].map(r => r.deployMs)), removeMs: median(results[who].map(r => r.removeMs)) }
  }
  const ratio = { deploy: summary.cli.deployMs / summary.lib.deployMs, remove: summary.cli.removeMs / summary.lib.removeMs }
  const out = { config: { ...opts, image: register.tag, lbImage: haproxy.tag }, rounds: results, median: summary, ratio }
  if (opts.json) {
    console.log(JSON.stringify(out, null, 2))
    return
  }
  say('')
  say(`hs stack, ${opts.instances} replicas x ${opts.cpus} CPU behind HAProxy; medians of ${opts.rounds} rounds (CLI loop polls every ${opts.poll} s)`)
  say('                     deploy->ready   remove->gone')
  say(`nodescale (API)      ${String(summary.lib.deployMs).padStart(9)} ms   ${String(summary.lib.removeMs).padStart(9)} ms`)
  say(`docker CLI loop      ${String(summary.cli.deployMs).padStart(9)} ms   ${String(summary.cli.removeMs).padStart(9)} ms`)
  say(`CLI / API            ${ratio.deploy.toFixed(2).padStart(9)} x    ${ratio.remove.toFixed(2).padStart(9)} x`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(`perf:deploy: ${err.message}`)
    process.exit(1)
  })
}
