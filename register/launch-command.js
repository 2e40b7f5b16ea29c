// Builds the command line and environment that start one shape of the server under test (single, cluster, pm2), for
// our server or the user's own (--server).
import { availableParallelism } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findProgram } from '../benchmarks/command-line.js'
import { internalError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { serverFromEnv, serverVars, SERVER_VARS } from './server-entry.js'

const HERE = dirname(fileURLToPath(import.meta.url))
export const SHAPES = Object.freeze(['single', 'cluster', 'pm2'])

// Variables a parent may carry that would make our server think it is someone else's cluster worker or PM2 app.
const FOREIGN_ENV = [
  'NODE_UNIQUE_ID', 'NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'pm_id', 'NODE_APP_INSTANCE',
  'PM2_HOME', 'PM2_USAGE', 'PM2_JSON_PROCESSING', 'PM2_DISCRETE_MODE', 'PM2_PROGRAMMATIC',
  'NODESCALE_WORKERS', SERVER_VARS.entry, SERVER_VARS.args
]

/**
 * Checks a CPU list for taskset against this machine's cores (the caller worked it out from the run's config).
 * @param {unknown} affinity
 * @param {number} [cores]
 * @returns {number[]|undefined}
 */
export function validateAffinity (affinity, cores = availableParallelism()) {
  if (affinity === undefined || affinity === null) return undefined
  const ok = Array.isArray(affinity) && affinity.length > 0 &&
    affinity.every(c => Number.isInteger(c) && c >= 0 && c < cores) && new Set(affinity).size === affinity.length
  if (!ok) throw internalError(`CPU affinity ${JSON.stringify(affinity)} is not a list of distinct cores from 0 to ${cores - 1} (this machine has ${cores})`)
  return affinity
}

/**
 * The node arguments that start a shape, from the variables that say what it serves (`serverVars`): what both
 * backends run (locally with this folder, in our image with /app/register).
 * @param {'single'|'cluster'|'pm2'} shape
 * @param {Record<string, string|undefined>} env
 * @param {string} registerDir
 * @returns {string[]}
 */
export function shapeArgs (shape, env, registerDir) {
  if (shape === 'cluster') return [join(registerDir, 'cluster.js')]
  if (shape === 'pm2') return [join(registerDir, 'pm2-start.js')]
  if (shape !== 'single') throw internalError(`shape "${shape}" is not one of ${SHAPES.join(', ')}`)
  const server = serverFromEnv(env, registerDir)
  return [...server.execArgv, server.script, ...server.args]
}

/**
 * The command, arguments and environment for a shape.
 * @param {{ shape: string, instances: number, port: number, host: string, benchmark?: string, app?: string, params?:
 *   Record<string, string>, affinity?: number[], wrap?: (cmd: string, args: string[]) => { cmd: string, args: string[]
 *   }, env?: object, instanceIdPrefix?: string, tmpDir: string, cwd?: string, server?: { entry: string, args?:
 *   readonly string[] } }} o `server`: the user's own server instead of a benchmark app
 * @returns {{ cmd: string, args: string[], env: Record<string, string> }}
 */
export function buildCommand (o) {
  const env = { ...process.env }
  for (const k of FOREIGN_ENV) delete env[k]
  if (o.instanceIdPrefix) env.NODESCALE_INSTANCE = o.instanceIdPrefix
  Object.assign(env, o.env ?? {}, {
    PORT: String(o.port),
    HOST: o.host,
    NODESCALE_PARAMS: JSON.stringify(o.params ?? {}),
    NODESCALE_TMPDIR: o.tmpDir,
    NODESCALE_TMPDIR_REMOVE: '1',
    NODESCALE_LAUNCHER_PID: String(process.pid)
  })
  if (o.benchmark) env.NODESCALE_BENCHMARK = o.benchmark
  else delete env.NODESCALE_BENCHMARK
  if (o.server) Object.assign(env, serverVars({ ...o.server, port: o.port }))
  if (o.app) env.NODESCALE_APP = o.app.startsWith('cmd:') ? o.app : resolve(o.cwd ?? process.cwd(), o.app)
  else delete env.NODESCALE_APP

  let cmd = process.execPath
  if (o.shape === 'cluster' || o.shape === 'pm2') env.NODESCALE_WORKERS = String(o.instances)
  // A private PM2_HOME: never touch (or start) a user's own PM2 daemon.
  if (o.shape === 'pm2') env.PM2_HOME = join(o.tmpDir, 'pm2')
  let args = shapeArgs(/** @type {any} */ (o.shape), env, HERE)
  if (o.affinity) {
    const taskset = findProgram('taskset')
    if (!taskset) throw fail('TASKSET_MISSING')
    args = ['-c', o.affinity.join(','), cmd, ...args]
    cmd = taskset
  }
  if (o.wrap) ({ cmd, args } = o.wrap(cmd, args))
  return { cmd, args, env }
}
