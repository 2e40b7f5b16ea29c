// Which machine a process runs on, as the kernel tells it: the boot id is not namespaced, so the processes, containers
// and emulated nodes (executor cluster's network namespaces) of one machine read the same one and share its cores.
import { readFileSync } from 'node:fs'

const BOOT_ID = '/proc/sys/kernel/random/boot_id'

let cached
/**
 * The kernel's boot id (a UUID), or null where it cannot be read (not Linux).
 * @returns {string | null}
 */
export function machineId () {
  if (cached === undefined) {
    try { cached = readFileSync(BOOT_ID, 'utf8').trim() || null } catch { cached = null }
  }
  return cached
}
