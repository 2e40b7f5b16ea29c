// Reads small kernel files (/proc, /sys/fs/cgroup) into one reused buffer: the sampler reads several every second.
import { openSync, readSync, closeSync } from 'node:fs'

let buf = Buffer.allocUnsafe(16384)

/**
 * The whole text of a small file. procfs and sysfs report size 0, so read until EOF instead of trusting stat.
 * @param {string} path
 * @returns {string}
 */
export function readText (path) {
  const fd = openSync(path, 'r')
  try {
    let len = 0
    for (;;) {
      if (len === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2)
        buf.copy(bigger, 0, 0, len)
        buf = bigger
      }
      const n = readSync(fd, buf, len, buf.length - len, null)
      if (n === 0) break
      len += n
    }
    return buf.toString('latin1', 0, len)
  } finally {
    closeSync(fd)
  }
}
