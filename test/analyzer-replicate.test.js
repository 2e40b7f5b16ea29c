// analyzer replicate on synthetic multicore sweeps: one built to reproduce the thesis's Table 4.3.1 (every row and
// direction reproduced), one built to contradict it (the verdicts flip), one with raw Node pinned (not comparable);
// the CLI's text, JSON and refusals.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { replicate } from '../analyzer/replicate.js'
import { runCli } from './helpers/cli.js'
import { writeMulticoreSweep } from './helpers/multicore-runs.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-replicate-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** 8 seconds around two cores' levels, a little different per repeat and second (so that tests have a spread). */
const steady = (a, b) => (repeat) => Array.from({ length: 8 }, (_, i) => [a + ((repeat + i) % 3) - 1, b + ((repeat * 2 + i) % 3) - 1])
/** One core's worth moving between the two cores every second or two (raw Node unpinned at its exhausted level). */
const alternating = (repeat) => Array.from({ length: 8 }, (_, i) => (Math.floor((i + repeat) / 2) % 2 ? [96 + (i % 2), 3] : [3, 96 + (i % 2)]))

/** The thesis's table, as a dual-core machine would show it. */
const THESIS_LIKE = {
  up: { relaxed: steady(78, 2), 'relaxed*cores': steady(98, 3), exhausted: alternating },
  cm: { relaxed: steady(68, 12), 'relaxed*cores': steady(90, 56), 'exhausted*cores': steady(97, 97) },
  pm2: { relaxed: steady(74, 19), 'relaxed*cores': steady(89, 59), 'exhausted*cores': steady(91, 90) }
}
/** Raw Node on both cores all the time, and the cluster module below it at exhausting load. */
const CONTRARY = {
  up: { relaxed: steady(60, 55), 'relaxed*cores': steady(70, 68), exhausted: steady(80, 80) },
  cm: { relaxed: steady(68, 12), 'relaxed*cores': steady(80, 76), 'exhausted*cores': steady(40, 38) },
  pm2: { relaxed: steady(74, 19), 'relaxed*cores': steady(89, 59), 'exhausted*cores': steady(91, 90) }
}

const verdictOf = (r, id) => r.rows.find(row => row.id === id)?.verdict

test('a sweep like the thesis: the nine rows of Table 4.3.1 and its five directions are reproduced', async (t) => {
  const dir = writeMulticoreSweep(tmp(t), { seconds: (s, l, rep) => THESIS_LIKE[s][l](rep) })
  const r = await replicate(dir, { study: 'multicore' })
  assert.equal(r.rows.length, 14)
  assert.deepEqual(r.counts, { reproduced: 14, 'not-reproduced': 0, inconclusive: 0, 'not-comparable': 0 },
    r.rows.filter(x => x.verdict !== 'reproduced').map(x => `${x.id}: ${x.why}`).join('\n'))
  const raw = r.rows.find(row => row.id === 'raw at exhausting load')
  assert.equal(raw.published.exists, 'No')
  assert.equal(raw.ours.exists, false)
  assert.match(raw.why, /overall \d+(\.\d)?% against one core's worth \(50%\): at it; the busiest core moved in \d+(\.\d)?% of the seconds/)
  assert.ok(raw.ours.moves.mean > 20, 'the busiest core moves')
  const cm = r.rows.find(row => row.id === 'cluster at relaxed load')
  assert.deepEqual([cm.published.highest, cm.published.lowest, cm.published.overall], ['68.6%', '11.7%', '40.1%'])
  assert.equal(cm.ours.runs, 3)
  assert.ok(cm.ours.highest.lo < cm.ours.highest.mean && cm.ours.highest.mean < cm.ours.highest.hi, 'a 95% interval')
  assert.match(r.rows.find(row => row.id === 'cluster vs raw: overall at exhausting load').why, /p = /)
  assert.equal(r.sweeps[0].order, 'blocks')
  assert.match(r.order.says, /seed 7/)
  assert.equal(r.setup.scheduling.value, 'the normal CPU scheduling')
})

test('a sweep that contradicts it: the verdicts flip', async (t) => {
  const dir = writeMulticoreSweep(tmp(t), { seconds: (s, l, rep) => CONTRARY[s][l](rep) })
  const r = await replicate(dir, { study: 'multicore' })
  for (const load of ['relaxed', 'average', 'exhausting']) assert.equal(verdictOf(r, `raw at ${load} load`), 'not-reproduced', load)
  assert.equal(verdictOf(r, 'cluster at relaxed load'), 'reproduced', 'the rows that still hold, hold')
  assert.equal(verdictOf(r, 'cluster vs raw: overall at exhausting load'), 'not-reproduced')
  assert.match(r.rows.find(row => row.id === 'cluster vs raw: overall at exhausting load').why, /the other way here/)
  assert.equal(verdictOf(r, 'raw vs cluster: difference at average load'), 'not-reproduced')
})

test('raw Node at exhausting load judged by the thesis\'s account: one core\'s worth, moving, however a second splits it', async (t) => {
  // the OS moves the one busy thread within each second: both cores show time in it, the total stays one core's
  const split = (repeat) => Array.from({ length: 8 }, (_, i) => ((i + repeat) % 2 ? [62, 42] : [42, 62]))
  const dir = writeMulticoreSweep(tmp(t), { seconds: (s, l, rep) => (s === 'up' && l === 'exhausted' ? split(rep) : THESIS_LIKE[s][l](rep)) })
  const r = await replicate(dir, { study: 'multicore' })
  const raw = r.rows.find(row => row.id === 'raw at exhausting load')
  assert.equal(raw.verdict, 'reproduced', raw.why)
  assert.equal(raw.ours.exists, true, 'per second both cores are in use: shown, not judged')
  assert.match(raw.why, /at it; the busiest core moved in 100% of the seconds; the least-used core's median second 42%/)
})

test('raw Node pinned to one core cannot be compared: its idle core is idle by construction', async (t) => {
  const dir = writeMulticoreSweep(tmp(t),
    { seconds: (s, l, rep) => THESIS_LIKE[s][l](rep), extra: (s) => (s === 'up' ? { placement: [{ service: 'local', cpus: [0] }] } : {}) })
  const r = await replicate(dir, { study: 'multicore' })
  for (const load of ['relaxed', 'average', 'exhausting']) {
    assert.equal(verdictOf(r, `raw at ${load} load`), 'not-comparable')
    assert.match(r.rows.find(row => row.id === `raw at ${load} load`).why, /pinned to cores 0 of 2: an idle core is idle by construction/)
  }
})

test('runs left out as not valid: a row without valid runs names them and their flags, and --include-invalid takes them', async (t) => {
  const saturated = {
    validity: {
      ok: false,
      flags: [
        { name: 'host-saturated', severity: 'invalid', value: 0.01, threshold: 0.05, message: 'host idle 1%' },
        { name: 'throttled', severity: 'warning', message: 'a warning is not why it was left out' }
      ]
    }
  }
  const dir = writeMulticoreSweep(tmp(t),
    { seconds: (s, l, rep) => THESIS_LIKE[s][l](rep), extra: (s, l) => (s === 'cm' && l === 'exhausted*cores' ? saturated : {}) })
  const r = await replicate(dir, { study: 'multicore' })
  const row = r.rows.find(x => x.id === 'cluster at exhausting load')
  assert.equal(row.verdict, 'not-comparable')
  assert.equal(row.why,
    'no valid run of cm at the exhausted*cores level: 3 finished and left out, host-saturated 3 (cm exhausted*cores 3) (--include-invalid takes them)')
  assert.match(r.notes.join('\n'), /3 of 27 finished runs left out as not valid: host-saturated 3 \(cm exhausted\*cores 3\)/)
  const all = await replicate(dir, { study: 'multicore', includeInvalid: true })
  assert.equal(verdictOf(all, 'cluster at exhausting load'), 'reproduced')
  assert.equal(all.notes.length, 0)
})

test('one run per cell: directions are not comparable (a test needs two a side), rows still are', async (t) => {
  const dir = writeMulticoreSweep(tmp(t), { repeats: 1, seconds: (s, l, rep) => THESIS_LIKE[s][l](rep) })
  const r = await replicate(dir, { study: 'multicore' })
  assert.equal(verdictOf(r, 'cluster vs raw: overall at exhausting load'), 'not-comparable')
  assert.equal(verdictOf(r, 'cluster at average load'), 'reproduced')
})

test('analyzer replicate: text and JSON; --study required and checked; a folder that is no sweep is refused', async (t) => {
  const dir = writeMulticoreSweep(tmp(t), { seconds: (s, l, rep) => THESIS_LIKE[s][l](rep) })
  const text = await runCli('analyzer', ['replicate', dir, '--study', 'multicore'])
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /replication of Thesis: utilisation of multi-core power/)
  assert.match(text.stdout, /Table 4\.3\.1, Exhausting Load/)
  assert.match(text.stdout, /verdicts: 14 reproduced, 0 not-reproduced, 0 inconclusive, 0 not-comparable/)
  assert.match(text.stdout, /inconclusive: the runs can be compared but do not decide/)
  const json = await runCli('analyzer', ['replicate', dir, '--study', 'multicore', '--json'])
  assert.equal(JSON.parse(json.stdout).rows.length, 14)
  /** @type {[string[], RegExp][]} */
  const refused = [[[dir], /--study: is required/], [[dir, '--study', 'nope'], /--study/],
    [[dir, '--study', 'ibench-mimn', '--json', '--include-invalid', 'x'], /x: not a sweep folder/], [[dir, '--study', 'multicore', '--bogus'], /--bogus/],
    [[tmp(t), '--study', 'multicore'], /not a sweep folder/]]
  for (const [args, message] of refused) {
    const r = await runCli('analyzer', ['replicate', ...args])
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, message)
  }
})

test('analyzer report: a sweep of a study gets its Replication section, in Markdown and HTML', async (t) => {
  const dir = writeMulticoreSweep(tmp(t), { seconds: (s, l, rep) => THESIS_LIKE[s][l](rep) })
  for (const format of ['md', 'html']) {
    const out = join(tmp(t), `report.${format}`)
    const r = await runCli('analyzer', ['report', dir, '--format', format, '-o', out])
    assert.equal(r.code, 0, r.stderr)
    const text = readFileSync(out, 'utf8')
    assert.match(text, /Replication: Thesis: utilisation of multi-core power/)
    assert.match(text, /Verdicts: 14 reproduced/)
    assert.match(text, /inconclusive: the runs can be compared but do not decide/, 'what each verdict means')
    assert.match(text, /Table 4\.3\.1, Exhausting Load/)
    if (format === 'html') assert.match(text, /<tr class="verdict-reproduced">/)
  }
})
