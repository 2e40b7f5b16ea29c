// --samples jtl | gz | none: the gz writer's members, a killed gz writer's recovery, the reader on plain and gzip alike
// (a cut gzip stream too), latency.json's figures against the JTL's, and runs of each kind end to end.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { createJtlWriter, recoverJtl, recoverSamples } from '../executor/jtl-writer.js'
import { summarize, resolveJtl } from '../analyzer/samples/summary.js'
import { LatencyHistogram } from '../analyzer/samples/latency-histogram.js'
import { countAroundLoss, countAroundLossFromHistogram } from '../executor/degraded.js'
import { runCli, readRun, ROOT } from './helpers/cli.js'

const tmp = (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-samples-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}
const T0 = 1700000000000

/** Varied samples: two labels (one needing quotes), errors, a transaction controller, a multi-line message. */
const sample = (i) => ({
  timeStamp: T0 + Math.floor(i / 7),
  elapsed: (i * 37) % 211,
  label: i % 3 ? 'page' : 'search, "q"',
  responseCode: i % 41 ? 200 : 500,
  responseMessage: i % 97 === 5 ? 'Number of samples in transaction : 2, number of failing samples : 0' : i % 41 ? 'OK' : 'oops\nsecond line',
  threadName: `t 1-${i % 8}`,
  success: i % 41 !== 0,
  failureMessage: i % 41 ? '' : 'a "bad" one, really',
  bytes: 100 + (i % 17),
  sentBytes: 60,
  URL: 'http://127.0.0.1:1/page/'
})

/** Writes n samples in each format (small chunks: many gzip members) and returns the paths. */
async function writeAll (dir, n) {
  const out = {}
  for (const format of ['jtl', 'gz', 'none']) {
    const path = format === 'jtl' ? join(dir, 's.jtl') : format === 'gz' ? join(dir, 's.jtl.gz') : null
    const histogramPath = join(dir, `latency-${format}.json`)
    const w = createJtlWriter(path, { format, histogramPath, chunkBytes: 1 << 15 })
    for (let i = 0; i < n; i++) w.write(sample(i))
    await w.close()
    assert.equal(w.path, path)
    out[format] = { path, histogramPath }
  }
  return out
}

/** A summary without the fields that name its source. */
const figures = ({ file, source, ...rest }) => rest

test('gz writer: concatenated gzip members that gunzip to exactly the plain JTL, and no file at all with none', async (t) => {
  const dir = tmp(t)
  const files = await writeAll(dir, 20000)
  const plain = readFileSync(files.jtl.path)
  const gz = readFileSync(files.gz.path)
  assert.deepEqual(gunzipSync(gz), plain)
  assert.ok(gz.length < plain.length / 4, `gz ${gz.length} bytes vs plain ${plain.length}`)
  // many members: every one starts with the gzip magic and says its length in its header's NS field
  let members = 0
  for (let at = 0; at < gz.length; members++) {
    assert.deepEqual([gz[at], gz[at + 1], gz[at + 12], gz[at + 13]], [0x1f, 0x8b, 0x4e, 0x53], `member at ${at}`)
    at += gz.readUInt32LE(at + 16)
  }
  assert.ok(members > 10, `${members} members`)
  assert.deepEqual(readdirSync(dir).sort(), ['latency-gz.json', 'latency-jtl.json', 'latency-none.json', 's.jtl', 's.jtl.gz'])
})

test('the reader: plain, gz and latency.json give the same summary, per label and in total', async (t) => {
  const dir = tmp(t)
  const files = await writeAll(dir, 30000)
  const steady = { from: T0 + 500, to: T0 + 3500 }
  const plain = await summarize(files.jtl.path, { steady })
  const gz = await summarize(files.gz.path, { steady })
  assert.equal(plain.rows, 30000)
  assert.ok(plain.total.errors > 0 && Object.keys(plain.labels).length === 2, JSON.stringify(plain.labels))
  assert.ok(plain.total.stability.seconds >= 2)
  assert.deepEqual(figures(gz), figures(plain))
  for (const format of ['jtl', 'gz', 'none']) {
    const h = await summarize(files[format].histogramPath, { steady })
    assert.equal(h.source, 'histogram')
    assert.deepEqual(figures(h), figures(plain), `latency.json of the ${format} writer`)
  }
  const one = await summarize(files.none.histogramPath, { label: 'page' })
  assert.deepEqual(one.labels.page, (await summarize(files.jtl.path, { label: 'page' })).labels.page)
  await assert.rejects(summarize(files.none.histogramPath, { window: { from: T0 } }), (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FILE')
})

test('the reader goes by the gzip magic bytes, not the name: JMeter\'s own JTL gzipped, in one member or several', async (t) => {
  const dir = tmp(t)
  const fixture = join(ROOT, 'test', 'fixtures', 'jtl', 'jmeter-5.6.3-varied.jtl')
  const text = readFileSync(fixture)
  writeFileSync(join(dir, 'one.jtl'), gzipSync(text, { level: 9 }))
  const cut = text.indexOf(10, text.length >> 1) + 1
  writeFileSync(join(dir, 'two.data'), Buffer.concat([gzipSync(text.subarray(0, cut)), gzipSync(text.subarray(cut))]))
  const plain = await summarize(fixture)
  assert.ok(plain.rows > 100)
  assert.deepEqual(figures(await summarize(join(dir, 'one.jtl'))), figures(plain))
  assert.deepEqual(figures(await summarize(join(dir, 'two.data'))), figures(plain))
})

test('a cut gzip stream gives its rows up to the cut with a note, never a crash', async (t) => {
  const dir = tmp(t)
  const files = await writeAll(dir, 30000)
  const cut = join(dir, 'cut.jtl.gz')
  copyFileSync(files.gz.path, cut)
  truncateSync(cut, Math.floor(statSync(cut).size * 0.6))
  const s = await summarize(cut)
  assert.ok(s.rows > 5000 && s.rows < 30000, `${s.rows} rows`)
  assert.ok(s.malformed.examples.some(e => /gzip stream ends early/.test(e.reason)), JSON.stringify(s.malformed))
  assert.ok(s.total.requests > 0 && s.total.requests <= s.rows)
  writeFileSync(join(dir, 'junk.jtl.gz'), Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
  const junk = await summarize(join(dir, 'junk.jtl.gz'))
  assert.equal(junk.rows, 0)
  assert.equal(junk.malformed.count, 1)
})

test('abort() finishes a gz file synchronously: every row written, and its latency.json', async (t) => {
  const dir = tmp(t)
  const path = join(dir, 's.jtl.gz')
  const w = createJtlWriter(path, { format: 'gz', histogramPath: join(dir, 'latency.json'), chunkBytes: 1 << 14 })
  for (let i = 0; i < 5000; i++) w.write(sample(i))
  w.abort()
  const lines = gunzipSync(readFileSync(path)).toString('utf8')
  assert.equal((await summarize(path)).rows, 5000)
  assert.ok(lines.endsWith('\n'))
  assert.equal((await summarize(join(dir, 'latency.json'))).rows, 5000)
  assert.equal(existsSync(`${path}.tmp`), false)
})

/** A child that writes samples through a gz writer without end, saying how many once its file has several members. */
const KILLED_WRITER = `
import { createJtlWriter } from ${JSON.stringify(join(ROOT, 'executor', 'jtl-writer.js'))}
import { statSync } from 'node:fs'
const [path, hist] = process.argv.slice(1)
const w = createJtlWriter(path, { format: 'gz', histogramPath: hist, chunkBytes: 1 << 14 })
let i = 0
let said = false
const row = (i) => ({ timeStamp: ${T0} + i, elapsed: i % 50, label: 'page', responseCode: 200, responseMessage: 'OK',
  threadName: 't 1-1', success: true, bytes: 100, sentBytes: 60, URL: 'http://127.0.0.1:1/' })
setInterval(() => {
  for (let k = 0; k < 2000; k++) w.write(row(i++))
  if (!said && statSync(path + '.tmp').size > 200000) { said = true; process.stdout.write('writing\\n') }
}, 1)
`

test('a gz writer killed with SIGKILL mid-write: recovery keeps its whole members, readable, and rebuilds latency.json', async (t) => {
  const dir = tmp(t)
  const path = join(dir, 'samples.jtl.gz')
  const hist = join(dir, 'latency.json')
  const child = spawn(process.execPath, ['--input-type=module', '-e', KILLED_WRITER, path, hist], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve, reject) => {
    child.stdout.on('data', () => resolve(undefined))
    child.on('exit', (code) => reject(new Error(`the writer exited (${code}) before writing`)))
  })
  child.kill('SIGKILL')
  await new Promise(resolve => child.on('close', resolve))
  assert.equal(existsSync(path), false)
  assert.ok(existsSync(`${path}.tmp`))
  // a torn member at the end, as a write cut mid-way leaves it
  const whole = readFileSync(`${path}.tmp`)
  appendFileSync(`${path}.tmp`, whole.subarray(0, whole.readUInt32LE(16) - 10))
  assert.equal(await recoverSamples(join(dir, 'samples.jtl'), { samples: 'gz', histogramPath: hist }), path)
  const text = gunzipSync(readFileSync(path)).toString('utf8')
  assert.ok(text.endsWith('\n'))
  const s = await summarize(path)
  assert.equal(s.malformed.count, 0, JSON.stringify(s.malformed))
  assert.ok(s.rows > 2000, `${s.rows} rows`)
  assert.equal(s.rows, text.split('\n').length - 2)
  assert.deepEqual(figures(await summarize(hist)), figures(s))
  assert.equal(recoverJtl(path), false, 'nothing left to recover')
  // a last member whose header landed but whose body did not (a write still in flight): inflating it finds out
  const good = readFileSync(path)
  let last = 0
  for (let at = 0; at < good.length; at += good.readUInt32LE(at + 16)) last = at
  const torn = Buffer.from(good)
  torn.fill(0, last + 40, torn.length - 8)
  const other = join(dir, 'other.jtl.gz')
  writeFileSync(`${other}.tmp`, torn)
  assert.equal(recoverJtl(other), true)
  assert.equal(statSync(other).size, last)
  assert.deepEqual(gunzipSync(readFileSync(other)), gunzipSync(good.subarray(0, last)))
})

test('latency histograms survive their compact copy: sparse latencies, hours long ones, errors per tenth', () => {
  const h = new LatencyHistogram()
  for (let i = 0; i < 5000; i++) h.add(T0 + i * 3, (i * 13) % 700, i % 9 !== 0, 100, 50)
  h.add(T0, 5 * 3600 * 1000, false, 0, 0)
  const back = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(h.toJSON())))
  for (const k of ['count', 'sum', 'min', 'max', 'errors', 'bytes', 'sentBytes', 'firstStart', 'firstEnd', 'lastEnd']) assert.equal(back[k], h[k], k)
  assert.deepEqual(back.percentiles([50, 90, 95, 99, 99.99]), h.percentiles([50, 90, 95, 99, 99.99]))
  assert.deepEqual(back.perSecond(), h.perSecond())
  assert.deepEqual(back.endedIn(T0 + 1000, T0 + 9000), h.endedIn(T0 + 1000, T0 + 9000))
  assert.ok(h.endedIn(T0 + 1000, T0 + 9000).errors > 0)
  assert.equal(new LatencyHistogram().toJSON().min, null)
  assert.equal(LatencyHistogram.fromJSON(new LatencyHistogram().toJSON()).count, 0)
})

test('a node loss counted from latency.json agrees with the count from the samples (windows on tenths)', async (t) => {
  const dir = tmp(t)
  const files = await writeAll(dir, 30000)
  const load = { steadyStart: T0 + 300 }
  const window = { from: T0 + 1800, to: T0 + 3200 }
  const exact = await countAroundLoss(files.gz.path, load, window)
  assert.ok(exact.during.requests > 0 && exact.during.errors > 0, JSON.stringify(exact))
  assert.deepEqual(await countAroundLossFromHistogram(files.none.histogramPath, load, window), exact)
})

test('a run folder resolves to samples.jtl, else samples.jtl.gz, else latency.json, else a clear error', async (t) => {
  const dir = tmp(t)
  const files = await writeAll(dir, 100)
  const run = join(dir, 'run')
  mkdirSync(run)
  await assert.rejects(resolveJtl(run),
    (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FILE' && /samples\.jtl, samples\.jtl\.gz or latency\.json/.test(e.message))
  copyFileSync(files.none.histogramPath, join(run, 'latency.json'))
  assert.equal(await resolveJtl(run), join(run, 'latency.json'))
  copyFileSync(files.gz.path, join(run, 'samples.jtl.gz'))
  assert.equal(await resolveJtl(run), join(run, 'samples.jtl.gz'))
  copyFileSync(files.jtl.path, join(run, 'samples.jtl'))
  assert.equal(await resolveJtl(run), join(run, 'samples.jtl'))
})

const short = ['--backend', 'local', '--strategy', 'up', '--instances', '1', '--benchmark', 'baseline', '--duration', '2', '--warmup', '1',
  '--concurrency', '4', '--quiet']

test('executor run --samples gz and --samples none: the files run.json names, the same figures from each kind of folder', { timeout: 120000 }, async (t) => {
  const base = tmp(t)
  const runs = {}
  for (const format of ['gz', 'none']) {
    const out = join(base, format)
    const r = await runCli('executor', ['run', ...short, '--samples', format, '--out', out])
    assert.equal(r.code, 0, r.stderr)
    runs[format] = readRun(out)
    const { dir, run } = runs[format]
    assert.equal(run.status, 'done', JSON.stringify(run.error))
    assert.equal(run.config.samples, format)
    assert.deepEqual(run.files, { samples: format === 'gz' ? 'samples.jtl.gz' : null, latency: 'latency.json', timeline: 'timeline.json' })
    assert.deepEqual(readdirSync(dir).sort(), ['latency.json', 'run.json', ...(format === 'gz' ? ['samples.jtl.gz'] : []), 'timeline.json'])
    assert.ok(run.summary.requests > 50, `${run.summary.requests} requests`)
    // up x1 here drives its load from a generator process of its own (pinned off the server's core): its µs histograms,
    // merged, count every request; the whole ms stay the JTL's, each row the µs rounded: the mean and the max at most
    // half a ms apart (and HDR's 0.1%), the median about a ms (interpolated between rounded rows, or the nearest rank)
    const us = run.summary.latencyUs
    const ms = run.summary.latency
    assert.equal(us?.count, run.summary.requests, JSON.stringify(us))
    for (const k of ['mean', 'max']) assert.ok(Math.abs(us[k] / 1000 - ms[k]) <= 0.5 + us[k] / 1e6, `${k}: ${us[k]} µs, ${ms[k]} ms`)
    assert.ok(Math.abs(us.p50 / 1000 - ms.p50) <= 1.01, `p50: ${us.p50} µs, ${ms.p50} ms`)
    assert.match(r.stdout, /latency {2}mean \d+ µs {2}p50 \d+ µs .*\(the driver's µs clock\)/)
    // the analyzer on the folder: from the samples when kept, from the histograms when not, as run.json says
    const a = await runCli('analyzer', ['summary', dir, '--json'])
    assert.equal(a.code, 0, a.stderr)
    const s = JSON.parse(a.stdout)
    assert.equal(s.source, format === 'gz' ? 'samples' : 'histogram')
    const steady = { from: run.load.steadyStart, to: run.load.steadyEnd }
    assert.deepEqual(figures(await summarize(dir, { steady })).total, run.summary)
  }
  // a plain-JTL folder made from the gz run: the same summary as its gz and its histograms
  const { dir } = runs.gz
  const plainDir = join(base, 'plain')
  mkdirSync(plainDir)
  writeFileSync(join(plainDir, 'samples.jtl'), gunzipSync(readFileSync(join(dir, 'samples.jtl.gz'))))
  const fromPlain = await summarize(plainDir)
  assert.equal(fromPlain.source, 'samples')
  // the same figures, but for the µs the plain folder has no latency.json to take them from
  const wholeMs = (s) => JSON.parse(JSON.stringify(figures(s), (k, v) => (k === 'latencyUs' || k === 'micros' ? undefined : v)))
  assert.equal(fromPlain.total.latencyUs, undefined)
  assert.deepEqual(figures(fromPlain), wholeMs(await summarize(dir)))
  assert.deepEqual(figures(await summarize(dir)), figures(await summarize(join(dir, 'latency.json'))))
  const text = await runCli('analyzer', ['summary', runs.none.dir])
  assert.match(text.stdout, /latency histograms/)
})

test('executor run --samples with a bad value: exit 2 naming the flag and its choices', async () => {
  const r = await runCli('executor', ['run', ...short, '--samples', 'zip'])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /--samples: "zip" is not allowed; one of: jtl, gz, none/)
})
