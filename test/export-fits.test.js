// `analyzer export --table fits`: a row per group and model with the figures and intervals `analyzer fit` prints.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportRuns, FIT_COLUMNS } from '../analyzer/export.js'
import { fitSources } from '../analyzer/compare.js'
import { parse } from 'csv-parse/sync'
import { writeSweepRuns } from './helpers/sweep-runs.js'

const tmp = mkdtempSync(join(tmpdir(), 'ns-export-fits-'))
test.after(() => rmSync(tmp, { recursive: true, force: true }))

// USL with gamma 100, sigma 0.05, lambda 0.002 at N = 1..8, two runs a side of it (±1%): cm; a ceiling at 210: up
const usl = (n) => 100 * n / (1 + 0.05 * (n - 1) + 0.002 * n * (n - 1))
const runs = [1, 2, 3, 4, 5, 6, 7, 8].flatMap(n => [
  ...[0.99, 1.01].map(k => ({ config: { strategy: 'cm', instances: n }, throughput: usl(n) * k })),
  ...[0.995, 1.005].map(k => ({ config: { strategy: 'up', instances: n }, throughput: Math.min(200 * n, 210) * k }))
])
const dir = writeSweepRuns(tmp, 'fits', runs)

test('a row per group and model, the same figures and intervals as analyzer fit --model both', async () => {
  const { text, rows } = await exportRuns([dir], { table: 'fits', format: 'ndjson' })
  assert.equal(rows, 4)
  const got = text.split('\n').map(l => JSON.parse(l))
  const fitted = await fitSources([dir], { model: 'both' })
  for (const g of fitted.groups) {
    for (const m of ['usl', 'amdahl']) {
      const row = got.find(r => r.group === g.name && r.model === m)
      assert.ok(row, `${g.name} ${m}`)
      const f = g.fits[m]
      assert.equal(row.sigma, f.sigma)
      assert.equal(row.gamma, f.gamma)
      assert.equal(row.chosen, f.choice.model)
      assert.deepEqual([row.sigmaLow, row.sigmaHigh], f.ci95.sigma ?? [null, null])
      assert.equal(row.observations, 16)
    }
  }
  const cm = got.find(r => r.group.startsWith('cm') && r.model === 'usl')
  assert.ok(Math.abs(cm.gamma - 100) < 1 && Math.abs(cm.sigma - 0.05) < 0.01, JSON.stringify(cm))
  assert.ok(cm.lambdaLow <= 0.002 && cm.lambdaHigh >= 0.002, 'the true lambda in its interval')
  // the flat case: the ceiling model is what AICc chooses, and the row says so
  assert.equal(got.find(r => r.group.startsWith('up') && r.model === 'usl').chosen, 'ceiling')
})

test('as CSV: the header is FIT_COLUMNS, each row has every column', async () => {
  const { text } = await exportRuns([dir], { table: 'fits' })
  assert.equal(text.split('\n')[0], FIT_COLUMNS.map(c => c.name).join(','))
  // the verdicts hold commas: quoted, so every record parses back to as many fields as the header
  const records = parse(text)
  assert.equal(records.length, 5)
  for (const r of records) assert.equal(r.length, FIT_COLUMNS.length)
  const verdict = FIT_COLUMNS.findIndex(c => c.name === 'verdict')
  assert.ok(records.slice(1).every(r => r[verdict].length > 10), 'each row has its verdict')
})
