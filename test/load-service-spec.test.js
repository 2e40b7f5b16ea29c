// The load agents' service spec (loadServiceSpec, executor/docker/load-service.js), checked without a swarm: least
// privilege as the RC's control-plane service has it (docker-compose.yml): a user of its own, a read-only root with a
// tmpfs where the generators write, no capability, CPU and memory limits; the token a secret only that user reads
// (issue 27, finding 5). test/load-nodes.test.js runs it on a real swarm.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { load } from 'js-yaml'
import { ROOT } from '../lib/paths.js'
import { AGENT_TOKEN_FILE } from '../lib/wire.js'
import { stackSpecs } from '../executor/docker/stack-spec.js'
import { AGENT_DIR, AGENT_UID, agentLimits, loadServiceSpec } from '../executor/docker/load-service.js'

const GiB = 1024 ** 3
const node = (cpus, memory) => ({ Description: { Resources: { NanoCPUs: cpus * 1e9, MemoryBytes: memory } } })

const spec = loadServiceSpec({
  name: 'ns-1-load_agent',
  labels: { a: 'b' },
  image: 'nodescale/load:x',
  port: 7393,
  constraints: ['node.labels.io.nodescale.role == load'],
  count: 2,
  secret: { id: 'sid', name: 'ns-1-load_token_x' },
  limits: agentLimits([node(4, 8 * GiB), node(2, 16 * GiB)])
})
const c = spec.TaskTemplate.ContainerSpec

test('the agent runs as a user of its own, read-only, with no capability, writing only to a tmpfs', () => {
  const [uid, gid] = c.User.split(':').map(Number)
  assert.equal(uid, AGENT_UID)
  assert.equal(gid, AGENT_UID)
  assert.ok(![0, 65534].includes(uid), 'not root, not nobody')
  // the RC's user, from the control plane's Compose file: another uid, so neither reads the other's token
  const doc = /** @type {any} */ (load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')))
  const rc = stackSpecs({ ...doc, services: { rc: doc.services.rc } },
    { stack: 'nodescale', secretIds: { nodescale_rc_token: 'x' } }).services[0].spec.TaskTemplate.ContainerSpec
  assert.notEqual(Number(rc.User.split(':')[0]), uid)
  for (const [what, key] of [['read-only root', 'ReadOnly'], ['capabilities dropped', 'CapabilityDrop']]) {
    assert.deepEqual(c[key], rc[key], `${what}, as the RC`)
  }
  assert.equal(c.ReadOnly, true)
  assert.deepEqual(c.CapabilityDrop, ['ALL'])
  assert.equal(c.CapabilityAdd, undefined, 'none added back')
  // where the agent, autocannon, JMeter and the JVM write: the tmpfs, writable by the agent's user
  assert.deepEqual(c.Mounts, [{ Type: 'tmpfs', Target: '/tmp', TmpfsOptions: { Mode: 0o1777 } }])
  assert.ok(AGENT_DIR.startsWith('/tmp/'))
  assert.ok(c.Env.includes(`NODESCALE_AGENT_DIR=${AGENT_DIR}`) && c.Env.includes('HOME=/tmp'), c.Env.join(' '))
  assert.ok(!c.Env.some(e => e.startsWith('NODESCALE_AGENT_TOKEN=')), 'no token in the environment')
  assert.deepEqual(c.Secrets,
    [{ File: { Name: AGENT_TOKEN_FILE.split('/').pop(), UID: String(uid), GID: String(uid), Mode: 0o400 }, SecretID: 'sid', SecretName: 'ns-1-load_token_x' }])
})

test('the agents\' limits: every core of the smallest load node, 3/4 of the smallest memory', () => {
  assert.deepEqual(spec.TaskTemplate.Resources, { Limits: { NanoCPUs: 2e9, MemoryBytes: 6 * GiB } })
  assert.deepEqual(agentLimits([]), {}, 'nodes that say nothing: no made-up limit')
  assert.deepEqual(agentLimits([node(1, 4 * GiB), { Description: {} }]), { NanoCPUs: 1e9, MemoryBytes: 3 * GiB })
  // the rest of the spec as before: the host network, one per load node, not restarted
  assert.deepEqual(spec.TaskTemplate.Networks, [{ Target: 'host' }])
  assert.deepEqual(spec.TaskTemplate.Placement, { Constraints: ['node.labels.io.nodescale.role == load'], MaxReplicas: 1 })
  assert.deepEqual(spec.TaskTemplate.RestartPolicy, { Condition: 'none' })
  assert.deepEqual(spec.Mode, { Replicated: { Replicas: 2 } })
})
