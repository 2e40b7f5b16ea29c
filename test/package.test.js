// nodescale as a package: `npm pack`'s tarball holds what a run needs and nothing it should not; installed into an
// empty folder (`npm i ./nodescale-*.tgz`), its `nodescale` bin runs the main job on the local backend and an analyzer
// command on that run's folder. And `nodescale <command>` is `executor <command>` or `analyzer <command>`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, runCli } from './helpers/cli.js'
import { COMMANDS as EXECUTOR_COMMANDS } from '../executor/cli.js'
import { COMMANDS as ANALYZER_COMMANDS } from '../analyzer/cli.js'
import { assertValidRunFolder } from './helpers/schemas.js'

/**
 * Runs a program and resolves with its exit code and output.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd: string, timeoutMs?: number }} opts
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function exec (cmd, args, { cwd, timeoutMs = 120_000 }) {
  return new Promise((resolve, reject) => {
    // npm_config_* of an `npm test` around this one must not reach the npm run here (its prefix, its workspace)
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
    const child = spawn(cmd, args, { cwd, env })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${cmd} ${args.join(' ')} timed out\n${stderr}`)) }, timeoutMs)
    child.on('error', reject)
    child.on('close', code => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

/** The first word of each line under "Commands:" in a program's main help, run through nodescale. */
const commandNames = (help, from, to) => help.slice(help.indexOf(from), to ? help.indexOf(to) : undefined)
  .split('\n').filter(l => /^ {2}[a-z]/.test(l)).map(l => l.trim().split(/\s+/)[0])

test('nodescale --help lists the executor\'s and the analyzer\'s commands; each is that program\'s', async () => {
  const help = await runCli('nodescale', ['--help'])
  assert.equal(help.code, 0, help.stderr)
  assert.deepEqual(commandNames(help.stdout, 'Measure', 'Analyse'), Object.keys(EXECUTOR_COMMANDS))
  assert.deepEqual(commandNames(help.stdout, 'Analyse'), Object.keys(ANALYZER_COMMANDS))
  assert.doesNotMatch(help.stdout, /\((executor|analyzer) /, 'every pointer names nodescale')
  const none = await runCli('nodescale', [])
  assert.equal(none.code, 2, 'no command: the help, exit 2 as executor and analyzer do')
  assert.equal(none.stdout, help.stdout)
  const version = await runCli('nodescale', ['--version'])
  assert.equal(version.code, 0)
  assert.equal(version.stdout, `${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`)
  const bad = await runCli('nodescale', ['frobnicate'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /NS_ERR_BAD_FLAG: unknown command "frobnicate"; commands: run, .*summary, /)
  // a command's help, a bad flag and a missing input come back as the program's own
  for (const [bin, args] of /** @type {[string, string[]][]} */ ([['executor', ['run', '--help']], ['analyzer', ['fit', '--help']],
    ['executor', ['run', '--instances', '2']], ['analyzer', ['fit', '/nonexistent/folder']]])) {
    const [own, via] = await Promise.all([runCli(bin, args), runCli('nodescale', args)])
    assert.deepEqual({ code: via.code, stdout: via.stdout, stderr: via.stderr }, { code: own.code, stdout: own.stdout, stderr: own.stderr },
      `${bin} ${args.join(' ')}`)
  }
})

test('npm pack: the tarball, installed in an empty folder, runs the main job and an analyzer command', { timeout: 240_000 }, async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'ns-package-'))
  t.after(() => rmSync(tmp, { recursive: true, force: true }))
  const packed = await exec('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT })
  assert.equal(packed.code, 0, packed.stderr)
  const [{ filename, files }] = JSON.parse(packed.stdout)
  const paths = files.map(f => f.path)
  for (const needed of ['bin/nodescale.js', 'bin/executor.js', 'bin/analyzer.js', 'register/server.js', 'benchmarks/index.js', 'stacks/hs.yml',
    'stacks/haproxy.cfg', 'docker-compose.yml', 'lib/run-files.js', 'rc/service.js', 'experiments/multicore.yml', 'scripts/docker-up.sh',
    'schemas/run.v1.schema.json', 'package.json']) {
    assert.ok(paths.includes(needed), `the tarball holds ${needed}`)
  }
  for (const folder of ['test/', 'perf/', 'calibration/', '.ci/', 'node_modules/', 'results/']) {
    assert.deepEqual(paths.filter(p => p.startsWith(folder)), [], `nothing of ${folder}`)
  }
  assert.deepEqual(paths.filter(p => /\.(png|tgz|log)$/.test(p) || p.endsWith('package-lock.json')), [], 'no images, tarballs, logs or lock file')

  const app = join(tmp, 'app')
  mkdirSync(app)
  const installed = await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(tmp, filename)], { cwd: app, timeoutMs: 150_000 })
  assert.equal(installed.code, 0, installed.stderr)
  assert.ok(existsSync(join(app, 'node_modules', 'nodescale', 'bin', 'nodescale.js')))

  // the main job at its shortest, from the installed package (npx --no: never fetched from the registry)
  const out = join(app, 'results')
  const run = await exec('npx', ['--no', '--', 'nodescale', 'run', '--backend', 'local', '--strategy', 'cm', '--instances', '2', '--cpus-per-instance', '0.25',
    '-d', '2', '-w', '1', '--out', out], { cwd: app, timeoutMs: 90_000 })
  assert.equal(run.code, 0, run.stderr)
  const [id] = readdirSync(out)
  const dir = join(out, id)
  assert.deepEqual(readdirSync(dir).sort(), ['latency.json', 'run.json', 'samples.jtl', 'timeline.json'])
  const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'))
  assert.equal(record.status, 'done', JSON.stringify(record.error))
  assert.equal(record.config.strategy, 'cm')
  assert.ok(record.summary.requests > 0)
  assert.equal(assertValidRunFolder(dir), 3, 'run.json, latency.json and timeline.json valid against their schemas')

  const summary = await exec('npx', ['--no', '--', 'nodescale', 'summary', dir, '--json'], { cwd: app, timeoutMs: 30_000 })
  assert.equal(summary.code, 0, summary.stderr)
  assert.equal(JSON.parse(summary.stdout).total.requests, record.summary.requests, 'the analyzer reads the run the executor wrote')
})
