// A user's own whole server, unchanged (--server): a fastify service and json-server installed from npm, a plain http
// server, measured in every strategy on the local backend; the bad inputs each a clear error with nothing left running;
// an experiment that names a server.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, readRun, ROOT, commandLine } from './helpers/cli.js'
import { exitCodeOf } from '../lib/errors.js'
import { RUN_OPTIONS, validateRunConfig } from '../lib/run-options.js'
import { parseCommandLine } from '../lib/options.js'

const tmp = (name) => mkdtempSync(join(tmpdir(), `ns-whole-${name}-`))
const WORK = tmp('servers')
const FASTIFY = join(WORK, 'fastify-server')
const JSON_SERVER = join(WORK, 'json-api')
// the cpu benchmark's worst case (104743²): about 52,000 trial divisions a request
const PRIME = '/prime?n=10971096049'
const FAILED = exitCodeOf({ code: 'NS_ERR_DEPLOY' })

before(() => {
  cpSync(join(ROOT, 'examples', 'fastify-server'), FASTIFY, { recursive: true })
  cpSync(join(ROOT, 'examples', 'http-server'), join(WORK, 'http-server'), { recursive: true })
  mkdirSync(JSON_SERVER)
  writeFileSync(join(JSON_SERVER, 'package.json'), JSON.stringify({ name: 'json-api', private: true }))
  writeFileSync(join(JSON_SERVER, 'db.json'), JSON.stringify({ posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }] }))
  for (const [dir, pkgs] of /** @type {[string, string[]][]} */ ([[FASTIFY, []], [JSON_SERVER, ['json-server@0.17.4']]])) {
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...pkgs], { cwd: dir, encoding: 'utf8', timeout: 120000 })
    assert.equal(r.status, 0, `npm install in ${dir}: ${r.stderr}`)
  }
})

/** One run of a whole server: its exit code, run.json and stderr. */
async function measure (args, { out = tmp('run') } = {}) {
  const r = await runCli('executor', ['run', '--backend', 'local', '-d', '3', '-w', '1', '-c', '8', '-o', out, '-q', ...args], { timeoutMs: 90000 })
  return { ...r, ...(r.code === 0 ? readRun(out) : {}) }
}

/** Processes whose command line names this folder: what a run of a server in it left running. */
function leftRunning (folder) {
  const left = []
  for (const pid of readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    const cmd = commandLine(pid)
    if (cmd.includes(folder)) left.push(`${pid}: ${cmd}`)
  }
  return left
}

/** The instances that did work: telemetry rows of workers busy over 10% of a core. */
const busyWorkers = (run) => run.diagnosis.instances.filter(i => i.role === 'worker' && i.cpu > 0.1)

test('fastify from npm, unchanged, in up, cm, pm2 and hs: several processes busy, throughput rising with N on a CPU-bound route', async (t) => {
  const server = ['--server', join(FASTIFY, 'server.js'), '--path', PRIME, '--health', '/health', '--cpus-per-instance', '0.25']
  const one = await measure(['--strategy', 'up', '--instances', '1', ...server])
  assert.equal(one.code, 0, one.stderr)
  assert.equal(one.run.status, 'done')
  assert.equal(one.run.config.benchmark, 'fastify-server', 'named after its folder')
  assert.deepEqual(one.run.server, { entry: join(FASTIFY, 'server.js'), folder: FASTIFY, package: { name: 'fastify-server-example', version: '1.0.0' } })
  assert.deepEqual(one.run.request, { method: 'GET', path: PRIME })
  assert.equal(one.run.summary.errors, 0)
  assert.equal(busyWorkers(one.run).length, 1, 'the hook preloaded into fastify wrote its telemetry')
  const x1 = one.run.summary.throughput
  for (const strategy of ['cm', 'pm2', 'hs']) {
    const two = await measure(['--strategy', strategy, '--instances', '2', ...server])
    assert.equal(two.code, 0, two.stderr)
    const { run } = two
    assert.equal(run.summary.errors, 0, strategy)
    assert.equal(busyWorkers(run).length, 2, `${strategy}: two server processes busy: ${JSON.stringify(run.diagnosis.instances)}`)
    assert.ok(run.diagnosis.roles.workers > 0.3, `${strategy}: workers ${run.diagnosis.roles.workers} cores`)
    assert.ok(run.cpu.cores.filter(c => c.usage > 10).length >= 2, `${strategy}: per-core CPU ${JSON.stringify(run.cpu.cores)}`)
    if (strategy === 'cm') assert.ok(run.diagnosis.instances.some(i => i.role === 'primary'), 'the cluster primary is measured too')
    if (strategy === 'hs') assert.ok(run.diagnosis.roles['load-balancer'] > 0, 'HAProxy in front, checking the health path')
    t.diagnostic(`${strategy} x2 ${Math.round(run.summary.throughput)} req/s (${(run.summary.throughput / x1).toFixed(2)} of x1's ${Math.round(x1)}); ` +
      `validity ${run.validity.ok ? 'ok' : run.validity.flags.map(f => f.name).join(', ')}; roles ${JSON.stringify(run.diagnosis.roles)}`)
    assert.ok(run.summary.throughput > 1.4 * x1, `${strategy} x2 ${Math.round(run.summary.throughput)} req/s against x1 ${Math.round(x1)} req/s`)
  }
})

test('json-server started by its own bin with {port} in its arguments, in cm and hs', async () => {
  const server = ['--server', join(JSON_SERVER, 'node_modules', '.bin', 'json-server'), '--server-arg', '--port', '--server-arg', '{port}',
    '--server-arg', '--host', '--server-arg', '127.0.0.1', '--server-arg', '--quiet', '--server-arg', 'db.json', '--path', '/posts']
  for (const strategy of ['cm', 'hs']) {
    const r = await measure(['--strategy', strategy, '--instances', '2', ...server])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(r.run.config.serverArgs, ['--port', '{port}', '--host', '127.0.0.1', '--quiet', 'db.json'])
    assert.equal(r.run.summary.errors, 0)
    assert.ok(r.run.summary.requests > 100)
    assert.equal(busyWorkers(r.run).length, 2, `${strategy}: ${JSON.stringify(r.run.diagnosis.instances)}`)
  }
})

test('a POST with a body file, and the JMeter driver, against a plain http server', async () => {
  const dir = tmp('post')
  const body = JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => i) })
  writeFileSync(join(dir, 'body.json'), body)
  // answers 200 only to the exact body with its content type: anything else is an error the run would count
  writeFileSync(join(dir, 'server.js'), `require('node:http').createServer((req, res) => {
  if (req.url === '/health') return res.end('ok')
  let n = ''
  req.on('data', c => { n += c }).on('end', () => {
    res.statusCode = req.method === 'PUT' && req.headers['content-type'] === 'application/json' && n === ${JSON.stringify(body)} ? 200 : 400
    res.end()
  })
}).listen(process.env.PORT, '127.0.0.1')
`)
  const r = await measure(['--strategy', 'up', '--instances', '1', '--server', join(dir, 'server.js'), '--method', 'PUT', '--body', join(dir, 'body.json'),
    '--path', '/items', '--health', '/health', '--driver', 'jmeter', '-d', '2'])
  assert.equal(r.code, 0, r.stderr)
  assert.ok(r.run.summary.requests > 50)
  assert.equal(r.run.summary.errors, 0, 'every request carried the body')
  assert.equal(r.run.request.method, 'PUT')
})

test('bad servers: each a clear error before the load starts, nothing left running', async () => {
  const dir = tmp('bad')
  writeFileSync(join(dir, 'crash.js'), 'console.log("connecting to the database")\nthrow new Error("boom: DATABASE_URL is not set")\n')
  writeFileSync(join(dir, 'elsewhere.js'), 'require("node:http").createServer((q, r) => r.end()).listen(0, "127.0.0.1")\n')
  const cases = [
    { what: 'a file that does not exist', args: ['--server', join(dir, 'nope.js')], code: 2, message: /--server: no file at .*nope\.js/ },
    {
      what: 'a server that exits at start (cm)',
      args: ['--server', join(dir, 'crash.js'), '--strategy', 'cm'],
      code: FAILED,
      message: /boom: DATABASE_URL is not set[\s\S]*connecting to the database|connecting to the database[\s\S]*boom: DATABASE_URL is not set/
    },
    {
      what: 'a server that exits at start (pm2, which restarts it)',
      args: ['--server', join(dir, 'crash.js'), '--strategy', 'pm2'],
      code: FAILED,
      message: /boom: DATABASE_URL is not set/
    },
    {
      what: 'one that never listens on its port',
      args: ['--server', join(dir, 'elsewhere.js'), '--ready-timeout', '3'],
      code: FAILED,
      message: /told to listen on port (\d+) .* but listens on (?!\1)\d+/
    },
    {
      what: 'one that answers its health path with 404',
      args: ['--server', join(ROOT, 'examples', 'http-server', 'server.js'), '--health', '/ready', '--strategy', 'hs'],
      code: FAILED,
      message: /health path \/ready with HTTP 404.*--health/
    }
  ]
  for (const c of cases) {
    const started = Date.now()
    const r = await runCli('executor',
      ['run', '--backend', 'local', '--strategy', 'up', '--instances', '2', '--cpus-per-instance', '0.5', '-d', '2', '-o', tmp('out'), ...c.args],
      { timeoutMs: 60000 })
    assert.equal(r.code, c.code, `${c.what}: ${r.stderr}`)
    assert.match(r.stderr, c.message, c.what)
    assert.ok(Date.now() - started < 20000, `${c.what}: failed in ${Date.now() - started} ms`)
    assert.deepEqual(leftRunning(dir), [], `${c.what}: nothing left running`)
    assert.deepEqual(leftRunning(join(ROOT, 'examples')), [], `${c.what}: nothing left running`)
  }
})

test('the options of a whole server: refused where they do not apply, named in the message', () => {
  const server = join(ROOT, 'examples', 'http-server', 'server.js')
  const base = { strategy: 'up', instances: 1 }
  const refused = [
    [{ server, app: server }, /--server: cannot be combined with --app/],
    [{ server, params: { n: '3' } }, /--param: is for benchmark apps; your own server takes its options from --server-arg/],
    [{ path: '/x' }, /--path: only applies to your own server: give --server FILE/],
    [{ serverArgs: ['--port'] }, /--server-arg: only applies to your own server/],
    [{ server, containerPort: 3000 }, /--container-port: only applies with --image REF/],
    [{ server, body: server }, /--body: is sent with --method POST, PUT or PATCH/],
    [{ server, path: 'items' }, /--path: "items" is not a path/],
    [{ image: 'my api' }, /--image: "my api" is not an image reference/],
    [{ image: 'my-api:1', backend: 'local' }, /--image: only applies to Swarm runs/],
    [{ image: 'my-api:1', server: 'server.js', backend: 'swarm' }, /--server: "server.js" is not a path inside the image/]
  ]
  for (const [values, message] of refused) assert.throws(() => validateRunConfig({ ...base, ...values }), message, JSON.stringify(values))
  const config = validateRunConfig({ ...base, server, serverArgs: ['--port', '{port}'] })
  assert.equal(config.benchmark, undefined, 'named by its folder when the run starts')
  assert.deepEqual(config.serverArgs, ['--port', '{port}'])
  // a server's own flags follow --server-arg as they are
  assert.deepEqual(parseCommandLine(['--server-arg', '--port', '--server-arg', '-v', '-n', '2'], RUN_OPTIONS).values,
    { serverArgs: ['--port', '-v'], instances: 2 })
})

test('an experiment names a server: a sweep compares strategies for it', async () => {
  const dir = tmp('sweep')
  cpSync(join(ROOT, 'examples', 'http-server'), join(dir, 'api'), { recursive: true })
  writeFileSync(join(dir, 'mine.yml'), `name: mine
backend: local
server: api/server.js
path: /prime?n=1000003
health: /health
strategies: [cm, hs]
instances: [1, 2]
cpus-per-instance: 0.25
concurrency: 4
duration: 2
warmup: 0.5
`)
  const out = tmp('sweep-out')
  const r = await runCli('executor', ['sweep', join(dir, 'mine.yml'), '--out', out, '-q'], { timeoutMs: 180000 })
  assert.equal(r.code, 0, r.stderr)
  const sweepDir = join(out, readdirSync(out)[0])
  const runs = readdirSync(sweepDir).filter(d => existsSync(join(sweepDir, d, 'run.json')))
    .map(d => JSON.parse(readFileSync(join(sweepDir, d, 'run.json'), 'utf8')))
  assert.equal(runs.length, 4)
  for (const run of runs) {
    assert.equal(run.status, 'done')
    assert.equal(run.config.server, join(dir, 'api', 'server.js'), 'relative to the experiment file')
    assert.equal(run.config.benchmark, 'api')
    assert.equal(run.request.path, '/prime?n=1000003')
  }
})
