// Reads the process table from /proc: a process's descendants and group, whether a pid is still alive, the ports a
// process tree listens on.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * One process's ppid, process group and state from /proc/<pid>/stat, or null when it is gone.
 * @param {number} pid
 * @returns {{ pid: number, ppid: number, pgid: number, state: string } | null}
 */
export function readStat (pid) {
  let text
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted from the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]) }
}

/** Every process on the machine, as readStat returns them. */
export function listProcesses () {
  const out = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const st = readStat(Number(name))
    if (st) out.push(st)
  }
  return out
}

/** True while a pid exists and is not a zombie (a zombie has exited; only its parent's bookkeeping is left). */
export function isAlive (pid) {
  const st = readStat(pid)
  return st !== null && st.state !== 'Z'
}

/**
 * The root, every live descendant, and (when pgid is given) every live member of that process group.
 * @param {number} rootPid
 * @param {{ pgid?: number }} [opts]
 * @returns {number[]}
 */
export function processTree (rootPid, { pgid } = {}) {
  const procs = listProcesses().filter(p => p.state !== 'Z')
  const children = new Map()
  for (const p of procs) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p.pid)
  }
  const seen = new Set()
  const stack = [rootPid]
  while (stack.length) {
    const pid = stack.pop()
    if (seen.has(pid)) continue
    seen.add(pid)
    stack.push(...(children.get(pid) ?? []))
  }
  if (pgid !== undefined) for (const p of procs) if (p.pgid === pgid) seen.add(p.pid)
  return [...seen].filter(isAlive)
}

/**
 * The TCP ports some of these processes listen on (their socket inodes matched against /proc/net/tcp and tcp6), sorted:
 * what a server that never answered on its port did open instead.
 * @param {number[]} pids
 * @param {{ proc?: string }} [opts] the /proc to read (a recorded one in tests)
 * @returns {number[]}
 */
export function listeningPorts (pids, { proc = '/proc' } = {}) {
  const inodes = new Set()
  for (const pid of pids) {
    let fds = []
    try { fds = readdirSync(`${proc}/${pid}/fd`) } catch { continue }
    for (const fd of fds) {
      let link = ''
      try { link = readlinkSync(`${proc}/${pid}/fd/${fd}`) } catch { continue }
      const m = /^socket:\[(\d+)\]$/.exec(link)
      if (m) inodes.add(m[1])
    }
  }
  const ports = new Set()
  for (const table of ['tcp', 'tcp6']) {
    let text = ''
    try { text = readFileSync(`${proc}/net/${table}`, 'utf8') } catch { continue }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st ... inode: state 0A is LISTEN
      const f = line.trim().split(/\s+/)
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}
