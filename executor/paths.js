// Where nodescale keeps things: the project root and the per-user cache (JMeter, images).
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { homedir } from 'node:os'

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

/** The cache folder; NODESCALE_CACHE overrides it (CI and tests use the default). */
export function cacheDir () {
  return process.env.NODESCALE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nodescale')
}
