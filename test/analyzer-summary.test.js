// analyzer summary: JMeter's own figures for real JTLs, malformed/empty/header-less files, quoting, filters.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { summarize } from '../analyzer/samples/summary.js'
import { scanJtl } from '../analyzer/samples/jtl-reader.js'
import { LatencyHistogram } from '../analyzer/samples/latency-histogram.js'
import { compareWithStatistics, startVariedServer, writePlan, runJmeterPlan, jmeterDashboard } from '../analyzer/samples/jmeter-crosscheck.js'
import { ensureJmeter } from '../executor/jmeter-install.js'

const FIX = new URL('./fixtures/jtl/', import.meta.url).pathname
const HEADER = 'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,' +
  'allThreads,URL,Latency,IdleTime,Connect'
const row = (ts, elapsed, label, ok = true, msg = 'OK') =>
  `${ts},${elapsed},${label},${ok ? 200 : 500},${msg},t 1-1,text,${ok},,100,20,1,1,http://127.0.0.1/x,1,0,0`

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-summary-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** commons-math3 LEGACY percentile over a sorted copy: an implementation independent of the histogram. */
function legacy (values, p) {
  const v = [...values].sort((a, b) => a - b)
  const n = v.length
  if (n === 1) return v[0]
  const pos = p * (n + 1) / 100
  if (pos < 1) return v[0]
  if (pos >= n) return v[n - 1]
  const f = Math.floor(pos)
  return v[f - 1] + (pos - f) * (v[f] - v[f - 1])
}

/** A predicate for assert.rejects: NS_ERR_BAD_FILE, exit code 2, a message matching re. */
const badFile = re => (/** @type {any} */ e) => e.code === 'NS_ERR_BAD_FILE' && e.exitCode === 2 && re.test(e.message)

function assertNoNaN (value) {
  assert.ok(!JSON.stringify(value).includes('NaN'))
  JSON.stringify(value, (k, v) => { assert.ok(typeof v !== 'number' || Number.isFinite(v), `${k} is ${v}`); return v })
}

test('a JTL recorded by JMeter 5.6.3 gives the numbers of the statistics.json JMeter made from it (recorded pair)', async () => {
  const s = await summarize(join(FIX, 'jmeter-5.6.3-varied.jtl'))
  const stats = JSON.parse(readFileSync(join(FIX, 'jmeter-5.6.3-varied.statistics.json'), 'utf8'))
  assert.equal(s.malformed.count, 0)
  assert.ok(s.total.requests > 100)
  for (const c of compareWithStatistics(s.total, stats.Total, { pctTolMs: 1e-9 })) assert.ok(c.ok, `Total ${c.name}: ours ${c.ours}, JMeter ${c.jmeter}`)
  assert.deepEqual(Object.keys(s.labels).sort(), Object.keys(stats).filter(k => k !== 'Total').sort())
  for (const [label, sum] of Object.entries(s.labels)) {
    for (const c of compareWithStatistics(sum, stats[label], { pctTolMs: 1e-9 })) assert.ok(c.ok, `${label} ${c.name}: ours ${c.ours}, JMeter ${c.jmeter}`)
  }
  assert.ok(s.labels['slow, with comma'], 'the quoted label is read as one field')
})

test('a JTL JMeter records now and the dashboard JMeter builds from it agree with the summary', async (t) => {
  const dir = tmp(t)
  const { jar } = await ensureJmeter()
  const server = await startVariedServer()
  t.after(() => server.close())
  await runJmeterPlan(jar, {
    jmx: writePlan(dir, { port: server.port, threads: 3, seconds: 2 }), jtl: join(dir, 'r.jtl'), log: join(dir, 'r.log'), timeoutMs: 60000
  })
  const { statistics } = await jmeterDashboard(jar, join(dir, 'r.jtl'), join(dir, 'dash'), { timeoutMs: 60000 })
  const s = await summarize(join(dir, 'r.jtl'))
  assert.ok(s.total.requests > 50, `JMeter recorded ${s.total.requests} samples`)
  assert.ok(s.total.errors > 0, 'the flaky route failed some requests')
  for (const c of compareWithStatistics(s.total, statistics.Total, { pctTolMs: 1e-9 })) assert.ok(c.ok, `${c.name}: ours ${c.ours}, JMeter ${c.jmeter}`)
})

test('malformed rows are counted with line numbers and reasons; valid rows around them still count', async (t) => {
  const file = join(tmp(t), 'bad.jtl')
  writeFileSync(file, [
    HEADER,
    row(1000, 10, 'a'),
    'garbage,1,2',
    row(1010, 'x12', 'a'),
    row(1020, 30, 'a').replace(',true,', ',maybe,'),
    row(1030, 20, 'a', false),
    '1040,5,a,200,OK,t 1-1' // truncated last line, no newline
  ].join('\n'))
  const s = await summarize(file)
  assert.equal(s.rows, 6)
  assert.equal(s.total.requests, 2)
  assert.equal(s.total.errors, 1)
  assert.equal(s.malformed.count, 4)
  assert.deepEqual(s.malformed.examples.map(e => e.line), [3, 4, 5, 7])
  assert.match(s.malformed.examples[0].reason, /3 fields, expected 17/)
  assert.match(s.malformed.examples[1].reason, /elapsed/)
  assert.match(s.malformed.examples[2].reason, /success/)
  assert.equal(s.malformed.examples[3].reason, 'truncated last line')
  assert.equal(s.total.latency.mean, 15)
})

test('a quoted field left open at the end of the file is one malformed row, not a crash', async (t) => {
  const file = join(tmp(t), 'open.jtl')
  writeFileSync(file, [HEADER, row(1000, 10, 'a'), '1010,5,a,500,"Internal error, then the file ends'].join('\n'))
  const s = await summarize(file)
  assert.equal(s.total.requests, 1)
  assert.equal(s.malformed.count, 1)
  assert.match(s.malformed.examples[0].reason, /never closed/)
})

test('an empty file and a header-only file give zero requests and no NaN anywhere', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'empty.jtl'), '')
  writeFileSync(join(dir, 'header.jtl'), HEADER + '\n')
  for (const name of ['empty.jtl', 'header.jtl']) {
    const s = await summarize(join(dir, name))
    assert.equal(s.total.requests, 0)
    assert.equal(s.total.throughput, 0)
    assert.equal(s.total.errorRate, 0)
    assert.equal(s.total.latency.p95, null)
    assert.deepEqual(s.labels, {})
    assertNoNaN(s)
  }
})

test('a file without a header is read with JMeter\'s default columns and says so; other files are refused by name', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'nohead.jtl'), [row(1000, 10, 'a'), row(1001, 30, 'b'), ''].join('\n'))
  const s = await summarize(join(dir, 'nohead.jtl'))
  assert.equal(s.header.assumed, true)
  assert.equal(s.total.requests, 2)
  assert.equal(s.labels.b.latency.max, 30)
  writeFileSync(join(dir, 'odd.jtl'), '1000,10,a\n1001,11,a\n')
  await assert.rejects(summarize(join(dir, 'odd.jtl')), badFile(/odd\.jtl/))
  writeFileSync(join(dir, 'x.jtl'), '<?xml version="1.0"?>\n<testResults version="1.2">\n')
  await assert.rejects(summarize(join(dir, 'x.jtl')), badFile(/XML JTL/))
  await assert.rejects(summarize(join(dir, 'missing.jtl')), badFile(/missing\.jtl/))
  await assert.rejects(summarize(dir), badFile(/samples\.jtl/))
})

test('a run folder means its samples.jtl; --label and the window filter samples', async (t) => {
  const dir = tmp(t)
  mkdirSync(join(dir, 'run'))
  writeFileSync(join(dir, 'run', 'samples.jtl'), [HEADER, row(1000, 10, 'a'), row(2000, 20, 'b'), row(3000, 30, 'a'), ''].join('\n'))
  const all = await summarize(join(dir, 'run'))
  assert.equal(all.total.requests, 3)
  assert.equal(all.total.throughput, 3 / (3030 - 1000) * 1000)
  const onlyA = await summarize(join(dir, 'run'), { label: 'a' })
  assert.deepEqual(Object.keys(onlyA.labels), ['a'])
  assert.equal(onlyA.total.requests, 2)
  const windowed = await summarize(join(dir, 'run'), { window: { from: 1500, to: 3000 } })
  assert.equal(windowed.total.requests, 1)
  assert.equal(windowed.outsideWindow, 2)
})

test('transaction controller samples count for their label, not in the total (as in JMeter\'s dashboard)', async (t) => {
  const file = join(tmp(t), 'tc.jtl')
  writeFileSync(file, [HEADER, row(1000, 10, 'page'), row(1000, 15, 'tx', true, '"Number of samples in transaction : 1, number of failing samples : 0"'),
    row(1000, 0, 'empty-tx', true, '"Number of samples in transaction : 0, number of failing samples : 0"'), ''].join('\n'))
  const s = await summarize(file)
  assert.equal(s.total.requests, 1)
  assert.equal(s.labels.tx.requests, 1)
  assert.equal(s.labels['empty-tx'], undefined)
})

// A deterministic generator of nasty rows: quoted labels and messages with commas, doubled quotes, CRLF and LF.
function nastyFile (rows, seed, eol) {
  let s = seed
  const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
  const labels = ['home', 'a,b', 'say "hi"', 'multi\nline', 'ünïcödé']
  const q = v => /[",\r\n]/.test(v) ? '"' + v.replaceAll('"', '""') + '"' : v
  const lines = [HEADER]
  for (let i = 0; i < rows; i++) {
    const label = labels[Math.floor(rnd() * labels.length)]
    const ok = rnd() > 0.1
    const msg = ok ? 'OK' : ['Bad, "really"', 'line1\r\nline2', 'plain'][Math.floor(rnd() * 3)]
    const elapsed = Math.floor(rnd() ** 3 * 3000)
    lines.push([1700000000000 + i * 3, elapsed, q(label), ok ? 200 : 500, q(msg), 'g 1-1', 'text', ok, ok ? '' : q(msg), 120, 40, 2, 2, 'http://h/p',
      3, 0, 1].join(','))
  }
  return lines.join(eol) + eol
}

test('the byte scanner reads quoted fields as csv-parse does, at any chunk size, with LF and CRLF', async (t) => {
  const dir = tmp(t)
  for (const [seed, eol] of [[7, '\n'], [8, '\r\n']]) {
    const file = join(dir, `nasty-${seed}.jtl`)
    writeFileSync(file, nastyFile(3000, seed, eol))
    const records = /** @type {any[]} */ (parse(readFileSync(file), { columns: true }))
    const expected = new Map()
    for (const r of records) {
      const e = expected.get(r.label) ?? { elapsed: [], errors: 0 }
      e.elapsed.push(Number(r.elapsed))
      if (r.success !== 'true') e.errors++
      expected.set(r.label, e)
    }
    for (const chunkSize of [7, 64, 1000, 1 << 22]) {
      const got = new Map()
      const sink = { record: name => { const h = new LatencyHistogram(); got.set(name, h); return h }, controller: () => null }
      const scan = await scanJtl(file, sink, { chunkSize })
      assert.equal(scan.malformed.count, 0, `chunk ${chunkSize}: ${JSON.stringify(scan.malformed.examples)}`)
      assert.equal(scan.rows, records.length)
      assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort(), `chunk ${chunkSize}`)
      for (const [label, e] of expected) {
        const h = got.get(label)
        assert.equal(h.count, e.elapsed.length, `${label} @${chunkSize}`)
        assert.equal(h.errors, e.errors)
        assert.equal(h.sum, e.elapsed.reduce((a, b) => a + b, 0))
        assert.deepEqual(h.percentiles([50, 90, 95, 99]), [50, 90, 95, 99].map(p => legacy(e.elapsed, p)))
      }
    }
  }
})

test('latencies beyond the dense histogram (hours) and a single sample keep exact figures', () => {
  const h = new LatencyHistogram(4)
  for (const v of [5, 3, 9_000_000, 7, 5_000_000]) h.add(1000, v, true, 0, 0)
  assert.equal(h.max, 9_000_000)
  assert.deepEqual(h.percentiles([50, 99]), [legacy([5, 3, 9_000_000, 7, 5_000_000], 50), legacy([5, 3, 9_000_000, 7, 5_000_000], 99)])
  const one = new LatencyHistogram()
  one.add(5, 0, true, 0, 0)
  assert.deepEqual(one.percentiles([50, 99]), [0, 0])
})
