// Where a sweep stands, read from its folder without writing to it (the sweep may be running in another process), and
// the sessions (first start, each --resume) that its time is the sum of.
import { hostname } from 'node:os'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { cellConfigs, countEntries, countInvalid, isLeft, readSweepJson } from './sweep.js'
import { estimateBackend, estimatePlan } from './sweep-plan.js'
import { freeBytes, sweepFolder } from '../../lib/run-files.js'
import { dirBytes, measuredCosts } from './sweep-estimate.js'
import { readLock } from './sweep-lock.js'

/**
 * Opens a session of the sweep: when it started, who runs it and what it was estimated to take. A session a killed
 * process left open is closed at the last time its sweep.json was written.
 * @param {any} sweep
 * @param {{ startedAt: number, estimate: { seconds: number, bytes: number, basis?: string } }} opts startedAt: ms
 */
export function startSession (sweep, { startedAt, estimate }) {
  sweep.sessions ??= []
  for (const s of sweep.sessions.filter(x => !x.endedAt)) {
    s.endedAt = sweep.updatedAt ?? s.startedAt
    s.seconds = secondsBetween(s.startedAt, s.endedAt)
    s.ended = 'the process stopped without ending the session (kill -9, power loss): counted up to its last write'
  }
  const session = {
    startedAt: new Date(startedAt).toISOString(),
    endedAt: null,
    seconds: null,
    pid: process.pid,
    host: hostname(),
    estimate: { seconds: estimate.seconds, bytes: estimate.bytes, basis: estimate.basis ?? 'plan' }
  }
  sweep.sessions.push(session)
  return session
}

/**
 * Ends this process's session and sets what the sweep has cost so far: every session's seconds, its folder's bytes.
 * @param {any} sweep
 * @param {any} session from startSession
 */
export async function endSession (sweep, session) {
  session.endedAt = new Date().toISOString()
  session.seconds = secondsBetween(session.startedAt, session.endedAt)
  sweep.actual = { seconds: timeSpent(sweep), bytes: await dirBytes(sweep.dir), sessions: sweep.sessions.length }
}

const secondsBetween = (a, b) => Math.max(0, Math.round((Date.parse(b) - Date.parse(a)) / 100) / 10)

/**
 * Seconds spent on the sweep over all its sessions; a session still open counts up to now when its process lives,
 * else up to the last write of sweep.json. A sweep.json older than sessions: the sum of its runs' seconds.
 * @param {any} sweep
 * @param {{ now?: number, ownerAlive?: boolean }} [opts]
 */
export function timeSpent (sweep, { now = Date.now(), ownerAlive = true } = {}) {
  if (!sweep.sessions?.length) return Math.round(sweep.plan.reduce((t, e) => t + (e.seconds ?? 0), 0))
  let total = 0
  for (const s of sweep.sessions) {
    if (s.seconds !== null && s.seconds !== undefined) total += s.seconds
    else total += secondsBetween(s.startedAt, ownerAlive ? new Date(now).toISOString() : sweep.updatedAt ?? s.startedAt)
  }
  return Math.round(total)
}

/**
 * The estimate of the entries not done yet: what the finished runs took, per cell or overall, or the plan's figures.
 * @param {any} sweep as read from sweep.json (dir set)
 */
export async function estimateLeft (sweep) {
  const cells = cellConfigs(sweep)
  const file = join(sweep.dir, 'calibration.json')
  const calibration = existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : null
  const left = sweep.plan.filter(isLeft)
  // the backend its runs went to; before the first run, the one the file and --backend name
  const backendName = sweep.backendUsed ??
    estimateBackend({ settings: { backend: cells[0]?.config.backend }, nodes: cells.some(c => c.config.nodes) }, sweep.backend ?? undefined)
  return estimatePlan(left, cells, { backendName, calibration, measured: await measuredCosts(sweep), sweepBytes: false })
}

/**
 * Where a sweep stands, from its folder alone, writing nothing: counts (an entry running in a sweep whose process is
 * gone counts as interrupted), time spent and left, disk used and free, the last error, the run in flight and the
 * folder's owner.
 * @param {string} dir the sweep's folder, or a folder that holds one sweep (sweepFolder)
 */
export async function sweepStatusOf (dir) {
  const sweep = await readSweepJson(await sweepFolder(dir, '--status'), '--status')
  const lock = await readLock(sweep.dir)
  // another host's owner may be running: what it left running is taken as in flight
  const owned = lock?.state === 'alive' || lock?.state === 'other-host'
  const counts = countEntries(sweep.plan)
  const running = sweep.plan.find(e => e.status === 'running') ?? null
  const failed = sweep.plan.filter(e => ['failed', 'degraded', 'interrupted'].includes(e.status) && e.reason)
  const lastError = failed.sort((a, b) => String(b.startedAt ?? '').localeCompare(String(a.startedAt ?? '')))[0] ?? null
  const left = await estimateLeft(sweep)
  const [used, free] = await Promise.all([dirBytes(sweep.dir), freeBytes(sweep.dir)])
  return {
    id: sweep.id,
    dir: sweep.dir,
    status: sweep.status,
    experiment: sweep.experiment?.name ?? null,
    updatedAt: sweep.updatedAt,
    runs: {
      total: counts.runs,
      done: counts.done,
      failed: counts.failed + counts.degraded,
      interrupted: counts.interrupted + (running && !owned ? 1 : 0),
      invalid: countInvalid(sweep.plan).runs,
      left: counts.runs - counts.done - (counts.skipped ?? 0),
      skipped: counts.skipped ?? 0
    },
    seconds: { spent: timeSpent(sweep, { ownerAlive: owned }), left: left.seconds, basis: left.basis, estimated: sweep.estimate?.seconds ?? null },
    bytes: { used, left: left.bytes, free, estimated: sweep.estimate?.bytes ?? null },
    lastError: lastError && { index: lastError.index, label: lastError.label, repeat: lastError.repeat, status: lastError.status, reason: lastError.reason },
    inFlight: running && owned ? { index: running.index, label: running.label, repeat: running.repeat, startedAt: running.startedAt } : null,
    owner: lock
      ? { state: lock.state, pid: lock.pid ?? null, host: lock.host ?? null, startedAt: lock.startedAt ?? null, command: lock.command ?? null }
      : null,
    sessions: sweep.sessions?.length ?? null,
    // an adaptive sweep's question, looks (each with its interval and next block) and verdict
    adaptive: sweep.adaptive ?? null
  }
}
