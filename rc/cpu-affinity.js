// Which cores a process may run on (its CPU affinity, as the kernel keeps it) and which cores this machine has online,
// read from /proc and /sys; and a list of cores written the kernel's way.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCpuList } from '../lib/cpu-list.js'

export { cpuListText, parseCpuList } from '../lib/cpu-list.js'

/**
 * The cores a process may run on now: `Cpus_allowed_list` of /proc/<pid>/status (its affinity, within its cpuset);
 * null when it cannot be read (the process is gone, not Linux).
 * @param {number | undefined} pid
 * @param {{ proc?: string }} [opts]
 * @returns {number[] | null}
 */
export function allowedCpus (pid, { proc = '/proc' } = {}) {
  if (!Number.isInteger(pid)) return null
  let text
  try {
    text = readFileSync(join(proc, String(pid), 'status'), 'utf8')
  } catch {
    return null
  }
  const line = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(text)
  return line ? parseCpuList(line[1]) : null
}

/**
 * The cores this machine has online (/sys/devices/system/cpu/online); null when it cannot be read.
 * @param {{ sys?: string }} [opts]
 * @returns {number[] | null}
 */
export function onlineCpus ({ sys = '/sys/devices/system/cpu' } = {}) {
  try {
    return parseCpuList(readFileSync(join(sys, 'online'), 'utf8'))
  } catch {
    return null
  }
}
