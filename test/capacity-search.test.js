// The capacity search's policy on probes whose answer is known: a deterministic step gives the capacity within the
// gap its probes leave; the bracket walks as documented; the posterior reads a known curve; a queue that grows misses;
// the open model counts the answers of its window; the views print the new figures and still read old records.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { capacityPosterior, createSearch, gapAround, runSearch } from '../executor/capacity/capacity-search.js'
import { judgeProbe, queueGrowth, QUEUE_Z } from '../executor/capacity/capacity.js'
import { formatCapacity } from '../executor/capacity/capacity-text.js'
import { capacityAsRun } from '../analyzer/capacity-runs.js'
import { runOpen } from '../executor/drivers/open-model.js'

/** @returns {'meets'|'misses'} */
const verdictOf = (met) => (met ? 'meets' : 'misses')

test('a deterministic step probe: the capacity lies between the highest rate met and the lowest missed, within 0.5% of C', async () => {
  for (const C of [97.3, 200, 1234.5, 5000]) {
    for (const start of [0.3 * C, 0.9 * C, 1.8 * C]) {
      const state = await runSearch(rate => verdictOf(rate <= C), { start })
      assert.equal(state.stop, 'found')
      const post = capacityPosterior(state.observations)
      assert.ok(post)
      const gap = gapAround(state.observations, post.capacity)
      assert.ok(gap.lo <= C && C < gap.hi, `C ${C} from ${start}: gap ${gap.lo}–${gap.hi}`)
      assert.ok(gap.lo <= post.capacity && post.capacity <= gap.hi, `capacity ${post.capacity} in the gap ${gap.lo}–${gap.hi}`)
      assert.ok(Math.abs(post.capacity / C - 1) <= 0.005, `C ${C} from ${start}: ${post.capacity}`)
      assert.ok(post.lo <= C && C <= post.hi && post.lo < post.capacity && post.capacity < post.hi)
      assert.equal(state.observations.filter(o => o.phase === 'boundary').length, 12)
    }
  }
})

test('the bracket: steps of 1.25 up until a rate misses, down until one meets; then the boundary probes, a quarter of it first', () => {
  const up = createSearch({ start: 100 })
  const seen = []
  for (const met of [true, true, false]) { seen.push(up.next()); up.observe(verdictOf(met)) }
  assert.deepEqual(seen, [{ rate: 100, phase: 'bracket' }, { rate: 125, phase: 'bracket' }, { rate: 156.3, phase: 'bracket' }])
  assert.deepEqual(up.state().bracket, { lo: 125, hi: 156.3 })
  const mid = Math.sqrt(125 * 156.3)
  assert.deepEqual(up.next(), { rate: Number(mid.toPrecision(4)), phase: 'boundary' })
  // a meet moves it up by a quarter of the bracket (on the log scale): a bisection's step
  up.observe('meets')
  assert.ok(Math.abs(up.next().rate / (mid * Math.sqrt(Math.sqrt(156.3 / 125))) - 1) < 0.001)
  const down = createSearch({ start: 100 })
  down.observe('misses')
  assert.equal(down.next().rate, 80)
  down.observe('meets')
  assert.deepEqual(down.state().bracket, { lo: 80, hi: 100 })
  // nothing meets: down to 1 request a second, then no capacity
  const none = createSearch({ start: 2 })
  none.observe('misses')
  assert.equal(none.next().rate, 1.6)
  const rates = []
  for (let q = none.next(); q; q = none.next()) { rates.push(q.rate); none.observe('misses') }
  assert.deepEqual(rates, [1.6, 1.28, 1.024, 1])
  assert.equal(none.state().stop, 'no-capacity')
  assert.equal(none.next(), null)
  // the load side could not drive a rate in the bracket: the search ends there
  const loadSide = createSearch({ start: 100 })
  loadSide.observe('meets')
  loadSide.observe('inconclusive')
  assert.equal(loadSide.state().stop, 'load-side')
  assert.throws(() => loadSide.observe('meets'), /over/)
  // near the boundary the same rate is probed again, left out of the estimate; the third time the search gives up
  const near = createSearch({ bracket: { lo: 100, hi: 125 } })
  const at = near.next()
  near.observe('inconclusive')
  assert.deepEqual(near.next(), at)
  near.observe('inconclusive')
  near.observe('inconclusive')
  assert.equal(near.state().stop, 'load-side')
})

test('a probe that returns null stops the search where it is (a budget spent): no capacity', async () => {
  let n = 0
  const state = await runSearch(rate => (++n > 5 ? null : verdictOf(rate <= 100)), { start: 80 })
  assert.equal(state.stop, null)
  assert.equal(state.observations.length, 5)
})

test('the posterior: probes symmetric about a rate put the capacity there; more probes, a narrower interval', () => {
  const around = (center, spread, k) => {
    /** @type {{ rate: number, verdict: 'meets'|'misses' }[]} */
    const obs = []
    for (let i = -k; i <= k; i++) {
      if (i === 0) continue
      const rate = center * Math.exp(spread * i / k)
      // within the spread both verdicts at every rate, beyond it the sure one
      obs.push({ rate, verdict: i < 0 ? 'meets' : 'misses' })
      if (Math.abs(i) <= k / 2) obs.push({ rate, verdict: i < 0 ? 'misses' : 'meets' })
    }
    return obs
  }
  const few = capacityPosterior(around(500, 0.05, 4))
  const many = capacityPosterior(around(500, 0.05, 16))
  for (const p of [few, many]) {
    assert.ok(Math.abs(p.capacity / 500 - 1) < 0.002, `${p.capacity}`)
    assert.ok(p.lo < 500 && p.hi > 500)
    assert.equal(p.level, 0.95)
  }
  assert.ok(many.hi - many.lo < few.hi - few.lo, `${many.lo}–${many.hi} against ${few.lo}–${few.hi}`)
  assert.ok(many.noise > 0.01 && many.noise < 0.1, `noise ${many.noise}`)
  assert.equal(capacityPosterior([{ rate: 10, verdict: 'meets' }, { rate: 20, verdict: 'meets' }]), null)
  assert.equal(capacityPosterior([{ rate: 10, verdict: 'meets' }, { rate: 20, verdict: 'inconclusive' }]), null)
})

// A probe's run.json, as much of it as judging reads, with the open model's count of its window's answers.
const probeRun = ({ rate, sent, answered, meanMs = 5, p99 = 20, maxLagMs = 0 }) => ({
  config: { strategy: 'up', instances: 1, rate },
  environment: { cpus: 2 },
  summary: { throughput: rate, errorRate: 0, latency: { mean: meanMs, p99 } },
  cpu: { total: 0.5 },
  load: { schedule: { planned: sent, sent, late: 0, queued: 0, maxLagMs, answered } },
  validity: { ok: true, flags: [] }
})

test('a probe whose queue grew over its window misses, whatever its latency: the issue\'s 200 req/s server is not given 218', () => {
  const slo = { p99: 250, errors: 0.001 }
  // 218 req/s offered for 5 s to a server that answers 200 a second: 90 more requests in the system at the end
  const over = judgeProbe(probeRun({ rate: 218, sent: 1090, answered: 1000, meanMs: 180, p99: 240 }), 218, slo)
  assert.equal(over.verdict, 'misses')
  assert.match(over.why.join(), /the queue grew by 90 requests over the window \(1000 answered of 1090 sent/)
  // keeping up: the window's answers match its sends but for the few in flight at either end
  assert.equal(judgeProbe(probeRun({ rate: 190, sent: 950, answered: 948 }), 190, slo).verdict, 'meets')
  // the allowance: QUEUE_Z standard deviations of the difference of two Poisson counts around rate x mean latency
  const q = queueGrowth(probeRun({ rate: 200, sent: 1000, answered: 990, meanMs: 40 }), 200)
  assert.equal(q.grew, 10)
  assert.ok(Math.abs(q.allowed - QUEUE_Z * Math.sqrt(2 * (1 + 8))) < 1e-9)
  assert.equal(judgeProbe(probeRun({ rate: 200, sent: 1000, answered: 990, meanMs: 40 }), 200, slo).verdict, 'misses')
  assert.equal(judgeProbe(probeRun({ rate: 200, sent: 1000, answered: 992, meanMs: 40 }), 200, slo).verdict, 'meets')
  // a generator up to 20 ms late notes its answers up to 20 ms late too: 4 more in flight at 200 req/s
  assert.ok(Math.abs(queueGrowth(probeRun({ rate: 200, sent: 1000, answered: 990, meanMs: 40, maxLagMs: 20 }), 200).allowed -
    QUEUE_Z * Math.sqrt(2 * (1 + 12))) < 1e-9)
  // without the count (JMeter, older runs) the served share decides, as before
  const old = probeRun({ rate: 100, sent: 1000, answered: 0 })
  delete old.load.schedule.answered
  assert.equal(queueGrowth(old, 100), null)
  assert.equal(judgeProbe({ ...old, summary: { ...old.summary, throughput: 80 } }, 100, slo).verdict, 'misses')
})

test('the open model counts the answers of its steady window: a server that serves 100 a second offered 150 falls behind', { timeout: 30000 }, async (t) => {
  // a server of exactly known rate (test/fixtures/apps/fixed-rate.js's virtual clock)
  let free = 0
  const server = http.createServer((req, res) => {
    const now = performance.now()
    free = Math.max(now, free) + 10
    setTimeout(() => res.end('ok'), free - now)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => { server.closeAllConnections(); server.close() })
  // @ts-ignore TCP address
  const url = `http://127.0.0.1:${server.address().port}/`
  /** the open model's run, judged as a probe: the queue's growth against its allowance (mean latency from its rows) */
  const probe = async (rate) => {
    const elapsed = []
    // the writer's interface: an answer's row comes as a JTL line (its elapsed the second field), a failure as a row
    const writer = { writeLine: (line) => elapsed.push(Number(line.split(',')[1])), write: (row) => elapsed.push(row.elapsed), micro () {} }
    /** @type {any} */
    const result = await runOpen(/** @type {any} */ ({ url, rate, duration: 2, warmup: 0.5, timeoutSec: 10, label: 'x', method: 'GET', headers: {} }),
      /** @type {any} */ (writer))
    const meanMs = elapsed.reduce((a, e) => a + e, 0) / elapsed.length
    const { sent, answered, maxLagMs } = result.schedule
    return { schedule: result.schedule, queue: queueGrowth(probeRun({ rate, sent, answered, meanMs, maxLagMs }), rate) }
  }
  const keeps = await probe(50)
  assert.ok(keeps.queue.grew <= keeps.queue.allowed, JSON.stringify(keeps))
  free = 0
  const behind = await probe(150)
  // over the 2 s window 300 are sent and about 200 answered (fewer when this process's timers run late)
  assert.equal(behind.schedule.sent, 300)
  assert.ok(behind.schedule.answered >= 150 && behind.schedule.answered <= 205, JSON.stringify(behind.schedule))
  assert.ok(behind.queue.grew > behind.queue.allowed, JSON.stringify(behind))
})

const shape = { strategy: 'up', instances: 1, driver: 'autocannon' }

test('the text view and the analyzer read the new record, and still read one written before it', () => {
  const record = {
    id: 'capacity-x',
    dir: '/out/capacity-x',
    config: shape,
    benchmark: 'cpu',
    objective: 'p99 ≤ 250 ms',
    meaning: 'the offered rate at which a probe meets the objective, its queue not growing, with probability 0.5; the interval ...',
    capacity: 203.4,
    interval: { lo: 199.1, hi: 207.9, level: 0.95 },
    noise: 0.021,
    bounds: { lo: 203.1, hi: 204 },
    confirmed: true,
    atCapacity: { latency: { p99: 30 }, errorRate: 0 },
    limit: null,
    probes: [{}, {}],
    seconds: 100,
    notes: []
  }
  const text = formatCapacity(record)
  assert.match(text, /203 req\/s, 95% interval 199–208 req\/s/)
  assert.match(text, /meaning: the offered rate at which a probe meets the objective, its queue not growing, with probability 0\.5/)
  assert.match(text, /varies by about 2\.1% from probe to probe/)
  const asRun = capacityAsRun(record)
  assert.equal(asRun.summary.throughput, 203.4)
  assert.deepEqual(asRun.capacityInterval, record.interval)
  assert.equal(asRun.validity.ok, true)
  // a record of the search before (highest rate met, confirmed; precision; no interval)
  const old = { ...record, interval: undefined, meaning: undefined, noise: undefined, capacity: 200, precision: 0.05, bounds: { lo: 200, hi: 210 } }
  assert.match(formatCapacity(old), /200 req\/s \(the highest rate met, confirmed; the next rate up, 210 req\/s, missed\)/)
  assert.equal(capacityAsRun(old).capacityInterval, null)
  assert.equal(capacityAsRun({ ...old, capacity: null, confirmed: false, notes: [] }).validity.flags[0].name, 'capacity-not-found')
})
