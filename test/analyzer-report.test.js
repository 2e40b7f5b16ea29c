// analyzer report: a self-contained HTML page (and Markdown) over real sweep folders, checked against compare --json,
// the fixture's own run.json figures, and headless Chromium.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync, cpSync, existsSync, rmSync, statSync } from 'node:fs'
import { spawn, execFileSync } from 'node:child_process'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { PassThrough } from 'node:stream'
import { runCli, ROOT } from './helpers/cli.js'
import { parseArguments, main } from '../analyzer/cli.js'
import { buildReport } from '../analyzer/report/report.js'
import { human } from '../analyzer/fit/fit-verdict.js'
import { writeSweep } from './fixtures/usl/sweep.js'

const SWEEP = new URL('./fixtures/report/sweep/', import.meta.url).pathname
const RAYTRACER = JSON.parse(readFileSync(new URL('./fixtures/usl/gunther-raytracer.json', import.meta.url), 'utf8'))
const OUTPUT = join(ROOT, 'test-output', 'analyzer-report')

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-report-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The fixture's run.json files, parsed. */
function fixtureRuns () {
  return readdirSync(SWEEP).filter(d => existsSync(join(SWEEP, d, 'run.json'))).map(d => JSON.parse(readFileSync(join(SWEEP, d, 'run.json'), 'utf8')))
}

/** Sample standard deviation, written out here so the test does not lean on the code under test. */
function sampleSd (xs) {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))
}

/** The inner text of each `<figure data-chart="name">`. */
function figures (html) {
  return Object.fromEntries([...html.matchAll(/<figure data-chart="([^"]+)">([\s\S]*?)<\/figure>/g)].map(m => [m[1].replace(/&#39;|&quot;/g, ''), m[2]]))
}

/** Rows of `<table class="cls">`, each cell as { text, value, ci }. */
function tableRows (html, cls) {
  const m = new RegExp(`<table class="${cls}">([\\s\\S]*?)</table>`).exec(html)
  assert.ok(m, `no table ${cls}`)
  const unescape = s => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
  return [...m[1].matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].slice(1).map(r => [...r[1].matchAll(/<td([^>]*)>([\s\S]*?)<\/td>/g)].map(c => ({
    text: unescape(c[2]),
    value: /data-value="([^"]+)"/.exec(c[1])?.[1],
    ci: /data-ci="([^"]+)"/.exec(c[1])?.[1]
  })))
}

const ciText = iv => (iv ? `[${human(iv[0])}, ${iv[1] === null ? 'open' : human(iv[1])}]` : '-')

/** The CLI's main() in this process (the exit code it returns, what it writes), for the many bad-input cases. */
async function inProcess (argv) {
  const collect = () => {
    const stream = new PassThrough()
    let text = ''
    stream.setEncoding('utf8').on('data', d => { text += d })
    return { stream, text: () => text }
  }
  const [out, err] = [collect(), collect()]
  const code = await main(argv, { stdout: out.stream, stderr: err.stream })
  await new Promise(resolve => setImmediate(resolve))
  return { code, stdout: out.text(), stderr: err.text() }
}

async function report (t, inputs, extra = []) {
  const out = join(tmp(t), 'report.html')
  const r = await runCli('analyzer', ['report', ...inputs, '-o', out, ...extra])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stdout.trim(), out)
  return { html: readFileSync(out, 'utf8'), out, stderr: r.stderr }
}

/** No network at view time, nothing unfinished: what a page that opens offline must not contain. */
function assertSelfContained (html) {
  assert.ok(html.startsWith('<!doctype html>'))
  /** @type {[RegExp, string][]} */
  const bad = [
    [/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i, 'a src or href that points to the network'],
    [/<script|<link|<iframe|<img|<object|<embed|@import|url\((?!#)/i, 'an element or CSS that loads something'],
    [/NaN|undefined|Infinity|\[object /, 'a value that was never computed']
  ]
  for (const [re, what] of bad) {
    const m = re.exec(html)
    assert.ok(!m, m ? `${what}: ...${html.slice(Math.max(0, m.index - 80), m.index + 80)}...` : '')
  }
}

test('the fixture sweep: one self-contained page with an SVG per chart, the runs and their status', async (t) => {
  const { html, stderr } = await report(t, [SWEEP])
  assertSelfContained(html)
  assert.match(stderr, /^report: 15 runs \(14 done, 1 failed\), 2 groups of points$/m)
  assert.match(stderr, /^report: 4 charts drawn in \d+ ms$/m)
  const figs = figures(html)
  assert.deepEqual(Object.keys(figs).sort(), ['cpu', 'fit:cm/baseline', 'latency', 'throughput'])
  for (const [name, inner] of Object.entries(figs)) {
    assert.equal((inner.match(/<svg[\s>]/g) ?? []).length, 1, `${name}: one svg`)
    assert.match(inner, /<\/svg>\s*$/, `${name}: a complete svg`)
    assert.match(inner, /aria-roledescription="(point|errorbar|bar|line mark)"/, `${name}: marks drawn`)
  }
  // every run is listed; the failed one with its reason, as the executor recorded it
  const runs = fixtureRuns()
  const rows = tableRows(html, 'runs')
  assert.equal(rows.length, runs.length)
  const failed = runs.find(r => r.status === 'failed')
  const row = rows.find(r => r[0].text === failed.id)
  assert.equal(row[1].text, 'failed')
  assert.equal(row[9].text, `${failed.error.code}: ${failed.error.message.split('\n')[0]}`)
  assert.match(html, new RegExp(`<tr class="failed"><td>${failed.id}</td>`))
  // the environment the executor recorded
  const env = runs[0].environment
  const envRows = Object.fromEntries(tableRows(html, 'environment').map(r => [r[0].text, r[1].text]))
  assert.equal(envRows.kernel, env.kernel)
  assert.equal(envRows['Node.js'], env.node)
  assert.equal(envRows.CPUs, String(env.cpus))
  assert.match(html, new RegExp(`<th>all ${runs.length} runs</th>`))
})

test('the σ/λ table holds exactly what analyzer compare --json gives on the same input, with a verdict per row', async (t) => {
  const { html } = await report(t, [SWEEP])
  const json = JSON.parse((await runCli('analyzer', ['compare', SWEEP, '--json'])).stdout)
  const rows = tableRows(html, 'fits')
  assert.deepEqual(rows.map(r => r[0].text), json.rows.map(r => r.name))
  for (const [i, j] of json.rows.entries()) {
    const r = rows[i]
    if (!j.model) {
      assert.deepEqual(r.slice(1, 8).map(c => c.text), ['-', '-', '-', '-', '-', '-', '-'])
      assert.match(r[8].text, new RegExp(`^${j.points} \\(\\d+ runs\\)$`))
      continue
    }
    assert.equal(r[1].text, j.model === 'usl' ? 'USL' : 'Amdahl')
    const cells = { sigma: r[2], lambda: r[3], gamma: r[4] }
    for (const [name, cell] of Object.entries(cells)) {
      if (name === 'lambda' && j.model === 'amdahl') { assert.equal(cell.text, '-'); continue }
      assert.equal(Number(cell.value), j[name], `${j.name} ${name}`)
      assert.equal(cell.text, `${human(j[name])} ${ciText(j.ci95[name])}`)
      if (j.ci95[name]) assert.deepEqual(cell.ci.split(',').map(Number), j.ci95[name])
    }
    assert.equal(r[7].text, j.r2.toFixed(4))
    assert.match(r[8].text, new RegExp(`^${j.points} \\(\\d+ runs\\)$`))
  }
  for (const j of json.rows) assert.ok(html.includes(`<li${j.model ? '' : ' class="nofit"'}>${j.line.replace(/&/g, '&amp;')}`), j.line)
  // how many points and runs each fit used, as analyzer fit counts them
  const fit = JSON.parse((await runCli('analyzer', ['fit', SWEEP, '--json'])).stdout)
  for (const g of fit.groups) {
    const runs = g.points.reduce((a, p) => a + p.count, 0)
    assert.equal(rows.find(r => r[0].text === g.name)[8].text, `${g.points.length} (${runs} runs)`)
  }
  assert.equal(json.rows.find(r => r.name === 'cm/baseline').points, 4)
})

test('error bars are mean ± the sd of the fixture\'s repeats, drawn to scale', async (t) => {
  const { html } = await report(t, [SWEEP])
  // configurations measured at one load level only: their point is the mean of their repeats
  const byShape = new Map()
  for (const r of fixtureRuns().filter(r => r.status === 'done')) {
    const key = `${r.config.strategy}/${r.config.benchmark} N=${r.config.instances}`
    byShape.set(key, [...(byShape.get(key) ?? []), r])
  }
  const expected = [...byShape].filter(([, list]) => new Set(list.map(r => r.config.concurrency)).size === 1 && list.length > 1)
  assert.ok(expected.length >= 4, 'the fixture has repeated shapes')
  const bars = [...figures(html).throughput.matchAll(new RegExp(/<line aria-label="([^"]+)" role="graphics-symbol" aria-roledescription="errorbar" /.source +
    /transform="translate\(([-\d.e]+),([-\d.e]+)\)" x2="0" y2="([-\d.e]+)"/.source, 'g'))]
    .map(m => ({ label: m[1], y2: Math.abs(Number(m[4])) }))
  const scale = []
  for (const [key, list] of expected) {
    const tps = list.map(r => r.summary.throughput)
    const mean = tps.reduce((a, b) => a + b, 0) / tps.length
    const sd = sampleSd(tps)
    const bar = bars.find(b => b.label.startsWith(`${key}:`))
    assert.ok(bar, `an error bar for ${key} among ${bars.map(b => b.label).join(' | ')}`)
    assert.equal(bar.label, `${key}: mean ${human(mean)} req/s ± sd ${human(sd)} over ${list.length} runs`)
    scale.push(bar.y2 / (2 * sd))
  }
  // the y axis: pixels per req/s from two of its labelled ticks; every bar is 2 sd long on that scale
  const ticks = [...figures(html).throughput.matchAll(/<text text-anchor="end" transform="translate\(-7,([-\d.e]+)\)"[^>]*>([\d,]+)<\/text>/g)]
    .map(m => ({ y: Number(m[1]), v: Number(m[2].replace(/,/g, '')) }))
  assert.ok(ticks.length >= 3, 'y-axis labels')
  const pxPerUnit = (ticks[0].y - ticks.at(-1).y) / (ticks.at(-1).v - ticks[0].v)
  for (const s of scale) assert.ok(Math.abs(s / pxPerUnit - 1) < 1e-3, `bar length / 2 sd = ${s} px per req/s; the axis has ${pxPerUnit}`)
  // the points table beside it says the same
  const cm = tableRows(html, 'points')
  assert.ok(cm.every(r => r[2].text === '-' || Number(r[2].value) > 0))
})

test('the per-core CPU table and chart: the mean of each configuration\'s repeats, one bar per core', async (t) => {
  const { html } = await report(t, [SWEEP])
  const runs = fixtureRuns().filter(r => r.status === 'done')
  const rows = tableRows(html, 'cpu')
  const configs = new Set(runs.map(r => `${r.config.strategy} ${r.config.instances} ${r.config.concurrency}`))
  assert.equal(rows.length, configs.size)
  const cm2 = runs.filter(r => r.config.strategy === 'cm' && r.config.instances === 2 && r.config.concurrency === 4)
  const row = rows.find(r => r[1].text === 'cm' && r[2].text.startsWith('2 ') && r[3].text === '4 connections')
  assert.equal(row[4].text, String(cm2.length))
  const avg = f => cm2.map(f).reduce((a, b) => a + b, 0) / cm2.length
  assert.ok(Math.abs(Number(row[5].value) - avg(r => r.cpu.highest)) < 1e-9)
  assert.ok(Math.abs(Number(row[6].value) - avg(r => r.cpu.lowest)) < 1e-9)
  assert.ok(Math.abs(Number(row[7].value) - avg(r => r.cpu.spread)) < 1e-9)
  assert.ok(Math.abs(Number(row[8].value) - avg(r => r.cpu.overall)) < 1e-9)
  assert.equal(row[5].text, `${avg(r => r.cpu.highest).toFixed(1)}%`)
  const cores = runs[0].cpu.cores.length
  const bars = [...figures(html).cpu.matchAll(/aria-label="([^"]+)" role="graphics-symbol" aria-roledescription="bar"/g)].map(m => m[1])
  assert.equal(bars.length, configs.size * cores)
  assert.ok(bars.includes(`cm ×2 · 4 conn: core 0 ${avg(r => r.cpu.cores[0].usage).toFixed(1)}%`), bars.join(' | '))
})

test('--format md: the same σ/λ table and verdicts as compare --json, the per-core table and failed runs, no charts', async (t) => {
  const r = await runCli('analyzer', ['report', SWEEP, '--format', 'md'])
  assert.equal(r.code, 0, r.stderr)
  const md = r.stdout
  assert.doesNotMatch(md, /<svg|NaN|undefined/)
  assert.match(md, /^# nodescale report: /)
  const json = JSON.parse((await runCli('analyzer', ['compare', SWEEP, '--json'])).stdout)
  const lines = md.split('\n')
  for (const j of json.rows) {
    const row = lines.find(l => l.startsWith(`| ${j.name} |`)).split(' | ')
    if (j.model) {
      assert.equal(row[2], `${human(j.sigma)} ${ciText(j.ci95.sigma)}`)
      assert.equal(row[3], j.model === 'usl' ? `${human(j.lambda)} ${ciText(j.ci95.lambda)}` : '-')
      assert.equal(row[4], `${human(j.gamma)} ${ciText(j.ci95.gamma)}`)
    }
    assert.ok(lines.includes(`- ${j.line}`), j.line)
  }
  assert.match(md, /^\| benchmark \| strategy \| N \| load \| runs \| highest core \| lowest core \| difference \| overall \|/m)
  const failed = fixtureRuns().find(x => x.status === 'failed')
  assert.match(md, new RegExp(`^1 of 15 runs did not finish:\\n\\n- ${failed.id}: failed \\(NS_ERR_DEPLOY: `, 'm'))
  // -o writes the file and prints its path instead
  const out = join(tmp(t), 'r.md')
  const w = await runCli('analyzer', ['report', SWEEP, '--format', 'md', '-o', out])
  assert.equal(w.stdout.trim(), out)
  assert.equal(readFileSync(out, 'utf8').trimEnd(), md.trimEnd())
})

test('too few points for a fit: the page still renders, with a note instead of the curve', async (t) => {
  const dir = tmp(t)
  for (const d of readdirSync(SWEEP)) {
    const run = JSON.parse(readFileSync(join(SWEEP, d, 'run.json'), 'utf8'))
    if (run.config.strategy === 'up') cpSync(join(SWEEP, d), join(dir, d), { recursive: true })
  }
  const { html } = await report(t, [dir])
  assertSelfContained(html)
  assert.deepEqual(Object.keys(figures(html)).sort(), ['cpu', 'latency', 'throughput'])
  assert.match(html, /<p class="note">no fitted curve for up\/baseline: 2 points \(N = 1, 2\); USL has 3 parameters and needs at least 4 distinct N; got 2/)
  assert.match(html, /Amdahl has 2 parameters and needs at least 3 distinct N; got 2 \(N = 1, 2\)/)
  const md = await runCli('analyzer', ['report', dir, '--format', 'md'])
  assert.equal(md.code, 0, md.stderr)
  assert.match(md.stdout, /^> no fitted curve for up\/baseline: 2 points/m)
  assert.match(md.stdout, /^\| up\/baseline \| - \| - \|/m)
})

test('a sweep where every run failed renders its run list and says why nothing is plotted', async (t) => {
  const dir = tmp(t)
  const failed = readdirSync(SWEEP).find(d => JSON.parse(readFileSync(join(SWEEP, d, 'run.json'), 'utf8')).status === 'failed')
  cpSync(join(SWEEP, failed), join(dir, failed), { recursive: true })
  const { html } = await report(t, [dir])
  assertSelfContained(html)
  assert.deepEqual(Object.keys(figures(html)), [])
  assert.match(html, /no finished runs: nothing to plot or fit/)
  assert.equal(tableRows(html, 'runs').length, 1)
})

test('a USL sweep with a peak: both curves, N* marked at the fitted value, an N* beyond the chart named', async (t) => {
  const dir = tmp(t)
  writeSweep(dir)
  const { html } = await report(t, [dir])
  assertSelfContained(html)
  const json = JSON.parse((await runCli('analyzer', ['fit', dir, '--model', 'both', '--json'])).stdout)
  const hs = json.groups.find(g => g.name === 'hs/page')
  const fig = figures(html)['fit:hs/page']
  assert.match(fig, /aria-label="USL peak: N\* = ([\d.]+), X\(N\*\) = ([\d,]+) req\/s"/)
  const [, nStar, xStar] = /aria-label="USL peak: N\* = ([\d.]+), X\(N\*\) = ([\d,]+) req\/s"/.exec(fig)
  assert.equal(nStar, human(hs.fits.usl.nStar, 2))
  assert.equal(xStar, human(hs.fits.usl.xStar))
  assert.match(fig, new RegExp(`>N\\* = ${nStar.replace('.', '\\.')}</text>`))
  assert.match(fig, /USL R² [\d.]+ · Amdahl R² [\d.]+ · 8 points from 24 runs/)
  // cm peaks at about 44 workers, far beyond the 16 measured: said in words, not drawn
  const cm = json.groups.find(g => g.name === 'cm/page')
  assert.ok(cm.fits.usl.nStar > 32)
  assert.doesNotMatch(figures(html)['fit:cm/page'], /peak: N\*/)
  assert.match(html, new RegExp(`cm/page: USL N\\* = ${cm.fits.usl.nStar.toFixed(1)} workers lies beyond the chart`))
  // the failed, interrupted and unreadable runs of that sweep
  assert.match(html, /1 run\.json file could not be read: .*broken\/run\.json/)
  assert.match(html, /<td>interrupted<\/td>.*interrupted \(Ctrl-C or a signal\)/)
})

test('points from a CSV: throughput and fit charts, notes where latency and CPU are missing', async (t) => {
  const dir = tmp(t)
  const csv = join(dir, 'raytracer.csv')
  writeFileSync(csv, 'processors,throughput\n' + RAYTRACER.points.map(p => `${p.n},${p.throughput}`).join('\n') + '\n')
  const r = await runCli('analyzer', ['report', csv])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stdout.trim(), join(dir, 'report.html'))
  const html = readFileSync(join(dir, 'report.html'), 'utf8')
  assertSelfContained(html)
  assert.deepEqual(Object.keys(figures(html)).sort(), ['fit:raytracer.csv', 'throughput'])
  assert.match(html, /no latency in these points/)
  assert.match(html, /no per-core CPU in these runs/)
  const sigma = tableRows(html, 'fits')[0][2]
  assert.ok(Math.abs(Number(sigma.value) - RAYTRACER.documented.sigma) < 0.002, sigma.value)
})

test('without -o the page goes to report.html in the sweep folder and its path is printed', async (t) => {
  const dir = join(tmp(t), 'sweep')
  cpSync(SWEEP, dir, { recursive: true })
  const r = await runCli('analyzer', ['report', dir])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stdout, join(dir, 'report.html') + '\n')
  assert.ok(statSync(join(dir, 'report.html')).size > 10000)
  assert.match(r.stderr, /^report: wrote .*report\.html \(\d+ kB\)$/m)
})

test('bad flags and inputs: exit 2 naming the flag or the file', async (t) => {
  /** @type {[string[], RegExp][]} */
  const cases = [
    [['report', SWEEP, '--format', 'pdf'], /NS_ERR_BAD_FLAG: --format: "pdf" is not allowed; one of: html, md/],
    [['report', SWEEP, '--nope'], /NS_ERR_BAD_FLAG: --nope: unknown flag/],
    [['report', SWEEP, '--x', 'cores'], /--x: "cores" is not allowed; one of: instances, concurrency/],
    [['report', SWEEP, '--group-by', 'colour'], /--group-by: "colour" is not a run config field/],
    [['report', SWEEP, '--bootstrap', 'many'], /--bootstrap: "many" is not a whole number/],
    [['report', SWEEP, '-o'], /NS_ERR_BAD_FLAG: -o: needs a value|--out: needs a value/],
    [['report', SWEEP, '--json'], /--json: unknown flag/],
    [['report', join(SWEEP, 'no-such-folder')], /NS_ERR_BAD_FILE: .*no-such-folder: no such file or folder/],
    [['report'], /analyzer report needs one or more sweep folders/]
  ]
  for (const [args, re] of cases) {
    const r = await inProcess(args)
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, re)
    assert.equal(r.stdout, '')
  }
  const unwritable = await inProcess(['report', SWEEP, '-o', join(tmp(t), 'missing', 'r.html')])
  assert.equal(unwritable.code, 2)
  assert.match(unwritable.stderr, /NS_ERR_BAD_FILE: -o .*r\.html: cannot write the report \(ENOENT\)/)
  // and once as a process: the exit code itself
  const spawned = await runCli('analyzer', ['report', SWEEP, '--format', 'pdf'])
  assert.equal(spawned.code, 2)
  assert.match(spawned.stderr, /--format: "pdf" is not allowed/)
  assert.deepEqual(parseArguments(['report', 'a', 'b']), {
    command: 'report', help: false, inputs: ['a', 'b'], options: { json: false, format: 'html', x: 'instances', bootstrap: 0, seed: 1, weights: 'relative' }
  })
  assert.equal(parseArguments(['report', 'a', '-o', 'r.md', '--format', 'md', '--group-by', 'strategy']).options.out, 'r.md')
  const help = await runCli('analyzer', ['report', '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /Usage: analyzer report[\s\S]*Examples:\n {2}analyzer report /)
})

test('buildReport as a library: the same figures without a process; points keep their spread', async () => {
  const r = await buildReport([SWEEP], { now: new Date('2026-01-01T00:00:00Z') })
  assert.equal(r.generatedAt, '2026-01-01T00:00:00.000Z')
  assert.deepEqual(r.status, { done: 14, failed: 1 })
  const cm = r.groups.find(g => g.name === 'cm/baseline')
  assert.deepEqual(cm.points.map(p => p.n), [1, 2, 3, 4])
  assert.ok(cm.curves.length > 100 && cm.curves.every(c => Number.isFinite(c.throughput)))
  assert.ok(cm.points.every(p => p.count >= 1 && Array.isArray(p.runs)))
  // N = connections: one group per strategy and instance count, none with enough load levels to fit, each saying why
  const byLoad = await buildReport([SWEEP], { x: 'concurrency' })
  assert.deepEqual(byLoad.groups.map(g => g.name), ['cm/baseline/1', 'cm/baseline/2', 'cm/baseline/3', 'cm/baseline/4', 'up/baseline/1', 'up/baseline/2'])
  for (const g of byLoad.groups) {
    assert.match(g.fits.amdahl.error.message, new RegExp(`needs at least 3 distinct N; got ${g.points.length} \\(N = ${g.points.map(p => p.n).join(', ')}\\)`))
    assert.deepEqual(g.curves, [])
  }
})

test('a live run of the executor is reported: its id, status and throughput as run.json says', async (t) => {
  const out = tmp(t)
  const run = await runCli('executor', ['run', '--backend', 'local', '--strategy', 'up', '--instances', '1', '--benchmark', 'baseline',
    '--duration', '1', '--warmup', '0.5', '--concurrency', '4', '--out', out, '--quiet'])
  assert.equal(run.code, 0, run.stderr)
  const id = readdirSync(out)[0]
  const runJson = JSON.parse(readFileSync(join(out, id, 'run.json'), 'utf8'))
  const md = await runCli('analyzer', ['report', out, '--format', 'md'])
  assert.equal(md.code, 0, md.stderr)
  assert.match(md.stdout, new RegExp(`^\\| ${id} \\| done \\| up \\| 1 \\| baseline \\| 4 connections \\| ${human(runJson.summary.throughput)} \\|`, 'm'))
  // One second of load is too short to tell whether it was steady: neither flagged nor valid on that check, and said
  // so (issue 25; it was flagged unstable). The run is a point unless another flag (a busy host) left it out, and
  // --include-invalid puts it back then.
  assert.ok(!runJson.validity.flags.some(f => f.name === 'unstable'), JSON.stringify(runJson.validity))
  assert.match(runJson.validity.unchecked.find(u => u.name === 'unstable')?.why ?? '', /^too short to judge: /)
  const kept = runJson.validity.ok ? md : await runCli('analyzer', ['report', out, '--format', 'md', '--include-invalid'])
  if (!runJson.validity.ok) assert.match(md.stdout, /^> 1 finished run left out as invalid/m)
  assert.equal(kept.code, 0, kept.stderr)
  assert.match(kept.stdout, /^> no fitted curve for up\/baseline: 1 point \(N = 1\)/m)
})

function chromiumPath () {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim()
    } catch {}
  }
  return null
}

// Chromium's own services that headless mode still calls (component updates, sign-in): they go around the recording
// proxy; anything else Chromium fetches passes through it.
const CHROMIUM_OWN = 'update.googleapis.com;accounts.google.com'

/** A loopback HTTP proxy that answers nothing and records every request a browser sends through it. */
async function recordingProxy (t) {
  const seen = []
  const server = http.createServer((req, res) => { seen.push(`${req.method} ${req.url}`); res.writeHead(502).end() })
  server.on('connect', (req, socket) => { seen.push(`CONNECT ${req.url}`); socket.destroy() })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => server.close())
  return { seen, port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }
}

/** Runs headless Chromium (no background services, every request through the proxy) and collects its output. */
function chromium (bin, proxyPort, args) {
  return new Promise((resolve, reject) => {
    const profile = mkdtempSync(join(tmpdir(), 'ns-chromium-'))
    const child = spawn(bin, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions', '--no-pings',
      '--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate', `--proxy-server=http://127.0.0.1:${proxyPort}`,
      `--proxy-bypass-list=${CHROMIUM_OWN}`, '--enable-logging=stderr', '--v=0', `--user-data-dir=${profile}`, ...args])
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`chromium timed out\n${stderr}`)) }, 60000)
    child.on('error', reject)
    child.on('close', code => {
      clearTimeout(timer)
      rmSync(profile, { recursive: true, force: true })
      resolve({ code, stdout, stderr })
    })
  })
}

test('headless Chromium opens the page offline: every chart in the DOM, nothing fetched, no console errors, a screenshot', async (t) => {
  const bin = chromiumPath()
  if (!bin) {
    assert.notEqual(process.env.CI, 'true', 'chromium is missing on CI: scripts/setup.sh installs it')
    t.skip('chromium is not installed (apt-get install -y chromium)')
    return
  }
  mkdirSync(OUTPUT, { recursive: true })
  const page = join(OUTPUT, 'report.html')
  const r = await runCli('analyzer', ['report', SWEEP, '-o', page])
  assert.equal(r.code, 0, r.stderr)
  const proxy = await recordingProxy(t)
  const dom = await chromium(bin, proxy.port, ['--dump-dom', pathToFileURL(page).href])
  assert.equal(dom.code, 0, dom.stderr)
  const html = readFileSync(page, 'utf8')
  const figs = figures(dom.stdout)
  assert.deepEqual(Object.keys(figs).sort(), Object.keys(figures(html)).sort())
  for (const [name, inner] of Object.entries(figs)) assert.match(inner, /^<svg[\s\S]*<\/svg>$/, `${name} parsed as SVG`)
  assert.match(dom.stdout, /<table class="fits">/)
  assert.deepEqual(proxy.seen, [], 'the page fetched something')
  assert.doesNotMatch(dom.stderr, /CONSOLE|Failed to load resource|net::ERR_/)
  // the control: the same page with one image from the network is caught by the proxy
  const leaky = join(OUTPUT, 'leaky.html')
  writeFileSync(leaky, html.replace('<body>', '<body><img src="http://example.com/logo.png" alt="">'))
  await chromium(bin, proxy.port, ['--dump-dom', pathToFileURL(leaky).href])
  assert.deepEqual(proxy.seen, ['GET http://example.com/logo.png'])
  rmSync(leaky)
  proxy.seen.length = 0
  const png = join(OUTPUT, 'report.png')
  rmSync(png, { force: true })
  const shot = await chromium(bin, proxy.port, ['--hide-scrollbars', '--window-size=1200,1800', `--screenshot=${png}`, pathToFileURL(page).href])
  assert.equal(shot.code, 0, shot.stderr)
  const bytes = readFileSync(png)
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG')
  assert.ok(bytes.length > 50000, `a screenshot with content (${bytes.length} bytes)`)
  assert.deepEqual(proxy.seen, [])
})
