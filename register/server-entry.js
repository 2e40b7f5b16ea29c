// What script a process of the server under test runs: our server (serve.js), or the user's own entry file
// (--server) with its arguments and our hook preloaded. One table of variables for every shape and both backends: the
// launcher (or the stack) sets them, the cluster primary and the PM2 starter read them.
import { join } from 'node:path'
import { badEnv } from '../lib/errors.js'
import { INSTANCES } from '../lib/strategies.js'

/** The user's entry file (absolute, as the process sees it) and its arguments (a JSON array, {port} filled in). */
export const SERVER_VARS = Object.freeze({ entry: 'NODESCALE_SERVER', args: 'NODESCALE_SERVER_ARGS' })
/** In a --server-arg, this is replaced by the port the instance must listen on. */
export const PORT_PLACEHOLDER = '{port}'

/**
 * The variables that make the processes of a shape run the user's server.
 * @param {{ entry: string, args?: readonly string[], port: number }} server
 * @returns {Record<string, string>}
 */
export function serverVars ({ entry, args = [], port }) {
  return { [SERVER_VARS.entry]: entry, [SERVER_VARS.args]: JSON.stringify(args.map(a => a.replaceAll(PORT_PLACEHOLDER, String(port)))) }
}

/**
 * The script a server process runs, its arguments and the node options it needs, from the variables.
 * @param {Record<string, string|undefined>} env
 * @param {string} registerDir where register/ is (this folder locally, /app/register in our image)
 * @returns {{ own: boolean, script: string, args: string[], execArgv: string[] }} own: the user's server
 */
export function serverFromEnv (env, registerDir) {
  const entry = env[SERVER_VARS.entry]
  if (!entry) return { own: false, script: join(registerDir, 'serve.js'), args: [], execArgv: [] }
  let args
  try {
    args = JSON.parse(env[SERVER_VARS.args] || '[]')
  } catch {}
  if (!Array.isArray(args) || args.some(a => typeof a !== 'string')) throw badEnv(SERVER_VARS.args, 'expected a JSON array of strings like ["--port","8080"]')
  return { own: true, script: entry, args, execArgv: [`--import=${join(registerDir, 'server-hook.js')}`] }
}

/**
 * The processes a cluster or PM2 primary forks (NODESCALE_WORKERS, set by the launcher from --instances); outside
 * --instances' range the primary says so and exits 2, before anything starts.
 * @param {Record<string, string|undefined>} env
 * @param {string} who the primary's name in its messages (`cluster`, `pm2`)
 * @returns {number}
 */
export function workersOrExit (env, who) {
  const text = env.NODESCALE_WORKERS
  const n = Number(text)
  if (!Number.isInteger(n) || n < INSTANCES.min || n > INSTANCES.max) {
    console.error(`nodescale ${who}: NODESCALE_WORKERS="${text ?? ''}" must be a whole number from ${INSTANCES.min} to ${INSTANCES.max} (--instances)`)
    process.exit(2)
  }
  return n
}
