// Starts the server under test as one process, a cluster or PM2, waits until every instance answers, and stops it
// without leftovers.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadBenchmark } from '../benchmarks/index.js'
import { internalError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { parseTelemetry } from '../lib/telemetry.js'
import { freePort, is2xx, waitForInstances } from '../lib/net.js'
import { processTree, isAlive, listeningPorts } from './proc-tree.js'
import { buildCommand, validateAffinity, SHAPES } from './launch-command.js'
import { START_FAILURE } from './launcher-watch.js'

const KILL_AFTER_MS = 5000
const GONE_WAIT_MS = 5000
const DRAIN_WAIT_MS = 1000
/**
 * How long a process that said it cannot start is left to exit by itself before it is stopped: it says so from its
 * exit handler, and Node prints the error that ended it after that; a SIGTERM sent at once (CI, cm: the primary then
 * stopped the workers) cut the error out of the output the launcher reports.
 */
const SELF_EXIT_WAIT_MS = 500
const OUTPUT_TAIL_LINES = 40
// a day of one line a second for a few dozen processes; the oldest go first
const TELEMETRY_RECORDS = 2_000_000

/**
 * Keeps the last lines of a process's output, hands each line to log, and notes a start failure; the instances'
 * telemetry lines (lib/telemetry.js) are kept apart as records, not logged.
 */
function outputTail (log) {
  const lines = []
  const partial = { stdout: '', stderr: '' }
  const state = { startFailure: null }
  /** @type {import('../lib/telemetry.js').TelemetryRecord[]} */
  const telemetry = []
  const push = (line) => {
    const record = parseTelemetry(line)
    if (record) {
      telemetry.push(record)
      if (telemetry.length > TELEMETRY_RECORDS) telemetry.splice(0, TELEMETRY_RECORDS / 10)
      return
    }
    if (!state.startFailure && line.includes(START_FAILURE)) state.startFailure = line.slice(line.indexOf(START_FAILURE) + START_FAILURE.length).trim()
    lines.push(line)
    if (lines.length > OUTPUT_TAIL_LINES) lines.shift()
    log?.(line)
  }
  return {
    state,
    telemetry,
    feed (stream, chunk) {
      const parts = (partial[stream] + chunk).split('\n')
      partial[stream] = parts.pop()
      parts.forEach(push)
    },
    text: () => [...lines, partial.stdout, partial.stderr].filter(Boolean).join('\n')
  }
}

/** @param {import('node:stream').Readable} stream resolves when it has no more to read */
const drained = (stream) => stream.readableEnded || stream.destroyed ? Promise.resolve() : new Promise(resolve => stream.once('close', resolve))

/** What a server that never answered was told and what it did: the port it was given, the ports it listens on. */
function portsSaid (port, pids) {
  const open = listeningPorts(pids)
  const told = `it was told to listen on port ${port} (PORT, and {port} in --server-arg)`
  if (!open.length) return `${told} and listens on no TCP port`
  return open.includes(port) ? `${told} and listens on it` : `${told} but listens on ${open.join(', ')}`
}

/** A status that a server's health path will keep answering: the path is wrong, waiting will not help. */
const settled = (status) => status >= 400 && status < 500 && ![408, 425, 429].includes(status)

/**
 * Starts the server under test in a local shape and resolves once every instance answers /healthz (our server) or the
 * health path with a 2xx (the user's own: `server`, run from its folder `server.cwd`).
 * @param {{ shape: 'single'|'cluster'|'pm2', instances: number, port?: number, host?: string,
 *   benchmark?: string, app?: string, params?: Record<string,string>, affinity?: number[],
 *   server?: { entry: string, args?: readonly string[], health: string, cwd: string },
 *   wrap?: (cmd: string, args: string[]) => { cmd: string, args: string[] },
 *   env?: object, log?: (line: string) => void, readyTimeoutMs?: number, instanceIdPrefix?: string, cwd?: string,
 *   signal?: AbortSignal }} opts an abort while it waits for the server stops what was started and rejects
 * @returns {Promise<{ url: string, port: number, rootPid: number, shape: string, instances: number, instanceIds:
 *   string[], tmpDir: string, pids(): number[], output(): string, telemetry(window?: { from?: number, to?: number }):
 *   import('../lib/telemetry.js').TelemetryRecord[],
 *   stop(): Promise<void>, exited: Promise<{ code: number|null, signal: string|null }> }>}
 */
export async function launch (opts) {
  const { shape, host = '127.0.0.1', readyTimeoutMs = 20000, log } = opts
  const instances = checkedInstances(shape, opts.instances)
  const { what, port, tmpDir, cmd, args, env } = await prepareCommand(opts, { shape, instances, host })
  log?.(`launch ${shape} x${instances}: ${[cmd, ...args].join(' ')}`)
  const proc = spawnServer(cmd, args, { env, cwd: opts.server?.cwd ?? opts.cwd ?? process.cwd(), log })
  const stop = stopper(proc, tmpDir, log)
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`
  const seen = await waitReady(proc, stop, { url, port, shape, instances, what, server: opts.server, readyTimeoutMs, signal: opts.signal })
  log?.(`ready: ${shape} x${instances} at ${url} (${seen.join(', ')})`)
  return {
    url,
    port,
    rootPid: proc.rootPid,
    shape,
    instances,
    instanceIds: seen,
    tmpDir,
    pids: proc.pids,
    output: proc.tail.text,
    telemetry: ({ from = -Infinity, to = Infinity } = {}) => proc.tail.telemetry.filter(r => r.t >= from && r.t <= to),
    stop,
    exited: proc.exited
  }
}

/**
 * The instances of a shape, 1 when not given: the caller (the local backend) worked these out from a validated
 * config, so anything else is a bug there.
 * @param {string} shape @param {number|undefined} n
 */
function checkedInstances (shape, n) {
  if (!SHAPES.includes(shape)) throw internalError(`shape "${shape}" is not one of ${SHAPES.join(', ')}`)
  const instances = n ?? 1
  if (!Number.isInteger(instances) || instances < 1) throw internalError(`instances ${instances} is not a whole number >= 1`)
  if (shape === 'single' && instances !== 1) {
    throw internalError(`the single shape runs 1 instance (got ${instances}); several are a cluster, PM2, or several launches`)
  }
  return instances
}

/**
 * Everything that can be checked, checked before a process starts (the affinity; our benchmark, loaded, and its
 * params), then the port, the launch's temp folder (removed again when the command cannot be built) and the command.
 * `what` names the server in messages: the user's entry file, or our benchmark.
 * @param {Parameters<typeof launch>[0]} opts @param {{ shape: string, instances: number, host: string }} shape
 */
async function prepareCommand (opts, { shape, instances, host }) {
  const affinity = validateAffinity(opts.affinity)
  const { server } = opts
  const bench = server ? null : await loadBenchmark({ benchmark: opts.benchmark, app: opts.app, cwd: opts.cwd })
  bench?.options(opts.params ?? {})
  const what = server ? basename(server.entry) : bench?.name
  const port = opts.port || await freePort(host === '0.0.0.0' ? '127.0.0.1' : host)
  const tmpDir = await mkdtemp(join(tmpdir(), `nodescale-${shape}-`))
  let built
  try {
    built = buildCommand({ ...opts, shape, instances, host, port, affinity, tmpDir })
  } catch (err) {
    await rm(tmpDir, { recursive: true, force: true })
    throw err
  }
  const { cmd, args, env } = built
  return { what, port, tmpDir, cmd, args, env }
}

/**
 * Starts the command in its own process group (stop() can reach every descendant, and a Ctrl-C on the terminal is the
 * caller's to handle), its output kept by outputTail. exitInfo() is how it ended (null while it runs; error: it could
 * not start), exited resolves to it; pids() is its process tree now, each pid also added to known.
 * @param {string} cmd @param {string[]} args @param {{ env: object, cwd: string, log?: (line: string) => void }} o
 */
function spawnServer (cmd, args, { env, cwd, log }) {
  const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  const tail = outputTail(log)
  child.stdout.setEncoding('utf8').on('data', d => tail.feed('stdout', d))
  child.stderr.setEncoding('utf8').on('data', d => tail.feed('stderr', d))
  child.on('message', () => {}) // readiness is checked over HTTP; IPC is kept so the server dies with its launcher
  /** @type {{ code: number|null, signal: string|null, error?: Error } | null} */
  let exitInfo = null
  /** @type {Promise<{ code: number|null, signal: string|null, error?: Error }>} */
  const exited = new Promise(resolve => {
    child.on('error', err => { tail.feed('stderr', `${err.message}\n`); exitInfo = { code: null, signal: null, error: err }; resolve(exitInfo) })
    child.on('exit', (code, signal) => { exitInfo = { code, signal }; resolve(exitInfo) })
  })
  const rootPid = child.pid
  const known = new Set(rootPid ? [rootPid] : [])
  const pids = () => {
    if (!rootPid) return []
    const now = processTree(rootPid, { pgid: rootPid })
    now.forEach(p => known.add(p))
    return now
  }
  return { child, tail, exited, exitInfo: () => exitInfo, rootPid, known, pids }
}

/**
 * stop() of a started server, once however often it is called: its processes ended (endProcesses), what they wrote
 * read to its end (a server that throws at start prints its error after its exit handlers ran) unless a process
 * outside the group holds the pipes open, the pipes closed and the temp folder removed.
 * @param {ReturnType<typeof spawnServer>} proc @param {string} tmpDir @param {(line: string) => void} [log]
 * @returns {() => Promise<void>}
 */
function stopper (proc, tmpDir, log) {
  const { child } = proc
  let stopping = null
  return () => {
    stopping ??= (async () => {
      await endProcesses(proc, log)
      // the timer does not keep the caller's process alive once it is done
      await Promise.race([Promise.all([child.stdout, child.stderr].map(drained)), sleep(DRAIN_WAIT_MS, undefined, { ref: false })])
      child.stdout.destroy()
      child.stderr.destroy()
      if (child.connected) child.disconnect()
      await rm(tmpDir, { recursive: true, force: true }).catch(() => {})
    })()
    return stopping
  }
}

/**
 * Ends every process of the server: the root first (the cluster primary and pm2-runtime stop their own workers without
 * restarting them), SIGTERM to the group and every pid seen once it exited or after a second, SIGKILL after
 * KILL_AFTER_MS; after GONE_WAIT_MS more, those still alive are logged and left.
 * @param {ReturnType<typeof spawnServer>} proc @param {(line: string) => void} [log]
 */
async function endProcesses ({ rootPid, known, pids, exitInfo }, log) {
  pids()
  const signalAll = (sig) => {
    try { process.kill(-rootPid, sig) } catch {}
    for (const p of known) { try { process.kill(p, sig) } catch {} }
  }
  if (rootPid !== undefined && !exitInfo()) { try { process.kill(rootPid, 'SIGTERM') } catch {} }
  const start = Date.now()
  let termAll = false
  let killed = false
  for (;;) {
    if (rootPid === undefined) break
    pids()
    const alive = [...known].filter(isAlive)
    if (!alive.length && exitInfo()) break
    const waited = Date.now() - start
    if (!termAll && (exitInfo() || waited > 1000)) { termAll = true; signalAll('SIGTERM') }
    if (!killed && waited > KILL_AFTER_MS) { killed = true; signalAll('SIGKILL') }
    if (waited > KILL_AFTER_MS + GONE_WAIT_MS) {
      log?.(`stop: pids still alive after SIGKILL: ${alive.join(', ')}`)
      break
    }
    await sleep(50)
  }
}

/** Thrown by the readiness check when the process says why it cannot serve: no point in waiting any longer. */
class Gone extends Error {}

/**
 * Waits until every instance answers the health path (ours /healthz; a user's server's with a 2xx) and resolves to
 * their ids. Else the server is stopped and the launch refused (NS_ERR_SERVER_NOT_SERVING, with the output's tail)
 * saying why: it could not start, exited, answers its health path with a status waiting will not change, or was not
 * ready in time (for a user's server: the port it was told and those it listens on); an abort stops it and rethrows.
 * @param {ReturnType<typeof spawnServer>} proc @param {() => Promise<void>} stop
 * @param {{ url: string, port: number, shape: string, instances: number, what: string, server?: { health: string },
 *   readyTimeoutMs: number, signal?: AbortSignal }} o
 * @returns {Promise<string[]>}
 */
async function waitReady (proc, stop, { url, port, shape, instances, what, server, readyTimeoutMs, signal }) {
  const { tail, exited, exitInfo, pids } = proc
  const notServing = async (why) => {
    await stop()
    return fail('SERVER_NOT_SERVING', { shape, instances, what, why, output: tail.text() })
  }
  const health = `${url}${server ? server.health : '/healthz'}`
  try {
    return await waitForInstances(health, {
      distinct: instances,
      timeoutMs: readyTimeoutMs,
      signal,
      check: () => {
        if (tail.state.startFailure) throw new Gone(`could not start: ${tail.state.startFailure}`)
        const exit = exitInfo()
        if (exit) throw new Gone(`exited before it was ready (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`)
      },
      ...(server && {
        ok: is2xx,
        onAnswer: ({ status }) => {
          if (settled(status)) {
            throw new Gone(`answers its health path ${server.health} with HTTP ${status}: give the path it answers with a 2xx (--health PATH)`)
          }
        }
      })
    })
  } catch (err) {
    if (signal?.aborted) { await stop(); throw err }
    if (err instanceof Gone) {
      if (tail.state.startFailure && !exitInfo()) await Promise.race([exited, sleep(SELF_EXIT_WAIT_MS, undefined, { ref: false })])
      throw await notServing(err.message)
    }
    throw await notServing(`was not ready after ${readyTimeoutMs} ms: ${err.seen?.length ?? 0} of ${instances} instances answered ${health} ` +
      `(last: ${err.last})${server ? `; ${portsSaid(port, pids())}` : ''}`)
  }
}
