// Placement over a swarm's nodes (--nodes, --placement, --constraint) and the checks before anything starts: no engine
// needed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { planPlacement } from '../executor/docker/placement.js'
import { parseArguments } from '../executor/cli-run.js'
import { checkHost } from '../executor/local-swarm/host.js'
import { NsError, exitCodeOf } from '../lib/errors.js'
import { runCli } from './helpers/cli.js'

/** A node as docker.listNodes() gives it. */
const node = (id, role, { label = null, hostname = id, state = 'ready', availability = 'active', cpus = 2 } = {}) => ({
  ID: id,
  Spec: { Role: role, Availability: availability, Labels: label ? { 'io.nodescale.node': label } : {} },
  Status: { State: state, Addr: `10.0.0.${id.length}` },
  Description: { Hostname: hostname, Resources: { NanoCPUs: cpus * 1e9 } }
})
const swarm = [node('m', 'manager', { label: 'm0', hostname: 'vm' }), node('w2id', 'worker', { label: 'nodescale-w2' }), node('w1id', 'worker', { label: 'nodescale-w1' }), node('w10id', 'worker', { label: 'nodescale-w10' })]
const hs = { strategy: 'hs', instances: 4, cpusPerInstance: 0.25 }

test('by default every ready worker runs the server and the manager none', () => {
  const plan = planPlacement(swarm, hs)
  assert.deepEqual(plan.constraints, ['node.role == worker'])
  assert.deepEqual(plan.chosen.map(n => n.label), ['nodescale-w1', 'nodescale-w2', 'nodescale-w10'], 'ordered by label, numbers as numbers')
  assert.equal(plan.maxReplicasPerNode, 0)
})

test('--nodes K keeps the first K workers and excludes the others by id', () => {
  const plan = planPlacement(swarm, { ...hs, nodes: 2 })
  assert.deepEqual(plan.chosen.map(n => n.label), ['nodescale-w1', 'nodescale-w2'])
  assert.deepEqual(plan.constraints, ['node.role == worker', 'node.id != w10id'])
})

test('pack puts replicas on as few nodes as their CPU quota allows, with a per-node maximum', () => {
  const one = planPlacement(swarm, { ...hs, nodes: 3, placement: 'pack' })
  assert.deepEqual(one.chosen.map(n => n.label), ['nodescale-w1'], '4 x 0.25 CPU fit on one 2-CPU node')
  assert.deepEqual(one.constraints, ['node.role == worker', 'node.id != w2id', 'node.id != w10id'])
  const two = planPlacement(swarm, { ...hs, instances: 3, cpusPerInstance: 1, nodes: 3, placement: 'pack' })
  assert.deepEqual(two.chosen.map(n => n.label), ['nodescale-w1', 'nodescale-w2'])
  assert.equal(two.maxReplicasPerNode, 2)
})

test('a user constraint on node identity replaces the default choice; others add to it', () => {
  const own = planPlacement(swarm, { ...hs, constraints: ['node.labels.io.nodescale.node==nodescale-w2'] })
  assert.deepEqual(own.constraints, ['node.labels.io.nodescale.node==nodescale-w2'])
  assert.equal(own.chosen, null)
  const extra = planPlacement(swarm, { ...hs, constraints: ['node.platform.os==linux'] })
  assert.deepEqual(extra.constraints, ['node.role == worker', 'node.platform.os==linux'])
})

test('down or drained workers are skipped and said so; --nodes beyond the ready workers is a bad flag naming them', () => {
  const nodes = [...swarm.slice(0, 2), node('w1id', 'worker', { label: 'nodescale-w1', state: 'down' })]
  const plan = planPlacement(nodes, hs)
  assert.deepEqual(plan.chosen.map(n => n.label), ['nodescale-w2'])
  assert.deepEqual(plan.skipped.map(s => s.node.label), ['nodescale-w1'])
  assert.throws(() => planPlacement(nodes, { ...hs, nodes: 2 }), (/** @type {any} */ err) => {
    assert.equal(exitCodeOf(err), 2)
    assert.match(err.message, /^--nodes: 2 worker nodes asked, and the swarm has 1 ready worker \(nodescale-w2\); not usable: nodescale-w1 \(down, active\)/)
    return true
  })
})

test('a single-node swarm runs everything on the manager; --nodes there is a bad flag', () => {
  const plan = planPlacement([swarm[0]], hs)
  assert.deepEqual(plan.constraints, [])
  assert.deepEqual(plan.chosen.map(n => n.hostname), ['vm'])
  assert.throws(() => planPlacement([swarm[0]], { ...hs, nodes: 1 }), /--nodes: 1 worker nodes asked, and the swarm has 0 ready workers/)
})

test('run flags: --placement, --nodes, --constraint and --registry are checked before anything starts', () => {
  const base = ['--strategy', 'hs', '--instances', '4']
  const { config } = /** @type {any} */ (parseArguments([...base, '--nodes', '2', '--placement', 'pack', '--constraint', 'node.hostname!=vm', '--constraint', 'node.labels.a == b', '--registry', 'reg.lan:5000']))
  assert.equal(config.nodes, 2)
  assert.equal(config.placement, 'pack')
  assert.deepEqual([...config.constraints], ['node.hostname!=vm', 'node.labels.a == b'])
  assert.equal(config.registry, 'reg.lan:5000')
  for (const r of ['builtin', 'none']) assert.equal(/** @type {any} */ (parseArguments([...base, '--registry', r])).config.registry, r)
  for (const [args, flag] of /** @type {Array<[string[], string]>} */ ([[['--placement', 'wide'], '--placement'], [['--nodes', '0'], '--nodes'], [['--nodes', '1.5'], '--nodes'],
    [['--constraint', 'role=worker'], '--constraint'], [['--registry', 'reg.lan'], '--registry'], [['--nodes', '2', '--backend', 'local'], '--nodes']])) {
    assert.throws(() => parseArguments([...base, ...args]), (err) => err instanceof NsError && exitCodeOf(err) === 2 && err.message.startsWith(`${flag}:`), args.join(' '))
  }
})

test('executor run --placement wide and executor cluster up with a bad --nodes exit 2 naming the flag', async () => {
  const run = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--placement', 'wide'])
  assert.equal(run.code, 2)
  assert.match(run.stderr, /--placement: "wide" is not allowed; one of: spread, pack/)
  const up = await runCli('executor', ['cluster', 'up', '--nodes', '0'])
  assert.equal(up.code, 2)
  assert.match(up.stderr, /--nodes: 0 is out of range; allowed: a whole number >= 1 and <= 8/)
})

test('the local cluster refuses with exit 3 when not root or when a host tool is missing', () => {
  assert.throws(() => checkHost({ uid: 1000 }), (/** @type {any} */ err) => exitCodeOf(err) === 3 && /needs root/.test(err.message))
  assert.throws(() => checkHost({ uid: 0, find: (t) => (t === 'nsenter' ? null : `/usr/bin/${t}`) }), (/** @type {any} */ err) => {
    assert.equal(exitCodeOf(err), 3)
    assert.match(err.message, /needs nsenter on PATH/)
    assert.match(err.hint, /apt-get install -y util-linux/)
    return true
  })
  assert.ok(checkHost().ip, 'this machine has the tools (root, ip, nsenter, ...)')
})
