// rc/proc-stat.js: parsing /proc/stat and per-core busy percent, against recorded readings with hand-computed answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { availableParallelism, tmpdir } from 'node:os'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { readProcStat, parseProcStat, coreUsage, interruptCores } from '../rc/proc-stat.js'

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'proc-stat')

test('readProcStat reads every core of a recorded /proc/stat, skipping the aggregate line and what follows', () => {
  const t0 = readProcStat(join(FIX, 't0'))
  assert.deepEqual(t0.map(c => c.core), [0, 1, 2, 3])
  assert.deepEqual(t0[0], {
    core: 0,
    user: 10000,
    nice: 50,
    system: 5000,
    idle: 90000,
    iowait: 250,
    irq: 0,
    softirq: 200,
    steal: 0,
    busy: 10000 + 50 + 5000 + 200,
    total: 10000 + 50 + 5000 + 90000 + 250 + 200
  })
})

test('coreUsage gives each core busy / elapsed ticks, iowait counted as idle, steal as busy, guest not twice', () => {
  const usage = coreUsage(readProcStat(join(FIX, 't0')), readProcStat(join(FIX, 't1')))
  // deltas t1 - t0, by hand from the fixture:
  // core0: user 80, system 10, idle 5, softirq 5            -> busy 95 of 100
  // core1: idle 100                                          -> busy 0 of 100
  // core2: user 60 (20 of it guest, already inside user), system 30, iowait 10 -> busy 90 of 100
  // core3: user 50, system 20, idle 285, iowait 10, softirq 5, steal 30 -> busy 105 of 400
  assert.deepEqual(usage, [95, 0, 90, 105 / 400 * 100])
})

test('coreUsage: an offline core reads 0, counters that went back are clamped, no elapsed ticks is 0', () => {
  const a = parseProcStat('cpu  1 1 1 1\ncpu0 100 0 0 100 0 0 0 0\ncpu2 100 0 0 100 0 0 0 0\nintr 0\n')
  const b = parseProcStat('cpu  1 1 1 1\ncpu0 100 0 0 100 0 0 0 0\ncpu1 50 0 0 50 0 0 0 0\ncpu2 90 0 0 130 0 0 0 0\n')
  // core0 did not move, core1 came online (no previous reading), core2's busy went back by 10
  assert.deepEqual(coreUsage(a, b), [0, 0, 0])
})

test('the real /proc/stat has one entry per core and percentages within 0-100', async () => {
  const a = readProcStat()
  await new Promise(resolve => setTimeout(resolve, 150))
  const b = readProcStat()
  assert.ok(b.length >= availableParallelism(), `${b.length} cores in /proc/stat`)
  const usage = coreUsage(a, b)
  assert.equal(usage.length, Math.max(...b.map(c => c.core)) + 1)
  for (const u of usage) assert.ok(u >= 0 && u <= 100 && Number.isFinite(u), String(u))
})

test('a /proc/stat larger than the read buffer (a 512-core host) is read whole', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-bigstat-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const lines = Array.from({ length: 512 }, (_, i) => `cpu${i} ${1000 + i} 0 500 90000 10 0 5 0 0 0`)
  writeFileSync(join(dir, 'stat'), `cpu  1 2 3 4 5 6 7 8 0 0\n${lines.join('\n')}\nintr ${'0 '.repeat(5000)}\n`)
  const cores = readProcStat(dir)
  assert.equal(cores.length, 512)
  assert.deepEqual([cores[511].core, cores[511].user], [511, 1511])
})

test('interrupt work: irq and softirq ticks over total ticks, summed over cores', () => {
  const line = (n, irq, softirq, idle) => `cpu${n} 100 0 100 ${idle} 0 ${irq} ${softirq} 0 0 0`
  const before = parseProcStat([line(0, 10, 10, 1000), line(1, 0, 0, 1000)].join('\n'))
  const after = parseProcStat([line(0, 30, 40, 1050), line(1, 0, 25, 1075)].join('\n'))
  // core 0: 50 of 100 ticks; core 1: 25 of 100
  assert.equal(interruptCores(before, after), 0.75)
  assert.equal(interruptCores(after, after), 0)
})
