// HAProxy, the load balancer in front of a run's replicas: its version, its config (stacks/haproxy.cfg, one template
// for Swarm and for this machine), and a local HAProxy process.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { internalError, NsError } from '../lib/errors.js'
import { ROOT } from '../lib/paths.js'

/** HAProxy exits at start when maxconn does not fit a container's FD limit (about 20000 here). */
export const LB_MAXCONN = 4000
/** How a server is checked and what happens when it goes down (the same locally and on Swarm). */
const CHECK = 'check inter 1s fall 2 rise 1 on-marked-down shutdown-sessions'

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
  if (!version) throw new NsError('NS_ERR_MISSING_HAPROXY', '--strategy hs on the local backend needs haproxy, which is not on PATH', { hint: 'apt-get install -y haproxy' })
  return version
}

/**
 * The config of stacks/haproxy.cfg for either place the replicas are:
 * - on Swarm, `service`, `port` and `slots`: a server-template over Swarm's DNS name tasks.<service>, listening on
 *   `listen`;
 * - on this machine, `ports`: one server per loopback port, listening on 127.0.0.1:`listen`.
 * @param {{ listen: number, service?: string, port?: number, slots?: number, ports?: number[], maxconn?: number }} opts
 */
export function renderHaproxyConfig ({ listen, service, port, slots = 16, ports, maxconn = LB_MAXCONN }) {
  if (!ports && !service) throw internalError('renderHaproxyConfig needs the replicas: a Swarm service or loopback ports')
  const servers = ports
    ? ports.map((p, i) => `    server s${i} 127.0.0.1:${p} ${CHECK}`)
    : [`    server-template app ${slots} tasks.${service}:${port} ${CHECK} resolvers docker init-addr none`]
  const values = { maxconn: Math.min(maxconn, LB_MAXCONN), bind: ports ? `127.0.0.1:${listen}` : `:${listen}`, servers: servers.join('\n') }
  return readFileSync(join(ROOT, 'stacks', 'haproxy.cfg'), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, key) => {
    if (!(key in values)) throw internalError(`stacks/haproxy.cfg: unknown placeholder ${m}`)
    return String(values[key])
  })
}

/**
 * Starts HAProxy (a foreground child) in front of loopback ports, with its config written into runDir.
 * @param {{ port: number, backends: number[], runDir: string }} opts
 */
export async function startHaproxy ({ port, backends, runDir }) {
  const cfg = join(runDir, 'haproxy.cfg')
  await writeFile(cfg, renderHaproxyConfig({ listen: port, ports: backends }))
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
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
    isAlive: () => alive,
    output: () => stderr,
    async stop () {
      if (!alive) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(timer)
    }
  }
}
