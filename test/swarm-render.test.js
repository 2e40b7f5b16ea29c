// Stack templates rendered from a run's config, and their conversion to Engine API specs (no Docker needed).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load } from 'js-yaml'
import { renderStack, stackNameFor, writeStackFiles } from '../executor/docker/stack-render.js'
import { renderHaproxyConfig } from '../executor/haproxy.js'
import { stackSpecs, parseBytes, parseDuration } from '../executor/docker/stack-spec.js'

const base = {
  instances: 4,
  cpusPerInstance: 0.25,
  image: 'nodescale/register:abc',
  lbImage: 'nodescale/haproxy:def',
  benchmark: 'cpu',
  params: { n: '104729' },
  port: 0,
  lb: /** @type {const} */ ('haproxy'),
  constraints: ['node.role == manager'],
  runId: 'Run-42'
}

test('up, cm and pm2 are one replica limited to instances x cpus-per-instance; hs is N replicas of cpus-per-instance', () => {
  for (const strategy of /** @type {const} */ (['up', 'cm', 'pm2'])) {
    const app = renderStack({ ...base, strategy }).services.app
    assert.equal(app.deploy.replicas, 1, strategy)
    assert.equal(app.deploy.resources.limits.cpus, '1', strategy)
    assert.equal(app.deploy.resources.reservations.cpus, '1', strategy)
    assert.deepEqual(app.deploy.placement.constraints, ['node.role == manager'])
    assert.equal(app.environment.NODESCALE_BENCHMARK, 'cpu')
    assert.equal(app.environment.NODESCALE_PARAMS, '{"n":"104729"}')
    assert.equal(app.ports[0].mode, 'host')
  }
  assert.deepEqual(renderStack({ ...base, strategy: 'up' }).services.app.command, ['register/serve.js'])
  const cm = renderStack({ ...base, strategy: 'cm' }).services.app
  assert.deepEqual(cm.command, ['register/cluster.js'])
  assert.equal(cm.environment.NODESCALE_WORKERS, '4')
  const pm2 = renderStack({ ...base, strategy: 'pm2' }).services.app
  assert.deepEqual(pm2.command, ['register/pm2-start.js'])
  assert.equal(pm2.environment.NODESCALE_WORKERS, '4')
  const hs = renderStack({ ...base, strategy: 'hs', cpusPerInstance: 0.5 })
  assert.equal(hs.services.app.deploy.replicas, 4)
  assert.equal(hs.services.app.deploy.resources.limits.cpus, '0.5')
  assert.equal(renderStack({ ...base, strategy: 'up', cpusPerInstance: undefined }).services.app.deploy.resources.limits, undefined)
  assert.equal(renderStack({ ...base, strategy: 'up', memory: '512M' }).services.app.deploy.resources.limits.memory, '512M')
})

test('hs with haproxy: dnsrr backends, an HAProxy service published in host mode on a manager, its config from the template', () => {
  const doc = renderStack({ ...base, strategy: 'hs' })
  const { app, lb } = doc.services
  assert.equal(app.deploy.endpoint_mode, 'dnsrr')
  assert.equal(app.ports, undefined)
  assert.equal(lb.image, 'nodescale/haproxy:def')
  assert.deepEqual(lb.ports, [{ target: 8080, published: 0, protocol: 'tcp', mode: 'host' }])
  assert.deepEqual(lb.deploy.placement.constraints, ['node.role == manager'])
  assert.equal(lb.configs[0].source, 'haproxy_cfg')
  const cfg = doc['x-nodescale'].files['haproxy.cfg']
  assert.match(cfg, /resolvers docker\n\s+nameserver dns 127\.0\.0\.11:53/)
  assert.match(cfg, /server-template app 16 tasks\.app:8080 check .*resolvers docker init-addr none/)
  const maxconn = Number(/maxconn (\d+)/.exec(cfg)[1])
  assert.ok(maxconn > 0 && maxconn <= 4000, `maxconn ${maxconn}`)
  assert.match(renderHaproxyConfig({ service: 'app', port: 8080, listen: 8080, slots: 40, maxconn: 9000 }), /server-template app 40 .*\n/)
  assert.match(renderHaproxyConfig({ service: 'app', port: 8080, listen: 8080, maxconn: 9000 }), /maxconn 4000/)
  assert.equal(doc['x-nodescale'].entry, 'lb')
  assert.equal(doc['x-nodescale'].expect, 4)
})

test('lb ingress publishes the app itself in ingress mode (VIP) and drops HAProxy', () => {
  const hs = renderStack({ ...base, strategy: 'hs', lb: 'ingress', port: 18080 })
  assert.equal(hs.services.lb, undefined)
  assert.equal(hs.configs, undefined)
  assert.equal(hs.services.app.deploy.endpoint_mode, 'vip')
  assert.deepEqual(hs.services.app.ports, [{ target: 8080, published: 18080, protocol: 'tcp', mode: 'ingress' }])
  assert.equal(renderStack({ ...base, strategy: 'cm', lb: 'ingress' }).services.app.ports[0].mode, 'ingress')
})

test('every service, container, network and config carries the stack namespace and the run id', () => {
  const doc = renderStack({ ...base, strategy: 'hs' })
  const stack = stackNameFor('Run-42')
  assert.equal(stack, 'ns-run-42')
  const all = [
    ...Object.values(doc.services).flatMap(s => [s.labels, s.deploy.labels]),
    ...Object.values(doc.networks).map(n => n.labels),
    ...Object.values(doc.configs).map(c => c.labels)
  ]
  for (const labels of all) {
    assert.equal(labels['com.docker.stack.namespace'], stack)
    assert.equal(labels['io.nodescale.run'], 'Run-42')
  }
})

test('bad input names the flag and what is allowed', () => {
  assert.throws(() => renderStack({ ...base, strategy: /** @type {any} */ ('xx') }), /--strategy: "xx" is not allowed; one of: up, cm, pm2, hs/)
  assert.throws(() => renderStack({ ...base, strategy: 'hs', lb: /** @type {any} */ ('auto') }), /--lb: "auto" is not allowed here/)
  assert.throws(() => renderStack({ ...base, strategy: 'up', instances: 0 }), /--instances/)
  assert.throws(() => renderStack({ ...base, strategy: 'up', constraints: ['rm -rf /'] }), /constraints: .*node\.role == manager/)
  assert.throws(() => renderStack({ ...base, strategy: 'hs', lbImage: undefined }), /lbImage/)
})

test('API specs look like docker stack deploy makes them', () => {
  const doc = renderStack({ ...base, strategy: 'hs', memory: '256M' })
  const specs = stackSpecs(doc, { configIds: { haproxy_cfg: 'cfg123' } })
  assert.equal(specs.stack, 'ns-run-42')
  assert.deepEqual(specs.networks.map(n => [n.Name, n.Driver]), [['ns-run-42_bench', 'overlay']])
  assert.equal(Buffer.from(specs.configs[0].Data, 'base64').toString(), doc['x-nodescale'].files['haproxy.cfg'])
  const app = specs.services.find(s => s.key === 'app').spec
  assert.equal(app.Name, 'ns-run-42_app')
  assert.equal(app.Labels['com.docker.stack.namespace'], 'ns-run-42')
  assert.equal(app.TaskTemplate.ContainerSpec.Labels['com.docker.stack.namespace'], 'ns-run-42')
  assert.equal(app.TaskTemplate.Resources.Limits.NanoCPUs, 250_000_000)
  assert.equal(app.TaskTemplate.Resources.Limits.MemoryBytes, 256 * 1024 * 1024)
  assert.deepEqual(app.TaskTemplate.Networks, [{ Target: 'ns-run-42_bench', Aliases: ['app'] }])
  assert.deepEqual(app.Mode, { Replicated: { Replicas: 4 } })
  assert.equal(app.EndpointSpec.Mode, 'dnsrr')
  assert.ok(app.TaskTemplate.ContainerSpec.Env.includes('NODESCALE_INSTANCE=r{{.Task.Slot}}'))
  const lb = specs.services.find(s => s.key === 'lb').spec
  assert.deepEqual(lb.EndpointSpec.Ports, [{ Protocol: 'tcp', TargetPort: 8080, PublishMode: 'host' }])
  assert.deepEqual(lb.TaskTemplate.ContainerSpec.Configs[0],
    { File: { Name: '/usr/local/etc/haproxy/haproxy.cfg', UID: '0', GID: '0', Mode: 0o444 }, ConfigID: 'cfg123', ConfigName: 'ns-run-42_haproxy_cfg' })
  assert.equal(parseBytes('1g'), 1024 ** 3)
  assert.equal(parseDuration('1m30s'), 90e9)
  assert.throws(() => parseBytes('lots'), /memory: "lots"/)
})

test('user, read_only, cap_add and cap_drop become ContainerSpec.User, ReadOnly, CapabilityAdd and CapabilityDrop', () => {
  const doc = {
    services: {
      locked: { image: 'x', user: '65534:65534', read_only: true, cap_drop: ['ALL'], cap_add: ['net_bind_service', 'CAP_SYS_PTRACE'] },
      plain: { image: 'x' },
      numeric: { image: 'x', user: 1000, read_only: false, cap_drop: 'all' }
    }
  }
  const spec = (name) => stackSpecs(doc, { stack: 's' }).services.find(s => s.key === name).spec.TaskTemplate.ContainerSpec
  const locked = spec('locked')
  assert.deepEqual([locked.User, locked.ReadOnly, locked.CapabilityDrop, locked.CapabilityAdd],
    ['65534:65534', true, ['ALL'], ['CAP_NET_BIND_SERVICE', 'CAP_SYS_PTRACE']])
  const plain = spec('plain')
  for (const key of ['User', 'ReadOnly', 'CapabilityAdd', 'CapabilityDrop']) assert.equal(key in plain, false, `${key}: the image's own`)
  const numeric = spec('numeric')
  assert.deepEqual([numeric.User, numeric.ReadOnly, numeric.CapabilityDrop, 'CapabilityAdd' in numeric], ['1000', false, ['ALL'], false])
  // the control plane's file: the RC runs as nobody, on a read-only root, with no capability and no engine socket
  const rc = /** @type {any} */ (load(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8'))).services.rc
  const cs = stackSpecs({ services: { rc } }, { stack: 'nodescale', secretIds: { nodescale_rc_token: 'sec1' } }).services[0].spec.TaskTemplate.ContainerSpec
  assert.deepEqual([cs.User, cs.ReadOnly, cs.CapabilityDrop, cs.CapabilityAdd], ['64100:64100', true, ['ALL'], undefined])
  assert.deepEqual(cs.Mounts.filter(m => /docker\.sock/.test(m.Source)), [])
  assert.ok(cs.Mounts.every(m => m.ReadOnly), JSON.stringify(cs.Mounts))
  assert.deepEqual(cs.Secrets[0].File, { Name: 'nodescale_rc_token', UID: '64100', GID: '64100', Mode: 0o400 })
})

test('writeStackFiles gives docker stack deploy a Compose file and the config file it names', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-stack-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const doc = renderStack({ ...base, strategy: 'hs' })
  const file = writeStackFiles(doc, dir)
  assert.deepEqual(load(readFileSync(file, 'utf8')), doc)
  assert.equal(readFileSync(join(dir, 'haproxy.cfg'), 'utf8'), doc['x-nodescale'].files['haproxy.cfg'])
})

// a user's whole server: as the register image carries a --server (its folder at /server), and as a user's image
// carries its own entry file with our launchers added under /opt/nodescale
const own = { ...base, benchmark: 'http-server', params: {}, health: '/health' }
const inRegister = { entry: '/server/server.js', args: ['--port', '{port}'], workingDir: '/server', registerDir: '/app/register' }
const inImage = { entry: '/srv/server.js', args: [], workingDir: '/srv', registerDir: '/opt/nodescale/register' }

test('--server: the shape\'s launcher runs the entry file from /server with the hook, {port} filled, no benchmark', () => {
  const up = renderStack({ ...own, strategy: 'up', server: inRegister })
  const app = up.services.app
  assert.deepEqual(app.entrypoint, ['node'])
  assert.deepEqual(app.command, ['--import=/app/register/server-hook.js', '/server/server.js', '--port', '8080'])
  assert.equal(app.working_dir, '/server')
  assert.equal(app.environment.NODESCALE_SERVER, '/server/server.js')
  assert.equal(app.environment.NODESCALE_SERVER_ARGS, '["--port","8080"]')
  assert.equal(app.environment.PORT, '8080')
  assert.equal(app.environment.NODESCALE_BENCHMARK, undefined)
  assert.equal(app.environment.NODESCALE_PARAMS, undefined)
  assert.deepEqual(up['x-nodescale'], { ...up['x-nodescale'], health: '/health', any2xx: true, readiness: 'instances', expect: 1, targetPort: 8080 })
  const cm = renderStack({ ...own, strategy: 'cm', server: inRegister }).services.app
  assert.deepEqual(cm.command, ['/app/register/cluster.js'])
  assert.equal(cm.environment.NODESCALE_WORKERS, '4')
  assert.equal(cm.working_dir, '/server')
  const pm2 = renderStack({ ...own, strategy: 'pm2', server: inRegister }).services.app
  assert.deepEqual(pm2.command, ['/app/register/pm2-start.js'])
  assert.equal(pm2.environment.PM2_HOME, '/tmp/.pm2')
  // HAProxy checks the server's health path for any 2xx
  const hs = renderStack({ ...own, strategy: 'hs', server: inRegister })
  assert.match(hs['x-nodescale'].files['haproxy.cfg'], /option httpchk GET \/health\n\s+http-check expect rstatus \^2/)
  assert.equal(hs['x-nodescale'].expect, 4)
  // the working folder reaches the Engine API spec
  const spec = stackSpecs(up).services.find(s => s.key === 'app').spec.TaskTemplate.ContainerSpec
  assert.equal(spec.Dir, '/server')
  assert.deepEqual(spec.Args, ['--import=/app/register/server-hook.js', '/server/server.js', '--port', '8080'])
  // our own benchmarks keep /healthz and a 200
  assert.deepEqual([renderStack({ ...base, strategy: 'up' })['x-nodescale'].health, renderStack({ ...base, strategy: 'up' })['x-nodescale'].any2xx],
    ['/healthz', false])
  assert.equal(renderStack({ ...base, strategy: 'up' }).services.app.working_dir, undefined)
})

test('--image with up and hs: the image as it is (no entrypoint or command), PORT and HOST, its port; health-only', () => {
  const up = renderStack({ ...own, strategy: 'up', image: 'my-api:1.4', asIs: true, targetPort: 3000 })
  const app = up.services.app
  assert.equal(app.image, 'my-api:1.4')
  assert.equal(app.entrypoint, undefined)
  assert.equal(app.command, undefined)
  assert.equal(app.working_dir, undefined)
  assert.deepEqual(app.environment, { PORT: '3000', HOST: '0.0.0.0' })
  assert.deepEqual(app.ports, [{ target: 3000, published: 0, protocol: 'tcp', mode: 'host' }])
  assert.equal(up['x-nodescale'].readiness, 'health-only')
  assert.equal(up['x-nodescale'].targetPort, 3000)
  const spec = stackSpecs(up).services.find(s => s.key === 'app').spec.TaskTemplate.ContainerSpec
  assert.equal(spec.Command, undefined, 'the image\'s own entrypoint')
  assert.equal(spec.Args, undefined, 'the image\'s own command')
  const hs = renderStack({ ...own, strategy: 'hs', image: 'my-api:1.4', asIs: true, targetPort: 3000 })
  assert.equal(hs.services.app.ports, undefined)
  assert.deepEqual(hs.services.lb.ports, [{ target: 8080, published: 0, protocol: 'tcp', mode: 'host' }])
  assert.equal(hs['x-nodescale'].targetPort, 8080, 'the entry is HAProxy\'s port')
  const cfg = hs['x-nodescale'].files['haproxy.cfg']
  assert.match(cfg, /server-template app 16 tasks\.app:3000 check/)
  assert.match(cfg, /option httpchk GET \/health/)
  const ingress = renderStack({ ...own, strategy: 'hs', lb: 'ingress', image: 'my-api:1.4', asIs: true, targetPort: 3000 })
  assert.deepEqual(ingress.services.app.ports, [{ target: 3000, published: 0, protocol: 'tcp', mode: 'ingress' }])
})

test('--image with cm and pm2: our launchers in the image start its entry file from its working folder', () => {
  const cm = renderStack({
    ...own, strategy: 'cm', image: 'nodescale/with-launchers:abc', server: { ...inImage, nodeOptions: '--max-old-space-size=512' }, targetPort: 3000
  })
  const app = cm.services.app
  assert.deepEqual(app.entrypoint, ['node'])
  assert.deepEqual(app.command, ['/opt/nodescale/register/cluster.js'])
  assert.equal(app.working_dir, '/srv')
  assert.equal(app.environment.PORT, '3000')
  assert.equal(app.environment.NODESCALE_SERVER, '/srv/server.js')
  assert.equal(app.environment.NODE_OPTIONS, '--max-old-space-size=512')
  assert.deepEqual(app.ports[0].target, 3000)
  assert.equal(cm['x-nodescale'].readiness, 'instances')
  const pm2 = renderStack({ ...own, strategy: 'pm2', image: 'nodescale/with-launchers:abc', server: inImage, targetPort: 3000 }).services.app
  assert.deepEqual(pm2.command, ['/opt/nodescale/register/pm2-start.js'])
  assert.equal(pm2.environment.NODE_OPTIONS, undefined)
  assert.throws(() => renderStack({ ...own, strategy: 'cm', server: inImage, asIs: true }), /not both/)
  assert.throws(() => renderStack({ ...own, strategy: 'cm', server: { ...inImage, entry: 'srv/server.js' } }), /absolute entry/)
  assert.throws(() => renderStack({ ...own, strategy: 'up', asIs: true, targetPort: 0 }), /--container-port/)
})
