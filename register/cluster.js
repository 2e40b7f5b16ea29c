#!/usr/bin/env node
// Entry script of the cluster shape: the primary forks NODESCALE_WORKERS servers (ours, or the user's own entry file
// NODESCALE_SERVER with its arguments and the hook preloaded) and restarts crashed ones, nothing else.
import cluster from 'node:cluster'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname } from 'node:path'
import { telemetryOn } from '../lib/telemetry.js'
import { startTelemetry } from './telemetry.js'
import { serverFromEnv, workersOrExit } from './server-entry.js'

const RESTART_WINDOW_MS = 60_000
const STOP_GRACE_MS = 4000

/** Restarts allowed per minute before the primary gives up on a crash loop. */
export const maxRestartsPerMinute = (workers) => Math.max(10, 5 * workers)

const alive = () => Object.values(cluster.workers ?? {}).filter(w => !w.isDead())

/**
 * @typedef {{ n: number, log: (line: string) => void, readyIds: Set<number>, ready: boolean, stopping: boolean,
 *   exitCode: number, restarts: number[] }} Primary the primary's state: its workers' count, who listens, whether it
 *   said ready or is stopping, and when it restarted a worker
 */

/** Stops every worker (SIGTERM, then SIGKILL after the grace) and exits with `code`; once. @param {Primary} p */
function stopAll (p, code) {
  if (p.stopping) return
  p.stopping = true
  p.exitCode = code
  const workers = alive()
  if (!workers.length) process.exit(p.exitCode)
  for (const w of workers) w.process.kill('SIGTERM')
  setTimeout(() => {
    for (const w of alive()) w.process.kill('SIGKILL')
    process.exit(p.exitCode)
  }, STOP_GRACE_MS).unref()
}

/** Any server that listens (ours or not) is a worker that started; once all have, the primary says ready. */
function listened (p, worker, address) {
  p.readyIds.add(worker.id)
  if (!p.ready && p.readyIds.size >= p.n) {
    p.ready = true
    p.log(`ready: ${p.n} workers listening on port ${address.port}`)
    process.send?.({ type: 'nodescale:ready', port: address.port, instance: 'primary', workers: p.n })
  }
}

/**
 * A worker exited: while stopping, the last one ends the primary; before ready, the cluster stops (a worker that
 * cannot start will not start on a retry either: a bad app, a port taken); after, it is restarted unless the last
 * minute's restarts say a crash loop.
 * @param {Primary} p
 */
function exited (p, worker, code, signal) {
  p.readyIds.delete(worker.id)
  if (p.stopping) {
    if (!alive().length) process.exit(p.exitCode)
    return
  }
  const how = signal ? `signal ${signal}` : `code ${code}`
  if (!p.ready) {
    p.log(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how} before the cluster was ready; stopping`)
    stopAll(p, code || 1)
    return
  }
  const now = Date.now()
  while (p.restarts.length && p.restarts[0] < now - RESTART_WINDOW_MS) p.restarts.shift()
  if (p.restarts.length >= maxRestartsPerMinute(p.n)) {
    p.log(`worker ${worker.id} exited with ${how}; ${p.restarts.length} restarts in the last minute, not restarting (crash loop)`)
    if (!alive().length) process.exit(1)
    return
  }
  p.restarts.push(now)
  p.log(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how}; restarting`)
  cluster.fork()
}

function runPrimary () {
  const n = workersOrExit(process.env, 'cluster')
  /** @type {Primary} */
  const p = {
    n,
    log: (line) => console.log(`nodescale cluster (pid ${process.pid}): ${line}`),
    readyIds: new Set(),
    ready: false,
    stopping: false,
    exitCode: 0,
    restarts: []
  }
  // Workers run serve.js itself (the same server as the single shape, with its own signal handling and teardown), or
  // the user's server as its own entry file would start it, the hook preloaded.
  const server = serverFromEnv(process.env, dirname(fileURLToPath(import.meta.url)))
  cluster.setupPrimary({ exec: server.script, args: server.args, execArgv: [...process.execArgv, ...server.execArgv] })
  // The launcher's temp folder goes with the last process of the shape (the launcher may be gone already).
  process.on('exit', () => {
    if (process.env.NODESCALE_TMPDIR_REMOVE === '1' && process.env.NODESCALE_TMPDIR) rmSync(process.env.NODESCALE_TMPDIR, { recursive: true, force: true })
  })
  cluster.on('listening', (worker, address) => listened(p, worker, address))
  cluster.on('exit', (worker, code, signal) => exited(p, worker, code, signal))
  process.on('SIGTERM', () => stopAll(p, 0))
  process.on('SIGINT', () => stopAll(p, 0))
  if (process.send) process.on('disconnect', () => stopAll(p, 0))

  // the primary's own CPU and loop: what the cluster module costs besides its workers
  if (telemetryOn(process.env)) startTelemetry({ id: `${process.env.NODESCALE_INSTANCE ? process.env.NODESCALE_INSTANCE + '-' : ''}primary`, role: 'primary' })
  for (let i = 0; i < n; i++) cluster.fork()
}

if (cluster.isPrimary) runPrimary()
