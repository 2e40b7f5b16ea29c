#!/usr/bin/env node
// Entry script of the server under test: one instance configured by env (PORT, HOST, NODESCALE_*); also runs in
// containers.
import cluster from 'node:cluster'
import { rmSync } from 'node:fs'
import { formatError, exitCodeOf } from '../lib/errors.js'
import { startServer } from './server.js'
import { isPm2 } from './instance-id.js'
import { START_FAILURE, watchLauncher } from './launcher-watch.js'

/**
 * Runs the server until SIGTERM/SIGINT (or until the parent that started it goes away), then tears down and exits 0.
 */
export async function main (env = process.env) {
  let srv
  try {
    srv = await startServer({ env })
  } catch (err) {
    console.error(`${START_FAILURE} ${formatError(err)}`)
    process.exit(exitCodeOf(err))
  }
  let stopping = false
  const shutdown = async (why) => {
    if (stopping) return
    stopping = true
    try {
      await srv.close()
      // The launcher's temp folder, when this process is the whole shape: it may be gone before it could remove it.
      if (env.NODESCALE_TMPDIR_REMOVE === '1' && env.NODESCALE_TMPDIR && !cluster.isWorker && !isPm2(env)) {
        rmSync(env.NODESCALE_TMPDIR, { recursive: true, force: true })
      }
    } catch (err) {
      console.error(`nodescale: teardown after ${why}: ${err.message}`)
    }
    process.exit(0)
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  watchLauncher(env, () => shutdown('parent exit'))
  process.send?.({ type: 'nodescale:ready', port: srv.port, instance: srv.instance })
  return srv
}

main()
