// The report of an adaptive sweep (executor sweep --until answered): its question, a row per look with the interval
// the rule printed, the verdict, and in HTML a chart of the interval narrowing; the looks are decideQuestion's own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeSweepRuns } from './helpers/sweep-runs.js'
import { decideQuestion } from '../analyzer/stats/adaptive.js'
import { buildReport, writeReport } from '../analyzer/report/report.js'
import { renderMarkdown } from '../analyzer/report/report-md.js'

/** @type {import('../analyzer/stats/adaptive.js').Question} */
const question = { compare: ['cm', 'up'], quantity: 'throughput', at: 4, margin: 0.05 }

/** A sweep folder of cm x4 and up x4 runs, one a deployment, with the looks decideQuestion takes over its blocks. */
function adaptiveSweep () {
  const out = mkdtempSync(join(tmpdir(), 'ns-report-adaptive-'))
  const cm = [402, 389, 411]
  const up = [199, 204, 196]
  const runs = cm.flatMap((x, i) => [
    { config: { strategy: 'cm', instances: 4 }, throughput: x },
    { config: { strategy: 'up', instances: 4 }, throughput: up[i] }
  ])
  const dir = writeSweepRuns(out, 'ibench-smisn', runs)
  const looks = []
  for (let look = 1; look <= 3; look++) {
    const values = { 'cm@4': cm.slice(0, look), 'up@4': up.slice(0, look) }
    const d = decideQuestion(question, values, { look, maxLooks: 5 })
    looks.push({ ...d, look, values, invalid: [], at: new Date(1_795_000_000_000 + look * 60_000).toISOString() })
    if (d.stop) break
  }
  const file = join(dir, 'sweep.json')
  const sweep = JSON.parse(readFileSync(file, 'utf8'))
  const last = looks.at(-1)
  sweep.adaptive = {
    question,
    cells: { 'cm@4': 3, 'up@4': 3 },
    maxLooks: 5,
    budget: 1800,
    block: { runs: 2, seconds: 180 },
    looks,
    verdict: last.stop ? last.verdict : null,
    ended: last.stop ? 'answered' : null,
    why: last.why,
    needed: null
  }
  writeFileSync(file, JSON.stringify(sweep))
  return { dir, looks }
}

test('an adaptive sweep\'s report: the question, a row per look with its interval and α spent, the verdict; a chart of the looks in HTML', async () => {
  const { dir, looks } = adaptiveSweep()
  assert.equal(looks.at(-1).verdict, 'different', 'a 2x ratio at a 2% spread is decided by look 2 or 3')
  const report = await buildReport([dir])
  assert.equal(report.adaptive.length, 1)
  const md = renderMarkdown(report)
  assert.match(md, /## Adaptive experiment: does cm differ from up in throughput at N=4\? \(the ratio cm\/up at N=4; equivalent: within ±5%\)/)
  const rows = md.split('\n').filter(l => /^\| \d\/5 \|/.test(l))
  assert.equal(rows.length, looks.length)
  assert.match(rows[0], /^\| 1\/5 \| 1 \| 1 \| no interval yet \| [\d.e-]+ \| continue \| /)
  const decided = looks.at(-1)
  const at = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))
  assert.ok(rows.at(-1).includes(`| ${at(decided.estimate.ratio)} [${at(decided.estimate.lo)}, ${at(decided.estimate.hi)}] |`), rows.at(-1))
  assert.match(rows.at(-1), /\| different \| - \|$/)
  assert.match(md, new RegExp(`- verdict: different at look ${decided.look} of 5 \\(answered\\)`))
  const html = join(dir, 'report.html')
  await writeReport([dir], { format: 'html', out: html })
  const page = readFileSync(html, 'utf8')
  assert.match(page, /<section id="adaptive-1"><h2>Adaptive experiment: does cm differ from up/)
  const chart = page.slice(page.indexOf('data-chart="adaptive"'))
  assert.ok(chart.startsWith('data-chart="adaptive"'), 'the looks chart is drawn')
  for (const look of looks.filter(l => l.estimate)) {
    assert.ok(chart.includes(`look ${look.look}: ${look.estimate.ratio.toFixed(2)}`), `look ${look.look} is a point of the chart`)
  }
})

test('a sweep without a question has no adaptive section', async () => {
  const out = mkdtempSync(join(tmpdir(), 'ns-report-adaptive-'))
  const dir = writeSweepRuns(out, 'plain',
    [{ config: { strategy: 'cm', instances: 1 }, throughput: 100 }, { config: { strategy: 'cm', instances: 2 }, throughput: 190 }])
  const report = await buildReport([dir])
  assert.deepEqual(report.adaptive, [])
  assert.doesNotMatch(renderMarkdown(report), /Adaptive experiment/)
})
