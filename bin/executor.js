#!/usr/bin/env node
// `executor`: deploys a server under test, drives load, samples CPU, writes run.json.
import { main } from '../executor/cli.js'

/**
 * How long the cleanup after Ctrl-C or SIGTERM may take (a Swarm stack's removal takes a few seconds) before the
 * process exits anyway.
 */
const CLEANUP_BOUND_MS = 15_000
/** After the command has returned, how long anything it left on the event loop may keep the process alive. */
const EXIT_GRACE_MS = 2000

const controller = new AbortController()
let signals = 0
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signals++
    if (signals === 1) {
      process.stderr.write(`\n${sig}: stopping the load and cleaning up (again to force exit)\n`)
      controller.abort(new Error(`interrupted by ${sig}`))
      // whatever the command was waiting for, the process ends: a wait that ignores the signal cannot hold it
      setTimeout(() => {
        process.stderr.write(`${sig}: the cleanup did not finish within ${CLEANUP_BOUND_MS / 1000} s; exiting (executor down removes what a run left on Swarm)\n`)
        process.exit(130)
      }, CLEANUP_BOUND_MS).unref()
    } else {
      process.stderr.write(`${sig}: exiting now; processes of the run may be left behind\n`)
      process.exit(130)
    }
  })
}

const code = await main(process.argv.slice(2), { signal: controller.signal })
process.exitCode = code
// the command is done and its output written: a handle it left behind (a stuck file system call) must not keep it
// running
setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref()
