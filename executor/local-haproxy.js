// Runs HAProxy in front of the local hs instances (round robin over loopback ports).
import { spawn, spawnSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { NsError } from './errors.js'

/** Throws NS_ERR_MISSING_HAPROXY (exit 3) when haproxy is not on PATH. */
export function requireHaproxy () {
  const r = spawnSync('haproxy', ['-v'], { encoding: 'utf8' })
  if (r.error) {
    throw new NsError('NS_ERR_MISSING_HAPROXY', '--strategy hs on the local backend needs haproxy, which is not on PATH', { hint: 'apt-get install -y haproxy' })
  }
  return /version (\S+)/i.exec(r.stdout)?.[1] ?? 'unknown'
}

/**
 * The HAProxy configuration for N backends on loopback.
 * @param {{ port: number, backends: number[], maxconn?: number }} opts
 */
export function haproxyConfig ({ port, backends, maxconn = 4000 }) {
  const servers = backends.map((p, i) => `  server s${i} 127.0.0.1:${p} check inter 1s`).join('\n')
  return `# written by nodescale for one run
global
  maxconn ${maxconn}

defaults
  mode http
  option http-keep-alive
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 60s

frontend nodescale
  bind 127.0.0.1:${port}
  default_backend instances

backend instances
  balance roundrobin
${servers}
`
}

/**
 * Starts HAProxy (foreground child) with the config written into runDir.
 * @param {{ port: number, backends: number[], runDir: string, wrap?: (cmd: string, args: string[]) => { cmd: string, args: string[] } }} opts
 */
export async function startHaproxy ({ port, backends, runDir }) {
  const cfg = join(runDir, 'haproxy.cfg')
  await writeFile(cfg, haproxyConfig({ port, backends }))
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', d => { stderr = (stderr + d).slice(-4000) })
  const exited = new Promise(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
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
