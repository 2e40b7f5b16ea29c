// The JTL writer: JMeter's CSV quoting round-trips through csv-parse, chunked writes keep every row, the file appears
// atomically.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { JTL_FIELDS, JTL_HEADER, createJtlWriter, formatJtlRow, quoteCsv, recoverJtl } from '../executor/jtl-writer.js'

const tmp = (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-jtl-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const sample = (i, extra = {}) => ({
  timeStamp: 1700000000000 + i,
  elapsed: i % 13,
  label: 'page',
  responseCode: 200,
  responseMessage: 'OK',
  threadName: 'page 1-1',
  success: true,
  failureMessage: '',
  bytes: 120 + i,
  sentBytes: 66,
  grpThreads: 10,
  allThreads: 10,
  URL: 'http://127.0.0.1:1/page/',
  latency: i % 5,
  idleTime: 0,
  connect: i === 0 ? 3 : 0,
  ...extra
})

test('JTL_FIELDS are JMeter 5.6 default CSV columns in order', () => {
  assert.equal(JTL_FIELDS.join(','), 'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,' +
    'sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect')
  assert.equal(JTL_HEADER, JTL_FIELDS.join(',') + '\n')
})

test('quoting follows JMeter: only fields with a comma, quote, CR or LF are quoted, inner quotes doubled', () => {
  assert.equal(quoteCsv('plain text'), 'plain text')
  assert.equal(quoteCsv('a,b'), '"a,b"')
  assert.equal(quoteCsv('say "hi"'), '"say ""hi"""')
  assert.equal(quoteCsv('two\nlines'), '"two\nlines"')
  assert.equal(quoteCsv('cr\rhere'), '"cr\rhere"')
  assert.equal(quoteCsv(undefined), '')
  assert.equal(quoteCsv(42), '42')
})

test('awkward labels, messages and URLs round-trip through csv-parse', async (t) => {
  const path = join(tmp(t), 'samples.jtl')
  const w = createJtlWriter(path)
  const nasty = [
    { label: 'a,b', responseMessage: 'He said "no"', failureMessage: 'line1\nline2', URL: 'http://127.0.0.1:1/x?a=1,2' },
    { label: '"quoted"', responseMessage: 'CR\r\nLF', failureMessage: ',', URL: 'http://127.0.0.1:1/é' },
    { label: 'ünïcödé ✓', responseMessage: '', failureMessage: '""', threadName: 'grp, 1-1' }
  ]
  nasty.forEach((n, i) => w.write(sample(i, { ...n, success: i !== 1 })))
  await w.close()
  const rows = parse(readFileSync(path, 'utf8'))
  assert.deepEqual(rows[0], [...JTL_FIELDS])
  assert.equal(rows.length, 1 + nasty.length)
  nasty.forEach((n, i) => {
    const rec = Object.fromEntries(JTL_FIELDS.map((f, k) => [f, rows[i + 1][k]]))
    assert.equal(rec.label, n.label)
    assert.equal(rec.responseMessage, n.responseMessage)
    assert.equal(rec.failureMessage, n.failureMessage)
    if (n.URL) assert.equal(rec.URL, n.URL)
    if (n.threadName) assert.equal(rec.threadName, n.threadName)
    assert.equal(rec.success, i !== 1 ? 'true' : 'false')
    assert.equal(rec.timeStamp, String(1700000000000 + i))
    assert.equal(rec.dataType, 'text')
  })
})

test('writeFields quotes raw column values the same way', async (t) => {
  const path = join(tmp(t), 'samples.jtl')
  const w = createJtlWriter(path)
  const fields = ['1700000000000', '5', 'x,"y"', '200', 'OK', 't 1-1', '', 'true', '', '10', '20', '1', '1', 'http://h/', '4', '0', '0']
  w.writeFields(fields)
  await w.close()
  assert.deepEqual(parse(readFileSync(path, 'utf8'))[1], fields)
})

test('many rows over small chunks: every row once, in order, and the file only appears at close', async (t) => {
  const path = join(tmp(t), 'samples.jtl')
  const w = createJtlWriter(path, { chunkBytes: 4096 })
  const n = 20000
  for (let i = 0; i < n; i++) w.write(sample(i))
  assert.equal(existsSync(path), false, 'nothing at the final path before close')
  assert.equal(existsSync(`${path}.tmp`), true)
  await w.close()
  assert.equal(existsSync(`${path}.tmp`), false)
  const text = readFileSync(path, 'utf8')
  const lines = text.trimEnd().split('\n')
  assert.equal(lines.length, n + 1)
  assert.equal(w.rows, n)
  for (let i = 0; i < n; i += 997) assert.equal(lines[i + 1], formatJtlRow(sample(i)).trimEnd())
  assert.ok(text.endsWith('\n'))
})

test('abort() synchronously leaves a complete, readable file with every row written so far', (t) => {
  const path = join(tmp(t), 'samples.jtl')
  const w = createJtlWriter(path, { chunkBytes: 8192 })
  for (let i = 0; i < 5000; i++) w.write(sample(i))
  w.abort()
  w.write(sample(99999)) // ignored after abort
  const rows = parse(readFileSync(path, 'utf8'))
  assert.equal(rows.length, 5001)
  assert.equal(rows[5000][0], String(1700000000000 + 4999))
  assert.equal(existsSync(`${path}.tmp`), false)
})

test('recoverJtl cuts a torn last row off what a killed writer left', (t) => {
  const path = join(tmp(t), 'samples.jtl')
  writeFileSync(`${path}.tmp`, JTL_HEADER + formatJtlRow(sample(1)) + formatJtlRow(sample(2)).slice(0, 20))
  assert.equal(recoverJtl(path), true)
  const rows = parse(readFileSync(path, 'utf8'))
  assert.equal(rows.length, 2)
  assert.equal(recoverJtl(path), false, 'nothing left to recover')
})
