#!/usr/bin/env node
// npm run perf:analyzer: `analyzer summary` vs `jmeter -g` on the same ~1,000,000-row JTL from a real JMeter run, plain
// and gzipped, and what each --samples format costs the writer (CPU per 1M rows, bytes per request).
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { ensureJmeter } from '../executor/jmeter-install.js'
import { ROOT } from '../lib/paths.js'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { startVariedServer, writePlan, runJmeterPlan, jmeterDashboard, measure, compareWithStatistics } from '../analyzer/samples/jmeter-crosscheck.js'
import { createJtlWriter, GZIP_LEVEL } from '../executor/jtl-writer.js'

const OPTIONS = [
  option({ flag: 'rows', type: 'whole', min: 1000, max: 1e9, default: 1000000 }),
  option({ flag: 'seconds', type: 'number', min: 0, above: true, max: 3600, default: 15 }),
  option({ flag: 'threads', type: 'whole', min: 1, max: 1000, default: 8 }),
  option({ flag: 'fresh', type: 'boolean', default: false }),
  option({ flag: 'help', short: 'h', type: 'boolean' })
]
const values = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
if (values.help) {
  console.log(`Usage: npm run perf:analyzer -- [--rows N] [--seconds S] [--threads T] [--fresh]

Records a real JMeter run (T threads, S seconds) against a loopback server with varied latency and
some errors, repeats its rows with shifted timestamps up to N rows (cached under .cache/), then
times 'java -jar ApacheJMeter.jar -g' and 'analyzer summary' on that file, compares their figures,
and prints the speed and memory ratios with a pass/fail per check. Then writes the same rows through
the run's JTL writer in each --samples format (and gzip levels 1, 2, 3, 6): CPU ms per 1M rows and bytes
per request, and times 'analyzer summary' on the .jtl.gz against the plain file and jmeter -g.`)
  process.exit(0)
}
const rows = values.rows

const cache = join(ROOT, '.cache', 'analyzer-bench')
mkdirSync(cache, { recursive: true })
const log = line => console.error(`[bench] ${line}`)
const { jar } = await ensureJmeter({ log })

/** The real recording: JMeter against the varied server, kept between runs. */
async function record () {
  const jtl = join(cache, 'recorded.jtl')
  if (existsSync(jtl) && !values.fresh) return jtl
  const server = await startVariedServer()
  try {
    log(`recording: JMeter, ${values.threads} threads for ${values.seconds} s against 127.0.0.1:${server.port}`)
    await runJmeterPlan(jar, {
      jmx: writePlan(cache, { port: server.port, threads: values.threads, seconds: values.seconds }),
      jtl: `${jtl}.tmp`,
      log: join(cache, 'record.log'),
      timeoutMs: (values.seconds + 120) * 1000
    })
  } finally {
    await server.close()
  }
  renameSync(`${jtl}.tmp`, jtl)
  return jtl
}

/**
 * Repeats the recorded rows, each copy shifted by the recording's span, until `rows` rows are written. The
 * recorded messages hold no line breaks, so rows are lines here.
 */
async function expand (recorded) {
  const file = join(cache, `jmeter-${rows}.jtl`)
  const meta = join(cache, `jmeter-${rows}.json`)
  if (existsSync(file) && existsSync(meta) && !values.fresh) return { file, ...JSON.parse(readFileSync(meta, 'utf8')) }
  const lines = readFileSync(recorded, 'utf8').split('\n').filter(Boolean)
  const header = lines.shift()
  const parsed = lines.map(l => {
    const c = l.indexOf(',')
    const c2 = l.indexOf(',', c + 1)
    return { ts: Number(l.slice(0, c)), elapsed: Number(l.slice(c + 1, c2)), rest: l.slice(c) }
  })
  const first = Math.min(...parsed.map(r => r.ts))
  const span = Math.max(...parsed.map(r => r.ts + r.elapsed)) - first
  const out = createWriteStream(`${file}.tmp`)
  out.write(header + '\n')
  let written = 0
  let copy = 0
  while (written < rows) {
    let chunk = ''
    for (const r of parsed) {
      if (written >= rows) break
      chunk += (r.ts + copy * span) + r.rest + '\n'
      written++
    }
    if (!out.write(chunk)) await once(out, 'drain')
    copy++
  }
  out.end()
  await once(out, 'finish')
  renameSync(`${file}.tmp`, file)
  const info = { recordedRows: parsed.length, copies: copy, rows: written }
  writeFileSync(meta, JSON.stringify(info))
  return { file, ...info }
}

const recorded = await record()
const data = await expand(recorded)
const mb = (statSync(data.file).size / 1e6).toFixed(1)
console.log(`JTL: ${data.file}`)
console.log(`  ${data.rows.toLocaleString('en')} rows, ${mb} MB: ${data.recordedRows.toLocaleString('en')} rows recorded by JMeter 5.6.3 ` +
  `(${values.threads} threads, ${values.seconds} s, loopback server with 1..40 ms latencies and 1/8 errors on one route),` +
  ` repeated ${data.copies}x with timestamps shifted by the recording's span`)

log('jmeter -g (default settings) ...')
const jm = await jmeterDashboard(jar, data.file, join(cache, 'dashboard'), { timeoutMs: 900000 })
log('jmeter -g with jmeter.reportgenerator.statistic_window=-1 (exact percentiles) ...')
const jmExact = await jmeterDashboard(jar, data.file, join(cache, 'dashboard-exact'),
  { props: { 'jmeter.reportgenerator.statistic_window': -1 }, timeoutMs: 900000 })
/** `analyzer summary FILE --json` three times: every run, the median one, the largest peak memory. */
async function timeAnalyzer (file, what) {
  const runs = []
  for (let i = 0; i < 3; i++) {
    log(`analyzer summary (${what}), run ${i + 1} of 3 ...`)
    const r = await measure(process.execPath, [join(ROOT, 'bin', 'analyzer.js'), 'summary', file, '--json'])
    if (r.code !== 0) { console.error(r.stderr); process.exit(1) }
    runs.push({ ...r, summary: JSON.parse(r.stdout) })
  }
  return { runs, median: [...runs].sort((a, b) => a.wallMs - b.wallMs)[1], peak: Math.max(...runs.map(r => r.peakRssKb)) }
}

/**
 * Every row of the file through the run's JTL writer, as a driver writes them (writeLine), in one format: the
 * process's CPU (the thread pool's compression included) and wall time, the file's size. The read-and-split cost is
 * the `bare` case's (no file, no histogram), to subtract.
 * @param {string} text
 * @param {{ format: string, level?: number, histogram: boolean }} c
 */
async function timeWriter (text, { format, level, histogram }) {
  const out = join(cache, `writer.${format === 'gz' ? 'jtl.gz' : 'jtl'}`)
  rmSync(out, { force: true })
  const hist = histogram ? join(cache, 'writer-latency.json') : undefined
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const w = createJtlWriter(format === 'none' ? null : out, { format, level, histogramPath: hist })
  let at = text.indexOf('\n') + 1
  for (let nl = text.indexOf('\n', at); nl !== -1; at = nl + 1, nl = text.indexOf('\n', at)) w.writeLine(text.slice(at, nl + 1))
  await w.close()
  const cpu = process.cpuUsage(cpu0)
  return { rows: w.rows, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, bytes: format === 'none' ? 0 : statSync(out).size, out }
}

const { runs, median: ours, peak } = await timeAnalyzer(data.file, 'plain')
rmSync(join(cache, 'dashboard'), { recursive: true, force: true })
rmSync(join(cache, 'dashboard-exact'), { recursive: true, force: true })

const speed = jm.wallMs / ours.wallMs
const memory = jm.peakRssKb / peak
const s = ours.summary.total
const fmt = (v, d = 3) => (typeof v === 'number' ? Number(v.toFixed(d)).toString() : String(v))
console.log('')
console.log('tool                                       wall s   peak RSS MB   rows/s')
console.log(`jmeter -g (default)                        ${(jm.wallMs / 1000).toFixed(2).padStart(6)}   ` +
  `${(jm.peakRssKb / 1024).toFixed(0).padStart(11)}   ${Math.round(data.rows / jm.wallMs * 1000).toLocaleString('en').padStart(9)}`)
console.log(`jmeter -g (statistic_window=-1, exact)     ${(jmExact.wallMs / 1000).toFixed(2).padStart(6)}   ` +
  `${(jmExact.peakRssKb / 1024).toFixed(0).padStart(11)}   ${Math.round(data.rows / jmExact.wallMs * 1000).toLocaleString('en').padStart(9)}`)
console.log(`analyzer summary (median of 3)             ${(ours.wallMs / 1000).toFixed(2).padStart(6)}   ` +
  `${(peak / 1024).toFixed(0).padStart(11)}   ${Math.round(data.rows / ours.wallMs * 1000).toLocaleString('en').padStart(9)}`)
console.log(`  analyzer runs: ${runs.map(r => (r.wallMs / 1000).toFixed(2)).join(' s, ')} s (whole process: node start, read, parse, JSON out)`)
console.log('')

const checks = []
const check = (name, ok, detail) => checks.push({ name, ok, detail })
check('speed >= 10x jmeter -g', speed >= 10, `${speed.toFixed(1)}x`)
check('peak memory <= 1/4 of jmeter -g', memory >= 4, `${memory.toFixed(1)}x less (${(peak / 1024).toFixed(0)} MB vs ${(jm.peakRssKb / 1024).toFixed(0)} MB)`)
for (const c of compareWithStatistics(s, jm.statistics.Total)) {
  if (['count', 'errors', 'mean', 'min', 'max', 'throughput'].includes(c.name)) {
    check(`${c.name} (${c.rule}) vs jmeter -g`, c.ok, `${fmt(c.ours, 6)} vs ${fmt(c.jmeter, 6)}`)
  }
}
for (const c of compareWithStatistics(s, jmExact.statistics.Total)) {
  if (c.name.startsWith('p')) check(`${c.name} (${c.rule}) vs jmeter -g exact`, c.ok, `${fmt(c.ours)} vs ${fmt(c.jmeter)} ms`)
}
for (const [label, sum] of Object.entries(ours.summary.labels)) {
  const bad = compareWithStatistics(sum, jmExact.statistics[label] ?? {}).filter(c => !c.ok)
  check(`label "${label}": every figure vs jmeter -g exact`, bad.length === 0,
    bad.length ? bad.map(c => `${c.name} ${fmt(c.ours)} vs ${fmt(c.jmeter)}`).join('; ') : 'all agree')
}
const width = Math.max(...checks.map(c => c.name.length))
for (const c of checks) console.log(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name.padEnd(width)}  ${c.detail}`)
const windowed = compareWithStatistics(s, jm.statistics.Total).filter(c => c.name.startsWith('p'))
console.log('\nnote: JMeter\'s default dashboard takes percentiles over the last 20,000 samples only (jmeter.reportgenerator.statistic_window);' +
  ` against those: ${windowed.map(c => `${c.name} ${fmt(c.ours)} vs ${fmt(c.jmeter)}`).join(', ')}. ` +
  `The analyzer's are exact over all ${data.rows.toLocaleString('en')} samples,` +
  ' hence the exact-window JMeter run for the percentile checks.')

// --samples: what each format costs the writer and the disk, and what reading the gzip costs the analyzer
log('the JTL writer on every row, in each format ...')
const text = readFileSync(data.file, 'latin1')
const cases = [
  { name: 'bare (read and split only)', format: 'none', level: undefined, histogram: false },
  { name: 'none (latency.json only)', format: 'none', level: undefined, histogram: true },
  { name: 'jtl + latency.json', format: 'jtl', level: undefined, histogram: true },
  ...[1, 2, 3, 6].map(level => ({ name: `gz level ${level} + latency.json${level === GZIP_LEVEL ? ' (used)' : ''}`, format: 'gz', level, histogram: true }))
]
const written = []
for (const c of cases) {
  const best = []
  for (let i = 0; i < 3; i++) best.push(await timeWriter(text, c))
  written.push({ ...c, ...best.sort((a, b) => a.cpuMs - b.cpuMs)[1] })
}
const bare = written[0]
const per1M = (ms, n) => ms / n * 1e6
console.log('\nthe writer (median of 3 by CPU; CPU is the whole process: the loop, the scanner, the thread pool\'s gzip)')
console.log('format                               CPU ms/1M rows  over bare  wall s   bytes/request')
for (const w of written) {
  console.log(`${w.name.padEnd(36)} ${per1M(w.cpuMs, w.rows).toFixed(0).padStart(14)} ` +
    `${w === bare ? '        -' : `${('+' + per1M(w.cpuMs - bare.cpuMs, w.rows).toFixed(0)).padStart(9)}`}  ` +
    `${(w.wallMs / 1000).toFixed(2).padStart(6)}   ${(w.bytes / w.rows).toFixed(1).padStart(13)}`)
}
const plainW = written.find(w => w.format === 'jtl')
const gzW = written.find(w => w.format === 'gz' && w.level === GZIP_LEVEL)
// the file as the writer left it at the level used, for the analyzer
const gzFile = (await timeWriter(text, { format: 'gz', level: GZIP_LEVEL, histogram: false })).out
const gzRead = await timeAnalyzer(gzFile, 'gz')
const same = JSON.stringify(gzRead.median.summary.total) === JSON.stringify(ours.summary.total)
const plainBytes = statSync(data.file).size
const gzBytes = statSync(gzFile).size
console.log('\nreading it back')
console.log('input                                      wall s   peak RSS MB   rows/s')
const line = (name, r, pk) => console.log(`${name.padEnd(42)} ${(r.wallMs / 1000).toFixed(2).padStart(6)}   ${(pk / 1024).toFixed(0).padStart(11)}   ` +
  `${Math.round(data.rows / r.wallMs * 1000).toLocaleString('en').padStart(9)}`)
line('jmeter -g on the plain JTL (default)', jm, jm.peakRssKb)
line('analyzer summary on the plain JTL', ours, peak)
line('analyzer summary on the .jtl.gz', gzRead.median, gzRead.peak)
console.log(`  sizes: plain ${(plainBytes / 1e6).toFixed(1)} MB (${(plainBytes / data.rows).toFixed(1)} bytes/request), gz level ${GZIP_LEVEL} ` +
  `${(gzBytes / 1e6).toFixed(1)} MB (${(gzBytes / data.rows).toFixed(1)} bytes/request): ${(plainBytes / gzBytes).toFixed(1)}x smaller`)
console.log(`  the writer: gz costs ${per1M(gzW.cpuMs - plainW.cpuMs, gzW.rows).toFixed(0)} CPU ms per 1M rows more than jtl ` +
  `(${(gzW.cpuMs / plainW.cpuMs).toFixed(2)}x the jtl writer's CPU)`)
check('analyzer on .jtl.gz >= 10x jmeter -g on the plain JTL', jm.wallMs / gzRead.median.wallMs >= 10, `${(jm.wallMs / gzRead.median.wallMs).toFixed(1)}x`)
check('analyzer on .jtl.gz: the same summary as on the plain JTL', same, same ? 'identical' : 'differs')
console.log(`  analyzer on .jtl.gz vs plain: ${(gzRead.median.wallMs / ours.wallMs).toFixed(2)}x the plain file's time`)
for (const c of checks.slice(-2)) console.log(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}  ${c.detail}`)
rmSync(gzFile, { force: true })
rmSync(plainW.out, { force: true })

const failed = checks.filter(c => !c.ok).length
console.log(failed ? `\n${failed} check(s) FAILED` : '\nall checks passed')
process.exitCode = failed ? 1 : 0
