// Builds the command line and environment that start one shape of the server under test (single, cluster, pm2).
import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findProgram } from '../benchmarks/command-line.js'
import { NsError, internalError } from '../lib/errors.js'

const HERE = dirname(fileURLToPath(import.meta.url))
export const SHAPES = Object.freeze(['single', 'cluster', 'pm2'])

// Variables a parent may carry that would make our server think it is someone else's cluster worker or PM2 app.
const FOREIGN_ENV = ['NODE_UNIQUE_ID', 'NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'pm_id', 'NODE_APP_INSTANCE', 'PM2_HOME', 'PM2_USAGE', 'PM2_JSON_PROCESSING', 'PM2_DISCRETE_MODE', 'PM2_PROGRAMMATIC', 'NODESCALE_WORKERS']

/** Path of pm2-runtime's script in the installed pm2 package. */
export function pm2RuntimePath () {
  const pkg = createRequire(import.meta.url).resolve('pm2/package.json')
  return join(dirname(pkg), 'bin', 'pm2-runtime')
}

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
 * The command, arguments and environment for a shape.
 * @param {{ shape: string, instances: number, port: number, host: string, benchmark?: string, app?: string, params?:
 *   Record<string, string>, affinity?: number[], wrap?: (cmd: string, args: string[]) => { cmd: string, args: string[]
 *   }, env?: object, instanceIdPrefix?: string, tmpDir: string, cwd?: string }} o
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
  if (o.app) env.NODESCALE_APP = o.app.startsWith('cmd:') ? o.app : resolve(o.cwd ?? process.cwd(), o.app)
  else delete env.NODESCALE_APP

  let cmd = process.execPath
  let args
  if (o.shape === 'single') {
    args = [join(HERE, 'serve.js')]
  } else if (o.shape === 'cluster') {
    args = [join(HERE, 'cluster.js')]
    env.NODESCALE_WORKERS = String(o.instances)
  } else if (o.shape === 'pm2') {
    // Always -i N: PM2's "max" counts the host's cores, not the CPU quota the run gives it.
    // A private PM2_HOME: never touch (or start) a user's own PM2 daemon.
    env.PM2_HOME = join(o.tmpDir, 'pm2')
    args = [pm2RuntimePath(), 'start', join(HERE, 'serve.js'), '-i', String(o.instances), '--name', `nodescale-${o.port}`]
  } else {
    throw internalError(`shape "${o.shape}" is not one of ${SHAPES.join(', ')}`)
  }
  if (o.affinity) {
    const taskset = findProgram('taskset')
    if (!taskset) throw new NsError('NS_ERR_DEPLOY', 'taskset is needed for CPU affinity (--strategy up)', { hint: 'apt-get install util-linux' })
    args = ['-c', o.affinity.join(','), cmd, ...args]
    cmd = taskset
  }
  if (o.wrap) ({ cmd, args } = o.wrap(cmd, args))
  return { cmd, args, env }
}
