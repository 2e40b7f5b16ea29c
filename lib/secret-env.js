// A secret a service is started with: from a Swarm secret's file (what nodescale deploys: a file is not shown by
// `docker service inspect` or in the process's environment), or from a variable (for a process started by hand).
import { existsSync, readFileSync } from 'node:fs'

/**
 * The secret `NAME`: the variable NAME when set, else the file NAME_FILE names (default: the secret's usual path).
 * @param {string} name e.g. NODESCALE_RC_TOKEN
 * @param {string} defaultFile e.g. /run/secrets/nodescale_rc_token
 * @param {Record<string, string | undefined>} [env]
 * @returns {string | null} null when neither is there
 */
export function secretFromEnv (name, defaultFile, env = process.env) {
  if (env[name]) return env[name]
  const file = env[`${name}_FILE`] ?? defaultFile
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || null : null
}
