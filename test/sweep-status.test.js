// A sweep's estimates, its lock and --status, with real executor processes on the local backend: the disk estimate
// and the refusal on a full file system, estimate against actual, a second process refused, a dead owner taken over.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, existsSync, rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir, hostname } from 'node:os'
import { join } from 'node:path'
import { runCli } from './helpers/cli.js'
import { SAMPLE_BYTES, dirBytes } from '../executor/sweep/sweep-estimate.js'
import { readLock, takeLock, processStartTicks } from '../executor/sweep/sweep-lock.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-status-'))

function experiment (text) {
  const dir = tmp()
  const file = join(dir, 'study.yml')
  writeFileSync(file, text)
  return { file, out: join(dir, 'out') }
}

const sweepDir = out => join(out, readdirSync(out).find(d => existsSync(join(out, d, 'sweep.json'))))
const readSweep = dir => JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'))
const SMALL = 'backend: local\nbenchmark: baseline\nstrategies: [cm]\ninstances: [1]\nwarmup: 0\n'

test('dry run: the estimated time and disk, what they rest on, and the free space of --out', async () => {
  const { file, out } = experiment(`${SMALL}concurrency: [2, 4]\nduration: 2\nrepeats: 3\n`)
  const r = await runCli('executor', ['sweep', file, '--out', out, '--dry-run'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^estimated time: \d+ s on the local backend$/m)
  assert.match(r.stdout,
    /^estimated disk: [\d.]+ MB \(from the plan: samples \w+ \d+ B a request; assumed, .*baseline 14,000 req\/s\) · [\d.]+ [kMGT]?B free on /m)
  assert.ok(!existsSync(out), 'a dry run makes no folder')
  const j = JSON.parse((await runCli('executor', ['sweep', file, '--out', out, '--dry-run', '--json'])).stdout)
  assert.equal(j.estimate.runs, 6)
  // six runs of 2 s at the assumed 14,000 req/s: at least the samples of 6 x 2 x 14,000 requests and six runs' files
  const perRequest = SAMPLE_BYTES[j.estimate.samples[0]]
  assert.ok(j.estimate.bytes >= 6 * 2 * 14000 * perRequest + 6 * 24 * 1024, String(j.estimate.bytes))
  assert.deepEqual(j.estimate.assumedRates, ['baseline'])
  assert.ok(j.disk.free > 0)
  // a rate run's requests are its rate: no assumption
  const rate = experiment(`${SMALL}rate: [100]\nduration: 2\n`)
  const jr = JSON.parse((await runCli('executor', ['sweep', rate.file, '--dry-run', '--json'])).stdout)
  assert.deepEqual(jr.estimate.assumedRates, [])
})

const tiny = tmp()
let mounted = false
after(() => { if (mounted) execFileSync('umount', [tiny]); rmSync(tiny, { recursive: true, force: true }) })

test('a sweep that cannot fit on --out\'s file system is refused before anything starts ' +
  '(a 1 MB tmpfs)', { skip: process.getuid?.() !== 0 && 'mounting a tmpfs needs root', timeout: 30000 }, async () => {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', tiny])
  mounted = true
  const { file } = experiment(`${SMALL}concurrency: [2, 4]\nduration: 5\nrepeats: 4\n`)
  const out = join(tiny, 'out')
  const r = await runCli('executor', ['sweep', file, '--out', out])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, new RegExp(`error NS_ERR_BAD_FLAG: --out: ${out} has 1\\.0 MB free but this sweep is estimated to write [\\d.]+ MB`))
  assert.match(r.stderr, /fix: .*samples: none.*fewer repeats.*another --out/)
  assert.deepEqual(readdirSync(out), [], 'no sweep folder, no run')
})

test('a finished sweep: its estimate against what it took in sweep.json and at the end; --status reads it', { timeout: 60000 }, async () => {
  const { file, out } = experiment(`${SMALL}concurrency: [2, 4]\nduration: 1\nrepeats: 1\n`)
  const r = await runCli('executor', ['sweep', file, '--out', out, '--no-report'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /^estimated disk: .* free on /m)
  assert.match(r.stdout, /^ {2}estimated \d+ s and [\d.]+ [kM]B; took \d+ s and [\d.]+ [kMG]?B: [\d.]+ x the time, [\d.]+ x the disk$/m)
  const dir = sweepDir(out)
  const sweep = readSweep(dir)
  assert.equal(sweep.sessions.length, 1)
  assert.ok(sweep.sessions[0].endedAt && sweep.sessions[0].seconds > 0)
  assert.ok(sweep.actual.seconds >= 2, JSON.stringify(sweep.actual))
  // the folder's size as it was when sweep.json was last written (sweep.json's own size aside)
  const size = await dirBytes(dir)
  assert.ok(Math.abs(sweep.actual.bytes - size) <= 8192 && size > 2 * 16384, `${sweep.actual.bytes} vs ${size}`)
  assert.ok(sweep.estimate.bytes > 0)
  assert.ok(!existsSync(join(dir, 'sweep.lock')), 'the lock is gone once the sweep ends')
  const s = await runCli('executor', ['sweep', '--status', dir])
  assert.equal(s.code, 0, s.stderr)
  assert.match(s.stdout, /: done · /)
  assert.match(s.stdout, /runs: 2 of 2 done · 0 failed · 0 interrupted · \d not valid · 0 left/)
  assert.match(s.stdout, /in flight: nothing/)
  assert.match(s.stdout, /no sweep process owns it\n?$/)
  const j = JSON.parse((await runCli('executor', ['sweep', '--status', dir, '--json'])).stdout)
  assert.equal(j.runs.done, 2)
  assert.equal(j.owner, null)
  assert.ok(j.bytes.used === size && j.bytes.free > 0, JSON.stringify(j.bytes))
  // the --out folder holds this one sweep: --status finds it there (lib/run-files.js sweepFolder); a folder with none
  // is refused
  const above = await runCli('executor', ['sweep', '--status', out, '--json'])
  assert.equal(above.code, 0, above.stderr)
  assert.equal(JSON.parse(above.stdout).id, j.id)
  const bad = await runCli('executor', ['sweep', '--status', join(out, 'none')])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /NS_ERR_BAD_FILE: --status .*: no readable sweep.json there/)
})

test('while a sweep runs: --status sees its owner and the run in flight, a second --resume is refused; Ctrl-C and ' +
  'kill -9 leave a lock that --resume takes over', { timeout: 120000 }, async () => {
  const { file, out } = experiment(`${SMALL}concurrency: [2, 4, 6]\nduration: 2\nrepeats: 2\n`)
  const checks = {}
  const first = await runCli('executor', ['sweep', file, '--out', out, '--no-report'], {
    onStderr (text, child) {
      if (checks.started || !/^\[1\/6\]/m.test(text)) return
      checks.started = true
      setTimeout(async () => {
        const dir = sweepDir(out)
        checks.status = await runCli('executor', ['sweep', '--status', dir, '--json'])
        checks.text = await runCli('executor', ['sweep', '--status', dir])
        checks.second = await runCli('executor', ['sweep', '--resume', dir])
        checks.lock = await readLock(dir)
        child.kill('SIGINT')
      }, 300)
    }
  })
  assert.equal(first.code, 1, first.stderr)
  const dir = sweepDir(out)
  const st = JSON.parse(checks.status.stdout)
  assert.equal(st.owner.state, 'alive')
  assert.equal(st.owner.pid, first.pid)
  assert.equal(st.owner.host, hostname())
  assert.ok(st.inFlight && st.inFlight.label.startsWith('cm x1'), JSON.stringify(st.inFlight))
  assert.ok(st.runs.done >= 1 && st.runs.left >= 1, JSON.stringify(st.runs))
  assert.match(checks.text.stdout, new RegExp(`owned by the running process ${first.pid} on host ${hostname()}`))
  assert.equal(checks.second.code, 2, checks.second.stderr)
  assert.match(checks.second.stderr, new RegExp(`NS_ERR_BAD_FLAG: --resume: .* is being run by the process ${first.pid} on host ${hostname()}`))
  assert.equal(checks.lock.pid, first.pid, 'the refused process left the owner\'s lock alone')
  assert.ok(!existsSync(join(dir, 'sweep.lock')), 'Ctrl-C removes the lock')

  // a resume killed with -9 leaves its lock; the status says its process is gone; the next resume takes it over
  let killed = false
  const second = await runCli('executor', ['sweep', '--resume', dir, '--no-report'], {
    onStderr (text, child) {
      if (killed || !/^\[\d\/6\]/m.test(text)) return
      killed = true
      setTimeout(() => child.kill('SIGKILL'), 500)
    }
  })
  assert.equal(second.signal, 'SIGKILL')
  assert.equal(JSON.parse(readFileSync(join(dir, 'sweep.lock'), 'utf8')).pid, second.pid)
  const dead = await runCli('executor', ['sweep', '--status', dir])
  assert.equal(dead.code, 0, dead.stderr)
  assert.match(dead.stdout, new RegExp(`no sweep process owns it: the process ${second.pid} on host ${hostname()} is gone; executor sweep --resume ${dir}`))
  assert.match(dead.stdout, /in flight: nothing/)
  const third = await runCli('executor', ['sweep', '--resume', dir, '--no-report'])
  assert.equal(third.code, 0, third.stderr)
  assert.match(third.stderr, new RegExp(`taking over ${dir}: its lock names the process ${second.pid} on host ${hostname()} .*, which is gone`))
  assert.match(third.stderr, /resuming .* · estimated \d+ s left/)
  assert.match(third.stderr, /estimated disk: .*from the finished runs/)
  assert.ok(!existsSync(join(dir, 'sweep.lock')))
  const sweep = readSweep(dir)
  assert.equal(sweep.status, 'done')
  assert.equal(sweep.sessions.length, 3)
  assert.match(sweep.sessions[1].ended, /kill -9/)
  const spent = sweep.sessions.reduce((t, s) => t + s.seconds, 0)
  assert.ok(Math.abs(sweep.actual.seconds - spent) <= 1, `${sweep.actual.seconds} vs ${spent}`)
  assert.match(third.stdout, /took \d+ s \(3 sessions\)/)
})

test('the lock: a live pid started after the lock is a reused pid (gone); another host\'s lock is never taken', async () => {
  const dir = tmp()
  const me = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), command: 'x' }
  writeFileSync(join(dir, 'sweep.lock'), JSON.stringify({ ...me, procStart: processStartTicks(process.pid) }))
  assert.equal((await readLock(dir)).state, 'alive')
  writeFileSync(join(dir, 'sweep.lock'), JSON.stringify({ ...me, procStart: processStartTicks(process.pid) - 1 }))
  assert.equal((await readLock(dir)).state, 'gone', 'same pid, another start time')
  writeFileSync(join(dir, 'sweep.lock'), JSON.stringify({ ...me, startedAt: '2000-01-01T00:00:00Z' }))
  assert.equal((await readLock(dir)).state, 'gone', 'this process started long after that lock was written')
  writeFileSync(join(dir, 'sweep.lock'), JSON.stringify({ ...me, host: 'elsewhere' }))
  await assert.rejects(takeLock(dir), (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_FLAG' && /another host.*delete .*sweep\.lock/.test(err.message))
  writeFileSync(join(dir, 'sweep.lock'), '{')
  await assert.rejects(takeLock(dir), /cannot be read/)
  rmSync(join(dir, 'sweep.lock'))
  const held = await takeLock(dir)
  assert.equal((await readLock(dir)).state, 'alive')
  await held.release()
  assert.ok(!existsSync(join(dir, 'sweep.lock')))
})
