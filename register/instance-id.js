// Who a process of the server under test is: its instance id (what it puts in the instance header and its telemetry),
// and whether PM2 runs it. Read by our server (server.js) and by the hook preloaded into a user's own server.
import cluster from 'node:cluster'
import { hostname } from 'node:os'

/** True inside a PM2-managed process (PM2 sets pm_id; in cluster mode it is also a Node cluster worker). */
export const isPm2 = (env) => env.pm_id !== undefined || (env.NODE_APP_INSTANCE !== undefined && env.PM2_HOME !== undefined)

/**
 * The id this instance puts in every response. In a cluster or under PM2, NODESCALE_INSTANCE is a prefix for each
 * worker.
 * @param {Record<string, string|undefined>} env
 * @param {{ workerId?: number, pid?: number, host?: string }} [where]
 */
export function instanceIdFromEnv (env, { workerId = cluster.worker?.id, pid = process.pid, host = hostname() } = {}) {
  const base = env.NODESCALE_INSTANCE || ''
  if (isPm2(env)) return `${base ? base + '-' : ''}pm2-${env.NODE_APP_INSTANCE ?? env.pm_id}`
  if (workerId !== undefined) return `${base ? base + '-' : ''}w${workerId}`
  return base || `${host}-${pid}`
}
