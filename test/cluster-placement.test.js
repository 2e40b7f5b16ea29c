// Placement over a swarm's nodes (--nodes, --placement, --constraint; load nodes, --load-nodes, --load-placement) and
// the checks before anything starts: no engine needed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { planPlacement, planLoadPlacement, isLoadNode, ROLE_LABEL, LOAD_ROLE } from '../executor/docker/placement.js'
import { parseArguments } from '../executor/cli-run.js'
import { checkHost } from '../executor/local-swarm/host.js'
import { setNodeLabels, checkLoadNodes } from '../executor/local-swarm/local-swarm.js'
import { NsError, exitCodeOf } from '../lib/errors.js'
import { runCli } from './helpers/cli.js'

/** A node as docker.listNodes() gives it. */
const node = (id, role, { label = null, hostname = id, state = 'ready', availability = 'active', cpus = 2, load = false } = {}) => ({
  ID: id,
  Spec: {
    Role: role,
    Availability: availability,
    Labels: { ...(label ? { 'io.nodescale.node': label } : {}), ...(load ? { 'io.nodescale.role': 'load' } : {}) }
  },
  Status: { State: state, Addr: `10.0.0.${id.length}` },
  Description: { Hostname: hostname, Resources: { NanoCPUs: cpus * 1e9 } }
})
const swarm = [node('m', 'manager', { label: 'm0', hostname: 'vm' }), node('w2id', 'worker', { label: 'nodescale-w2' }),
  node('w1id', 'worker', { label: 'nodescale-w1' }), node('w10id', 'worker', { label: 'nodescale-w10' })]
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
  const { config } = /** @type {any} */ (parseArguments([...base, '--nodes', '2', '--placement', 'pack', '--constraint', 'node.hostname!=vm',
    '--constraint', 'node.labels.a == b', '--registry', 'reg.lan:5000']))
  assert.equal(config.nodes, 2)
  assert.equal(config.placement, 'pack')
  assert.deepEqual([...config.constraints], ['node.hostname!=vm', 'node.labels.a == b'])
  assert.equal(config.registry, 'reg.lan:5000')
  for (const r of ['builtin', 'none']) assert.equal(/** @type {any} */ (parseArguments([...base, '--registry', r])).config.registry, r)
  for (const [args, flag] of /** @type {Array<[string[], string]>} */ ([
    [['--placement', 'wide'], '--placement'], [['--nodes', '0'], '--nodes'], [['--nodes', '1.5'], '--nodes'],
    [['--constraint', 'role=worker'], '--constraint'], [['--registry', 'reg.lan'], '--registry'], [['--nodes', '2', '--backend', 'local'], '--nodes']
  ])) {
    assert.throws(() => parseArguments([...base, ...args]),
      (err) => err instanceof NsError && exitCodeOf(err) === 2 && err.message.startsWith(`${flag}:`), args.join(' '))
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

/** Whether a node satisfies Swarm constraints of the forms placement writes (node.role, node.id, the role label). */
function satisfies (n, constraints) {
  return constraints.every(c => {
    const [, field, op, value] = /** @type {RegExpMatchArray} */ (c.match(/^(\S+) (==|!=) (\S+)$/))
    const actual = field === 'node.role' ? n.Spec.Role : field === 'node.id' ? n.ID : n.Spec.Labels[field.slice('node.labels.'.length)]
    return op === '==' ? actual === value : actual !== value
  })
}

// a manager, two server workers, and two load workers (w3 and w4, labelled as executor cluster up --load-nodes 2 does)
const withLoad = [...swarm.slice(0, 3), node('w4id', 'worker', { label: 'nodescale-w4', load: true }),
  node('w3id', 'worker', { label: 'nodescale-w3', load: true })]

test('load nodes never run the server: skipped by the server placement, which adds the != load constraint', () => {
  assert.equal(ROLE_LABEL, 'io.nodescale.role')
  assert.equal(LOAD_ROLE, 'load')
  assert.deepEqual(withLoad.map(isLoadNode), [false, false, false, true, true])
  const plan = planPlacement(withLoad, hs)
  assert.deepEqual(plan.chosen.map(n => n.label), ['nodescale-w1', 'nodescale-w2'])
  assert.deepEqual(plan.constraints, ['node.role == worker', 'node.labels.io.nodescale.role != load'])
  assert.match(plan.rule, /the load nodes \(nodescale-w3, nodescale-w4\) are kept for the load/)
  for (const n of withLoad) assert.equal(satisfies(n, plan.constraints), ['w1id', 'w2id'].includes(n.ID), n.ID)
  const one = planPlacement(withLoad, { ...hs, nodes: 1 })
  assert.deepEqual(one.constraints, ['node.role == worker', 'node.labels.io.nodescale.role != load', 'node.id != w2id'])
  const own = planPlacement(withLoad, { ...hs, constraints: ['node.hostname==w2id'] })
  assert.deepEqual(own.constraints, ['node.labels.io.nodescale.role != load', 'node.hostname==w2id'])
  const managerOnly = planPlacement([swarm[0], withLoad[3]], hs)
  assert.deepEqual(managerOnly.chosen.map(n => n.hostname), ['vm'], 'only load workers: the manager runs the server')
  assert.deepEqual(managerOnly.constraints, ['node.labels.io.nodescale.role != load'])
})

test('--nodes beyond the workers not labelled for load counts only those, and says the load nodes are kept', () => {
  assert.throws(() => planPlacement(withLoad, { ...hs, nodes: 3 }), (/** @type {any} */ err) => {
    assert.equal(exitCodeOf(err), 2)
    assert.equal(err.details.key, 'nodes')
    assert.match(err.message, new RegExp(/^--nodes: 3 worker nodes asked, and the swarm has 2 ready workers not labelled for load /.source +
      /\(nodescale-w1, nodescale-w2\); the load nodes \(nodescale-w3, nodescale-w4\) are kept for the load/.source))
    assert.match(err.message, /executor cluster up --nodes 6 --load-nodes 2 on one machine/)
    return true
  })
})

test('with no load label the server constraints are as before, whatever --load-* would say', () => {
  for (const config of [hs, { ...hs, nodes: 2 }, { ...hs, constraints: ['node.platform.os==linux'] }]) {
    assert.ok(!planPlacement(swarm, config).constraints.some(c => c.includes('io.nodescale.role')))
  }
  assert.deepEqual(planPlacement(swarm, { ...hs, nodes: 2 }).constraints, ['node.role == worker', 'node.id != w10id'])
})

test('planLoadPlacement labelled: the labelled nodes in order, a label constraint and id exclusions of the spare ones', () => {
  const server = planPlacement(withLoad, hs).chosen.map(n => n.id)
  const one = planLoadPlacement(withLoad, { loadNodes: 1 }, server)
  assert.deepEqual(one.chosen.map(n => n.label), ['nodescale-w3'], 'ordered by label: w3 before w4')
  assert.deepEqual(one.constraints, ['node.labels.io.nodescale.role == load', 'node.id != w4id'])
  assert.match(one.rule, /load generators on 1 node labelled io\.nodescale\.role=load \(nodescale-w3\)/)
  const two = planLoadPlacement(withLoad, { loadNodes: 2, loadPlacement: 'labelled' }, server)
  assert.deepEqual(two.chosen.map(n => n.id), ['w3id', 'w4id'])
  assert.deepEqual(two.constraints, ['node.labels.io.nodescale.role == load'])
  for (const plan of [one, two]) {
    const chosen = plan.chosen.map(n => n.id)
    for (const n of withLoad) assert.equal(satisfies(n, plan.constraints), chosen.includes(n.ID), `${n.ID} ${plan.constraints}`)
    assert.ok(!chosen.some(id => server.includes(id)), 'disjoint from the server nodes')
  }
  // a drained load node is not chosen, and is excluded by id (it could come back during the run)
  const drained = [...withLoad.slice(0, 4), node('w3id', 'worker', { label: 'nodescale-w3', load: true, availability: 'drain' })]
  const plan = planLoadPlacement(drained, { loadNodes: 1 }, server)
  assert.deepEqual(plan.chosen.map(n => n.id), ['w4id'])
  assert.deepEqual(plan.constraints, ['node.labels.io.nodescale.role == load', 'node.id != w3id'])
})

test('planLoadPlacement free: labelled nodes first, then workers, the manager last; never a server node', () => {
  const server = ['w1id', 'w2id']
  const plan = planLoadPlacement(withLoad, { loadNodes: 3, loadPlacement: 'free' }, server)
  assert.deepEqual(plan.chosen.map(n => n.id), ['w3id', 'w4id', 'm'])
  assert.deepEqual(plan.constraints, ['node.id != w1id', 'node.id != w2id'])
  assert.match(plan.rule, /^free: load generators on 3 nodes that run no server task \(nodescale-w3 \[load\], nodescale-w4 \[load\], m0 \[manager\]\)/)
  // no labels: a worker the server does not use (--nodes 2 of 3), then the manager
  const serverOf = planPlacement(swarm, { ...hs, nodes: 2 }).chosen.map(n => n.id)
  const free = planLoadPlacement(swarm, { loadNodes: 2, loadPlacement: 'free' }, serverOf)
  assert.deepEqual(free.chosen.map(n => n.label), ['nodescale-w10', 'm0'])
  for (const [p, nodes, srv] of /** @type {const} */ ([[plan, withLoad, server], [free, swarm, serverOf]])) {
    const chosen = p.chosen.map(n => n.id)
    assert.ok(p.constraints.every(c => c.startsWith('node.id != ')), 'id exclusions only')
    for (const n of nodes) assert.equal(satisfies(n, p.constraints), chosen.includes(n.ID), `${n.ID} ${p.constraints}`)
    assert.ok(!chosen.some(id => srv.includes(id)), 'disjoint from the server nodes')
  }
  const single = planLoadPlacement(swarm, { loadNodes: 1, loadPlacement: 'free' }, serverOf)
  assert.deepEqual(single.chosen.map(n => n.id), ['w10id'], 'a worker before the manager')
})

test('too few load nodes is exit 2 naming --load-nodes, the nodes that qualify and the fix', () => {
  assert.throws(() => planLoadPlacement(withLoad, { loadNodes: 3 }, ['w1id', 'w2id']), (/** @type {any} */ err) => {
    assert.equal(exitCodeOf(err), 2)
    assert.equal(err.details.flag, '--load-nodes')
    assert.equal(err.details.key, 'loadNodes')
    assert.match(err.message,
      /^--load-nodes: 3 load nodes asked, and 2 nodes qualify \(nodescale-w3, nodescale-w4\): ready, active, labelled io\.nodescale\.role=load/)
    assert.match(err.message, /executor cluster up --nodes 6 --load-nodes 3/)
    assert.match(err.message, /docker node update --label-add io\.nodescale\.role=load <node>/)
    assert.match(err.message, /--load-placement free \(3 nodes run no server task\)/)
    return true
  })
  assert.throws(() => planLoadPlacement(swarm, { loadNodes: 1 }, ['w1id', 'w2id', 'w10id']),
    /--load-nodes: 1 load node asked, and 0 nodes qualify: ready, active, labelled/)
  assert.throws(() => planLoadPlacement(swarm, { loadNodes: 2, loadPlacement: 'free' }, ['w1id', 'w2id', 'w10id']), (/** @type {any} */ err) => {
    assert.equal(exitCodeOf(err), 2)
    assert.match(err.message, new RegExp(/^--load-nodes: 2 load nodes asked, and 1 node qualifies \(m0\): ready, active and running no server task; /.source +
      /lower --load-nodes, or add nodes \(on one machine: executor cluster up --nodes 6 --load-nodes 2/.source))
    return true
  })
})

test('executor cluster up --load-nodes beyond the workers, or on another subcommand, exits 2 before Docker is touched', async () => {
  const up = await runCli('executor', ['cluster', 'up', '--nodes', '2', '--load-nodes', '2'])
  assert.equal(up.code, 2)
  assert.match(up.stderr, /--load-nodes: 2 is not allowed with --nodes 2; a whole number from 0 to 1/)
  assert.doesNotMatch(up.stderr, /cluster: /, 'nothing started')
  const status = await runCli('executor', ['cluster', 'status', '--load-nodes', '1'])
  assert.equal(status.code, 2)
  assert.match(status.stderr, /--load-nodes: only applies to cluster up/)
})

test('setNodeLabels sets and removes any labels in one update, keeps the others, and skips an update that changes nothing', async () => {
  let labels = /** @type {Record<string, string>} */ ({ 'io.nodescale.node': 'nodescale-w3', 'io.nodescale.role': 'load', zone: 'a' })
  const updates = []
  const docker = /** @type {any} */ ({
    getNode: (id) => ({
      inspect: async () => ({ ID: id, Version: { Index: updates.length + 7 }, Spec: { Role: 'worker', Labels: labels } }),
      update: async (opts) => { updates.push(opts); labels = opts._body.Labels }
    })
  })
  await setNodeLabels(docker, 'w3id', { 'io.nodescale.node': 'nodescale-w3', 'io.nodescale.role': 'load' })
  assert.equal(updates.length, 0, 'already so')
  await setNodeLabels(docker, 'w3id', { 'io.nodescale.role': null })
  assert.deepEqual(labels, { 'io.nodescale.node': 'nodescale-w3', zone: 'a' })
  assert.deepEqual(updates[0]._query, { version: 7 })
  assert.equal(updates[0]._body.Role, 'worker', 'the rest of the spec is kept')
  await setNodeLabels(docker, 'w3id', { 'io.nodescale.role': null })
  assert.equal(updates.length, 1, 'removing an absent label changes nothing')
  await setNodeLabels(docker, 'w3id', { 'io.nodescale.node': 'nodescale-w4', 'io.nodescale.role': 'load' })
  assert.deepEqual(labels, { 'io.nodescale.node': 'nodescale-w4', 'io.nodescale.role': 'load', zone: 'a' })
  assert.equal(updates.length, 2)
})

test('checkLoadNodes: 0 to K-1 load nodes of K (the manager never is one)', () => {
  for (const [k, l] of [[1, 0], [4, 0], [4, 3]]) assert.equal(checkLoadNodes(k, l), null)
  for (const [k, l] of [[1, 1], [4, 4], [4, -1]]) {
    const err = /** @type {any} */ (checkLoadNodes(k, l))
    assert.equal(exitCodeOf(err), 2)
    assert.match(err.message, new RegExp(`^--load-nodes: ${l} is not allowed with --nodes ${k}; a whole number from 0 to ${k - 1}`))
  }
})
