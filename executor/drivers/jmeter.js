// The jmeter driver: writes the plan, runs JMeter non-GUI, then streams the steady-window rows of its JTL into the
// run's JTL.
import { spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { createReadStream, openSync, readSync, closeSync, fstatSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parse } from 'csv-parse'
import { ensureJmeter, JMETER_VERSION } from '../jmeter-install.js'
import { createJtlWriter, samplesPathOf, JTL_FIELDS } from '../jtl-writer.js'
import { fail } from '../../lib/messages.js'
import { buildJmx } from './jmeter-plan.js'

/**
 * JVM flags for a load generator on a 2-core, 24 GiB machine: a 1 GiB heap from the start (no growing during the
 * warm-up) up to 2 GiB (non-GUI JMeter streams results, it keeps none in memory), G1 with short pauses so a
 * collection does not show up as latency, and an English locale so the start line parses the same everywhere.
 * NODESCALE_JMETER_JVM_ARGS (space-separated) replaces them.
 */
export const JVM_FLAGS = Object.freeze(['-Xms1g', '-Xmx2g', '-XX:MaxMetaspaceSize=256m', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=100',
  '-XX:G1ReservePercent=20', '-Djava.security.egd=file:/dev/urandom', '-Djava.awt.headless=true', '-Duser.language=en', '-Duser.country=US'])

/** How long after "... end of run" JMeter may exit by itself before it is sent SIGTERM. */
const END_GRACE_MS = 200

/**
 * Result-file properties forced on the command line, so JMeter's columns are exactly JTL_FIELDS whatever its
 * jmeter.properties say.
 */
export const CSV_PROPERTIES = Object.freeze({
  'jmeter.save.saveservice.output_format': 'csv',
  'jmeter.save.saveservice.print_field_names': 'true',
  'jmeter.save.saveservice.default_delimiter': ',',
  'jmeter.save.saveservice.timestamp_format': 'ms',
  'sampleresult.timestamp.start': 'true',
  ...Object.fromEntries(['time', 'label', 'response_code', 'response_message', 'thread_name', 'data_type', 'successful',
    'assertion_results_failure_message', 'bytes', 'sent_bytes', 'thread_counts', 'url', 'latency', 'idle_time', 'connect_time']
    .map(k => [`jmeter.save.saveservice.${k}`, 'true'])),
  ...Object.fromEntries(['subresults', 'response_data', 'samplerData', 'requestHeaders', 'responseHeaders', 'encoding',
    'filename', 'hostname', 'sample_count'].map(k => [`jmeter.save.saveservice.${k}`, 'false'])),
  'jmeter.save.saveservice.assertion_results': 'none',
  sample_variables: '',
  // JMeter otherwise sleeps 2 s at the end looking for stray threads
  'jmeter.exit.check.pause': '0'
})

const NOISE = /StatusConsoleListener|Could not access .*lib\/junit|NewDriver\.<clinit>|java\.util\.prefs|Created user preferences/

/** Error lines of JMeter's log and stderr, for the message of an error we throw. */
function errorLines (logPath, stderr) {
  const fromLog = existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').filter(l => / (ERROR|FATAL) /.test(l)) : []
  const fromErr = stderr.split('\n').filter(l => l.trim() && !NOISE.test(l))
  return [...fromLog, ...fromErr].slice(-6).map(l => l.trim().slice(0, 300))
}

/** Reads rows JMeter appended since the last call: a cheap count for the progress bar, not the final figures. */
function tailCounter (path) {
  let offset = 0
  let rest = ''
  const buf = Buffer.alloc(1 << 20)
  return (/** @type {(ts: number, ok: boolean) => void} */ onRow) => {
    if (!existsSync(path)) return
    const fd = openSync(path, 'r')
    try {
      const size = fstatSync(fd).size
      while (offset < size) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - offset), offset)
        offset += n
        const lines = (rest + buf.toString('utf8', 0, n)).split('\n')
        rest = lines.pop()
        for (const line of lines) {
          const ts = parseInt(line, 10)
          if (Number.isFinite(ts)) onRow(ts, !/,false,/.test(line))
        }
      }
    } finally {
      closeSync(fd)
    }
  }
}

/** Asks JMeter to stop now through its UDP shutdown port (what jmeter's stoptest.sh does). */
function sendStop (port) {
  const sock = createSocket('udp4')
  sock.send('StopTestNow', port, '127.0.0.1', () => sock.close())
}

/**
 * Copies rows with steadyStart <= timeStamp < steadyEnd from JMeter's raw JTL into jtlPath (streamed; or its .gz, or
 * no file, by `samples`), columns in JTL_FIELDS order, and the latency histograms of those rows to `histogramPath`.
 * A torn last row (JMeter killed) is skipped. Generator `group` of several renumbers its thread names (`label 2-7`).
 * @param {string} rawPath
 * @param {string} jtlPath
 * @param {number} steadyStart
 * @param {number} steadyEnd
 * @param {{ samples?: string, histogramPath?: string, group?: number }} out
 */
async function copySteadyRows (rawPath, jtlPath, steadyStart, steadyEnd, { samples, histogramPath, group }) {
  const writer = createJtlWriter(samplesPathOf(jtlPath, samples), { format: samples, histogramPath })
  let requests = 0
  let errors = 0
  let warmupRequests = 0
  let index = null
  let width = 0
  try {
    if (existsSync(rawPath)) {
      const rows = createReadStream(rawPath).pipe(parse({ relax_column_count: true, skip_records_with_error: true }))
      for await (const rec of rows) {
        if (!index) {
          index = JTL_FIELDS.map(f => rec.indexOf(f))
          width = rec.length
          const missing = JTL_FIELDS.filter((f, i) => index[i] < 0)
          if (missing.length) throw fail('JTL_COLUMNS_LACKING', { missing, header: rec })
          continue
        }
        if (rec.length !== width) continue
        const ts = Number(rec[index[0]])
        if (ts < steadyStart) { warmupRequests++; continue }
        if (!(ts < steadyEnd)) continue
        requests++
        if (rec[index[7]] !== 'true') errors++
        const fields = index.map(i => rec[i])
        // JMeter numbers its one thread group 1: generator `group` of a run's several names its threads after itself
        if (group > 1) fields[5] = fields[5].replace(/ 1-(\d+)$/, ` ${group}-$1`)
        writer.writeFields(fields)
      }
    }
  } catch (err) {
    writer.abort()
    throw err
  }
  await writer.close()
  return { requests, errors, warmupRequests, path: writer.path }
}

/**
 * The files of one JMeter run in `dir`, its plan (and body) written: a generator told a shared start starts its
 * threads when its JVM is up, before the shared start if it can (what it sends before then is warm-up, the windows are
 * the shared ones), and stops them at the shared window's end however long the JVM took to start.
 * @param {import('./load-common.js').LoadOptions} o
 * @param {string} dir
 */
function writePlan (o, dir) {
  const files = { plan: join(dir, 'jmeter-plan.jmx'), raw: join(dir, 'jmeter-raw.jtl'), log: join(dir, 'jmeter.log') }
  const bodyPath = o.body ? join(dir, 'jmeter-body.bin') : undefined
  if (bodyPath) writeFileSync(bodyPath, o.body)
  const lead = o.startAt === undefined ? 0 : Math.max(0, Math.ceil((o.startAt - Date.now()) / 1000))
  const endAt = o.startAt === undefined ? undefined : o.startAt + (o.warmup + o.duration) * 1000
  writeFileSync(files.plan, buildJmx({ ...o, warmup: o.warmup + lead, bodyPath, ...(endAt !== undefined && { endAt }) }))
  rmSync(files.raw, { force: true })
  return { files, scheduled: o.warmup + lead + o.duration }
}

/**
 * The command that runs the plan non-GUI: java with JVM_FLAGS (or NODESCALE_JMETER_JVM_ARGS), the CSV properties,
 * under taskset when the generator is pinned.
 * @param {string} jar @param {{ plan: string, raw: string, log: string }} files @param {number[] | undefined} cpus
 */
function jmeterCommand (jar, files, cpus) {
  const props = Object.entries(CSV_PROPERTIES).map(([k, v]) => `-J${k}=${v}`)
  const jvm = process.env.NODESCALE_JMETER_JVM_ARGS?.trim() ? process.env.NODESCALE_JMETER_JVM_ARGS.trim().split(/\s+/) : JVM_FLAGS
  const java = ['java', ...jvm, '-jar', jar, '-n', '-t', files.plan, '-l', files.raw, '-j', files.log, ...props]
  return cpus?.length ? ['taskset', '-c', cpus.join(','), ...java] : java
}

/**
 * Runs JMeter to its end: reads its start time and shutdown port from its output, stops it through that port on the
 * signal, reports progress from its raw JTL once a second, and does not wait for it to idle out once it says
 * "... end of run" (its results file closed; its JVM would idle ~1.3 s more on an engine pool thread that is not a
 * daemon).
 * @param {string[]} cmd
 * @param {import('./load-common.js').LoadOptions} o
 * @param {{ dir: string, rawPath: string, log: (line: string) => void, onSpawn?: (pid: number, engine:
 *   'node'|'java') => void }} env
 * @returns {Promise<{ exit: { code: number | null, signal: string | null, err: Error | null }, t0: number, aborted:
 *   boolean, abortedAt: number, ended: boolean, stderr: string }>} t0: JMeter's start (0: never started)
 */
async function superviseJmeter (cmd, o, { dir, rawPath, log, onSpawn }) {
  const state = { t0: 0, aborted: false, abortedAt: Infinity, ended: false, stderr: '' }
  let port = 0
  let out = ''
  const child = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir })
  // taskset execs java in its own process: the pid is the JVM's
  if (child.pid) onSpawn?.(child.pid, 'java')
  const timers = []
  /** SIGTERM after `term` ms, SIGKILL after `kill` ms, unless it has exited by then */
  const killLater = (term, kill) => { timers.push(setTimeout(() => child.kill('SIGTERM'), term), setTimeout(() => child.kill('SIGKILL'), kill)) }
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out = (out + d).slice(-4096)
    const start = /Starting standalone test @ .*\((\d{12,})\)/.exec(out)
    if (start && !state.t0) state.t0 = Number(start[1])
    const p = /message on port (\d+)/.exec(out)
    if (p && !port) port = Number(p[1])
    if (!state.ended && /\.\.\. end of run/.test(out)) {
      state.ended = true
      killLater(END_GRACE_MS, END_GRACE_MS + 4000)
    }
  })
  child.stderr.setEncoding('utf8').on('data', (d) => { state.stderr = (state.stderr + d).slice(-16384) })

  const onAbort = () => {
    if (state.aborted) return
    state.aborted = true
    state.abortedAt = Date.now()
    log(`jmeter driver: stopping JMeter (${port ? `StopTestNow on udp port ${port}` : 'SIGTERM, its shutdown port is not open yet'})`)
    if (port) sendStop(port)
    else child.kill('SIGTERM')
    killLater(8000, 12000)
  }
  if (o.signal?.aborted) onAbort()
  else o.signal?.addEventListener('abort', onAbort, { once: true })

  const progress = setInterval(progressReporter(o, rawPath, () => state.t0), 1000)
  const exit = await new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: null, signal: null, err }))
    child.on('close', (code, signal) => resolve({ code, signal, err: null }))
  })
  clearInterval(progress)
  for (const t of timers) clearTimeout(t)
  o.signal?.removeEventListener('abort', onAbort)
  return { exit, ...state }
}

/** When the steady window opens: warmup seconds after JMeter's start, or after the shared start of generators. */
const steadyStartOf = (o, t0) => (o.startAt ?? t0) + o.warmup * 1000

/**
 * A once-a-second progress report from the rows JMeter has written so far (warm-up, then steady with its errors).
 * @param {import('./load-common.js').LoadOptions} o @param {string} rawPath @param {() => number} startOf JMeter's t0
 */
function progressReporter (o, rawPath, startOf) {
  const tail = tailCounter(rawPath)
  const counts = { warmup: 0, steady: 0, errors: 0 }
  return () => {
    const t0 = startOf()
    const from = steadyStartOf(o, t0)
    tail((ts, ok) => {
      if (!t0 || ts < from) counts.warmup++
      else if (ts < from + o.duration * 1000) { counts.steady++; if (!ok) counts.errors++ }
    })
    if (!o.onProgress) return
    const now = Date.now()
    if (!t0 || now < from) {
      o.onProgress({ phase: 'warmup', elapsed: t0 ? (now - t0) / 1000 : 0, total: o.warmup, requests: counts.warmup, errors: 0 })
    } else {
      o.onProgress({ phase: 'steady', elapsed: Math.min(o.duration, (now - from) / 1000), total: o.duration, requests: counts.steady, errors: counts.errors })
    }
  }
}

/**
 * @param {import('./load-common.js').LoadOptions} o
 * @param {string} jtlPath
 * @param {{ cpus?: number[], log?: (line: string) => void, onSpawn?: (pid: number, engine: 'node'|'java') => void }}
 *   [env]
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export async function runJmeter (o, jtlPath, { cpus, log = () => {}, onSpawn } = {}) {
  const { jar } = await ensureJmeter({ log })
  const dir = dirname(jtlPath)
  const { files, scheduled } = writePlan(o, dir)
  const cmd = jmeterCommand(jar, files, cpus)
  log(`jmeter driver: ${cmd.slice(0, cmd.indexOf('-jar') + 2).join(' ')} -n -t ${files.plan}`)
  const { exit, aborted, abortedAt, ended, stderr, t0: started } = await superviseJmeter(cmd, o, { dir, rawPath: files.raw, log, onSpawn })
  const why = () => `${errorLines(files.log, stderr).join(' | ') || 'no error in its log'} (log: ${files.log})`
  if (exit.err) {
    throw fail('JAVA_NOT_STARTED', { command: cmd[0], why: exit.err.message })
  }
  if (!aborted && !ended && exit.code !== 0) {
    throw fail('JMETER_EXITED', { code: exit.code, signal: exit.signal, why: why() })
  }
  // JMeter never started its test (killed during start-up, or a bad plan): the window is empty
  const t0 = started || Math.min(abortedAt, Date.now())
  const steadyStart = steadyStartOf(o, t0)
  const steadyEnd = Math.max(steadyStart, Math.min(steadyStart + o.duration * 1000, abortedAt))
  const { path: written, ...copied } = await copySteadyRows(files.raw, jtlPath, steadyStart, steadyEnd, o)
  if (!aborted && copied.requests + copied.warmupRequests === 0) {
    if (o.startAt !== undefined && t0 >= steadyEnd) {
      throw fail('JMETER_STARTED_LATE', {
        late: Math.round((t0 - o.startAt) / 100) / 10, warmup: o.warmup, duration: o.duration, log: files.log
      })
    }
    throw fail('JMETER_RECORDED_NOTHING', { seconds: scheduled, why: why() })
  }
  const problems = errorLines(files.log, '')
  if (problems.length) log(`jmeter driver: JMeter logged errors: ${problems.join(' | ')}`)
  rmSync(files.raw, { force: true })
  return {
    driver: 'jmeter',
    ...copied,
    steadyStart,
    steadyEnd,
    interrupted: aborted,
    jtlPath: written,
    // how late JMeter's threads started after the shared start (negative: before it, in the extra warm-up)
    ...(o.startAt !== undefined ? { startSkewMs: t0 - o.startAt } : {}),
    version: `JMeter ${JMETER_VERSION} (java -jar ${jar})`
  }
}
