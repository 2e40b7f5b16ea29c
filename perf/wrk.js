// wrk, the reference load generator of the perf scripts: one thread pinned to a core, its req/s.
import { spawnSync } from 'node:child_process'

/**
 * Runs wrk against a URL and answers its Requests/sec.
 * @param {string} url
 * @param {number} duration seconds
 * @param {{ cpu?: number, connections?: number }} [opts] the core wrk is pinned to, its connections
 */
export function runWrk (url, duration, { cpu = 0, connections = 10 } = {}) {
  const r = spawnSync('taskset', ['-c', String(cpu), 'wrk', '-t1', `-c${connections}`, `-d${duration}s`, url], { encoding: 'utf8' })
  if (r.error || r.status !== 0) throw new Error(`wrk failed (apt-get install -y wrk): ${r.error?.message ?? r.stderr}`)
  const m = /Requests\/sec:\s*([\d.]+)/.exec(r.stdout)
  if (!m) throw new Error(`wrk printed no Requests/sec:\n${r.stdout}`)
  return Number(m[1])
}
