// Commands find the sweep: a folder that holds one sweep (`executor sweep --out results/sw` writes
// results/sw/<sweep-id>/) stands for it in every command that reads a sweep; a folder with several is refused with
// the list of them, their dates and status (exit 2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findSweeps, sweepFolder } from '../lib/run-files.js'
import { writeSweepRuns } from './helpers/sweep-runs.js'
import { runCli } from './helpers/cli.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-sweep-folder-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A sweep of up over 1 to 4 instances (two repeats each) under out, its sweep.json dated and with a status. */
function sweepIn (out, name, { status = 'done', createdAt = '2026-11-24T12:00:00.000Z', updatedAt = '2026-11-24T12:30:00.000Z' } = {}) {
  const runs = [100, 190, 270, 340]
    .flatMap((x, i) => [-1, 1].map(s => ({ config: { strategy: 'up', instances: i + 1, cpusPerInstance: 0.5 }, throughput: x + s })))
  const dir = writeSweepRuns(out, name, runs)
  const file = join(dir, 'sweep.json')
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), status, createdAt, updatedAt }))
  return dir
}

test('sweepFolder: the folder itself, the one sweep below it, the folder as given when it holds none', async (t) => {
  const out = tmp(t)
  assert.equal(await sweepFolder(out), out, 'an empty folder stays as given')
  const dir = sweepIn(join(out, 'sw'), 'ibench-smisn')
  assert.equal(await sweepFolder(dir), dir, 'a sweep folder is itself')
  assert.equal(await sweepFolder(join(out, 'sw')), dir, '--out results/sw: its one sweep')
  assert.equal(await sweepFolder(out), dir, 'two levels above: still the one sweep')
  const missing = join(out, 'nope')
  assert.equal(await sweepFolder(missing), missing, 'a path that is not there: the caller says so')
  const file = join(out, 'points.csv')
  writeFileSync(file, 'n,throughput\n1,100\n')
  assert.equal(await sweepFolder(file), file, 'a file stays as given')
  // a run folder of a single run (no sweep.json) beside nothing: as given
  mkdirSync(join(out, 'runs', 'r1'), { recursive: true })
  assert.equal(await sweepFolder(join(out, 'runs')), join(out, 'runs'))
})

test('sweepFolder: several sweeps are refused with each one\'s folder, dates and status', async (t) => {
  const out = tmp(t)
  const a = sweepIn(out, 'first', { status: 'done' })
  const b = sweepIn(out, 'second', { status: 'interrupted', createdAt: '2026-11-25T08:00:00.000Z', updatedAt: '2026-11-25T08:10:00.000Z' })
  assert.deepEqual((await findSweeps(out)).map(s => [s.dir, s.status, s.createdAt]),
    [[a, 'done', '2026-11-24T12:00:00.000Z'], [b, 'interrupted', '2026-11-25T08:00:00.000Z']])
  await assert.rejects(sweepFolder(out, '--status'), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_BAD_FILE')
    assert.match(err.message, /^--status .*: holds 2 sweeps; give one of them:/)
    const lines = err.message.split('\n').slice(1)
    assert.equal(lines.length, 2)
    assert.match(lines[0], new RegExp(`${a}  created 2026-11-24T12:00:00.000Z  updated 2026-11-24T12:30:00.000Z  done  \\(first\\)`))
    assert.match(lines[1], new RegExp(`${b}  created 2026-11-25T08:00:00.000Z  updated 2026-11-25T08:10:00.000Z  interrupted  \\(second\\)`))
    return true
  })
  assert.equal(await sweepFolder(a), a, 'each of them named is itself')
})

test('executor sweep --status and the analyzer\'s commands take the folder that holds the sweep', async (t) => {
  const out = join(tmp(t), 'sw')
  const dir = sweepIn(out, 'ibench-smisn')
  const id = dir.split('/').pop()
  const status = await runCli('executor', ['sweep', '--status', out, '--json'])
  assert.equal(status.code, 0, status.stderr)
  assert.equal(JSON.parse(status.stdout).id, id)
  assert.equal(JSON.parse(status.stdout).dir, dir)
  // --resume too: its runs are all done, so it resumes nothing and ends the sweep in its own folder
  const resumed = await runCli('executor', ['sweep', '--resume', out, '--no-report', '--json'])
  assert.equal(resumed.code, 0, resumed.stderr)
  assert.deepEqual([JSON.parse(resumed.stdout).id, JSON.parse(resumed.stdout).dir], [id, dir])
  const fit = await runCli('analyzer', ['fit', out, '--json'])
  assert.equal(fit.code, 0, fit.stderr)
  assert.equal(JSON.parse(fit.stdout).groups[0].observations.length, 8, 'every run of the sweep is an observation')
  const rep = await runCli('analyzer', ['replicate', out, '--study', 'ibench-smisn', '--json'])
  assert.equal(rep.code, 0, rep.stderr)
  assert.deepEqual(JSON.parse(rep.stdout).sweeps.map(s => s.id), [id])
  const report = await runCli('analyzer', ['report', out, '--format', 'md', '-o', join(out, 'r.md')])
  assert.equal(report.code, 0, report.stderr)
  assert.match(readFileSync(join(out, 'r.md'), 'utf8'), /Replication/, 'the report finds the study of the sweep below')
})

test('a folder with several sweeps: every command lists them and exits 2', async (t) => {
  const out = tmp(t)
  const a = sweepIn(out, 'ibench-smisn')
  const b = sweepIn(out, 'ibench-finding5', { status: 'failed' })
  /** @type {[string, string[]][]} */
  const commands = [
    ['executor', ['sweep', '--status', out]],
    ['executor', ['sweep', '--resume', out]],
    ['analyzer', ['fit', out]],
    ['analyzer', ['compare', out]],
    ['analyzer', ['report', out, '--format', 'md', '-o', join(out, 'r.md')]],
    ['analyzer', ['correlate', out]],
    ['analyzer', ['replicate', out, '--study', 'ibench-smisn']]
  ]
  for (const [bin, args] of commands) {
    const r = await runCli(bin, args)
    const what = `${bin} ${args[0]}`
    assert.equal(r.code, 2, `${what}: ${r.stderr}`)
    assert.match(r.stderr, /error NS_ERR_BAD_FILE: .*holds 2 sweeps; give one of them:/, what)
    assert.ok(r.stderr.includes(`${a}  created 2026-11-24T12:00:00.000Z`) && r.stderr.includes(`${b}  created`), `${what}: ${r.stderr}`)
    assert.match(r.stderr, / {2}failed {2}\(ibench-finding5\)/, what)
  }
  // named one by one, they are read together as before
  const both = await runCli('analyzer', ['fit', a, b, '--json'])
  assert.equal(both.code, 0, both.stderr)
})
