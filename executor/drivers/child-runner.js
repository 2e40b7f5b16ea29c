// Runs the autocannon driver in a child Node process (optionally pinned with taskset) and relays progress and abort.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { recoverSamples } from '../jtl-writer.js'
import { fail } from '../../lib/messages.js'

const CHILD = fileURLToPath(new URL('./load-child.js', import.meta.url))
/** How long a child may take to finish its JTL after an abort before it is killed. */
const ABORT_GRACE_MS = 5000

/**
 * @param {import('./load-common.js').LoadOptions} o
 * @param {string} jtlPath
 * @param {{ cpus?: number[], log?: (line: string) => void, onSpawn?: (pid: number, engine: 'node'|'java') => void }}
 *   [env]
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export function runInChild (o, jtlPath, { cpus, log = () => {}, onSpawn } = {}) {
  const { signal, onProgress, ...plain } = o
  const pinned = cpus?.length > 0
  const cmd = pinned ? 'taskset' : process.execPath
  const args = pinned ? ['-c', cpus.join(','), process.execPath, CHILD] : [CHILD]
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' })
    let stderr = ''
    let outcome = null
    let killTimer = null
    let last = { phase: 'warmup', requests: 0, errors: 0 }
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr = (stderr + d).slice(-8192) })
    const onAbort = () => {
      if (child.connected) child.send({ type: 'abort' })
      killTimer = setTimeout(() => child.kill('SIGKILL'), ABORT_GRACE_MS)
    }
    child.on('spawn', () => {
      log(`autocannon driver: child pid ${child.pid}${pinned ? ` pinned to cpus ${cpus.join(',')}` : ''}`)
      // taskset execs node in its own process: the pid is the generator's
      onSpawn?.(child.pid, 'node')
      child.send({ type: 'start', opts: plain, jtlPath, progress: !!onProgress })
      if (signal?.aborted) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
    })
    child.on('message', (/** @type {any} */ m) => {
      if (m.type === 'progress') { last = m.progress; onProgress?.(m.progress) } else outcome = m
    })
    child.on('error', (err) => {
      outcome = { type: 'error', error: { message: `cannot start the load generator (${cmd}): ${err.message}` } }
    })
    child.on('close', async (code, sig) => {
      clearTimeout(killTimer)
      signal?.removeEventListener('abort', onAbort)
      if (outcome?.type === 'done') return resolve(outcome.result)
      // killed or crashed: keep whatever complete rows it wrote (and their histograms)
      const recovered = await recoverSamples(jtlPath, plain).catch(err => { log(`autocannon driver: recovering its samples: ${err.message}`); return null })
      if (signal?.aborted && (recovered || plain.samples === 'none')) {
        // the figures of its last progress report are the best left
        const steady = last.phase === 'steady'
        return resolve({
          driver: 'autocannon',
          requests: steady ? last.requests : 0,
          errors: steady ? last.errors : 0,
          warmupRequests: steady ? 0 : last.requests,
          steadyStart: 0,
          steadyEnd: Date.now(),
          interrupted: true,
          jtlPath: recovered,
          version: 'autocannon (killed after abort)'
        })
      }
      const why = outcome?.error?.message ??
        `the load generator exited (code ${code}, signal ${sig})${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-5).join(' | ')}` : ''}`
      reject(fail('AUTOCANNON_FAILED', { why }, { details: { stderr } }))
    })
  })
}
