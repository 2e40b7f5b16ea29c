// Results others can read: the JSON Schemas of run.json, sweep.json, latency.json and timeline.json (schemas/, named by
// each file's schema field), held against files a real sweep writes, the recorded fixtures of older v1 files, and files
// broken on purpose; and `analyzer export` of a sweep as CSV and NDJSON, parsed back.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { SCHEMA_FILES, RUN_SCHEMA, SWEEP_SCHEMA, LATENCY_SCHEMA, TIMELINE_SCHEMA, CAPACITY_SCHEMA } from '../lib/run-files.js'
import { EXPORT_COLUMNS } from '../analyzer/export.js'
import { ROOT, runCli } from './helpers/cli.js'
import { assertValidFile, assertValidSweepFolder, validatorOf } from './helpers/schemas.js'
import { writeSweepRuns } from './helpers/sweep-runs.js'

const tmp = mkdtempSync(join(tmpdir(), 'ns-schemas-'))
test.after(() => rmSync(tmp, { recursive: true, force: true }))

/** A real sweep on the local backend, made once: cm at 1 and 2 workers, 1 s each. */
let made
async function realSweep () {
  if (made) return made
  const file = join(tmp, 'tiny.yml')
  writeFileSync(file,
    'name: tiny\nbackend: local\nbenchmark: baseline\nstrategies: [cm]\ninstances: [1, 2]\nwarmup: 0\nconcurrency: [2]\nduration: 1\nrepeats: 1\n')
  const out = join(tmp, 'sw')
  const r = await runCli('executor', ['sweep', file, '--out', out, '--quiet', '--no-report'], { timeoutMs: 120_000 })
  // exit 1 only when a run failed; an invalid run (this machine is shared) is still a run whose files are written
  assert.ok(r.code === 0 || r.code === 1, r.stderr)
  const [id] = readdirSync(out)
  const dir = join(out, id)
  const runs = readdirSync(dir).filter(d => existsSync(join(dir, d, 'run.json'))).map(d => join(dir, d))
  assert.equal(runs.length, 2, r.stderr)
  made = { dir, runs }
  return made
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))
const clone = (v) => structuredClone(v)

test('each schema compiles as draft 2020-12 and is the one its file\'s schema field names; none is left unnamed', () => {
  assert.deepEqual(Object.keys(SCHEMA_FILES).sort(), [LATENCY_SCHEMA, RUN_SCHEMA, SWEEP_SCHEMA, TIMELINE_SCHEMA].sort())
  for (const [name, file] of Object.entries(SCHEMA_FILES)) {
    const schema = readJson(join(ROOT, file))
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', file)
    assert.equal(schema.properties.schema.const, name, `${file} holds ${name}`)
    assert.match(file, new RegExp(`^schemas/${name.split(/[./]/)[1]}\\.${name.split('/')[1]}\\.schema\\.json$`), 'named <file>.<version>.schema.json')
    assert.equal(typeof validatorOf(name), 'function')
  }
  assert.deepEqual(readdirSync(join(ROOT, 'schemas')).map(f => `schemas/${f}`).sort(), Object.values(SCHEMA_FILES).sort())
})

test('the files a real sweep writes are valid: sweep.json, and each run\'s run.json, latency.json and timeline.json', { timeout: 150_000 }, async () => {
  const { dir } = await realSweep()
  assert.equal(assertValidSweepFolder(dir), 7, 'sweep.json and three files per run')
})

test('older v1 files (the recorded fixtures) are valid: a field added within v1 is not required', () => {
  const files = [
    ...['run-done-cm2.json', 'run-failed-hs4.json', 'run-interrupted-up1.json'].map(f => join(ROOT, 'test/fixtures/usl', f)),
    ...readdirSync(join(ROOT, 'test/fixtures/report/sweep'))
      .flatMap(d => ['run.json', 'timeline.json'].map(f => join(ROOT, 'test/fixtures/report/sweep', d, f)))
  ].filter(f => existsSync(f))
  assert.ok(files.length > 20, `${files.length} files`)
  for (const f of files) assertValidFile(f)
})

test('a file broken on purpose is refused, at the path of what is wrong', { timeout: 150_000 }, async () => {
  const { dir, runs } = await realSweep()
  const run = readJson(join(runs[0], 'run.json'))
  const latency = readJson(join(runs[0], 'latency.json'))
  const timeline = readJson(join(runs[0], 'timeline.json'))
  const sweep = readJson(join(dir, 'sweep.json'))
  /** @type {[string, any, (d: any) => void, RegExp][]} */
  const cases = [
    [RUN_SCHEMA, run, d => { d.schema = 'nodescale.run/v2' }, /^\/schema /],
    [RUN_SCHEMA, run, d => { d.status = 'finished' }, /^\/status /],
    [RUN_SCHEMA, run, d => { d.config.strategy = 'forks' }, /^\/config\/strategy /],
    [RUN_SCHEMA, run, d => { d.config.instances = 0 }, /^\/config\/instances /],
    [RUN_SCHEMA, run, d => { d.summary = null }, /^\/summary /],
    [RUN_SCHEMA, run, d => { d.summary.requests = -1 }, /^\/summary\/requests /],
    [RUN_SCHEMA, run, d => { d.summary.errorRate = 1.5 }, /^\/summary\/errorRate /],
    [RUN_SCHEMA, run, d => { delete d.validity.ok }, /^\/validity /],
    [RUN_SCHEMA, run, d => { d.startedAt = 'yesterday' }, /^\/startedAt /],
    [RUN_SCHEMA, run, d => { delete d.config }, /^\/ .*config/],
    [RUN_SCHEMA, run, d => { d.status = 'failed'; d.error = null }, /^\/error /],
    [LATENCY_SCHEMA, latency, d => { Object.values(d.labels)[0].count = '12' }, /^\/labels\/[^/]+\/count /],
    [LATENCY_SCHEMA, latency, d => { Object.values(d.labels)[0].latency.n[0] = -3 }, /^\/labels\/[^/]+\/latency\/n\/0 /],
    [TIMELINE_SCHEMA, timeline, d => { delete d.samples[0].t }, /^\/samples\/0 /],
    [TIMELINE_SCHEMA, timeline, d => { d.cpus = 0 }, /^\/cpus /],
    [SWEEP_SCHEMA, sweep, d => { d.plan[0].status = 'finished' }, /^\/plan\/0\/status /],
    [SWEEP_SCHEMA, sweep, d => { d.cells[0].index = 'first' }, /^\/cells\/0\/index /],
    [SWEEP_SCHEMA, sweep, d => { d.createdAt = 12 }, /^\/createdAt /]
  ]
  for (const [name, good, breakIt, where] of cases) {
    const validate = validatorOf(name)
    assert.ok(validate(good), `${name} as written is valid: ${JSON.stringify(validate.errors)}`)
    const bad = clone(good)
    breakIt(bad)
    assert.equal(validate(bad), false, `${name}: ${breakIt} is refused`)
    const said = (validate.errors ?? []).map(e => `${e.instancePath || '/'} ${e.message}`)
    assert.ok(said.some(s => where.test(s)), `${name}: ${breakIt}: ${said.join('; ')}`)
  }
  assert.equal(run.schema, RUN_SCHEMA)
  assert.equal(timeline.schema, TIMELINE_SCHEMA, 'timeline.json names its schema')
})

/**
 * A CSV's rows, each an object by the header's names.
 * @param {string} text
 * @returns {Record<string, string>[]}
 */
const csvRows = (text) => parse(text, { columns: true })

/** A row's value as CSV text holds it. */
const asCsv = (v) => (v === null ? '' : String(v))

test('analyzer export: one row per run of a sweep, as CSV and as NDJSON, parsed back to the runs\' own figures', { timeout: 150_000 }, async () => {
  const { dir, runs } = await realSweep()
  // the sweep's --out folder stands for it; -o writes the file and prints its path
  const csvFile = join(tmp, 'runs.csv')
  const csv = await runCli('analyzer', ['export', dir, '-o', csvFile])
  assert.equal(csv.code, 0, csv.stderr)
  assert.equal(csv.stdout.trim(), csvFile)
  const nd = await runCli('nodescale', ['export', dir, '--format', 'ndjson'])
  assert.equal(nd.code, 0, nd.stderr)
  const text = readFileSync(csvFile, 'utf8')
  const header = text.split('\n')[0].split(',')
  assert.deepEqual(header, EXPORT_COLUMNS.map(c => c.name))
  const rows = csvRows(text)
  const objects = nd.stdout.trim().split('\n').map(line => JSON.parse(line))
  assert.equal(rows.length, 2)
  assert.equal(objects.length, 2)
  for (const [i, o] of objects.entries()) {
    assert.deepEqual(Object.keys(o), header, 'every NDJSON row has every column, in order')
    assert.deepEqual(rows[i], Object.fromEntries(Object.entries(o).map(([k, v]) => [k, asCsv(v)])), 'CSV and NDJSON say the same')
  }
  for (const folder of runs) {
    const run = readJson(join(folder, 'run.json'))
    const o = objects.find(x => x.id === run.id)
    assert.ok(o, run.id)
    assert.equal(o.kind, 'run')
    assert.equal(o.dir, folder)
    assert.equal(o.status, run.status)
    assert.equal(o.sweep, run.config.sweep.id)
    assert.equal(o.strategy, 'cm')
    assert.equal(o.instances, run.config.instances)
    assert.equal(o.throughput, run.summary.throughput)
    assert.equal(o.requests, run.summary.requests)
    assert.equal(o.latencyP99, run.summary.latency.p99)
    assert.equal(o.serverCores, run.cpu.total)
    assert.equal(o.valid, run.validity.ok)
    assert.equal(o.flags, run.validity.flags.map(f => f.name).join(';'))
    assert.equal(o.bottleneck, run.diagnosis.bottleneck.kind)
    assert.equal(Number(rows.find(r => r.id === run.id).throughput), run.summary.throughput, 'the CSV\'s number is the run\'s, to the last digit')
  }
})

test('analyzer export: a capacity search is a row with its capacity, its probes rows of kind probe; fields that need quoting are quoted', async () => {
  const out = join(tmp, 'odd, "name"')
  mkdirSync(out)
  const sweepDir = writeSweepRuns(out, 'capacity', [
    { config: { strategy: 'hs', instances: 2, rate: 100, capacity: { search: 'search-1', phase: 'bracket' } }, throughput: 99 },
    {
      config: { strategy: 'hs', instances: 2, rate: 200, capacity: { search: 'search-1', phase: 'boundary' } },
      throughput: 150,
      validity: { ok: false, flags: [{ name: 'slo-missed', severity: 'invalid', message: 'p99, over' }] }
    }
  ])
  const search = {
    schema: CAPACITY_SCHEMA,
    id: 'search-1',
    status: 'done',
    createdAt: '2026-11-24T12:00:00.000Z',
    config: { strategy: 'hs', instances: 2, benchmark: 'cpu' },
    objective: { p99: 100 },
    capacity: 142.5,
    interval: { lo: 130, hi: 155, level: 0.95 },
    confirmed: true,
    atCapacity: { errorRate: 0, latency: { p99: 80 } }
  }
  writeFileSync(join(sweepDir, 'capacity.json'), JSON.stringify(search))
  const r = await runCli('analyzer', ['export', out])
  assert.equal(r.code, 0, r.stderr)
  const rows = csvRows(r.stdout)
  assert.deepEqual(rows.map(x => x.kind).sort(), ['capacity', 'probe', 'probe'])
  const found = rows.find(x => x.kind === 'capacity')
  assert.deepEqual([found.id, found.throughput, found.capacityLow, found.capacityHigh, found.valid, found.latencyP99],
    ['search-1', '142.5', '130', '155', 'true', '80'])
  assert.equal(found.dir, sweepDir, 'a folder name with a comma and quotes comes back whole')
  const missed = rows.find(x => x.capacityPhase === 'boundary')
  assert.deepEqual([missed.capacitySearch, missed.rate, missed.valid, missed.flags], ['search-1', '200', 'false', 'slo-missed'])
  const none = await runCli('analyzer', ['export', join(tmp, 'empty-nothing')])
  assert.equal(none.code, 2)
  const bad = await runCli('analyzer', ['export', out, '--format', 'xlsx'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--format/)
})

test('analyzer export: the CSV\'s done and valid rows, fitted as a points CSV, give the sweep\'s own σ, λ and γ', async () => {
  const out = join(tmp, 'fit')
  /** @type {{ config: Record<string, any>, throughput: number, validity?: any }[]} */
  const runs = [100, 190, 270, 340].flatMap((x, i) => [-2, 2].map(s => ({ config: { strategy: 'up', instances: i + 1 }, throughput: x + s })))
  // a run whose validity says it did not measure the server: the analyzer leaves it out; so must a reader of the CSV
  runs.push({
    config: { strategy: 'up', instances: 4 },
    throughput: 40,
    validity: { ok: false, flags: [{ name: 'generator-saturated', severity: 'invalid', message: 'the generator' }] }
  })
  const dir = writeSweepRuns(out, 'fit', runs)
  const r = await runCli('analyzer', ['export', dir])
  assert.equal(r.code, 0, r.stderr)
  const [header, ...lines] = r.stdout.trim().split('\n')
  const rows = csvRows(r.stdout)
  assert.equal(rows.length, 9)
  const kept = lines.filter((_, i) => rows[i].status === 'done' && rows[i].valid === 'true')
  assert.equal(kept.length, 8)
  const csv = join(tmp, 'kept.csv')
  writeFileSync(csv, [header, ...kept].join('\n') + '\n')
  const fitOf = async (/** @type {string} */ source) => {
    const f = await runCli('analyzer', ['fit', source, '--weights', 'none', '--json'])
    assert.equal(f.code, 0, f.stderr)
    const [group] = JSON.parse(f.stdout).groups
    const { sigma, lambda, gamma } = group.fits.usl
    return { name: group.name, observations: group.observations.length, sigma, lambda, gamma }
  }
  const [fromCsv, fromSweep] = await Promise.all([fitOf(csv), fitOf(dir)])
  assert.deepEqual(fromCsv, fromSweep)
  assert.ok(fromSweep.sigma > 0 && fromSweep.lambda > 0, JSON.stringify(fromSweep))
})
