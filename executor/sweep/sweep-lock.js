// <sweep-dir>/sweep.lock: which executor process owns a sweep folder, so that two never write one, and whether that
// owner still lives.
import { open, readFile, unlink } from 'node:fs/promises'
import { readFileSync, unlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { badFlag } from '../../lib/errors.js'
import { CLOCK_TICKS, parseTaskStat } from '../../rc/thread-cpu.js'

export const LOCK_FILE = 'sweep.lock'

/** How far a process's start may lie after its lock's startedAt and still be the lock's writer (clock rounding). */
const START_SLACK_MS = 2000

/**
 * A process's start time as /proc/<pid>/stat gives it (clock ticks after boot), or null off Linux or when the process
 * is gone.
 * @param {number} pid
 */
export function processStartTicks (pid) {
  try {
    return parseTaskStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).start
  } catch {
    return null
  }
}

/** The boot time in ms since the epoch (/proc/stat btime), or null. */
function bootMs () {
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))
    return m ? Number(m[1]) * 1000 : null
  } catch {
    return null
  }
}

/**
 * Whether a lock's writer still runs on this host: its pid answers and is the same process (its start time is the
 * one the lock recorded, or, for a lock without it, not after the lock's startedAt: a pid used again is newer).
 * @param {{ pid: number, startedAt: string, procStart?: number|null }} lock
 */
export function ownerAlive (lock) {
  try {
    process.kill(lock.pid, 0)
  } catch (err) {
    if (err.code === 'ESRCH') return false
  }
  const ticks = processStartTicks(lock.pid)
  if (ticks === null) return true
  if (Number.isFinite(lock.procStart)) return ticks === lock.procStart
  const boot = bootMs()
  return boot === null || boot + ticks * 1000 / CLOCK_TICKS <= Date.parse(lock.startedAt) + START_SLACK_MS
}

/**
 * A sweep folder's lock and what it says of its owner: `alive`, `gone` (this host, the process ended), `other-host`
 * (cannot be told from here), `unreadable`; null when there is no lock.
 * @param {string} dir the sweep folder
 * @returns {Promise<null | { state: 'alive'|'gone'|'other-host'|'unreadable', pid?: number, host?: string,
 *   startedAt?: string, command?: string, file: string }>}
 */
export async function readLock (dir) {
  const file = join(dir, LOCK_FILE)
  let text
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    return { state: 'unreadable', file }
  }
  let lock
  try {
    lock = JSON.parse(text)
  } catch {
    return { state: 'unreadable', file }
  }
  if (!Number.isInteger(lock?.pid) || typeof lock.host !== 'string') return { state: 'unreadable', file }
  const state = lock.host !== hostname() ? 'other-host' : ownerAlive(lock) ? 'alive' : 'gone'
  return { ...lock, state, file }
}

/** "process 1234 on host vm (since 2026-11-24T03:29:10Z)". */
export const ownerText = (lock) => `process ${lock.pid} on host ${lock.host} (since ${lock.startedAt})`

/**
 * Takes a sweep folder's lock for this process: created with O_EXCL, so of two processes one wins. A lock of a
 * process of this host that is gone is taken over (said through `say`); a live owner's, another host's or an
 * unreadable lock is refused (exit 2) with how to go on. The lock is removed by `release()`, and by the process's exit
 * (process.exit after a second Ctrl-C) if release was not reached.
 * @param {string} dir the sweep folder
 * @param {{ flag?: string, say?: (line: string) => void, command?: string }} [opts]
 * @returns {Promise<{ release: () => Promise<void>, lock: any }>}
 */
export async function takeLock (dir, { flag = '--resume', say = () => {}, command = process.argv.slice(1).join(' ') } = {}) {
  const file = join(dir, LOCK_FILE)
  const lock = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), procStart: processStartTicks(process.pid), command }
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = await open(file, 'wx')
      try {
        await fd.writeFile(JSON.stringify(lock, null, 2) + '\n')
      } finally {
        await fd.close()
      }
      break
    } catch (err) {
      if (err.code !== 'EEXIST' || attempt > 0) throw refusal(err.code === 'EEXIST' ? await readLock(dir) : null, dir, flag, err)
      const held = await readLock(dir)
      if (held && held.state !== 'gone') throw refusal(held, dir, flag)
      if (held) {
        say(`taking over ${dir}: its lock names the ${ownerText(held)}, which is gone (it did not end cleanly)`)
        await unlink(file).catch(e => { if (e.code !== 'ENOENT') throw e })
      }
    }
  }
  const ours = () => {
    try {
      const now = JSON.parse(readFileSync(file, 'utf8'))
      return now.pid === lock.pid && now.startedAt === lock.startedAt
    } catch {
      return false
    }
  }
  const onExit = () => { if (ours()) try { unlinkSync(file) } catch {} }
  process.on('exit', onExit)
  return {
    lock,
    async release () {
      process.off('exit', onExit)
      onExit()
    }
  }
}

/** Why a lock cannot be taken, and how to go on. */
function refusal (held, dir, flag, cause) {
  if (!held) return badFlag(flag, `${dir}: cannot make ${LOCK_FILE} (${cause?.code ?? cause?.message}); give a sweep folder you can write to`, { cause })
  if (held.state === 'alive') {
    return badFlag(flag, `${dir} is being run by the ${ownerText(held)}: one sweep process per folder; ` +
      `wait for it to end or stop it (executor sweep --status ${dir} says how far it is)`)
  }
  if (held.state === 'other-host') {
    return badFlag(flag, `${dir} is locked by the ${ownerText(held)}, another host: nodescale cannot tell from here ` +
      `whether it still runs; once sure it does not, delete ${held.file} and resume again`)
  }
  return badFlag(flag, `${dir}: its ${LOCK_FILE} cannot be read; if no sweep process runs on this folder, delete ${held.file} and resume again`)
}
