// The parsers of hostile or damaged input (issue 27's "Bounded parsers", docs/SECURITY.md): property-based fuzzing of
// each with fast-check, seeded, each property within a time budget, and the issue's crafted inputs as regressions,
// each in a child process whose peak memory (resourceUsage().maxRSS) and time are measured.
// Budgets (this file runs in ~30-45 s on a 2-core machine): each property PROPERTY_MS (8 s) and HEAP_MB (512 MiB of
// heap after it); each crafted input CRAFTED_MS (10 s) and CRAFTED_RSS_MB (200 MiB peak RSS of its process).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { JtlFeed, scanJtl, MAX_LABELS } from '../analyzer/samples/jtl-reader.js'
import { histogramSink, latencyFileOf, readLatencyFile } from '../analyzer/samples/latency-file.js'
import { LatencyHistogram, MAX_SPAN_TENTHS } from '../analyzer/samples/latency-histogram.js'
import { readJsonBounded } from '../lib/run-files.js'
import { parseExperiment } from '../executor/sweep/experiment.js'
import { mergeSamples } from '../executor/generators/merge.js'
import { telemetryOfLogs } from '../executor/docker/service-telemetry.js'
import { NsError } from '../lib/errors.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const SEED = 27
const PROPERTY_MS = 8000
const HEAP_MB = 512
const CRAFTED_MS = 10_000
const CRAFTED_RSS_MB = 200
const HEADER = 'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,' +
  'grpThreads,allThreads,URL,Latency,IdleTime,Connect'
const T0 = 1764000000000
const row = (ts, elapsed = 5, label = 'GET /', ok = 'true') => `${ts},${elapsed},${label},200,OK,t 1-1,text,${ok},,100,50,1,1,http://x/,4,0,1`

const dir = mkdtempSync(join(tmpdir(), 'ns-parsers-fuzz-'))
test.after(() => rmSync(dir, { recursive: true, force: true }))

/** Runs a property with the seed and asserts its time and heap budget. */
async function check (name, property, numRuns) {
  const started = Date.now()
  await fc.assert(property, { seed: SEED, numRuns })
  const ms = Date.now() - started
  assert.ok(ms < PROPERTY_MS, `${name}: ${ms} ms, budget ${PROPERTY_MS}`)
  assert.ok(process.memoryUsage().heapUsed < HEAP_MB * 2 ** 20, `${name}: heap over ${HEAP_MB} MiB`)
}

/** A parser's failure must be a coded bad-input error (exit 2) naming the file, never a stack. */
function codedBadInput (err, file) {
  if (!(err instanceof NsError) || err.exitCode !== 2) throw err
  if (file !== undefined) assert.ok(err.message.startsWith(file), err.message)
  return true
}

/**
 * Runs `body` (an async function's text, given `file`) in a child Node: its result, error code and message, time and
 * peak RSS in MiB.
 */
function inChild (body, file, setup = '') {
  const code = `const file = ${JSON.stringify(file)}; ${setup}; const t = Date.now(); const cpu = process.cpuUsage(); let out
    try { out = { ok: await (async () => { ${body} })() } } ` +
    `catch (err) { out = { code: err.code, message: String(err.message).slice(0, 300), stack: err.code ? undefined : err.stack } }
    const used = process.cpuUsage(cpu); out.cpuMs = (used.user + used.system) / 1000
    out.ms = Date.now() - t; out.rssMb = process.resourceUsage().maxRSS / 1024; process.stdout.write(JSON.stringify(out))`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// ---------------------------------------------------------------- the issue's crafted inputs

test('a 1 MB .jtl.gz holding one unterminated quote (1 GiB expanded) is refused in seconds, its memory bounded', (t) => {
  // 16 gzip members of 64 MiB of 'a' each, after a header and a row that opens a quote: the file is ~1 MB
  const file = join(dir, 'quote.jtl.gz')
  const member = gzipSync(Buffer.alloc(64 << 20, 'a'), { level: 9 })
  writeFileSync(file, Buffer.concat([gzipSync(`${HEADER}\n${row(T0)}\n${T0},5,"GET /`), ...Array(16).fill(member)]))
  const r = inChild(`const { scanJtl } = await import('./analyzer/samples/jtl-reader.js')
    const { histogramSink } = await import('./analyzer/samples/latency-file.js')
    return scanJtl(file, histogramSink())`, file)
  assert.equal(r.code, 'NS_ERR_BAD_FILE', JSON.stringify(r))
  assert.match(r.message, /quote\.jtl\.gz:3: a row longer than 8 MiB/)
  assert.ok(r.ms < CRAFTED_MS && r.rssMb < CRAFTED_RSS_MB, `${r.ms} ms, ${r.rssMb} MiB`)
  t.diagnostic(`${r.ms} ms, peak RSS ${Math.round(r.rssMb)} MiB: ${r.message}`)
})

test('a plain .jtl whose quote never closes is refused at the bound, naming the row\'s line', (t) => {
  const file = join(dir, 'quote.jtl')
  writeFileSync(file, `${HEADER}\n${row(T0)}\n${row(T0 + 1)}\n${T0},5,"GET /${'a'.repeat(20 << 20)}`)
  const r = inChild(`const { scanJtl } = await import('./analyzer/samples/jtl-reader.js')
    const { histogramSink } = await import('./analyzer/samples/latency-file.js')
    return scanJtl(file, histogramSink())`, file)
  assert.equal(r.code, 'NS_ERR_BAD_FILE', JSON.stringify(r))
  assert.match(r.message, /quote\.jtl:4: a row longer than/)
  assert.ok(r.ms < CRAFTED_MS && r.rssMb < CRAFTED_RSS_MB, `${r.ms} ms, ${r.rssMb} MiB`)
  t.diagnostic(`${r.ms} ms, peak RSS ${Math.round(r.rssMb)} MiB: ${r.message}`)
})

test('a quote that closes after 6 MiB of lines (under the bound) is read in linear time, gz and plain', async () => {
  const text = `${HEADER}\n${row(T0)}\n${T0},5,"GET ${'x\n'.repeat(3 << 20)}",200,OK,t 1-1,text,true,,100,50,1,1,http://x/,4,0,1\n${row(T0 + 9)}\n`
  for (const [name, data] of /** @type {[string, string | Buffer][]} */ ([['long.jtl', text], ['long.jtl.gz', gzipSync(text)]])) {
    const file = join(dir, name)
    writeFileSync(file, data)
    const started = Date.now()
    const sink = histogramSink()
    const scan = await scanJtl(file, sink, { chunkSize: 1 << 16 })
    assert.equal(scan.rows, 3)
    assert.equal(scan.malformed.count, 1, JSON.stringify(scan.malformed.examples)) // its label is over the label bound
    assert.equal(sink.plain.get('GET /').count, 2)
    assert.ok(Date.now() - started < 3000, `${name}: ${Date.now() - started} ms`)
  }
})

test('timestamps 1 and 1e11, and 999999999999999: NS_ERR_BAD_FILE naming the file and line (exit 2), no allocation', () => {
  /** @type {[string, number[], number | null][]} */
  const cases = [['span.jtl', [1, 100000000000], 3], ['far.jtl', [T0, 999999999999999], 3], ['far1.jtl', [999999999999999], null]]
  for (const [name, stamps, line] of cases) {
    const file = join(dir, name)
    writeFileSync(file, [HEADER, ...stamps.map(ts => row(ts))].join('\n') + '\n')
    const r = spawnSync(process.execPath, ['bin/analyzer.js', 'summary', file], { cwd: ROOT, encoding: 'utf8' })
    if (line === null) { assert.equal(r.status, 0, r.stderr); continue } // one far row alone is a run of one request
    assert.equal(r.status, 2, r.stderr)
    assert.match(r.stderr, new RegExp(`NS_ERR_BAD_FILE: ${file.replaceAll('/', '\\/')}:${line}: end times .* span more than 24 h`))
    assert.doesNotMatch(r.stderr, /\n\s+at /)
  }
  // two labels, each within a day, three days apart: the total a summary merges would span them, so the row is refused
  const file = join(dir, 'labels.jtl')
  writeFileSync(file, [HEADER, row(T0, 5, 'a'), row(T0 + 3 * 86400000, 5, 'b')].join('\n') + '\n')
  const two = spawnSync(process.execPath, ['bin/analyzer.js', 'summary', file], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(two.status, 2, two.stderr)
  assert.match(two.stderr, /labels\.jtl:3: end times .* span more than 24 h/)
  const r = inChild(`const { LatencyHistogram } = await import('./analyzer/samples/latency-histogram.js')
    const h = new LatencyHistogram(); h.add(1, 0, true, 0, 0); h.add(100000000000, 0, true, 0, 0)`, 'x')
  assert.equal(r.code, 'NS_ERR_BAD_FILE')
  assert.ok(r.rssMb < CRAFTED_RSS_MB, `${r.rssMb} MiB`)
})

test('a YAML billion laughs in an experiment file is refused at once, naming the key\'s line', (t) => {
  const levels = ['&a0 [x, x, x, x, x, x, x, x, x, x]']
  for (let i = 1; i < 9; i++) levels.push(`&a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`)
  const file = join(dir, 'lol.yaml')
  writeFileSync(file, `strategies: [up]\ninstances: [1]\nconcurrency: [1]\nparams:\n  x: [${levels.join(', ')}]\n`)
  // timed from the module loaded, in the child's CPU time: what the expansion costs, not the import or a busy host's
  // queue (in CI, beside the cluster tests, the import and the parse took 1.14 s of wall time)
  const r = inChild('return loadExperiment(file)', file, "const { loadExperiment } = await import('./executor/sweep/experiment.js')")
  assert.equal(r.code, 'NS_ERR_BAD_FILE', JSON.stringify(r))
  assert.match(r.message, /lol\.yaml:4: params: more than 100000 values once its aliases are expanded/)
  assert.ok(r.cpuMs < 1000 && r.rssMb < CRAFTED_RSS_MB, `${r.cpuMs} ms of CPU, ${r.rssMb} MiB`)
  t.diagnostic(`${r.cpuMs} ms of CPU (${r.ms} ms), peak RSS ${Math.round(r.rssMb)} MiB: ${r.message}`)
  // a cycle (an alias to its own anchor) is refused too
  assert.throws(() => parseExperiment('strategies: &a [*a]\n', { file: 'c.yaml' }), /c\.yaml:1: strategies: more than/)
})

test('a generator part with a huge open quoted field: the merge refuses it at the bound, in linear time', (t) => {
  const part = join(dir, 'part-open.jtl')
  writeFileSync(part, `${HEADER}\n${row(T0)}\n${T0 + 1},5,"GET /${'a\n'.repeat(10 << 20)}`)
  const r = inChild(`const { mergeSamples } = await import('./executor/generators/merge.js')
    return mergeSamples([{ path: file }], { jtlPath: file + '.out.jtl', steadyStart: 0, steadyEnd: 2e12 })`, part)
  assert.equal(r.code, 'NS_ERR_BAD_FILE', JSON.stringify(r))
  assert.match(r.message, /part-open\.jtl:3: a row longer than 8 MiB/)
  assert.ok(r.ms < CRAFTED_MS && r.rssMb < CRAFTED_RSS_MB, `${r.ms} ms, ${r.rssMb} MiB`)
  t.diagnostic(`${r.ms} ms, peak RSS ${Math.round(r.rssMb)} MiB: ${r.message}`)
})

test('a quoted field over 1M lines that closes: the merge reads it in linear time and keeps the row', async () => {
  const part = join(dir, 'part-lines.jtl')
  writeFileSync(part, `${HEADER}\n${row(T0)}\n${T0 + 1},5,"GET ${'\n'.repeat(1 << 20)}",200,OK,t,text,true,,1,1,1,1,u,1,0,1\n${row(T0 + 2)}\n`)
  const started = Date.now()
  const out = await mergeSamples([{ path: part }], { jtlPath: join(dir, 'merged-lines.jtl'), steadyStart: 0, steadyEnd: 2e12 })
  assert.equal(out.rows, 3)
  assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`)
})

test('latency.json: a malformed field is NS_ERR_BAD_FILE naming the file and the field, not a TypeError', async () => {
  const sink = histogramSink()
  sink.record('GET /').add(T0, 5, true, 1, 1)
  const good = latencyFileOf(sink, { rows: 1, blankLines: 0, outsideWindow: 0, malformed: { count: 0, examples: [] }, layout: null })
  const file = join(dir, 'latency.json')
  for (const [mutate, field] of /** @type {[(j: any) => void, RegExp][]} */ ([
    [(j) => { j.labels['GET /'].latency = 3 }, /labels\["GET \/"\]\.latency/],
    [(j) => { j.labels['GET /'].tenths.n = 'x' }, /tenths/],
    [(j) => { j.labels = Object.fromEntries(Array.from({ length: MAX_LABELS + 1 }, (_, i) => [`l${i}`, good.labels['GET /']])) }, /labels: 65 labels/],
    [(j) => { j.labels['GET /'].lastEnd = 1e300 }, /lastEnd/]
  ])) {
    const j = structuredClone(good)
    mutate(j)
    writeFileSync(file, JSON.stringify(j))
    await assert.rejects(readLatencyFile(file), (/** @type {any} */ err) => codedBadInput(err, file) && field.test(err.message))
  }
  writeFileSync(file, '{\n"schema": 1,\n}') // where V8 says the position, the line is named
  await assert.rejects(readLatencyFile(file), (/** @type {any} */ err) => codedBadInput(err, file) && /latency\.json:3: not valid JSON/.test(err.message))
})

// ---------------------------------------------------------------- properties

const JTL_CHARS = fc.constantFrom(...'0123456789,,,,""\n\r\tatruefls GET/x'.split(''))
const jtlText = fc.oneof(
  fc.string({ unit: JTL_CHARS, maxLength: 600 }),
  fc.array(fc.tuple(fc.oneof(fc.constant(T0), fc.integer({ min: 0, max: 1e15 })), fc.nat(100000), fc.string({ unit: JTL_CHARS, maxLength: 8 }),
    fc.constantFrom('true', 'false', 'x')), { maxLength: 30 })
    .map(rows => [HEADER, ...rows.map(([ts, e, label, ok]) => row(ts, e, label, ok))].join('\n'))
)

/** What a scan gives, in a form to compare (or the coded error's message). */
function scanOf (text, splits) {
  const sink = histogramSink()
  const feed = new JtlFeed(sink, { file: 'fuzz.jtl' })
  try {
    const data = Buffer.from(text)
    let at = 0
    for (const s of [...splits.map(x => Math.floor(x * data.length)).sort((a, b) => a - b), data.length]) {
      if (s > at) feed.push(data.subarray(at, s))
      at = Math.max(at, s)
    }
    const r = feed.end()
    for (const h of sink.plain.values()) { h.percentiles([50, 99]); h.perSecond(); h.perTenth() }
    return JSON.stringify({ rows: r.rows, blank: r.blankLines, bad: r.malformed.count, labels: [...sink.plain].map(([k, h]) => [k, h.toJSON()]) })
  } catch (err) {
    codedBadInput(err, 'fuzz.jtl')
    return err.message
  }
}

test('property: the JTL reader gives the same result however its input is cut into chunks, or a coded error', () =>
  check('jtl', fc.property(jtlText, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
    (text, splits) => { assert.equal(scanOf(text, splits), scanOf(text, [])) }), 400))

test('property: the JTL reader on gzip files (whole, cut short) returns or throws a coded error naming the file', () => {
  const file = join(dir, 'fuzz.jtl.gz')
  return check('jtl.gz', fc.asyncProperty(jtlText, fc.double({ min: 0, max: 1, noNaN: true }), async (text, cut) => {
    const gz = gzipSync(text)
    writeFileSync(file, gz.subarray(0, Math.max(2, Math.floor(gz.length * (cut < 0.5 ? 1 : cut)))))
    await scanJtl(file, histogramSink(), { chunkSize: 64 }).catch(err => codedBadInput(err, file))
  }), 150)
})

test('property: a histogram stays within its span, or refuses with a coded error', () =>
  check('histogram', fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 1e15 }), fc.nat(1e9)), { minLength: 1, maxLength: 20 }), (samples) => {
    const h = new LatencyHistogram()
    try {
      for (const [ts, e] of samples) h.add(ts, e, e % 2 === 0, 1, 1)
    } catch (err) {
      codedBadInput(err)
      assert.equal(err.details.bound !== undefined, true)
    }
    assert.ok(h.slots.length <= MAX_SPAN_TENTHS)
    h.percentiles([50, 99.9])
    h.perSecond()
  }), 500))

test('property: latency.json with any field replaced reads back or is a coded error naming the file', () => {
  const sink = histogramSink()
  for (let i = 0; i < 50; i++) sink.record(i % 3 ? 'a' : 'b').add(T0 + i * 37, i * 3, i % 7 !== 0, 10, 5)
  const good = latencyFileOf(sink, { rows: 50, blankLines: 0, outsideWindow: 0, malformed: { count: 0, examples: [] }, layout: null })
  const file = join(dir, 'fuzz-latency.json')
  const paths = []
  const walk = (v, p) => { paths.push(p); if (typeof v === 'object' && v !== null) for (const k of Object.keys(v)) walk(v[k], [...p, k]) }
  walk(good, [])
  return check('latency.json', fc.asyncProperty(fc.constantFrom(...paths.filter(p => p.length)), fc.jsonValue({ maxDepth: 2 }),
    async (path, value) => {
      const j = structuredClone(good)
      let o = j
      for (const k of path.slice(0, -1)) o = o[k]
      o[path.at(-1)] = value
      writeFileSync(file, JSON.stringify(j))
      try {
        const read = await readLatencyFile(file)
        for (const h of [...read.plain.values(), ...read.controllers.values()]) {
          h.percentiles([50, 99])
          h.perSecond()
          h.perTenth()
          new LatencyHistogram().merge(h)
        }
      } catch (err) { codedBadInput(err, file) }
    }), 300)
})

test('property: timeline.json / sweep.json bytes are JSON or a coded error naming the file', () => {
  const file = join(dir, 'timeline.json')
  return check('json', fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 3 })), async (text) => {
    writeFileSync(file, text)
    await readJsonBounded(file).catch(err => codedBadInput(err, file))
  }), 300)
})

test('property: experiment YAML parses or is a coded bad-input error (exit 2)', () =>
  check('yaml', fc.property(fc.oneof(
    fc.string({ unit: fc.constantFrom(...'abc: -[]{}&*!|>"\'\n  1x,#'.split('')), maxLength: 200 }),
    fc.array(fc.tuple(fc.constantFrom('strategies', 'instances', 'concurrency', 'params', 'duration', 'name', 'x'),
      fc.constantFrom('[up]', '1', '[1, 2]', '&a [1, 2]', '*a', '{ a: *a }', 'p99=5ms', '"x"', '[*a, *a, *a]')), { maxLength: 8 })
      .map(pairs => pairs.map(([k, v]) => `${k}: ${v}`).join('\n'))
  ), (text) => {
    try { parseExperiment(text, { file: 'fuzz.yaml' }) } catch (err) { codedBadInput(err) }
  }), 400))

test('property: the merge of generator parts returns or is a coded error naming the part', () => {
  const part = join(dir, 'fuzz-part.jtl')
  return check('merge', fc.asyncProperty(jtlText, async (text) => {
    writeFileSync(part, text)
    await mergeSamples([{ path: part }], { jtlPath: join(dir, 'fuzz-merged.jtl'), samples: 'none', steadyStart: 0, steadyEnd: 2e15 })
      .catch(err => codedBadInput(err, part))
  }), 100)
})

test('property: service logs give the same records however the stream is cut, over-long lines skipped', () => {
  const rec = (t) => `@nodescale-telemetry ${JSON.stringify({ t, id: 'w1', pid: 1, role: 'worker', ms: 1000, elu: 0.5, cpu: 0.1 })}`
  const frame = (text) => { const b = Buffer.from(text); const h = Buffer.alloc(8); h[0] = 1; h.writeUInt32BE(b.length, 4); return Buffer.concat([h, b]) }
  const line = fc.oneof(fc.integer({ min: 0, max: 20 }).map(t => rec(T0 + t * 1000)), fc.string({ maxLength: 40 }).map(s => s.replace(/\n/g, '')),
    fc.constant('y'.repeat(70 << 10)))
  return check('logs', fc.asyncProperty(fc.array(line, { maxLength: 12 }), fc.boolean(), fc.array(fc.nat(2000), { maxLength: 5 }),
    async (lines, framed, cuts) => {
      const bytes = Buffer.concat(lines.map(l => (framed ? frame(l + '\n') : Buffer.from(l + '\n'))))
      const pieces = []
      let at = 0
      for (const c of [...cuts].sort((a, b) => a - b)) { if (c > at && c < bytes.length) { pieces.push(bytes.subarray(at, c)); at = c } }
      pieces.push(bytes.subarray(at))
      const window = { from: T0 + 5000, to: T0 + 15000 }
      const got = await telemetryOfLogs(Readable.from(pieces), window)
      const want = lines.filter(l => l.startsWith('@nodescale') && Math.abs(JSON.parse(l.slice(21)).t - T0 - 10000) <= 5000)
      assert.deepEqual(got.map(r => r.t), want.map(l => JSON.parse(l.slice(21)).t))
    }), 200)
})
