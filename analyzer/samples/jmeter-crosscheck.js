// Checks the analyzer against JMeter itself: records a real JTL, builds JMeter's dashboard from it, compares
// statistics.json.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const x = s => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * A loopback server with varied latency and some errors, so a JTL has a real spread: /fast answers at once,
 * /slow after 1..40 ms, /flaky fails 1 in 8 with a status text holding a comma and quotes (quoted in the JTL).
 * Every timer is bounded; close() ends it.
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startVariedServer () {
  let n = 0
  const server = createServer((req, res) => {
    n++
    const path = (req.url ?? '').split('?')[0]
    if (path === '/fast') return res.end('ok')
    if (path === '/slow') { setTimeout(() => res.end('slow'), 1 + (n * 7919) % 40); return }
    if (n % 8 === 0) {
      res.statusCode = 500
      res.statusMessage = 'Simulated, "flaky" failure'
      return res.end('no')
    }
    setTimeout(() => res.end('flaky ok'), (n * 31) % 5)
  })
  server.keepAliveTimeout = 5000
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port
  return { port, close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve(undefined)) }) }
}

function sampler (label, port, path) {
  return `<HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="${x(label)}">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${port}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">${x(path)}</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
          <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
          <stringProp name="HTTPSampler.implementation">HttpClient4</stringProp>
          <stringProp name="HTTPSampler.connect_timeout">5000</stringProp>
          <stringProp name="HTTPSampler.response_timeout">5000</stringProp>
          <elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments"/></elementProp>
        </HTTPSamplerProxy>
        <hashTree/>`
}

/**
 * A JMeter 5.6 plan: `threads` threads for `seconds` s (and at most `loops` loops each), three samplers whose
 * labels include one with a comma, so the JTL has a quoted label.
 * @param {{ port: number, threads: number, seconds: number, loops?: number }} o
 */
export function variedPlan ({ port, threads, seconds, loops = -1 }) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="analyzer cross-check"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="users">
        <intProp name="ThreadGroup.num_threads">${threads}</intProp>
        <intProp name="ThreadGroup.ramp_time">0</intProp>
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController">
          <intProp name="LoopController.loops">${loops}</intProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">${seconds}</stringProp>
        <stringProp name="ThreadGroup.delay">0</stringProp>
      </ThreadGroup>
      <hashTree>
        ${sampler('fast', port, '/fast')}
        ${sampler('slow, with comma', port, '/slow')}
        ${sampler('flaky', port, '/flaky')}
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
}

/** Result-file settings: JMeter 5.6's default CSV columns with a header, whatever jmeter.properties says. */
const CSV_FLAGS = ['-Jjmeter.save.saveservice.output_format=csv', '-Jjmeter.save.saveservice.print_field_names=true', '-Jjmeter.exit.check.pause=0']

/**
 * Runs JMeter non-GUI on a plan (bounded by timeoutMs) and resolves when the JTL is written. Asynchronous, so a
 * server in this process keeps answering.
 * @param {string} jar ApacheJMeter.jar
 * @param {{ jmx: string, jtl: string, log: string, timeoutMs?: number }} o
 */
export async function runJmeterPlan (jar, { jmx, jtl, log, timeoutMs = 120000 }) {
  rmSync(jtl, { force: true })
  const r = await measure('java', ['-Xmx512m', '-jar', jar, '-n', '-t', jmx, '-l', jtl, '-j', log, ...CSV_FLAGS], { timeoutMs })
  if (r.code !== 0 || !existsSync(jtl)) throw new Error(`JMeter failed (${r.code}): ${(r.stderr || r.stdout).slice(-800)}`)
}

/**
 * Runs a command to its end and measures its wall time and peak resident memory (/usr/bin/time when there,
 * otherwise VmHWM polled from /proc every 20 ms).
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ timeoutMs?: number, env?: NodeJS.ProcessEnv }} [opts]
 * @returns {Promise<{ code: number|null, wallMs: number, peakRssKb: number, stdout: string, stderr: string }>}
 */
export function measure (cmd, args, { timeoutMs = 600000, env } = {}) {
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null
  const marker = '__NS_PEAK_KB='
  const argv = timeBin ? [timeBin, '-f', `${marker}%M`, cmd, ...args] : [cmd, ...args]
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(argv[0], argv.slice(1), { env: env ?? process.env })
    let stdout = ''
    let stderr = ''
    let polled = 0
    child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
    const poll = timeBin
      ? null
      : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
          if (m) polled = Math.max(polled, Number(m[1]))
        } catch {}
      }, 20)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', code => {
      const wallMs = performance.now() - t0
      clearTimeout(timer)
      if (poll) clearInterval(poll)
      const m = new RegExp(`${marker}(\\d+)`).exec(stderr)
      resolve({ code, wallMs, peakRssKb: m ? Number(m[1]) : polled, stdout, stderr: stderr.replace(new RegExp(`${marker}\\d+\\n?`), '') })
    })
  })
}

/**
 * Builds JMeter's HTML dashboard (`java -jar <jar> -g jtl -o dir`) and returns its statistics.json with the time
 * and memory it took. `props` become -J flags (e.g. a statistic_window).
 * @param {string} jar
 * @param {string} jtl
 * @param {string} outDir must not exist or be empty
 * @param {{ props?: Record<string, string|number>, timeoutMs?: number }} [opts]
 */
export async function jmeterDashboard (jar, jtl, outDir, { props = {}, timeoutMs } = {}) {
  rmSync(outDir, { recursive: true, force: true })
  const flags = Object.entries(props).map(([k, v]) => `-J${k}=${v}`)
  const r = await measure('java', ['-jar', jar, '-g', jtl, '-o', outDir, '-j', join(outDir + '.log'), ...flags], { timeoutMs })
  const file = join(outDir, 'statistics.json')
  if (r.code !== 0 || !existsSync(file)) throw new Error(`jmeter -g failed (${r.code}): ${(r.stderr + r.stdout).slice(-800)}`)
  return { statistics: JSON.parse(readFileSync(file, 'utf8')), wallMs: r.wallMs, peakRssKb: r.peakRssKb }
}

/**
 * Compares an analyzer Summary with one entry of JMeter's statistics.json by the rules: count, errors,
 * mean, min, max exact (mean to 1e-9 relative: JMeter sums incrementally); p50/p90/p95/p99 within `pctTolMs`;
 * throughput within 0.5%. Returns one check per figure.
 * @param {import('./summary.js').Summary} s
 * @param {any} j a statistics.json entry (sampleCount, errorCount, meanResTime, pct1ResTime, ...)
 * @param {{ pctTolMs?: number }} [opts]
 */
export function compareWithStatistics (s, j, { pctTolMs = 1 } = {}) {
  const checks = []
  const add = (name, ours, theirs, ok, rule) => checks.push({ name, ours, jmeter: theirs, ok, rule })
  add('count', s.requests, j.sampleCount, s.requests === j.sampleCount, 'exact')
  add('errors', s.errors, j.errorCount, s.errors === j.errorCount, 'exact')
  add('mean', s.latency.mean, j.meanResTime, Math.abs(s.latency.mean - j.meanResTime) <= 1e-9 * Math.max(1, j.meanResTime), 'exact (1e-9 rel.)')
  add('min', s.latency.min, j.minResTime, s.latency.min === j.minResTime, 'exact')
  add('max', s.latency.max, j.maxResTime, s.latency.max === j.maxResTime, 'exact')
  add('p50', s.latency.p50, j.medianResTime, Math.abs(s.latency.p50 - j.medianResTime) <= pctTolMs, `within ${pctTolMs} ms`)
  add('p90', s.latency.p90, j.pct1ResTime, Math.abs(s.latency.p90 - j.pct1ResTime) <= pctTolMs, `within ${pctTolMs} ms`)
  add('p95', s.latency.p95, j.pct2ResTime, Math.abs(s.latency.p95 - j.pct2ResTime) <= pctTolMs, `within ${pctTolMs} ms`)
  add('p99', s.latency.p99, j.pct3ResTime, Math.abs(s.latency.p99 - j.pct3ResTime) <= pctTolMs, `within ${pctTolMs} ms`)
  add('throughput', s.throughput, j.throughput, Math.abs(s.throughput - j.throughput) <= 0.005 * j.throughput, 'within 0.5%')
  return checks
}

/** Writes a plan to a file and returns its path (small convenience for tests and the bench). */
export function writePlan (dir, opts) {
  const jmx = join(dir, 'plan.jmx')
  writeFileSync(jmx, variedPlan(opts))
  return jmx
}
