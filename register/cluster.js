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

function runPrimary () {
  const n = workersOrExit(process.env, 'cluster')
  const log = (line) => console.log(`nodescale cluster (pid ${process.pid}): ${line}`)
  // Workers run serve.js itself (the same server as the single shape, with its own signal handling and teardown), or
  // the user's server as its own entry file would start it, the hook preloaded.
  const server = serverFromEnv(process.env, dirname(fileURLToPath(import.meta.url)))
  cluster.setupPrimary({ exec: server.script, args: server.args, execArgv: [...process.execArgv, ...server.execArgv] })
  const readyIds = new Set()
  const restarts = []
  let ready = false
  let stopping = false
  let exitCode = 0
  let port
  const alive = () => Object.values(cluster.workers ?? {}).filter(w => !w.isDead())
  // The launcher's temp folder goes with the last process of the shape (the launcher may be gone already).
  process.on('exit', () => {
    if (process.env.NODESCALE_TMPDIR_REMOVE === '1' && process.env.NODESCALE_TMPDIR) rmSync(process.env.NODESCALE_TMPDIR, { recursive: true, force: true })
  })

  const fork = () => cluster.fork()
  // any server that listens (ours or not) is a worker that started
  cluster.on('listening', (worker, address) => {
    port = address.port
    readyIds.add(worker.id)
    if (!ready && readyIds.size >= n) {
      ready = true
      log(`ready: ${n} workers listening on port ${port}`)
      process.send?.({ type: 'nodescale:ready', port, instance: 'primary', workers: n })
    }
  })

  cluster.on('exit', (worker, code, signal) => {
    readyIds.delete(worker.id)
    if (stopping) {
      if (!alive().length) process.exit(exitCode)
      return
    }
    const how = signal ? `signal ${signal}` : `code ${code}`
    if (!ready) {
      // A worker that cannot start will not start on a retry either (bad app, port taken): fail fast and say why.
      log(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how} before the cluster was ready; stopping`)
      stopAll(code || 1)
      return
    }
    const now = Date.now()
    while (restarts.length && restarts[0] < now - RESTART_WINDOW_MS) restarts.shift()
    if (restarts.length >= maxRestartsPerMinute(n)) {
      log(`worker ${worker.id} exited with ${how}; ${restarts.length} restarts in the last minute, not restarting (crash loop)`)
      if (!alive().length) process.exit(1)
      return
    }
    restarts.push(now)
    log(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how}; restarting`)
    fork()
  })

  const stopAll = (code) => {
    if (stopping) return
    stopping = true
    exitCode = code
    const workers = alive()
    if (!workers.length) process.exit(exitCode)
    for (const w of workers) w.process.kill('SIGTERM')
    setTimeout(() => {
      for (const w of alive()) w.process.kill('SIGKILL')
      process.exit(exitCode)
    }, STOP_GRACE_MS).unref()
  }
  process.on('SIGTERM', () => stopAll(0))
  process.on('SIGINT', () => stopAll(0))
  if (process.send) process.on('disconnect', () => stopAll(0))

  // the primary's own CPU and loop: what the cluster module costs besides its workers
  if (telemetryOn(process.env)) startTelemetry({ id: `${process.env.NODESCALE_INSTANCE ? process.env.NODESCALE_INSTANCE + '-' : ''}primary`, role: 'primary' })
  for (let i = 0; i < n; i++) fork()
}

if (cluster.isPrimary) runPrimary()
