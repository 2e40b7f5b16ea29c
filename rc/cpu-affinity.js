// Which cores a process may run on (its CPU affinity, as the kernel keeps it) and which cores this machine has online,
// read from /proc and /sys; and a list of cores written the kernel's way.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A kernel CPU list ("0-3,6,8-9") as its core numbers, ascending; null when the text is not one.
 * @param {string} text
 * @returns {number[] | null}
 */
export function parseCpuList (text) {
  const out = new Set()
  for (const part of String(text).trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim())
    if (!m) return null
    const [a, b] = [Number(m[1]), Number(m[2] ?? m[1])]
    if (b < a || b - a > 65535) return null
    for (let c = a; c <= b; c++) out.add(c)
  }
  return [...out].sort((x, y) => x - y)
}

/**
 * Cores written as the kernel writes them: [0, 1, 2, 5] is "0-2,5".
 * @param {readonly number[]} cores
 */
export function cpuListText (cores) {
  const sorted = [...new Set(cores)].sort((a, b) => a - b)
  const parts = []
  for (let i = 0; i < sorted.length; i++) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
    parts.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`)
    i = j
  }
  return parts.join(',')
}

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
