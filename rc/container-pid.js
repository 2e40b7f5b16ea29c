// A container's host pid from cgroup and proc files, without the Docker API: the RC reads a container's network bytes
// from /proc/<pid>/net/dev of one of its processes, and needs no engine socket to find that pid.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { cpuacctRoot, detectCgroup, dockerGroupOf } from './cgroup.js'
import { readText } from './read-text.js'

const ID = /^[0-9a-f]{64}$/
const SCOPE = /^docker-([0-9a-f]{64})\.scope$/

/**
 * The container a cgroup path names: its innermost segment that is a container id (cgroupfs `/docker/<id>`, any
 * parent `/<parent>/<id>`) or a systemd scope (`/system.slice/docker-<id>.scope`); paths relative to a private cgroup
 * namespace (`/../docker-<id>.scope`) name it too. Innermost: a container started inside another is its own.
 * @param {string} path
 * @returns {string | null}
 */
export function containerOfPath (path) {
  let found = null
  for (const seg of path.split('/')) {
    if (ID.test(seg)) found = seg
    else found = SCOPE.exec(seg)?.[1] ?? found
  }
  return found
}

/**
 * The containers the text of a /proc/<pid>/cgroup names, one per line that names one (v1 `N:controllers:/path`,
 * v2 `0::/path`); a process outside any container names none.
 * @param {string} text
 * @returns {Set<string>}
 */
export function containersOfCgroupText (text) {
  const out = new Set()
  for (const line of text.split('\n')) {
    const a = line.indexOf(':')
    const b = a < 0 ? -1 : line.indexOf(':', a + 1)
    if (b < 0) continue
    const id = containerOfPath(line.slice(b + 1))
    if (id) out.add(id)
  }
  return out
}

/** The containers a process's cgroup file names (empty when the process is gone or the file unreadable). */
function containersOfPid (procRoot, pid) {
  try { return containersOfCgroupText(readText(join(procRoot, String(pid), 'cgroup'))) } catch { return new Set() }
}

/** The pids a group's file lists (cgroup.procs, v1 tasks), ascending; 0 (a pid the reader cannot see, v2) left out. */
function listed (dir, file) {
  try {
    return readText(join(dir, file)).split('\n').map(Number).filter(n => Number.isInteger(n) && n > 0).sort((a, b) => a - b)
  } catch {
    return []
  }
}

/**
 * A pid from the container's own group, when the reader shares the host's pid namespace (a test, the RC as a plain
 * process): the lowest one listed whose cgroup file names the container. In a container of its own (the RC as a Swarm
 * service) the lists read empty (v1) or all 0 (v2) and this finds nothing.
 */
function fromGroup (id, cgroupRoot, procRoot) {
  const kind = detectCgroup(cgroupRoot)
  const base = kind === 'v1' ? cpuacctRoot(cgroupRoot) : kind === 'v2' ? cgroupRoot : null
  const group = base && dockerGroupOf(base, id)
  if (!group) return null
  for (const file of kind === 'v1' ? ['cgroup.procs', 'tasks'] : ['cgroup.procs']) {
    for (const pid of listed(join(base, group), file)) if (containersOfPid(procRoot, pid).has(id)) return pid
  }
  return null
}

/**
 * Each container's host pid, null for one that has no process here: first from its group's cgroup.procs (see
 * fromGroup), else from one pass over procRoot's processes, the lowest pid whose cgroup file names the container. Reads
 * only world-readable files: cgroup.procs, tasks, /proc/<pid>/cgroup.
 * @param {string[]} ids 64-hex container ids (anything else is refused before any path is built)
 * @param {{ cgroupRoot?: string, procRoot?: string }} [roots]
 * @returns {Map<string, number | null>}
 */
export function containerPids (ids, { cgroupRoot = '/sys/fs/cgroup', procRoot = '/proc' } = {}) {
  for (const id of ids) if (!ID.test(String(id))) throw new TypeError(`"${String(id).slice(0, 80)}" is not a container id (64 hex characters)`)
  /** @type {Map<string, number | null>} */
  const out = new Map(ids.map(id => [id, fromGroup(id, cgroupRoot, procRoot)]))
  const left = new Set(ids.filter(id => out.get(id) === null))
  if (!left.size) return out
  let pids
  try {
    pids = readdirSync(procRoot).filter(n => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b)
  } catch {
    return out
  }
  for (const pid of pids) {
    for (const id of containersOfPid(procRoot, pid)) {
      if (left.delete(id)) out.set(id, pid)
    }
    if (!left.size) break
  }
  return out
}

/**
 * One container's host pid (containerPids), or null.
 * @param {string} id
 * @param {{ cgroupRoot?: string, procRoot?: string }} [roots]
 */
export function containerPid (id, roots) {
  return containerPids([id], roots).get(id) ?? null
}
