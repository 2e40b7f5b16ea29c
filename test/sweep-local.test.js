// `executor sweep` end to end on the local backend: real servers, deployment reuse, Ctrl-C, kill -9, resume, failures.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, descendants, alive, ROOT } from './helpers/cli.js'
import { experiment, readSweep } from './helpers/sweep-files.js'

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

const runLines = text => text.match(/^\[\s*\d+\/\d+\] .*$/gm) ?? []

test('a 2 x 2 x 2 sweep: every run written, one deployment per shape reused across the concurrency levels', { timeout: 90000 }, async () => {
  const { file, out } = experiment('backend: local\nbenchmark: baseline\nstrategies: [cm, up]\ninstances: [1, 2]\n' +
    'concurrency: [2, 6]\nduration: 1\nwarmup: 0\nrepeats: 1\n')
  const r = await runCli('executor', ['sweep', file, '--out', out, '--seed', '99'])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(runLines(r.stderr).length, 8, r.stderr)
  assert.match(r.stderr, /seed 99/)
  const { dir, sweep, runs } = readSweep(out)
  assert.equal(sweep.status, 'done')
  assert.deepEqual(sweep.counts, { runs: 8, done: 8, failed: 0, degraded: 0, interrupted: 0, pending: 0, running: 0 })
  assert.ok(existsSync(join(dir, 'report.html')), 'the analyzer report is written at the end')
  assert.match(r.stdout, new RegExp(`report: ${join(dir, 'report.html')}`))
  assert.equal(sweep.deployments, 4)
  assert.equal(runs.length, 8)
  assert.ok(runs.every(run => run.status === 'done' && run.summary.requests > 0))
  assert.deepEqual(runs.map(run => run.config.sweep.index).sort(), [0, 1, 2, 3, 4, 5, 6, 7])
  // the server's pids are the deployment's identity: the same for both levels of a shape, new for every shape
  const pidsOf = new Map()
  for (const run of runs) {
    const key = `${run.config.strategy}${run.config.instances}`
    const pids = JSON.stringify(run.placement.map(p => p.pid))
    pidsOf.set(key, [...(pidsOf.get(key) ?? []), pids])
  }
  assert.equal(pidsOf.size, 4)
  for (const [key, list] of pidsOf) assert.equal(new Set(list).size, 1, `${key} was deployed more than once: ${list}`)
  assert.equal(new Set([...pidsOf.values()].map(l => l[0])).size, 4, 'each shape has its own deployment')
  const pids = runs.flatMap(run => run.placement.map(p => p.pid))
  assert.deepEqual(alive(pids), [], 'no server process left')
  // the two levels of a shape ran back to back, as the plan said
  assert.deepEqual(sweep.plan.map(e => e.status), Array(8).fill('done'))
})

test('Ctrl-C mid-sweep leaves nothing running and a resumable folder; --resume runs only what is missing', { timeout: 120000 }, async () => {
  const { file, out } = experiment('backend: local\nbenchmark: baseline\nstrategies: [cm]\ninstances: [1, 2]\nconcurrency: [2, 4]\nduration: 2\nwarmup: 0\n')
  let tree = []
  let armed = false
  const first = await runCli('executor', ['sweep', file, '--out', out, '--seed', '5'], {
    onStderr (text, child) {
      if (armed || !/^\[2\/4\]/m.test(text)) return
      armed = true // one SIGINT, during the third run
      setTimeout(() => { tree = descendants(child.pid); child.kill('SIGINT') }, 1000)
    }
  })
  assert.equal(first.code, 1, first.stderr)
  assert.ok(tree.length >= 2, `the sweep had processes (${tree.length})`)
  await sleep(200)
  assert.deepEqual(alive(tree), [], 'every process of the sweep is gone')
  assert.match(first.stdout, /interrupted[\s\S]*resume: executor sweep --resume /)
  const before = readSweep(out)
  assert.equal(before.sweep.status, 'interrupted')
  assert.equal(before.sweep.counts.done, 2)
  assert.equal(before.sweep.counts.interrupted, 1)
  const doneBefore = before.runs.filter(run => run.status === 'done').map(run => run.id).sort()
  assert.ok(before.runs.some(run => run.status === 'interrupted'), 'the cut run says interrupted')

  const second = await runCli('executor', ['sweep', '--resume', before.dir])
  assert.equal(second.code, 0, second.stderr)
  assert.match(second.stderr, /resuming .*: 2 of 4 runs done, 2 to run/)
  assert.equal(runLines(second.stderr).length, 2, second.stderr)
  const after = readSweep(out)
  assert.equal(after.sweep.status, 'done')
  assert.equal(after.sweep.counts.done, 4)
  const done = after.runs.filter(run => run.status === 'done')
  assert.equal(done.length, 4, 'nothing ran twice')
  assert.deepEqual(done.map(run => run.config.sweep.index).sort(), [0, 1, 2, 3])
  assert.ok(doneBefore.every(id => done.some(run => run.id === id)), 'finished runs were kept, not redone')
})

test('kill -9 mid-sweep: --resume keeps the finished runs and redoes the cut one, marked interrupted', { timeout: 90000 }, async () => {
  const { file, out } = experiment('backend: local\nbenchmark: baseline\nstrategies: [cm]\ninstances: [1]\nconcurrency: [2, 4, 6]\nduration: 2\nwarmup: 0\n')
  let killed = false
  const first = await runCli('executor', ['sweep', file, '--out', out], {
    onStderr (text, child) {
      if (killed || !/^\[1\/3\]/m.test(text)) return
      killed = true
      setTimeout(() => child.kill('SIGKILL'), 1000)
    }
  })
  assert.equal(first.signal, 'SIGKILL')
  const before = readSweep(out)
  assert.equal(before.sweep.counts.done, 1)
  assert.equal(before.runs.filter(run => run.status === 'running').length, 1)
  const second = await runCli('executor', ['sweep', '--resume', before.dir])
  assert.equal(second.code, 0, second.stderr)
  assert.equal(runLines(second.stderr).length, 2, second.stderr)
  const after = readSweep(out)
  assert.deepEqual(after.runs.map(run => run.status).sort(), ['done', 'done', 'done', 'interrupted'])
  assert.deepEqual(after.runs.filter(run => run.status === 'done').map(run => run.config.sweep.index).sort(), [0, 1, 2])
})

test('a failed run is recorded with its reason and the sweep goes on; --fail-fast stops at it', { timeout: 90000 }, async () => {
  const app = join(ROOT, 'test', 'fixtures', 'apps', 'fails-on-r2.js')
  const { file, out } = experiment(`backend: local\napp: ${app}\nstrategies: [hs]\ninstances: [2, 1]\n` +
    'concurrency: [2, 4]\nduration: 1\nwarmup: 0\nready-timeout: 10\n')
  const r = await runCli('executor', ['sweep', file, '--out', out])
  assert.equal(r.code, 1, r.stderr)
  const { sweep, runs } = readSweep(out)
  assert.equal(sweep.status, 'failed')
  assert.equal(sweep.counts.done, 2)
  assert.equal(sweep.counts.failed, 2)
  for (const e of sweep.plan.filter(x => x.status === 'failed')) {
    assert.match(e.label, /^hs x2/)
    assert.match(e.reason, /r2 cannot reach its database/)
  }
  assert.deepEqual(runs.filter(run => run.status === 'done').map(run => run.config.instances), [1, 1])
  // the deployment that failed left a run folder that says why (the other run of its shape was not tried)
  const failed = runs.filter(run => run.status === 'failed')
  assert.equal(failed.length, 1)
  assert.match(failed[0].error.message, /r2 cannot reach its database/)
  assert.match(r.stdout, /failed: #\d hs x2 · fails-on-r2 · c=\d \(repeat 1\): /)

  const ff = experiment(`backend: local\napp: ${app}\nstrategies: [hs]\ninstances: [2, 1]\n` +
    'concurrency: [2, 4]\nduration: 1\nwarmup: 0\nready-timeout: 10\norder: blocks\n')
  // find a seed whose order starts with hs x2, from the dry run
  let seed = 1
  for (;; seed++) {
    const plan = JSON.parse((await runCli('executor', ['sweep', ff.file, '--dry-run', '--json', '--seed', String(seed)])).stdout).plan
    if (/^hs x2/.test(plan[0].label)) break
  }
  const f = await runCli('executor', ['sweep', ff.file, '--out', ff.out, '--fail-fast', '--seed', String(seed)])
  assert.equal(f.code, 1, f.stderr)
  const stopped = readSweep(ff.out).sweep
  assert.deepEqual(stopped.plan.map(e => e.status), ['failed', 'pending', 'pending', 'pending'])
})

test('an auto sweep stays on the backend its first session found: local without a daemon, still local once one answers', { timeout: 120000 }, async () => {
  const { file, out } = experiment('backend: auto\nbenchmark: baseline\nstrategies: [up]\ninstances: [1]\n' +
    'concurrency: [2, 4]\nduration: 1\nwarmup: 0\nrepeats: 2\n')
  let armed = false
  // no daemon at DOCKER_HOST: auto takes the local backend; Ctrl-C once two runs are done
  const first = await runCli('executor', ['sweep', file, '--out', out, '--seed', '3'], {
    env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
    onStderr (text, child) {
      if (armed || !/^\[2\/4\]/m.test(text)) return
      armed = true
      child.kill('SIGINT')
    }
  })
  assert.equal(first.code, 1, first.stderr)
  const before = readSweep(out)
  assert.equal(before.sweep.backendUsed, 'local')
  assert.ok(before.sweep.counts.done >= 2 && before.sweep.counts.done < 4, JSON.stringify(before.sweep.counts))
  // a daemon may answer now (this machine's, for the Swarm tests): the rest of the sweep still runs locally
  const second = await runCli('executor', ['sweep', '--resume', before.dir])
  assert.equal(second.code, 0, second.stderr)
  const after = readSweep(out)
  const done = after.runs.filter(run => run.status === 'done')
  assert.equal(done.length, 4)
  assert.deepEqual([...new Set(done.map(run => run.environment.backend))], ['local'], 'no run went to another backend')
})
