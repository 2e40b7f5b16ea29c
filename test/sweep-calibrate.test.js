// `executor calibrate` on real local servers: a server with a known capacity, the page benchmark, and an experiment
// that references a calibration file it has to make first.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, ROOT } from './helpers/cli.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-cal-'))
const CAPACITY = join(ROOT, 'test', 'fixtures', 'apps', 'capacity.js')
const probeRuns = dir => readdirSync(dir).map(d => JSON.parse(readFileSync(join(dir, d, 'run.json'), 'utf8')))

test('a server that refuses more than 30 connections: exhausted is exactly 30, relaxed below it, on one deployment', { timeout: 120000 }, async () => {
  const dir = tmp()
  const file = join(dir, 'cal.json')
  const r = await runCli('executor', ['calibrate', '--app', CAPACITY, '--param', 'capacity=30', '--backend', 'local',
    '--duration', '1', '--warmup', '0.5', '--confirm', '2', '--max-probes', '24', '--out', file, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const cal = JSON.parse(r.stdout)
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), cal, 'the file holds what was printed')
  assert.equal(cal.schema, 'nodescale.calibration/v1')
  assert.equal(cal.exhausted.concurrency, 30, JSON.stringify(cal.probes.map(p => [p.concurrency, p.errors])))
  assert.equal(cal.exhausted.confirmed, true)
  assert.equal(cal.exhausted.bounded, false)
  assert.ok(cal.relaxed.concurrency < cal.exhausted.concurrency, `relaxed ${cal.relaxed.concurrency}`)
  assert.equal(cal.relaxed.repeats.length, 2)
  if (cal.relaxed.inWindow) assert.ok(cal.relaxed.repeats[0] >= 75 && cal.relaxed.repeats[0] <= 85)
  // every probe above the capacity saw failed requests, every one at or below it none
  for (const p of cal.probes) assert.equal(p.errors > 0, p.concurrency > 30, `c=${p.concurrency}: ${p.errors} errors`)
  assert.ok(cal.probes.length <= 24)
  assert.match(r.stderr, /probe {2}1 {2}relaxed +c=1 /)
  const runs = probeRuns(cal.probeRuns)
  assert.equal(runs.length, cal.probes.length)
  assert.equal(new Set(runs.map(run => run.placement[0].pid)).size, 1, 'one deployment served every probe')
})

test('calibrating the page benchmark on raw Node: bounded, consistent, written', { timeout: 120000 }, async () => {
  const dir = tmp()
  const r = await runCli('executor', ['calibrate', '--benchmark', 'page', '--backend', 'local', '--duration', '2', '--warmup', '0.5',
    '--confirm', '2', '--max-concurrency', '32', '--out', join(dir, 'page.json')])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /calibration: page on up x1 \(local\)/)
  assert.match(r.stdout, /relaxed {4}c=\d+ {2}busiest core [\d.]+%/)
  assert.match(r.stdout, /exhausted {2}c=\d+/)
  const cal = JSON.parse(readFileSync(join(dir, 'page.json'), 'utf8'))
  assert.ok(cal.relaxed.concurrency >= 1 && cal.relaxed.concurrency <= cal.exhausted.concurrency)
  assert.ok(cal.exhausted.concurrency <= 32)
  assert.ok(cal.relaxed.highest > 20, `the busiest core was busy: ${cal.relaxed.highest}%`)
  assert.equal(cal.cores, cal.environment.cpus)
  assert.ok(existsSync(join(dir, 'page-probes')))
})

test('an experiment whose calibration file is missing makes it first, then runs at the levels it found', { timeout: 120000 }, async () => {
  const dir = tmp()
  const file = join(dir, 'levels.yml')
  writeFileSync(file, `backend: local
app: ${CAPACITY}
params: { capacity: 30 }
strategies: [up]
instances: 1
concurrency: [relaxed, exhausted, exhausted*2]
calibration: cal/levels.json
calibrate: { duration: 1, warmup: 0.5, confirm: 1, max-probes: 20 }
duration: 1
warmup: 0
analysis: { fit: none, cpu-table: true }
`)
  const out = join(dir, 'out')
  const r = await runCli('executor', ['sweep', file, '--out', out])
  // exhausted*2 is over capacity: that run is done (its errors are data), the sweep too
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /calibration .*levels\.json is missing: calibrating/)
  const cal = JSON.parse(readFileSync(join(dir, 'cal', 'levels.json'), 'utf8'))
  assert.equal(cal.exhausted.concurrency, 30)
  const [id] = readdirSync(out)
  const runs = readdirSync(join(out, id)).filter(d => existsSync(join(out, id, d, 'run.json')))
    .map(d => JSON.parse(readFileSync(join(out, id, d, 'run.json'), 'utf8')))
  const byLevel = Object.fromEntries(runs.map(run => [run.config.sweep.level, run]))
  assert.equal(byLevel.exhausted.config.concurrency, 30)
  assert.equal(byLevel.exhausted.summary.errors, 0)
  assert.equal(byLevel['exhausted*2'].config.concurrency, 60)
  assert.ok(byLevel['exhausted*2'].summary.errors > 0)
  assert.equal(byLevel.relaxed.config.concurrency, cal.relaxed.concurrency)
  assert.match(r.stdout, /per-core CPU of the server[\s\S]*up x1 +relaxed = \d+/)
  assert.ok(existsSync(join(out, id, 'calibration.json')), 'the sweep keeps a copy of its calibration')
  // now the file exists: the plan uses it without calibrating again
  const dry = await runCli('executor', ['sweep', file, '--dry-run'])
  assert.match(dry.stdout, /calibration .*levels\.json: relaxed \d+, exhausted 30, \d+ cores/)
  assert.match(dry.stdout, /up x1 +capacity +c=60 \(exhausted\*2\)/)
})
