// A run's folder on disk: its id, and atomic writes (temp file + rename) so readers never see a torn file.
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { writeFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

export const RUN_SCHEMA = 'nodescale.run/v1'

/**
 * A sortable, readable run id: time, strategy, instances, the worker nodes when --nodes was given, and a random suffix
 * ("20261123-091900-hs4-2n-0466": hs x4 on 2 nodes).
 * @param {{ strategy: string, instances: number, nodes?: number }} config
 * @param {Date} [now]
 */
export function newRunId ({ strategy, instances, nodes }, now = new Date()) {
  return stampedId(`${strategy}${instances}${nodes ? `-${nodes}n` : ''}`, now)
}

/** `<yyyymmdd-hhmmss>-<name>-<4 hex>`: sorts by time, unique enough for folders made by one machine. */
export function stampedId (name, now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${name}-${randomBytes(2).toString('hex')}`
}

/** Creates `<out>/<runId>/` and returns its path. */
export async function createRunDir (out, runId) {
  const dir = join(out, runId)
  await mkdir(dir, { recursive: true })
  return dir
}

/** Writes JSON atomically. */
export async function writeJsonAtomic (path, data) {
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, JSON.stringify(data, null, 2) + '\n')
  await rename(tmp, path)
}

/** The same, synchronously: for the last write on a signal, when the event loop may not turn again. */
export function writeJsonAtomicSync (path, data) {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n')
  renameSync(tmp, path)
}
