#!/usr/bin/env node
// Soak test of a long sweep's survival: one sweep on the Swarm backend, its --out on a small tmpfs, put through
// kill -9 at random moments (deploy, load, teardown, between runs), a Docker daemon restart and a full disk, resumed
// after each; then the same plan (same seed) without faults. Passes when every planned run is done exactly once,
// nothing is left deployed or running, and the faulted sweep's analysis has the same points as the clean one's.
// --short runs no clean sweep: its points are the plan's (every shape at its x, once a repeat), which the faulted
// sweep's analysis must have.
//   npm run soak                 36 runs, 5 kills
//   npm run soak -- --short      12 runs, 2 kills, no clean sweep (what CI runs)
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, existsSync, rmSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { readRunFiles } from '../lib/run-files.js'
import { seededRandom } from '../lib/random.js'
import { loadPoints } from '../analyzer/points.js'
import { RUN_LABEL } from '../executor/docker/stack-render.js'

const ROOT = resolve(import.meta.dirname, '..')
const EXECUTOR = join(ROOT, 'bin', 'executor.js')
const DOCKER_UP = join(ROOT, 'scripts', 'docker-up.sh')
const SHAPES = 4 // up and cm, 1 and 2 instances
const SESSION_LIMIT_MS = 10 * 60_000

const OPTIONS = [
  option({ flag: 'short', type: 'boolean', default: false, help: 'CI mode: 12 runs, 2 kills, the plan as the clean sweep' }),
  option({ flag: 'runs', type: 'whole', min: 8, max: 400, help: 'planned runs, a multiple of 4 (default 36, short 12)' }),
  option({ flag: 'kills', type: 'whole', min: 0, max: 50, help: 'kill -9 moments (default 5, short 2)' }),
  option({ flag: 'seed', type: 'whole', min: 1, max: 2 ** 31 - 1, help: 'the faults\' moments and the plan\'s order' }),
  option({ flag: 'keep', type: 'boolean', default: false, help: 'keep the folders (printed) instead of removing them' }),
  option({ flag: 'json', type: 'boolean', default: false })
]

// a race's losing timer outlives the race: main ends with process.exit rather than wait for it
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** The experiment: 4 shapes x 1 load, repeated in blocks of random order (many deployments and teardowns). */
function experimentText (runs) {
  return [
    'name: soak',
    'backend: swarm',
    'benchmark: baseline',
    'strategies: [up, cm]',
    'instances: [1, 2]',
    'cpus-per-instance: 0.5',
    'concurrency: 4',
    'duration: 1',
    'warmup: 1',
    `repeats: ${runs / SHAPES}`,
    'order: blocks',
    'analysis:',
    '  fit: usl',
    ''
  ].join('\n')
}

/** One `executor sweep` process; resolves with its exit, output and the phase its last verbose line was in. */
function startSweep (args) {
  const child = spawn(process.execPath, [EXECUTOR, 'sweep', ...args, '--verbose'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
  const done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
  return { child, done, output: () => ({ stdout, stderr }), phase: () => phaseOf(stderr) }
}

/** Where a sweep was, from its last lines: deploy, load, teardown, or between runs. */
function phaseOf (stderr) {
  const lines = stderr.trim().split('\n').slice(-3).join('\n')
  if (/removing stack|removed in|teardown/.test(lines)) return 'teardown'
  if (/load: |driver: child|autocannon/.test(lines)) return 'load'
  if (/deploying|tasks run|answer|control plane|placement|image:/.test(lines)) return 'deploy'
  return 'between runs'
}

/** Stops the Docker daemon (SIGTERM, as a restart does) and starts it again; resolves with the seconds it was away. */
async function restartDaemon () {
  const started = Date.now()
  const pid = execFileSync('pgrep', ['-x', 'dockerd'], { encoding: 'utf8' }).trim().split('\n')[0]
  process.kill(Number(pid), 'SIGTERM')
  while (Date.now() - started < 60_000) {
    try { process.kill(Number(pid), 0) } catch { break }
    await sleep(200)
  }
  execFileSync('bash', [DOCKER_UP], { stdio: 'ignore' })
  return (Date.now() - started) / 1000
}

/** Bytes free on the file system of dir. */
function freeOn (dir) {
  return Number(execFileSync('df', ['--output=avail', '-B1', dir], { encoding: 'utf8' }).trim().split('\n')[1])
}

/**
 * Fills the file system of dir to its last block with files named `<filler>.<i>`: the running sweep writes between
 * reading the free space and taking it, so a fallocate of what was free can fail (ENOSPC); each try takes what is
 * free then. Returns the files made, for rmSync.
 * @param {string} dir @param {string} filler
 */
function fillDisk (dir, filler) {
  const made = []
  for (let i = 0; i < 10; i++) {
    const free = freeOn(dir)
    if (free < 4096) break
    const file = `${filler}.${i}`
    try {
      execFileSync('fallocate', ['-l', String(free), file], { stdio: 'ignore' })
    } catch {
      rmSync(file, { force: true }) // the sweep wrote meanwhile: read the free space again
      continue
    }
    made.push(file)
  }
  return made
}

/** The sweep folder under out (the one folder there). */
function sweepDirIn (out) {
  const ids = readdirSync(out).filter(d => existsSync(join(out, d, 'sweep.json')))
  return ids.length === 1 ? join(out, ids[0]) : null
}

/** What is left behind: stacks, containers, networks labelled as nodescale's runs; sweep and driver processes. */
function leftovers () {
  const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8' }).trim().split('\n').filter(Boolean)
  const out = {
    services: docker('service', 'ls', '-q', '--filter', `label=${RUN_LABEL}`),
    containers: docker('ps', '-aq', '--filter', `label=${RUN_LABEL}`),
    networks: docker('network', 'ls', '-q', '--filter', `label=${RUN_LABEL}`),
    processes: []
  }
  for (const pid of readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    let cmd = ''
    try { cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8') } catch { continue }
    if (cmd.includes(EXECUTOR) || cmd.includes('load-child.js')) out.processes.push(`${pid} ${cmd.replaceAll('\0', ' ').trim()}`)
  }
  return out
}

/** Every plan index's finished runs, from the run folders (what the analyzer reads). */
async function doneByIndex (dir, sweepId) {
  const { runs } = await readRunFiles([dir])
  const byIndex = new Map()
  for (const { run } of runs) {
    if (run.config.sweep?.id !== sweepId || run.status !== 'done') continue
    byIndex.set(run.config.sweep.index, [...(byIndex.get(run.config.sweep.index) ?? []), run.id])
  }
  return byIndex
}

/** The analysis's points: each group with the number of runs at each x (the figures differ between two sweeps). */
async function pointsOf (dir) {
  const { groups } = await loadPoints([dir], { includeInvalid: true })
  return groups.map(g => `${g.name}: ${[...countBy(g.observations.map(o => o.n))].map(([n, k]) => `${n}x${k}`).join(' ')}`).sort()
}

/**
 * What a clean sweep's points are, from the plan alone: the groups the analysis found, each of its x measured once a
 * repeat; and exactly SHAPES shapes (a group or an x missing or extra shows as a difference).
 * @param {string[]} points pointsOf's lines
 * @param {number} repeats
 */
function planPoints (points, repeats) {
  const counts = (line) => line.slice(line.lastIndexOf(': ') + 2).split(' ')
  const lines = points.map(line => `${line.slice(0, line.lastIndexOf(': '))}: ${counts(line).map(c => `${c.split('x')[0]}x${repeats}`).join(' ')}`)
  const shapes = points.reduce((a, line) => a + counts(line).length, 0)
  return shapes === SHAPES ? lines : [...lines, `${SHAPES} shapes planned, ${shapes} found`]
}

function countBy (xs) {
  const m = new Map()
  for (const x of xs.sort((a, b) => a - b)) m.set(x, (m.get(x) ?? 0) + 1)
  return m
}

/**
 * The faulted sweep: the faults in a shuffled order, each at a random moment (2-10 s) after the previous one or after
 * its session started; a kill -9 or a full disk ends the session and the next one resumes; a daemon restart does not
 * (the sweep waits for the daemon and goes on). Sessions go on until every run is done.
 */
async function faultedSweep ({ file, out, seed, kills, random, say }) {
  const faults = shuffle([...Array(kills).fill('kill'), 'restart', 'disk-full'], random)
  const log = []
  let dir = null
  let sessions = 0
  let session = null
  const started = Date.now()
  const untilEnd = (s) => Promise.race([s.done, sleep(SESSION_LIMIT_MS).then(() => null)])
  while (sessions < faults.length + kills + 8) {
    if (!session) {
      session = startSweep(dir ? ['--resume', dir] : [file, '--out', out, '--seed', String(seed), '--no-report'])
      sessions++
    }
    const fault = faults[0]
    const at = 2000 + random() * 8000
    let ended = fault ? await Promise.race([session.done, sleep(at).then(() => null)]) : await untilEnd(session)
    if (!ended) {
      if (!fault) throw new Error(`a sweep session did not end within ${SESSION_LIMIT_MS / 60000} min:\n${session.output().stderr.slice(-3000)}`)
      faults.shift()
      const phase = session.phase()
      const entry = { fault, session: sessions, afterSeconds: Math.round(at / 100) / 10, phase }
      log.push(entry)
      if (fault === 'kill') {
        session.child.kill('SIGKILL')
        ended = await session.done
        say(`  kill -9 (${phase})`)
      } else if (fault === 'restart') {
        entry.awaySeconds = Math.round(await restartDaemon() * 10) / 10
        say(`  Docker daemon restarted (${phase}), away ${entry.awaySeconds} s; the sweep goes on`)
        continue
      } else {
        // every byte: sweep.json's own write must fail too, and the sweep still say why it stopped
        const fillers = fillDisk(out, join(out, 'filler'))
        ended = await untilEnd(session)
        const { stderr } = session.output()
        entry.stoppedCleanly = ended?.code === 1 && /NS_ERR_NO_SPACE/.test(stderr)
        entry.message = /NS_ERR_NO_SPACE.*$/m.exec(stderr)?.[0] ?? null
        for (const f of fillers) rmSync(f, { force: true })
        say(`  disk filled (${phase}): ${entry.stoppedCleanly ? entry.message : `NOT stopped cleanly (exit ${ended?.code}): ${stderr.slice(-500)}`}`)
        if (!ended) { session.child.kill('SIGKILL'); ended = await session.done }
      }
    }
    const output = session.output()
    session = null
    dir ??= sweepDirIn(out)
    // killed before its folder was made: the next session starts the sweep afresh
    if (!dir) {
      if (ended.signal === 'SIGKILL') continue
      throw new Error(`no sweep folder in ${out} after the first session:\n${output.stderr.slice(-3000)}`)
    }
    const sweep = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'))
    if (ended.code === 0 && sweep.status === 'done') {
      if (faults.length) throw new Error(`the sweep finished before faults ${faults.join(', ')} were applied: plan more runs (--runs)`)
      return { dir, sweep, sessions, faults: log, seconds: Math.round((Date.now() - started) / 1000) }
    }
  }
  throw new Error(`the sweep in ${dir} was not done after ${sessions} sessions`)
}

function shuffle (list, random) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

async function main () {
  const values = withDefaults(parseCommandLine(process.argv.slice(2), OPTIONS).values, OPTIONS)
  const runs = values.runs ?? (values.short ? 12 : 36)
  if (runs % SHAPES) throw new Error(`--runs must be a multiple of ${SHAPES}`)
  const kills = values.kills ?? (values.short ? 2 : 5)
  const seed = values.seed ?? 1 + Math.floor(Math.random() * 1e9)
  const random = seededRandom(seed)
  const say = values.json ? () => {} : line => console.log(line)
  const work = mkdtempSync(join(tmpdir(), 'nodescale-soak-'))
  const file = join(work, 'soak.yml')
  writeFileSync(file, experimentText(runs))
  const out = join(work, 'faulted')
  const clean = join(work, 'clean')
  mkdirSync(out)
  mkdirSync(clean)
  // a small disk of its own, so that filling it up harms nothing else
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', out])
  const result = { runs, kills, seed, work, faulted: null, clean: null, checks: {}, pass: false }
  try {
    say(`soak: ${runs} runs (4 shapes, each repeat a block in random order) on the Swarm backend, ` +
      `${kills} kill -9, 1 daemon restart, 1 full disk; seed ${seed}`)
    const f = await faultedSweep({ file, out, seed, kills, random, say })
    say(`faulted sweep done in ${f.seconds} s over ${f.sessions} sessions`)
    let cleanDir = null
    if (!values.short) {
      const c0 = Date.now()
      const cleanRun = startSweep([file, '--out', clean, '--seed', String(seed), '--no-report'])
      const ended = await cleanRun.done
      if (ended.code !== 0) throw new Error(`the clean sweep failed (exit ${ended.code}):\n${cleanRun.output().stderr.slice(-3000)}`)
      cleanDir = sweepDirIn(clean)
      say(`clean sweep done in ${Math.round((Date.now() - c0) / 1000)} s`)
    }
    const byIndex = await doneByIndex(f.dir, f.sweep.id)
    const planned = f.sweep.plan.map(e => e.index)
    const twice = [...byIndex].filter(([, ids]) => ids.length > 1).map(([i, ids]) => `${i}: ${ids.join(', ')}`)
    const missing = planned.filter(i => !byIndex.has(i))
    const extra = [...byIndex.keys()].filter(i => !planned.includes(i))
    const left = leftovers()
    const faultedPoints = await pointsOf(f.dir)
    const cleanPoints = cleanDir ? await pointsOf(cleanDir) : planPoints(faultedPoints, runs / SHAPES)
    result.faulted = {
      dir: f.dir,
      sessions: f.sessions,
      seconds: f.seconds,
      faults: f.faults,
      attempts: f.sweep.plan.reduce((a, e) => a + e.attempts.length, 0),
      deployments: f.sweep.deployments
    }
    result.clean = { dir: cleanDir }
    result.checks = {
      everyRunDoneOnce: !twice.length && !missing.length && !extra.length && f.sweep.plan.every(e => e.status === 'done'),
      twice,
      missing,
      extra,
      diskFullStoppedCleanly: f.faults.filter(x => x.fault === 'disk-full').every(x => x.stoppedCleanly),
      nothingLeft: !left.services.length && !left.containers.length && !left.networks.length && !left.processes.length,
      left,
      noLock: !existsSync(join(f.dir, 'sweep.lock')),
      samePoints: JSON.stringify(faultedPoints) === JSON.stringify(cleanPoints),
      points: { faulted: faultedPoints, clean: cleanPoints }
    }
    const k = result.checks
    result.pass = k.everyRunDoneOnce && k.diskFullStoppedCleanly && k.nothingLeft && k.noLock && k.samePoints
    say(`every planned run done exactly once: ${k.everyRunDoneOnce ? 'yes' : `NO (twice ${twice.join('; ') || '-'}, missing ${missing.join(', ') || '-'})`} ` +
      `(${result.faulted.attempts} attempts for ${runs} runs, ${f.sweep.deployments} deployments)`)
    say(`the full disk stopped the sweep cleanly: ${k.diskFullStoppedCleanly ? 'yes' : 'NO'}`)
    say(`nothing left deployed or running, no lock: ${k.nothingLeft && k.noLock ? 'yes' : `NO ${JSON.stringify(left)}`}`)
    say(`the analysis has the ${cleanDir ? 'clean sweep' : 'plan'}'s points: ${k.samePoints ? 'yes' : 'NO'} (${faultedPoints.join(' | ')})`)
    say(result.pass ? 'soak: PASS' : 'soak: FAIL')
  } finally {
    try { execFileSync('umount', ['-l', out]) } catch {}
    if (!values.keep) rmSync(work, { recursive: true, force: true })
    else say(`kept: ${work} (the faulted sweep's tmpfs is unmounted, its files are gone)`)
  }
  if (values.json) console.log(JSON.stringify(result))
  process.exitCode = result.pass ? 0 : 1
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(() => process.exit(), err => { console.error(err); process.exit(1) })
}
