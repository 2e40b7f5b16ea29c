// How the `executor`, `analyzer` and `nodescale` bins run a command: the executor's with its watchdog, its signal
// handling and its exit bounds; the analyzer's as it is. Each bin is these functions and nothing else, so `nodescale
// run` is `executor run` and `nodescale fit` is `analyzer fit`.
import { startRunWatchdog } from '../executor/run-watchdog.js'

/**
 * How long the cleanup after Ctrl-C, SIGTERM or SIGHUP may take (a Swarm stack's removal takes a few seconds) before
 * the process exits anyway.
 */
const CLEANUP_BOUND_MS = 15_000
/** After the command has returned, how long anything it left on the event loop may keep the process alive. */
const EXIT_GRACE_MS = 2000
/** The commands that start processes of their own: a watchdog stops them if this process is killed (finding 6). */
const STARTS_PROCESSES = new Set(['run', 'sweep', 'capacity', 'calibrate'])

/**
 * Runs an executor command as the process's job: Ctrl-C, SIGTERM or SIGHUP aborts it (the run tears down and says so),
 * and the process exits 15 s after the first signal whatever the command was waiting on, at once on a second one.
 * @param {string[]} argv the command and its arguments
 */
export async function runExecutor (argv) {
  const { main } = await import('../executor/cli.js')
  const watchdog = STARTS_PROCESSES.has(argv[0]) && !argv.includes('--help') && !argv.includes('-h') ? startRunWatchdog() : null

  const controller = new AbortController()
  let signals = 0
  // SIGHUP: the terminal or SSH session closed; the run is cleaned up as for SIGTERM
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      signals++
      // with the terminal gone, writes to it fail: they must not end the cleanup
      if (sig === 'SIGHUP') for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {})
      if (signals === 1) {
        process.stderr.write(`\n${sig}: stopping the load and cleaning up (again to force exit)\n`)
        controller.abort(new Error(`interrupted by ${sig}`))
        // whatever the command was waiting for, the process ends: a wait that ignores the signal cannot hold it
        setTimeout(() => {
          process.stderr.write(`${sig}: the cleanup did not finish within ${CLEANUP_BOUND_MS / 1000} s; ` +
            'exiting (executor down removes what a run left on Swarm)\n')
          watchdog?.reap()
          process.exit(130)
        }, CLEANUP_BOUND_MS).unref()
      } else {
        process.stderr.write(`${sig}: exiting now; the watchdog stops the processes of the run\n`)
        watchdog?.reap()
        process.exit(130)
      }
    })
  }

  const code = await main(argv, { signal: controller.signal })
  // the command cleaned up after itself: the watchdog has nothing to do (and is gone before this process is)
  await watchdog?.release()
  process.exitCode = code
  // the command is done and its output written: a handle it left behind (a stuck file system call) must not keep it
  // running
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref()
}

/**
 * Runs an analyzer command: its exit code is the process's.
 * @param {string[]} argv the command and its arguments
 */
export async function runAnalyzer (argv) {
  const { main } = await import('../analyzer/cli.js')
  process.exitCode = await main(argv)
}
