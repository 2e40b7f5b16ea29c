// What a process of the server under test and its launcher tell each other: the line that says it cannot start, and
// its stop when the launcher is gone, however it was started: over IPC (one process), or under PM2 (whose IPC leads to
// pm2-runtime, not to the launcher).
import cluster from 'node:cluster'
import { isPm2 } from './instance-id.js'

/**
 * A process prints this (and why) when it cannot start; the launcher fails at once rather than wait for it (PM2 would
 * restart it for a long while).
 */
export const START_FAILURE = 'nodescale: cannot start:'

/**
 * @param {Record<string, string|undefined>} env
 * @param {() => void} stop what this process does when its launcher is gone (PM2's workers stop pm2-runtime instead)
 */
export function watchLauncher (env, stop) {
  // a cluster worker's IPC is its primary's business
  if (process.send && !cluster.isWorker && !isPm2(env)) process.on('disconnect', stop)
  const launcher = Number(env.NODESCALE_LAUNCHER_PID)
  if (isPm2(env) && launcher > 0) {
    setInterval(() => {
      try {
        process.kill(launcher, 0)
      } catch (err) {
        if (err.code === 'ESRCH') process.kill(process.ppid, 'SIGTERM')
      }
    }, 1000).unref()
  }
}
