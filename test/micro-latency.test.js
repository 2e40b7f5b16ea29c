// Latency at µs resolution (analyzer/samples/micro-latency.js): the driver's per-request times in HDR histograms beside
// the JTL's whole ms. Their figures against the exact order statistics of known samples; latency.json carrying them
// through the run's writer and a generators' merge; the summary using them only where they count exactly its samples;
// a latency.json whose µs part is not one refused, naming the field.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createJtlWriter } from '../executor/jtl-writer.js'
import { mergeSamples } from '../executor/generators/merge.js'
import { summarize } from '../analyzer/samples/summary.js'
import { readLatencyFile } from '../analyzer/samples/latency-file.js'
import { MAX_MICRO_CHARS, microFigures, microRecorder, microsProblem, decodeMicros, microText } from '../analyzer/samples/micro-latency.js'

const tmp = (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-micro-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A seeded generator of latencies in ms: log-normal around 0.3 ms, a tail to tens of ms. */
function latencies (n, seed) {
  let s = seed >>> 0
  const u = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return (s + 0.5) / 2 ** 32 }
  return Array.from({ length: n }, () => 0.3 * Math.exp(1.1 * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u())))
}

/** The exact figure HdrHistogram approximates: the smallest value at or above p% of the samples (nearest rank). */
const nearestRank = (sorted, p) => sorted[Math.max(0, Math.ceil(p / 100 * sorted.length) - 1)]

test('µs figures within 0.1% of the exact order statistics of 20,000 known samples, and the same after encoding', () => {
  const values = latencies(20000, 7)
  const rec = microRecorder()
  for (const ms of values) rec.record('page', ms)
  assert.equal(rec.count, 20000)
  const sorted = values.map(ms => Math.round(ms * 1000)).sort((a, b) => a - b)
  const json = rec.toJSON()
  assert.equal(microsProblem(json, 10), null)
  const decoded = decodeMicros(/** @type {any} */ (json), 'x')
  const f = /** @type {any} */ (microFigures([...decoded.values()]))
  assert.equal(f.count, 20000)
  for (const p of [50, 90, 95, 99]) {
    const exact = nearestRank(sorted, p)
    assert.ok(Math.abs(f[`p${p}`] - exact) <= exact * 0.001 + 1, `p${p}: ${f[`p${p}`]} µs, exact ${exact}`)
  }
  const mean = sorted.reduce((a, v) => a + v, 0) / sorted.length
  assert.ok(Math.abs(f.mean - mean) <= mean * 0.001 + 1, `mean ${f.mean}, exact ${mean}`)
  assert.ok(Math.abs(f.max - sorted.at(-1)) <= sorted.at(-1) * 0.001 + 1)
  assert.ok(Math.abs(f.min - sorted[0]) <= 1)
  // two parts add to the figures of their union
  const a = microRecorder()
  const b = microRecorder()
  values.forEach((ms, i) => (i % 2 ? a : b).record('page', ms))
  const both = microRecorder()
  for (const r of [a, b]) for (const [label, h] of decodeMicros(/** @type {any} */ (r.toJSON()), 'x')) both.add(label, h)
  assert.equal(both.count, 20000)
  assert.deepEqual(microFigures([...decodeMicros(/** @type {any} */ (both.toJSON()), 'x').values()]), f)
  assert.equal(microRecorder().toJSON(), null, 'no sample, no histograms')
  assert.equal(microFigures([]), null)
})

test('µs text: whole µs below 10 ms, ms with a decimal from there', () => {
  assert.deepEqual([212, 9999.4, 10_000, 14_615, null].map(microText), ['212 µs', '9999 µs', '10.0 ms', '14.6 ms', '-'])
})

/** A JTL row as a driver writes one: `ms` its unrounded time. */
const row = (i, ms, label = 'page') => ({
  timeStamp: 1_700_000_000_000 + i * 3,
  elapsed: Math.round(ms),
  label,
  responseCode: 200,
  responseMessage: 'OK',
  threadName: `${label} 1-1`,
  success: true,
  bytes: 100,
  sentBytes: 50
})

/** Writes rows and their µs through the run's writer into `dir` (samples.jtl and latency.json). */
async function writeRun (dir, rows, { skipMicro = -1 } = {}) {
  const w = createJtlWriter(join(dir, 'samples.jtl'), { histogramPath: join(dir, 'latency.json') })
  rows.forEach(([r, ms], i) => { w.write(r); if (i !== skipMicro) w.micro(r.label, ms) })
  await w.close()
}

test('the run\'s writer keeps the µs beside the whole ms; the summary uses them where they count exactly its samples', async (t) => {
  const dir = tmp(t)
  const values = latencies(3000, 11)
  const rows = values.map((ms, i) => [row(i, ms, i % 3 ? 'page' : 'api'), ms])
  await writeRun(dir, rows)
  const read = await readLatencyFile(join(dir, 'latency.json'))
  assert.deepEqual([...(read.micros ?? new Map()).keys()].sort(), ['api', 'page'])
  for (const source of [dir, join(dir, 'latency.json')]) {
    const s = await summarize(source)
    assert.equal(s.total.latencyUs?.count, 3000, source)
    assert.equal(s.labels.api.latencyUs?.count, 1000)
    assert.match(s.micros ?? '', /HdrHistogram/)
    // the whole ms stay JMeter's, from the rounded rows
    const exactMs = nearestRank(values.map(Math.round).sort((a, b) => a - b), 99)
    assert.ok(Math.abs(/** @type {number} */ (s.total.latency.p99) - exactMs) <= 1)
    const exactUs = nearestRank(values.map(ms => Math.round(ms * 1000)).sort((a, b) => a - b), 50)
    assert.ok(Math.abs(s.total.latencyUs.p50 - exactUs) <= exactUs * 0.001 + 1, `${s.total.latencyUs.p50} vs ${exactUs}`)
  }
  // a window counts fewer samples than the histograms hold: whole ms only
  const windowed = await summarize(join(dir, 'samples.jtl'), { window: { from: 1_700_000_000_000 + 3000 } })
  assert.equal(windowed.total.latencyUs, undefined)
  assert.equal(windowed.micros, undefined)
  // a row the driver gave no µs for: that label's counts differ, so it and the total are whole ms only
  const short = tmp(t)
  await writeRun(short, rows, { skipMicro: 4 })
  const s = await summarize(short)
  assert.equal(s.labels.page.latencyUs, undefined)
  assert.equal(s.labels.api.latencyUs?.count, 1000)
  assert.equal(s.total.latencyUs, undefined)
})

test('a merge of generators\' parts carries the sum of their µs histograms, and none when a part kept none', async (t) => {
  const dir = tmp(t)
  const values = latencies(2000, 3)
  const parts = []
  for (const k of [0, 1]) {
    const path = join(dir, `g${k}.jtl`)
    const microsPath = join(dir, `g${k}.micros.json`)
    const w = createJtlWriter(path, { microsPath })
    values.forEach((ms, i) => { if (i % 2 === k) { w.write(row(i, ms)); w.micro('page', ms) } })
    await w.close()
    parts.push({ path, microsPath })
  }
  const merged = join(dir, 'run')
  mkdirSync(merged)
  const window = { steadyStart: 0, steadyEnd: 2e12 }
  await mergeSamples(parts, { jtlPath: join(merged, 'samples.jtl'), histogramPath: join(merged, 'latency.json'), ...window })
  const s = await summarize(merged)
  assert.equal(s.total.requests, 2000)
  assert.equal(s.total.latencyUs?.count, 2000)
  const one = microRecorder()
  for (const ms of values) one.record('page', ms)
  assert.deepEqual(s.total.latencyUs, microFigures([...decodeMicros(/** @type {any} */ (one.toJSON()), 'x').values()]))
  const without = join(dir, 'without')
  mkdirSync(without)
  await mergeSamples([parts[0], { path: parts[1].path }], { jtlPath: join(without, 'samples.jtl'), histogramPath: join(without, 'latency.json'), ...window })
  assert.equal((await summarize(without)).total.latencyUs, undefined)
  assert.equal(JSON.parse(readFileSync(join(without, 'latency.json'), 'utf8')).micros, undefined)
})

test('a latency.json whose µs part is not one is refused, naming the field', async (t) => {
  const dir = tmp(t)
  await writeRun(dir, latencies(100, 5).map((ms, i) => [row(i, ms), ms]))
  const file = join(dir, 'latency.json')
  const good = JSON.parse(readFileSync(file, 'utf8'))
  const bad = [
    [{ ...good.micros, unit: 'ms' }, /micros: unit us/],
    [{ ...good.micros, labels: { page: 42 } }, /micros\.labels\["page"\]: not an encoded histogram/],
    [{ ...good.micros, labels: { page: 'x'.repeat(MAX_MICRO_CHARS + 1) } }, /at most 1048576 characters/],
    [{ ...good.micros, labels: { page: 'not base64!' } }, /micros\.labels\["page"\]/],
    [{ ...good.micros, labels: { page: 'AAAA' } }, /micros\.labels\["page"\]: not a histogram/],
    [[], /micros: not \{ unit, digits, labels \}/]
  ]
  for (const [micros, why] of bad) {
    writeFileSync(file, JSON.stringify({ ...good, micros }))
    await assert.rejects(readLatencyFile(file), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FILE' && why.test(err.message),
      JSON.stringify(micros).slice(0, 80))
  }
})
