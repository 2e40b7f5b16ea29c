// HAProxy tells a slow replica from a dead one (stacks/haproxy.cfg): a replica whose queue is longer than the old check
// budget (1 s) stays up and serves, where the old checks took it down and answered 503 for it; a replica whose process
// is killed, or which stops answering at all (as a lost node), is cut within seconds; and what HAProxy did is read back
// from its counters, named by the diagnosis as `load-balancer` with that evidence.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { createConnection } from 'node:net'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { haproxyVersion, readHaproxyStats, renderHaproxyConfig } from '../executor/haproxy.js'
import { freePort } from '../lib/net.js'
import { runCli, readRun, jtlRows, ROOT } from './helpers/cli.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-lb-'))
const skip = haproxyVersion() ? false : 'haproxy is not on PATH (apt-get install -y haproxy)'

/** The check line HAProxy had before (a check read for at most `inter`, 1 s): what took a busy replica down. */
const OLD_CHECK = 'default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions'

/**
 * A replica on this machine: a plain HTTP server in a process of its own whose every request (not its health path's)
 * holds the event loop `blockMs`, so requests queue and the health check waits behind them, as on a saturated loop.
 * `backlog` is its listen backlog (1: once its process is stopped, a few connections fill it and the next ones time out
 * as to a lost node).
 */
async function startReplica ({ blockMs = 0, backlog = 511 } = {}) {
  const port = await freePort()
  const code = `const cell = new Int32Array(new SharedArrayBuffer(4))
    require('node:http').createServer((req, res) => {
      if (req.url !== '/healthz') Atomics.wait(cell, 0, 0, ${blockMs})
      res.end('ok')
    }).listen({ port: ${port}, host: '127.0.0.1', backlog: ${backlog} }, () => console.log('listening'))`
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] })
  await once(child.stdout, 'data')
  return { port, child }
}

/** HAProxy in front of the ports, with the config nodescale renders (edited by `edit`), and its stats socket. */
async function startLb (ports, edit = (cfg) => cfg) {
  const dir = tmp()
  const listen = await freePort()
  const statsSocket = join(dir, 'stats.sock')
  writeFileSync(join(dir, 'haproxy.cfg'), edit(renderHaproxyConfig({ listen, ports, statsSocket })))
  const child = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr.setEncoding('utf8').on('data', d => { log += d })
  const up = Date.now() + 5000
  while (!(await readHaproxyStats(statsSocket))?.servers.every(s => s.up)) {
    assert.ok(Date.now() < up, `HAProxy did not see its servers up:\n${log}`)
    await sleep(100)
  }
  return { url: `http://127.0.0.1:${listen}/`, statsSocket, log: () => log, stop: () => child.kill('SIGKILL') }
}

/**
 * A closed loop of `connections` keep-alive clients for `ms`: every request's start, end (ms from the loop's start)
 * and status ('err' when the connection ended without an answer). `at` is called with the ms elapsed once at atMs.
 * @param {string} url
 * @param {{ connections: number, ms: number, atMs?: number, at?: (ms: number) => void }} opts
 */
async function drive (url, { connections, ms, atMs = Infinity, at = () => {} }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const t0 = Date.now()
  const timer = Number.isFinite(atMs) ? setTimeout(() => at(Date.now() - t0), atMs) : null
  const one = () => new Promise(resolve => {
    const start = Date.now() - t0
    const done = (status) => resolve({ start, end: Date.now() - t0, status })
    const req = http.get(url, { agent, timeout: 20_000 }, res => { res.resume(); res.on('end', () => done(res.statusCode)) })
    req.on('error', () => done('err'))
    req.on('timeout', () => req.destroy())
  })
  const results = []
  await Promise.all(Array.from({ length: connections }, async () => {
    while (Date.now() - t0 < ms) results.push(await one())
  }))
  clearTimeout(timer)
  agent.destroy()
  return results
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** HAProxy's stat row of its first server, by column name. */
async function firstServerRow (statsSocket) {
  const csv = await new Promise(resolve => {
    let text = ''
    createConnection(statsSocket).on('connect', function () { this.write('show stat\n') }).on('data', d => { text += d })
      .on('close', () => resolve(text)).on('error', () => resolve(''))
  })
  const [head, , row] = csv.split('\n')
  const cols = head.slice(2).split(',')
  return (name) => row?.split(',')[cols.indexOf(name)]
}

/**
 * How long the health check made while the replica was busy took (ms): the first check to end after the load, which
 * began while it ran (HAProxy says a check's duration once it has ended, `*` before its status while one is under way).
 */
async function checkAfterLoad (statsSocket) {
  const until = Date.now() + 30_000
  while (Date.now() < until) {
    const col = await firstServerRow(statsSocket)
    if (!col('check_status')?.startsWith('*')) return Number(col('check_duration'))
    await sleep(100)
  }
  return null
}

test('a replica whose queue is longer than the old check budget: the old checks take it down and HAProxy answers 503 for it; ' +
  'now it stays up and serves every request', { skip, timeout: 60_000 }, async (t) => {
  // 12 clients, each request holding the loop 200 ms: a request waits ~2.4 s for the ones ahead of it, a check longer
  for (const [name, edit] of /** @type {const} */ ([
    ['old', (cfg) => cfg.replace(/^ {4}timeout check .*\n/m, '').replace(/^ {4}default-server .*$/m, `    ${OLD_CHECK}`)],
    ['now', undefined]
  ])) {
    const replica = await startReplica({ blockMs: 200 })
    const lb = await startLb([replica.port], edit)
    try {
      const results = await drive(lb.url, { connections: 12, ms: 6000 })
      const stat = await readHaproxyStats(lb.statsSocket)
      const check = name === 'now' ? await checkAfterLoad(lb.statsSocket) : null
      const failed = results.filter(r => r.status !== 200)
      const served = results.filter(r => r.status === 200)
      t.diagnostic(`${name}: ${served.length} served (median ${median(served.map(r => r.end - r.start))} ms), ${failed.length} failed; ` +
        `${check === null ? '' : `the check made under the load took ${check} ms; `}HAProxy answered ${stat.lbErrors} 5xx itself, ` +
        `marked the replica down ${stat.servers[0].downs} times`)
      if (name === 'old') {
        assert.ok(stat.servers[0].downs >= 1, `the old checks took the busy replica down\n${lb.log()}`)
        assert.ok(stat.lbErrors > served.length, 'and HAProxy answered more requests with a 5xx than the replica served')
      } else {
        assert.equal(stat.servers[0].downs, 0, `never marked down\n${lb.log()}`)
        assert.ok(stat.servers[0].up)
        assert.equal(stat.lbErrors, 0)
        assert.deepEqual(failed, [], 'every request served')
        assert.ok(served.length >= 20, `${served.length} served`)
        assert.ok(median(served.map(r => r.end - r.start)) > 1000, 'requests waited longer than the old check budget')
        assert.ok(check > 1000, `and so did the health check: ${check} ms`)
      }
    } finally {
      lb.stop()
      replica.child.kill('SIGKILL')
    }
  }
})

test('a replica whose process is killed is cut at once: only the requests in flight at the kill fail, ' +
  'the others go on', { skip, timeout: 30_000 }, async (t) => {
  const replicas = [await startReplica(), await startReplica()]
  const lb = await startLb(replicas.map(r => r.port))
  let killedAt = 0
  try {
    const results = await drive(lb.url, { connections: 8, ms: 4000, atMs: 1000, at: (ms) => { replicas[1].child.kill('SIGKILL'); killedAt = ms } })
    assert.ok(killedAt > 0, 'r2 was killed')
    const stat = await readHaproxyStats(lb.statsSocket)
    const failed = results.filter(r => r.status !== 200)
    const lastFailedStart = Math.max(...failed.map(r => r.start)) - killedAt
    t.diagnostic(`${results.length} requests, ${failed.length} failed, started at most ${lastFailedStart} ms after the kill ` +
      `(ended by ${Math.max(...failed.map(r => r.end)) - killedAt} ms); r2 marked down ${stat.servers[1].downs} time(s), ${stat.lbErrors} 5xx by HAProxy`)
    assert.deepEqual(stat.servers.map(s => [s.name, s.up, s.downs]), [['r1', true, 0], ['r2', false, 1]])
    assert.ok(failed.length >= 1, 'the requests in flight at the kill fail')
    assert.ok(lastFailedStart <= 1000, `no request started a second after the kill failed: ${lastFailedStart} ms`)
    assert.ok(results.filter(r => r.start > killedAt + 1000).length > 100, 'and the load went on, served by r1')
  } finally {
    lb.stop()
    for (const r of replicas) r.child.kill('SIGKILL')
  }
})

test('a replica that answers nothing at all (its process stopped, its backlog full: as a lost node) ' +
  'is cut within seconds', { skip, timeout: 30_000 }, async (t) => {
  const replicas = [await startReplica(), await startReplica({ backlog: 1 })]
  const lb = await startLb(replicas.map(r => r.port))
  const held = []
  try {
    const stopped = Date.now()
    replicas[1].child.kill('SIGSTOP')
    // fill the stopped replica's accept queue: the kernel then drops a new connection's SYN, as a lost node's would be
    for (let i = 0; i < 4; i++) held.push(createConnection(replicas[1].port, '127.0.0.1').on('error', () => {}))
    let stat = await readHaproxyStats(lb.statsSocket)
    while (stat.servers[1].up && Date.now() - stopped < 15_000) {
      await sleep(100)
      stat = await readHaproxyStats(lb.statsSocket)
    }
    const cutMs = Date.now() - stopped
    t.diagnostic(`cut ${cutMs} ms after its process stopped: ${/Server app\/r2 is DOWN[^\n]*/.exec(lb.log())?.[0]}`)
    assert.equal(stat.servers[1].up, false, 'marked down')
    // a check's connect gives up after 1 s, two failed in a row: about 2-3 s
    assert.ok(cutMs <= 5000, `within seconds: ${cutMs} ms`)
    assert.match(lb.log(), /Server app\/r2 is DOWN, reason: Layer4 timeout/)
  } finally {
    for (const c of held) c.destroy()
    lb.stop()
    replicas[1].child.kill('SIGKILL')
    replicas[0].child.kill('SIGKILL')
  }
})

test('executor run: hs x1 whose requests queue for longer than the old check budget serves them all; HAProxy took nothing down ' +
  'and answered nothing itself', { skip, timeout: 90_000 }, async (t) => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '1', '--backend', 'local', '--app', join(ROOT, 'test/fixtures/apps/blocks.js'),
    '--param', 'blockMs=250', '--concurrency', '16', '--duration', '5', '--warmup', '1', '--out', out])
  assert.equal(r.code, 0, r.stderr)
  const { dir, run } = readRun(out)
  const rows = jtlRows(join(dir, 'samples.jtl'))
  const { lb, bottleneck, instances } = run.diagnosis
  t.diagnostic(`${rows.length} requests, ${run.summary.errors} errors, latency p50 ${run.summary.latency.p50} ms, max ${run.summary.latency.max} ms; ` +
    `replica ELU ${instances[0]?.elu}; lb ${JSON.stringify(lb)}; bottleneck ${bottleneck.kind}`)
  assert.equal(run.summary.errors, 0, 'every request served')
  assert.ok(rows.length >= 10 && rows.every(x => x.responseCode === '200'), `${rows.length} requests, all 200`)
  // the 16 clients' requests all at the replica (HAProxy's sessions), its loop full: 16 x 250 ms of work ahead of a
  // check; requests answered after waiting longer than the old check budget (the longest ones end after the window)
  assert.ok(lb.sessions >= 15, JSON.stringify(lb))
  assert.ok(instances[0].elu >= 0.9, JSON.stringify(instances))
  assert.ok(run.summary.latency.max > 1000, `requests waited longer than the old check budget: the longest ${run.summary.latency.max} ms`)
  assert.ok(lb.samples >= 3, JSON.stringify(lb))
  assert.deepEqual([lb.errors, lb.down], [0, []], 'HAProxy answered no 5xx itself and marked no replica down')
  assert.ok(![bottleneck.kind, ...bottleneck.also.map(a => a.kind)].includes('load-balancer'), JSON.stringify(bottleneck))
})

test('executor run: one of hs x2 killed mid-run is cut at once, the errors are the requests in flight at the kill, ' +
  'and the diagnosis names it', { skip, timeout: 90_000 }, async (t) => {
  const out = tmp()
  let asked = false
  let killedAt = 0
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--backend', 'local', '--benchmark', 'baseline',
    '--concurrency', '8', '--duration', '6', '--warmup', '1', '--out', out], {
    onStderr (text) {
      if (asked || !/^load: /m.test(text)) return
      asked = true
      const pid = Number(/instance r2 serving \S+ on \S+ \(pid (\d+)\)/.exec(text)?.[1])
      // 2 s into the steady window (after the 1 s warm-up)
      setTimeout(() => { process.kill(pid, 'SIGKILL'); killedAt = Date.now() }, 3000)
    }
  })
  assert.equal(r.code, 0, r.stderr)
  assert.ok(killedAt > 0, 'r2 was killed')
  const { dir, run } = readRun(out)
  assert.equal(run.status, 'done')
  const rows = jtlRows(join(dir, 'samples.jtl'))
  const failed = rows.filter(x => x.success !== 'true')
  // the JTL's timeStamp is when a request was sent
  const lastFailedStart = Math.max(...failed.map(x => Number(x.timeStamp))) - killedAt
  const { lb, bottleneck } = run.diagnosis
  const killedInWindow = (killedAt - run.load.steadyStart) / 1000
  t.diagnostic(`killed ${killedInWindow.toFixed(1)} s into the window; ${failed.length} of ${rows.length} failed ` +
    `(${[...new Set(failed.map(x => x.responseCode))].join(', ')}), ` +
    `sent at most ${lastFailedStart} ms after the kill; lb ${JSON.stringify(lb)}; bottleneck ${bottleneck.kind} also ${bottleneck.also.map(a => a.kind)}`)
  assert.ok(failed.length >= 1, 'the requests in flight at the kill failed')
  assert.ok(lastFailedStart <= 1000, `no request sent a second after the kill failed: the last ${lastFailedStart} ms after it`)
  assert.ok(rows.filter(x => Number(x.timeStamp) > killedAt + 1000).length > 100, 'the load went on, served by r1')
  // HAProxy's counters: r2 marked down once, within a second or so of the kill (its state change is told in seconds)
  assert.equal(lb.down.length, 1, JSON.stringify(lb))
  const [down] = lb.down
  assert.deepEqual([down.server, down.times, down.downAtEnd], ['r2', 1, true])
  assert.ok(down.firstAfterS >= killedInWindow - 1.1 && down.firstAfterS <= killedInWindow + 2,
    `marked down ${down.firstAfterS} s into the window, killed at ${killedInWindow}`)
  // named as the load balancer's doing, first or beside what limited the run (this shared machine's host CPU may be)
  const lbLine = bottleneck.kind === 'load-balancer' ? bottleneck.line : bottleneck.also.find(a => a.kind === 'load-balancer')?.line
  assert.match(lbLine ?? '', /replica r2 marked down by HAProxy [\d.]+ s into the window, down \d+ s to its end/, JSON.stringify(bottleneck))
})

test('one check policy on Swarm and here: the same default-server line and check budget in both renderings', () => {
  const local = renderHaproxyConfig({ listen: 8080, ports: [3001, 3002] })
  const swarm = renderHaproxyConfig({ listen: 80, service: 'app', port: 8080 })
  const policy = (cfg) => [/^ {4}timeout (check|server) .*$/gm, /^ {4}default-server .*$/m].flatMap(re => cfg.match(re))
  assert.deepEqual(policy(swarm), policy(local))
  assert.deepEqual(policy(local), ['    timeout server 60s', '    timeout check 60s',
    '    default-server inter 1s fall 2 rise 1 observe layer4 error-limit 3 on-error mark-down on-marked-down shutdown-sessions'])
  assert.match(local, /^ {4}server r1 127\.0\.0\.1:3001 check\n {4}server r2 127\.0\.0\.1:3002 check$/m)
  assert.match(swarm, /^ {4}server-template app 16 tasks\.app:8080 check resolvers docker init-addr none$/m)
})
