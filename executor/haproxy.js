// HAProxy, the load balancer in front of a run's replicas: its version, its config (stacks/haproxy.cfg, one template
// for Swarm and for this machine), and a local HAProxy process.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { internalError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { ROOT } from '../lib/paths.js'

/** HAProxy exits at start when maxconn does not fit a container's FD limit (about 20000 here). */
export const LB_MAXCONN = 4000

/**
 * The version of the haproxy on PATH, e.g. "2.6.12-1+deb12u4", or null when there is none.
 * @returns {string | null}
 */
export function haproxyVersion () {
  const r = spawnSync('haproxy', ['-v'], { encoding: 'utf8', timeout: 5000 })
  return /version (\S+)/i.exec(r.stdout ?? '')?.[1] ?? null
}

/** The haproxy version for run.json, or NS_ERR_MISSING_HAPROXY (exit 3) with the command that installs it. */
export function requireHaproxy () {
  const version = haproxyVersion()
  if (!version) {
    throw fail('HAPROXY_NOT_ON_PATH')
  }
  return version
}

/**
 * The config of stacks/haproxy.cfg for either place the replicas are:
 * - on Swarm, `service`, `port` and `slots`: a server-template over Swarm's DNS name tasks.<service>, listening on
 *   `listen`;
 * - on this machine, `ports`: one server per loopback port, listening on 127.0.0.1:`listen`.
 * With `statsSocket`, HAProxy answers `show stat` on that unix socket (its sessions, queue and rate). `health` is the
 * path each server is checked on (a 2xx is up); how it is checked, and when it is marked down, is the template's
 * `default-server` line (a slow replica is not taken down, a dead one is within seconds: see stacks/haproxy.cfg).
 * @param {{ listen: number, service?: string, port?: number, slots?: number, ports?: number[], maxconn?: number,
 *   statsSocket?: string, health?: string }} opts
 */
export function renderHaproxyConfig ({ listen, service, port, slots = 16, ports, maxconn = LB_MAXCONN, statsSocket, health = '/healthz' }) {
  if (!ports && !service) throw internalError('renderHaproxyConfig needs the replicas: a Swarm service or loopback ports')
  // a local server is named as its replica is in run.json's placement (r1, r2, ...): HAProxy's stats name the replica
  const servers = ports
    ? ports.map((p, i) => `    server r${i + 1} 127.0.0.1:${p} check`)
    : [`    server-template app ${slots} tasks.${service}:${port} check resolvers docker init-addr none`]
  const values = {
    maxconn: Math.min(maxconn, LB_MAXCONN),
    stats: statsSocket ? `    stats socket ${statsSocket} mode 600 level user` : '',
    bind: ports ? `127.0.0.1:${listen}` : `:${listen}`,
    health,
    servers: servers.join('\n')
  }
  return readFileSync(join(ROOT, 'stacks', 'haproxy.cfg'), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, key) => {
    if (!(key in values)) throw internalError(`stacks/haproxy.cfg: unknown placeholder ${m}`)
    return String(values[key])
  })
}

let setpriv = null
/**
 * A command that gets SIGTERM from the kernel when this process dies (prctl PR_SET_PDEATHSIG through util-linux's
 * setpriv, kept across its exec), or the command as it is where setpriv cannot set one.
 * @param {string[]} cmd
 */
export function withParentDeath (cmd) {
  setpriv ??= spawnSync('setpriv', ['--pdeathsig', 'SIGTERM', 'true'], { stdio: 'ignore', timeout: 5000 }).status === 0
  return setpriv ? ['setpriv', '--pdeathsig', 'SIGTERM', ...cmd] : cmd
}

/**
 * Starts HAProxy (a foreground child) in front of loopback ports, with its config written into runDir; with `cpus`,
 * pinned to those cores (taskset, inside the parent-death wrapper: it execs haproxy, the signal is kept).
 * @param {{ port: number, backends: number[], runDir: string, health?: string, cpus?: readonly number[] }} opts
 */
export async function startHaproxy ({ port, backends, runDir, health, cpus }) {
  const cfg = join(runDir, 'haproxy.cfg')
  // a unix socket's path has at most 107 bytes: not in the run folder, whose path may be longer
  const statsSocket = join(tmpdir(), `nodescale-haproxy-${process.pid}-${port}.sock`)
  await writeFile(cfg, renderHaproxyConfig({ listen: port, ports: backends, statsSocket, health }))
  // the kernel stops HAProxy when this process dies, however it dies (kill -9 included): its parent-death signal,
  // set by setpriv before it execs haproxy (the run's watchdog, executor/run-watchdog.js, is the second line)
  const haproxy = ['haproxy', '-db', '-f', cfg]
  const cmd = withParentDeath(cpus?.length ? ['taskset', '-c', cpus.join(','), ...haproxy] : haproxy)
  const child = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', d => { stderr = (stderr + d).slice(-4000) })
  const exited = new Promise(resolve => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    child.once('error', err => { stderr += `cannot start haproxy: ${err.message}\n`; resolve({ code: null, signal: null }) })
  })
  let alive = true
  exited.then(() => { alive = false })
  return {
    pid: child.pid,
    statsSocket,
    isAlive: () => alive,
    output: () => stderr,
    async stop () {
      if (alive) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
        await exited
        clearTimeout(timer)
      }
      await rm(statsSocket, { force: true })
    }
  }
}

/**
 * @typedef {{ sessions: number, rate: number, queue: number, backendSessions: number, requests: number,
 *   lbErrors: number, servers: { name: string, up: boolean, downs: number, downtimeS: number, lastChangeS: number }[]
 * }} HaproxyStat
 */

/**
 * What HAProxy says of its traffic now (`show stat` on its stats socket); null when it does not answer. See
 * parseHaproxyStat.
 * @param {string} socketPath
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<HaproxyStat | null>}
 */
export function readHaproxyStats (socketPath, { timeoutMs = 500 } = {}) {
  return new Promise((resolve) => {
    let text = ''
    const sock = createConnection(socketPath)
    sock.setTimeout(timeoutMs, () => sock.destroy())
    sock.setEncoding('utf8')
    sock.on('connect', () => sock.write('show stat\n'))
    sock.on('data', d => { text += d })
    sock.on('error', () => resolve(null))
    sock.on('close', () => resolve(parseHaproxyStat(text)))
  })
}

/**
 * The figures of `show stat`'s CSV (columns found by the header's names): now, the frontend's current sessions and
 * session rate, the backend's queue (requests waiting for a server) and its current sessions; counted since HAProxy
 * started, the requests it received (`requests`) and the 5xx it answered itself (`lbErrors`: the backend's 5xx less
 * those its servers answered — a 503 when no replica is up or none took the connection, a 504 when one did not answer
 * within `timeout server`, a 502 when its answer was cut); and each server that is a replica: whether it is up now,
 * how many times it was marked down (`downs`), for how many seconds in all (`downtimeS`), and the seconds since its
 * state last changed (`lastChangeS`).
 * @param {string} csv
 * @returns {HaproxyStat | null}
 */
export function parseHaproxyStat (csv) {
  const lines = csv.split('\n').filter(Boolean)
  if (!lines[0]?.startsWith('# ')) return null
  const cols = lines[0].slice(2).split(',')
  const rows = lines.slice(1).map(l => l.split(','))
  const at = (row, name) => Number(row?.[cols.indexOf(name)]) || 0
  const front = rows.find(r => r[1] === 'FRONTEND')
  const back = rows.find(r => r[1] === 'BACKEND')
  if (!front || !back) return null
  const status = (r) => r[cols.indexOf('status')] ?? ''
  const servers = rows.filter(r => r[0] === back[0] && r !== back)
  const served5xx = servers.reduce((sum, r) => sum + at(r, 'hrsp_5xx'), 0)
  return {
    sessions: at(front, 'scur'),
    rate: at(front, 'rate'),
    queue: at(back, 'qcur'),
    backendSessions: at(back, 'scur'),
    requests: at(front, 'req_tot'),
    lbErrors: Math.max(0, at(back, 'hrsp_5xx') - served5xx),
    // a server in MAINT is no replica: a slot of Swarm's server-template that no task's address fills
    servers: servers.filter(r => !status(r).startsWith('MAINT')).map(r => ({
      name: r[1],
      // DOWN (and DOWN n/m, on its way back up) takes no request
      up: !status(r).startsWith('DOWN'),
      downs: at(r, 'chkdown'),
      downtimeS: at(r, 'downtime'),
      lastChangeS: at(r, 'lastchg')
    }))
  }
}
