// The analyzer command line as a user runs it: exit codes, --json shapes, tables, help, bad input named.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from './helpers/cli.js'
import { COMMANDS, parseArguments } from '../analyzer/cli.js'
import { writeSweep } from './fixtures/usl/sweep.js'

const JTL = new URL('./fixtures/jtl/jmeter-5.6.3-varied.jtl', import.meta.url).pathname
const RAYTRACER = 'processors,throughput\n1,20\n4,78\n8,130\n12,170\n16,190\n20,200\n24,210\n28,230\n32,260\n48,280\n64,310\n'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-cli-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('every option of every analyzer command carries its help, and --help prints each flag once with its value\'s name', () => {
  for (const [name, spec] of Object.entries(COMMANDS)) {
    for (const o of spec.options) {
      assert.ok(o.help, `analyzer ${name} --${o.flag}: a row without help`)
      const line = `--${o.flag}${o.arg ? ` ${o.arg}` : ''}`
      const lines = spec.help.split('\n').filter(l => new RegExp(`^ {2}(-${o.short}, | {4})${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `).test(l))
      assert.equal(lines.length, 1, `analyzer ${name} --help: the line of ${line}`)
      if (o.type !== 'boolean') assert.ok(o.arg, `analyzer ${name} --${o.flag}: its value's name`)
    }
    assert.match(spec.help, new RegExp(`^Usage: analyzer ${name} `))
    assert.ok(spec.help.split('\n').every(l => l.length <= 140), `analyzer ${name} --help: a line over 140 columns`)
  }
})

test('summary --json prints the summary object and nothing else; exit 0', async () => {
  const r = await runCli('analyzer', ['summary', JTL, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const s = JSON.parse(r.stdout)
  assert.deepEqual(Object.keys(s).sort(), ['file', 'header', 'labels', 'malformed', 'outsideWindow', 'percentiles', 'rows', 'source', 'total'])
  assert.deepEqual(Object.keys(s.total).sort(), ['bytes', 'end', 'errorRate', 'errors', 'latency', 'requests', 'sentBytes', 'stability', 'start', 'throughput'])
  assert.deepEqual(Object.keys(s.total.latency).sort(), ['max', 'mean', 'min', 'p50', 'p90', 'p95', 'p99'])
  assert.equal(s.total.requests, 903)
})

test('summary prints an aligned table per label and in total; --label keeps one label', async () => {
  const r = await runCli('analyzer', ['summary', JTL])
  assert.equal(r.code, 0, r.stderr)
  const lines = r.stdout.split('\n')
  const header = lines.find(l => l.startsWith('label'))
  assert.ok(header && /requests\s+errors\s+error %\s+req\/s\s+mean ms\s+p50\s+p90\s+p95\s+p99\s+max/.test(header), r.stdout)
  assert.ok(lines.some(l => /^TOTAL\s+903\s+38\s/.test(l)), r.stdout)
  assert.ok(lines.some(l => l.startsWith('slow, with comma ')))
  const one = await runCli('analyzer', ['summary', JTL, '--label', 'flaky', '--json'])
  assert.deepEqual(Object.keys(JSON.parse(one.stdout).labels), ['flaky'])
})

test('summary of a missing file, or with a stray argument: exit 2 naming it', async () => {
  const missing = await runCli('analyzer', ['summary', 'no-such.jtl'])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /NS_ERR_BAD_FILE: no-such\.jtl: no such file/)
  assert.equal(missing.stdout, '')
  const extra = await runCli('analyzer', ['summary', JTL, 'other.jtl'])
  assert.equal(extra.code, 2)
  assert.match(extra.stderr, /unexpected "other\.jtl"/)
})

test('fit of a CSV: a table, a verdict; --json holds the same figures', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'ray.csv'), RAYTRACER)
  const human = await runCli('analyzer', ['fit', join(dir, 'ray.csv'), '--model', 'both'])
  assert.equal(human.code, 0, human.stderr)
  assert.match(human.stdout, /model\s+sigma \[95% CI\]\s+lambda \[95% CI\]\s+gamma \[95% CI\]\s+N\* \[95% CI\]\s+X\(N\*\)\s+R²/)
  // the reading of the model AICc prefers (was the USL fit's "Amdahl-limited" line)
  assert.match(human.stdout, /reading: Amdahl fits better \(AICc\): contention-limited \(Amdahl\)/)
  assert.match(human.stdout, /Amdahl is enough/)
  // unweighted, as the R usl package fits (the published sigma and lambda = 0 below)
  const json = await runCli('analyzer', ['fit', join(dir, 'ray.csv'), '--json', '--bootstrap', '200', '--seed', '3', '--weights', 'none'])
  assert.equal(json.code, 0, json.stderr)
  const r = JSON.parse(json.stdout)
  const f = r.groups[0].fits.usl
  assert.equal(f.lambda, 0)
  assert.ok(Math.abs(f.sigma - 0.0578) < 0.0005)
  assert.equal(f.bootstrapCi.samples, 200)
  // the line printed is the default (relative-error) fit's reading
  const relative = JSON.parse((await runCli('analyzer', ['fit', join(dir, 'ray.csv'), '--json'])).stdout).groups[0].fits.usl
  assert.ok(human.stdout.includes(relative.verdict))
  assert.ok(!json.stdout.includes('NaN'))
})

test('fit with too few points, a non-positive throughput or a bad flag: exit 2 with a message that says what is allowed', async (t) => {
  const dir = tmp(t)
  writeFileSync(join(dir, 'three.csv'), 'n,throughput\n1,10\n2,19\n4,33\n')
  const few = await runCli('analyzer', ['fit', join(dir, 'three.csv')])
  assert.equal(few.code, 2)
  assert.match(few.stderr, /NS_ERR_BAD_DATA: .*needs at least 4 distinct N; got 3.*--model amdahl/)
  assert.equal((await runCli('analyzer', ['fit', join(dir, 'three.csv'), '--model', 'amdahl'])).code, 0)
  writeFileSync(join(dir, 'zero.csv'), 'n,throughput\n1,10\n2,0\n4,33\n8,40\n')
  assert.match((await runCli('analyzer', ['fit', join(dir, 'zero.csv')])).stderr, /throughput must be > 0/)
  for (const [args, re] of /** @type {[string[], RegExp][]} */ ([
    [['--model', 'gauss'], /--model: "gauss" is not allowed; one of: usl, amdahl, both/],
    [['--x', 'cpus'], /--x: "cpus" is not allowed; one of: instances, concurrency/],
    [['--bootstrap', '-3'], /--bootstrap/],
    [['--bootstrap', 'many'], /--bootstrap: "many" is not a whole number; allowed: a whole number >= 0 and <= 100000/],
    [['--weights', 'heavy'], /--weights: "heavy" is not allowed; one of: relative, none, sd/],
    [['--colour', 'red'], /--colour: unknown flag/]
  ])) {
    const r = await runCli('analyzer', ['fit', join(dir, 'three.csv'), ...args])
    assert.equal(r.code, 2, args.join(' '))
    assert.match(r.stderr, re)
  }
})

test('compare of a sweep: one table, a line per strategy, the tests between them', async (t) => {
  const out = tmp(t)
  writeSweep(out)
  const r = await runCli('analyzer', ['compare', out])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^group\s+model\s+sigma \[95% CI\]/)
  assert.match(r.stdout, /\ncm\/page: \S+-limited, peak [\d,]+\/s at [\d.]+ workers/)
  assert.match(r.stdout, /^ {2}cm\/page vs hs\/page \(page\):\n {4}throughput at N = 1: /m)
  const json = JSON.parse((await runCli('analyzer', ['compare', out, '--json'])).stdout)
  assert.deepEqual(json.rows.map(x => x.name), ['cm/page', 'hs/page'])
  assert.equal(json.pairs[0].tests.find(x => x.quantity === 'throughput' && x.n === 16).outcome, 'different')
})

test('help teaches every command with examples; no command is an input error', async () => {
  for (const cmd of ['summary', 'fit', 'compare']) {
    const r = await runCli('analyzer', [cmd, '--help'])
    assert.equal(r.code, 0)
    assert.match(r.stdout, new RegExp(`Usage: analyzer ${cmd}[\\s\\S]*Examples:\\n  analyzer ${cmd} `))
  }
  const none = await runCli('analyzer', [])
  assert.equal(none.code, 2)
  assert.match(none.stdout, /Commands:/)
  const unknown = await runCli('analyzer', ['plot'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /unknown command "plot"; commands: summary, fit, compare/)
})

test('parseArguments: defaults and validated options without a process', () => {
  assert.deepEqual(parseArguments(['fit', 'dir']),
    { command: 'fit', help: false, inputs: ['dir'], options: { json: false, model: 'usl', x: 'instances', bootstrap: 0, seed: 1, weights: 'relative' } })
  assert.deepEqual(parseArguments(['summary', 'a.jtl', '--label', 'x', '--json']).options, { json: true, label: 'x' })
  assert.deepEqual(parseArguments(['compare', 'a', 'b', '--group-by', 'strategy']).inputs, ['a', 'b'])
  assert.throws(() => parseArguments(['compare', 'a', '--model', 'both']), /--model: "both" is not allowed; one of: usl, amdahl/)
  assert.throws(() => parseArguments(['fit']), /needs a sweep folder or a points CSV/)
})
