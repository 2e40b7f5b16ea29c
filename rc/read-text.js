// Reads small kernel files (/proc, /sys/fs/cgroup) into one reused buffer: the sampler reads several every second.
import { openSync, readSync, closeSync } from 'node:fs'

const PAGE = 4096
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
      const room = buf.length - len
      const n = readSync(fd, buf, len, room, null)
      len += n
      if (n === 0) break
      // seq_file hands over every record that fits in one read; it stops short of the room only for a record
      // (a line, under a page) that does not fit. So a read that left more than a page unused hit the end: skip the
      // extra read() that would return 0 (one syscall of four, per file, per sample).
      if (room - n > PAGE) break
    }
    return buf.toString('latin1', 0, len)
  } finally {
    closeSync(fd)
  }
}
