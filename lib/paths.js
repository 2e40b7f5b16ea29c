// Where nodescale keeps things: the project root and the per-user cache (JMeter, images).
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { homedir } from 'node:os'
import { readFileSync, writeFileSync, mkdirSync, renameSync } from 'node:fs'

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

/** The cache folder; NODESCALE_CACHE overrides it (CI and tests use the default). */
export function cacheDir () {
  return process.env.NODESCALE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nodescale')
}

/** A JSON file of the cache folder, or null when it is missing or unreadable. */
export function readCacheJson (name) {
  try { return JSON.parse(readFileSync(join(cacheDir(), name), 'utf8')) } catch { return null }
}

/**
 * Writes a JSON file of the cache folder atomically (temp file + rename), owner-only when it holds a secret.
 * @param {string} name
 * @param {any} value
 * @param {{ mode?: number }} [opts]
 */
export function writeCacheJson (name, value, { mode = 0o644 } = {}) {
  mkdirSync(cacheDir(), { recursive: true })
  const file = join(cacheDir(), name)
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(value, null, 2), { mode })
  renameSync(tmp, file)
}
