// rc/cpu-summary.js: the multi-core study's per-core table from a timeline, on hand-made timelines with known answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { summarizeCpu } from '../rc/cpu-summary.js'

/** @param {any} o @returns {import('../rc/sampler.js').Timeline} */
const tl = (o) => o
const sample = (t, server, host) => ({ t, server, serverTotal: server.reduce((a, b) => a + b, 0) / 100, host })

// 1 s samples ending at t; the steady window [1000, 4000] holds the samples ending at 2000, 3000, 4000 (midpoints
// inside)
const timeline = tl({
  intervalMs: 1000,
  cpus: 2,
  source: 'cgroup-v1',
  samples: [
    sample(1000, [0, 0], [5, 5]),
    sample(2000, [80, 10], [90, 30]),
    sample(3000, [70, 20], [80, 40]),
    sample(4000, [90, 1], [100, 20]),
    sample(5000, [0, 0], [3, 3])
  ]
})

test('the steady window: per-core means, highest and lowest core, spread, overall, total in cores, and the host', () => {
  const s = summarizeCpu(timeline, { from: 1000, to: 4000 })
  // core 0: (80 + 70 + 90) / 3 = 80; core 1: (10 + 20 + 1) / 3 = 10.333...
  assert.deepEqual(s.cores, [{ core: 0, usage: 80 }, { core: 1, usage: 10.3 }])
  assert.equal(s.highest, 80)
  assert.equal(s.highestCore, 0)
  assert.equal(s.lowest, 10.3)
  assert.equal(s.lowestCore, 1)
  assert.equal(s.spread, 69.7) // 80 - 10.333 = 69.667
  assert.equal(s.overall, 45.2) // 90.333 / 2 = 45.167
  assert.equal(s.total, 0.9) // 90.333 / 100
  assert.equal(s.samples, 3)
  assert.equal(s.source, 'cgroup-v1')
  // host: core 0 (90 + 80 + 100) / 3 = 90, core 1 (30 + 40 + 20) / 3 = 30
  assert.deepEqual(s.host, { cores: [{ core: 0, usage: 90 }, { core: 1, usage: 30 }], highest: 90, lowest: 30, spread: 60, overall: 60 })
  assert.deepEqual(s.containers, [])
})

test('without a window every sample counts; a window that cuts a sample keeps it only when its midpoint is inside', () => {
  const all = summarizeCpu(timeline)
  assert.equal(all.samples, 5)
  assert.deepEqual(all.cores, [{ core: 0, usage: 48 }, { core: 1, usage: 6.2 }]) // 240 / 5, 31 / 5
  const cut = summarizeCpu(timeline, { from: 1600, to: 3400 }) // midpoints 1500 (out), 2500 (in), 3500 (out)
  assert.equal(cut.samples, 1)
  assert.deepEqual(cut.cores.map(c => c.usage), [70, 20])
})

test('reproduces the raw Node.js row of the thesis\' Table 4.3.1 (relaxed load)', () => {
  const s = summarizeCpu(tl({ intervalMs: 1000, cpus: 2, source: 'threads', samples: [sample(1000, [77.7, 1.9], [77.7, 1.9])] }))
  assert.deepEqual([s.highest, s.highestCore, s.lowest, s.lowestCore, s.spread, s.overall], [77.7, 0, 1.9, 1, 75.8, 39.8])
})

test('a server given some of the cores: highest, lowest, spread and overall over those, every core listed and in the total', () => {
  // 4 cores: the server on 1 and 2 (its partition), the generator's CPU is not the server's: 0 and 3 near idle
  const four = tl({ intervalMs: 1000, cpus: 4, source: 'cgroup-v2', samples: [sample(1000, [0.5, 90, 30, 0], [60, 91, 31, 95])] })
  const s = summarizeCpu(four, {}, { serverCores: [2, 1] })
  assert.deepEqual([s.highest, s.highestCore, s.lowest, s.lowestCore, s.spread, s.overall, s.total], [90, 1, 30, 2, 60, 60, 1.21])
  assert.deepEqual(s.serverCores, [1, 2])
  assert.equal(s.cores.length, 4)
  assert.deepEqual(s.host, { cores: s.host.cores, highest: 95, lowest: 31, spread: 64, overall: 69.3 }, 'the host: every core')
  // every core given (or none said): the table of every core, no serverCores
  for (const all of [summarizeCpu(four, {}, { serverCores: [0, 1, 2, 3] }), summarizeCpu(four)]) {
    assert.deepEqual([all.lowest, all.lowestCore, all.overall, all.serverCores], [0, 3, 30.1, undefined])
  }
})

test('an empty window or timeline gives zeros and samples: 0, never NaN', () => {
  for (const s of [
    summarizeCpu(timeline, { from: 10000, to: 20000 }),
    summarizeCpu(tl({ intervalMs: 1000, cpus: 2, source: 'threads', samples: [] }))
  ]) {
    assert.equal(s.samples, 0)
    assert.deepEqual(s.cores, [{ core: 0, usage: 0 }, { core: 1, usage: 0 }])
    const numbers = [s.highest, s.lowest, s.spread, s.overall, s.total, s.host.highest, s.host.lowest, s.host.spread, s.host.overall]
    assert.deepEqual(numbers, new Array(numbers.length).fill(0))
    // null only where nothing was measured by design: no CPU quota, no throttling
    const { throttling, ...figures } = s
    assert.equal(throttling, null)
    assert.ok(!JSON.stringify(figures).includes('null'), JSON.stringify(s))
  }
  const none = summarizeCpu(undefined)
  assert.equal(none.samples, 0)
  assert.deepEqual(none.cores, [])
  assert.equal(none.total, 0)
})
