// What the local swarm needs from this machine (root, ip, nsenter, unshare, dockerd) and the one way it runs them:
// execFile, never a shell string.
import { execFile } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fail } from '../../lib/messages.js'

/** The host tools `executor cluster` shells out to; everything else goes through the Docker API. */
export const HOST_TOOLS = Object.freeze(['ip', 'nsenter', 'unshare', 'dockerd', 'hostname', 'sh', 'umount'])

/** The full path of a program on PATH (plus the sbin folders, which a non-login root shell may lack), or null. */
export function which (name, path = process.env.PATH ?? '') {
  for (const dir of [...path.split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin']) {
    if (!dir) continue
    try {
      accessSync(join(dir, name), constants.X_OK)
      return join(dir, name)
    } catch {}
  }
  return null
}

/**
 * Refuses (exit 3) when the local swarm cannot be made here: not root, or a host tool missing; says how to fix it.
 * @param {{ uid?: number, find?: (name: string) => string | null }} [opts]
 * @returns {Record<string, string>} tool name → path
 */
export function checkHost ({ uid = process.getuid?.() ?? -1, find = which } = {}) {
  if (uid !== 0) {
    throw fail('CLUSTER_NOT_ROOT')
  }
  /** @type {Record<string, string>} */
  const found = {}
  const missing = []
  for (const tool of HOST_TOOLS) {
    const path = find(tool)
    if (path) found[tool] = path
    else missing.push(tool)
  }
  if (missing.length) {
    const pkg = { ip: 'iproute2', nsenter: 'util-linux', unshare: 'util-linux', dockerd: 'docker.io', hostname: 'hostname', sh: 'dash', umount: 'mount' }
    throw fail('CLUSTER_TOOLS_MISSING', { tools: missing, packages: [...new Set(missing.map(t => pkg[t]))] })
  }
  return found
}

/**
 * Runs a host program with arguments (no shell) and resolves with its stdout; a non-zero exit rejects with its stderr.
 * @param {string} file
 * @param {string[]} args
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<string>}
 */
export function run (file, args, { timeoutMs = 30_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        reject(Object.assign(new Error(`${file} ${args.join(' ')}: ${(stderr || err.message).trim()}`), { cause: err, stderr }))
      } else {
        resolve(stdout)
      }
    })
  })
}

/** `ip` with arguments. */
export const ip = (...args) => run('ip', args)

/** `ip -j ...` parsed (an empty answer is an empty list). */
export async function ipJson (...args) {
  const out = (await run('ip', ['-j', ...args])).trim()
  return out ? JSON.parse(out) : []
}

/** True when a process with this pid runs (and is not a zombie). */
export function alive (pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    return err.code === 'EPERM'
  }
  try {
    // the state field follows the command name in parentheses: Z is a zombie, dead but not reaped
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}
