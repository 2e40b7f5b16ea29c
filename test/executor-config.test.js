// Every flag of `executor run`: good values become a frozen config, bad ones an NS_ERR_BAD_FLAG naming the flag.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArguments } from '../executor/cli-run.js'
import { NsError } from '../lib/errors.js'

const base = ['--strategy', 'cm', '--instances', '2']

test('defaults fill a minimal command and the config is frozen', () => {
  const { config } = parseArguments(base)
  assert.equal(config.strategy, 'cm')
  assert.equal(config.instances, 2)
  assert.equal(config.benchmark, 'page')
  assert.equal(config.concurrency, 10)
  assert.equal(config.rate, undefined)
  assert.equal(config.driver, 'autocannon')
  assert.equal(config.backend, 'auto')
  assert.ok(Object.isFrozen(config))
  assert.throws(() => { /** @type {any} */ (config).instances = 3 }, TypeError)
})

test('every flag is parsed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-cfg-'))
  const app = join(dir, 'app.js')
  writeFileSync(app, 'export default (req, res) => res.end("x")\n')
  const { config } = parseArguments(['-s', 'hs', '-n', '3', '-b', 'mine', '--app', app, '-p', 'a=1', '-p', 'b=x=y',
    '--rate', '250.5', '-d', '7', '-w', '0', '--driver', 'jmeter', '--samples', 'gz', '--backend', 'local', '--cpus-per-instance', '0.25',
    '--memory-per-instance', '256M', '--lb', 'haproxy', '--port', '8080', '--ready-timeout', '5', '--tag', ' kernel 6.8, THP off ', '-o', dir, '--json', '-q'])
  assert.deepEqual({ ...config, params: { ...config.params } }, {
    strategy: 'hs',
    instances: 3,
    benchmark: 'mine',
    app,
    params: { a: '1', b: 'x=y' },
    server: undefined,
    serverArgs: undefined,
    path: undefined,
    method: undefined,
    body: undefined,
    health: undefined,
    concurrency: undefined,
    rate: 250.5,
    connection: 'keep-alive',
    duration: 7,
    minDuration: 10,
    maxDuration: 60,
    warmup: 0,
    driver: 'jmeter',
    samples: 'gz',
    loadProcs: 'auto',
    serverCpus: undefined,
    loadCpus: undefined,
    lbCpus: undefined,
    loadNodes: undefined,
    loadPlacement: 'labelled',
    backend: 'local',
    cpusPerInstance: 0.25,
    affinity: undefined,
    memoryPerInstance: 256 * 1024 * 1024,
    lb: 'haproxy',
    port: 8080,
    readyTimeout: 5,
    slo: { errors: 0.001 },
    nodes: undefined,
    placement: 'spread',
    constraints: [],
    registry: undefined,
    registryTls: undefined,
    image: undefined,
    containerPort: undefined,
    tag: 'kernel 6.8, THP off',
    out: dir,
    json: true,
    quiet: true
  })
})

/** @type {Array<[string[], string, RegExp]>} */
const bad = [
  [['--instances', '2'], '--strategy', /required; one of: up, cm, pm2, hs/],
  [['--strategy', 'xx', '--instances', '2'], '--strategy', /"xx" is not allowed; one of: up, cm, pm2, hs/],
  [['--strategy', 'cm', '--instances', '2', '--connection', 'reuse'], '--connection', /"reuse" is not allowed; one of: keep-alive, close/],
  [['--strategy', 'cm'], '--instances', /is required: how many cluster workers/],
  [[...base.slice(0, 2), '--instances', '0'], '--instances', /out of range/],
  [[...base.slice(0, 2), '--instances', '1.5'], '--instances', /not a whole number/],
  [[...base.slice(0, 2), '--instances', 'two'], '--instances', /not a whole number/],
  [[...base.slice(0, 2), '--instances', '65'], '--instances', /<= 64/],
  [[...base, '--benchmark', '../etc'], '--benchmark', /not a name/],
  [[...base, '--concurrency', '0'], '--concurrency', /out of range/],
  [[...base, '--concurrency', 'lots'], '--concurrency', /not a whole number/],
  [[...base, '--rate', '0'], '--rate', /out of range; allowed: a number > 0/],
  [[...base, '--rate', '10', '--concurrency', '5'], '--rate', /cannot be combined with --concurrency/],
  [[...base, '--duration', '0'], '--duration', /out of range/],
  [[...base, '--duration', '10s'], '--duration', /not a number/],
  [[...base, '--warmup', '-1'], '--warmup', /needs a value/],
  [[...base, '--warmup=-1'], '--warmup', /out of range/],
  [[...base, '--driver', 'wrk'], '--driver', /one of: autocannon, jmeter/],
  [[...base, '--tag', 'x'.repeat(101)], '--tag', /is not a tag; allowed: 1 to 100 characters on one line/],
  [[...base, '--tag', 'two\nlines'], '--tag', /"two\\nlines" is not a tag/],
  [[...base, '--tag', '  '], '--tag', /is not a tag/],
  [[...base, '--backend', 'k8s'], '--backend', /one of: auto, local, swarm/],
  [[...base, '--cpus-per-instance', '0'], '--cpus-per-instance', /out of range/],
  [[...base, '--cpus-per-instance', '999'], '--cpus-per-instance', /out of range/],
  [[...base, '--param', 'novalue'], '--param', /not key=value/],
  [[...base, '--port', '70000'], '--port', /out of range/],
  [[...base, '--memory-per-instance', 'lots'], '--memory-per-instance', /not a size; allowed: a size like 256M/],
  [[...base, '--memory-per-instance', '1M'], '--memory-per-instance', /out of range/],
  [[...base, '--lb', 'nginx'], '--lb', /one of: auto, haproxy, ingress/],
  [[...base, '--lb', 'haproxy'], '--lb', /only applies to --strategy hs/],
  [[...base, '--ready-timeout', '0'], '--ready-timeout', /out of range/],
  [[...base, '--bogus'], '--bogus', /unknown flag/],
  [[...base, '--duration'], '--duration', /needs a value/],
  [[...base, 'extra'], 'argument', /unexpected argument "extra"/]
]

for (const [argv, flag, message] of bad) {
  test(`bad input: ${argv.slice(2).join(' ') || argv.join(' ')} names ${flag}`, () => {
    assert.throws(() => parseArguments(argv), (/** @type {any} */ err) => {
      assert.ok(err instanceof NsError, err)
      assert.equal(err.exitCode, 2)
      assert.match(err.message, new RegExp(flag.replace(/[-]/g, '\\-')))
      assert.match(err.message, message)
      return true
    })
  })
}

test('--app that does not exist is NS_ERR_BAD_APP (exit 2)', () => {
  assert.throws(() => parseArguments([...base, '--app', '/nonexistent/app.js']),
    (/** @type {any} */ err) => err.code === 'NS_ERR_BAD_APP' && err.exitCode === 2 && /--app/.test(err.message))
})

test('--out that is a file is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-cfg-'))
  const file = join(dir, 'f')
  writeFileSync(file, '')
  assert.throws(() => parseArguments([...base, '--out', file]), /--out: .* is not a folder/)
})

test('--help is recognised without validation', () => {
  assert.deepEqual(parseArguments(['--help']), { help: true })
})
