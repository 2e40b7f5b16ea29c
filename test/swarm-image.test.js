// The Docker engine connection and image builds, on the real engine: host base images run, are reused when nothing
// changed, and carry production dependencies only.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync, symlinkSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectDocker, swarmInfo, dockerError } from '../executor/docker/engine.js'
import { buildImage, entryFromCommand, nodeHasImport, userImagePort } from '../executor/docker/image-build.js'
import { registerTree, serverTree, launcherTree } from '../executor/docker/image-context.js'
import { probe } from '../lib/net.js'
import { ROOT } from '../lib/paths.js'
import { swarmEngine, testImages } from './swarm-helper.js'

const { docker, skip } = await swarmEngine()

/** Runs a container of image with env, publishes 8080 on a loopback port, and returns its /healthz answer. */
async function healthOf (t, image, env) {
  const c = await docker.createContainer({
    Image: image,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: { 'io.nodescale.test': 'swarm-image' },
    HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] }, AutoRemove: false }
  })
  t.after(() => c.remove({ force: true }).catch(() => {}))
  await c.start()
  const port = (await c.inspect()).NetworkSettings.Ports['8080/tcp'][0].HostPort
  const deadline = Date.now() + 20_000
  let last
  while (Date.now() < deadline) {
    try {
      const res = await probe(`http://127.0.0.1:${port}/healthz`, { timeoutMs: 2000 })
      return { ...res, body: JSON.parse(res.body) }
    } catch (err) {
      last = err
      const state = (await c.inspect()).State
      if (!state.Running) {
        const logs = (await c.logs({ stdout: true, stderr: true })).toString()
        throw new Error(`container exited (${state.ExitCode}): ${logs}`)
      }
      await sleep(200)
    }
  }
  throw new Error(`no /healthz answer: ${last?.message}`)
}

test('no daemon at the socket is NS_ERR_MISSING_DOCKER with the fix as hint (exit 3)', async () => {
  await assert.rejects(connectDocker({ socketPath: join(tmpdir(), `nodescale-no-docker-${process.pid}.sock`) }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_MISSING_DOCKER')
    assert.equal(err.exitCode, 3)
    assert.equal(err.hint, 'bash scripts/docker-up.sh')
    assert.ok(err.cause)
    return true
  })
})

test('Docker API errors keep the daemon message, status and cause', { skip }, async () => {
  const err = await docker.getService('nodescale-no-such-service').inspect().catch(e => e)
  const wrapped = dockerError(err, 'inspecting a service')
  assert.equal(wrapped.code, 'NS_ERR_DEPLOY')
  assert.match(wrapped.message, /inspecting a service: .*not found/i)
  assert.equal(wrapped.details.statusCode, 404)
  assert.equal(wrapped.cause, err)
})

test('swarmInfo lists this engine as a ready manager', { skip }, async () => {
  const info = await swarmInfo(docker)
  const me = info.nodes.find(n => n.role === 'manager' && n.state === 'ready')
  assert.ok(me, JSON.stringify(info))
  assert.ok(info.managerAddr)
})

test('the register image ships register, benchmarks, what they import and production dependencies only', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages
  const { entries, packages } = registerTree(ROOT)
  const names = new Set(entries.map(e => e.name))
  for (const f of ['register/serve.js', 'register/cluster.js', 'lib/errors.js', 'package.json', 'node_modules/express/package.json',
    'node_modules/pm2/bin/pm2-runtime']) {
    assert.ok(names.has(f), `${f} is missing`)
  }
  assert.ok(packages.includes('express') && packages.includes('pm2'))
  const shipped = new Set([...names].filter(n => n.startsWith('node_modules/')).map(n => n.replace(/\/[^/]+$/, ''))
    .map(n => n.match(/^(?:node_modules\/(?:@[^/]+\/)?[^/]+\/?)+/)[0].replace(/\/$/, '')))
  const dev = [...shipped].filter(k => lock[k]?.dev)
  assert.deepEqual(dev, [], 'dev dependencies in the image')
  for (const notNeeded of ['node_modules/typescript', 'node_modules/eslint', 'node_modules/autocannon', 'node_modules/dockerode']) {
    assert.ok(![...names].some(n => n.startsWith(`${notNeeded}/`)), `${notNeeded} is in the image`)
  }
})

test('host base: the register image runs register/serve.js and is reused on an unchanged tree', { skip }, async (t) => {
  const first = (await testImages(docker)).register
  assert.equal(first.base, 'host')
  assert.match(first.tag, /^nodescale\/register:[0-9a-f]{12}$/)
  const lines = []
  const again = await buildImage(docker, { kind: 'register', base: 'host', log: l => lines.push(l) })
  assert.equal(again.reused, true)
  assert.equal(again.tag, first.tag)
  assert.equal(again.id, first.id)
  assert.ok(lines.some(l => /reused/.test(l)), lines.join('\n'))
  const h = await healthOf(t, first.tag, { PORT: '8080', NODESCALE_BENCHMARK: 'baseline', NODESCALE_INSTANCE: 'img1' })
  assert.equal(h.status, 200)
  assert.equal(h.instance, 'img1')
  assert.equal(h.body.benchmark, 'baseline')
})

test('a custom app changes the tag and runs inside the image', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-app-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const app = join(dir, 'hello.mjs')
  writeFileSync(app, `export default (req, res) => res.end('hello ${process.pid}')\n`)
  const base = (await testImages(docker)).register
  const built = await buildImage(docker, { kind: 'register', base: 'host', apps: [app] })
  t.after(() => docker.getImage(built.tag).remove({ force: true }).catch(() => {}))
  assert.notEqual(built.tag, base.tag)
  assert.deepEqual(built.apps, [{ source: app, path: '/app/apps/hello.mjs/hello.mjs' }])
  const h = await healthOf(t, built.tag, { PORT: '8080', NODESCALE_APP: built.apps[0].path, NODESCALE_INSTANCE: 'app1' })
  assert.equal(h.status, 200)
  assert.equal(h.instance, 'app1')
})

test('host base: the HAProxy image runs the host haproxy', { skip }, async (t) => {
  const { haproxy } = await testImages(docker)
  assert.match(haproxy.tag, /^nodescale\/haproxy:[0-9a-f]{12}$/)
  const c = await docker.createContainer({ Image: haproxy.tag, Cmd: ['haproxy', '-v'], Labels: { 'io.nodescale.test': 'swarm-image' } })
  t.after(() => c.remove({ force: true }).catch(() => {}))
  await c.start()
  const { StatusCode } = await c.wait()
  const out = (await c.logs({ stdout: true, stderr: true })).toString()
  assert.equal(StatusCode, 0, out)
  assert.match(out, /HAProxy version \d+\.\d+/)
})

test('--base registry uses node:<major>-slim where it can be had, else says so and points at --base host', { skip }, async (t) => {
  const out = await buildImage(docker, { kind: 'register', base: 'registry', pullTimeoutMs: 15_000 }).catch(err => err)
  if (out instanceof Error) {
    assert.equal(/** @type {any} */ (out).code, 'NS_ERR_DEPLOY')
    assert.match(out.message, /--base registry: cannot pull node:\d+-slim/)
    assert.match(/** @type {any} */ (out).hint, /--base host/)
  } else {
    t.after(() => docker.getImage(out.tag).remove({ force: true }).catch(() => {}))
    assert.equal(out.base, 'registry')
    const info = await docker.getImage(out.tag).inspect()
    assert.equal(info.Config.Labels['io.nodescale.base'], 'registry')
  }
})

/** A server folder: a package.json, an entry file, a package with a bin link, a .git folder and a link out of it. */
function serverFolderFixture (t) {
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-server-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), '{"name":"s","type":"module"}\n')
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'src', 'main.js'), 'console.log(1)\n')
  mkdirSync(join(dir, 'node_modules', 'cli', 'node_modules', 'dep'), { recursive: true })
  writeFileSync(join(dir, 'node_modules', 'cli', 'bin.js'), '#!/usr/bin/env node\n')
  chmodSync(join(dir, 'node_modules', 'cli', 'bin.js'), 0o755)
  writeFileSync(join(dir, 'node_modules', 'cli', 'node_modules', 'dep', 'index.js'), '\n')
  mkdirSync(join(dir, 'node_modules', '.bin'))
  symlinkSync('../cli/bin.js', join(dir, 'node_modules', '.bin', 'cli'))
  mkdirSync(join(dir, '.git'))
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref\n')
  symlinkSync(tmpdir(), join(dir, 'outside'))
  return dir
}

test('--server on Swarm: the server\'s folder whole (nested node_modules, not .git or links), its entry by real path', (t) => {
  const dir = serverFolderFixture(t)
  const tree = serverTree(join(dir, 'src', 'main.js'))
  assert.equal(tree.folder, dir)
  assert.equal(tree.entry, '/server/src/main.js')
  assert.deepEqual(tree.entries.map(e => e.name),
    ['server/node_modules/cli/bin.js', 'server/node_modules/cli/node_modules/dep/index.js', 'server/package.json', 'server/src/main.js'])
  assert.equal(tree.entries[0].mode, 0o755, 'an executable stays one')
  // node_modules/.bin/<cli>: node runs the package's own file
  assert.equal(serverTree(join(dir, 'node_modules', '.bin', 'cli')).entry, '/server/node_modules/cli/bin.js')
  // an entry whose real path leaves the folder is exit 2, naming --server
  const away = mkdtempSync(join(tmpdir(), 'nodescale-away-'))
  t.after(() => rmSync(away, { recursive: true, force: true }))
  writeFileSync(join(away, 'real.js'), '\n')
  symlinkSync(join(away, 'real.js'), join(dir, 'src', 'linked.js'))
  assert.throws(() => serverTree(join(dir, 'src', 'linked.js')), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_BAD_FLAG')
    assert.equal(err.exitCode, 2)
    assert.match(err.message, /^--server: .*linked\.js is really .*real\.js, outside the folder/)
    return true
  })
})

test('--image: the launchers added to a user\'s image are the cluster primary, the PM2 starter, the hook and PM2', () => {
  const names = launcherTree(ROOT).map(e => e.name)
  for (const f of ['opt/nodescale/register/cluster.js', 'opt/nodescale/register/pm2-start.js', 'opt/nodescale/register/server-hook.js',
    'opt/nodescale/register/server-entry.js', 'opt/nodescale/lib/telemetry.js', 'opt/nodescale/package.json',
    'opt/nodescale/node_modules/pm2/bin/pm2-runtime']) {
    assert.ok(names.includes(f), `${f} is missing`)
  }
  assert.ok(names.every(n => n.startsWith('opt/nodescale/')))
  const own = names.filter(n => !n.includes('/node_modules/'))
  assert.deepEqual(own.filter(n => /\/(benchmarks|executor|analyzer|rc)\/|register\/serve\.js/.test(n)), [], 'only the launchers and what they import')
  assert.ok(!names.some(n => n.startsWith('opt/nodescale/node_modules/express/')), 'no express: the user\'s server is not ours')
})

test('--image: the entry file from the image\'s command, the port it listens on, a node that can preload the hook', () => {
  const at = (entrypoint, cmd, workingDir = '/app') => entryFromCommand({ entrypoint, cmd, workingDir })
  assert.deepEqual(at([], ['node', 'server.js', '--port', '3000']), { entry: '/app/server.js', args: ['--port', '3000'], nodeArgs: [] })
  assert.deepEqual(at(['docker-entrypoint.sh'], ['node', 'dist/main.js']), { entry: '/app/dist/main.js', args: [], nodeArgs: [] })
  assert.deepEqual(at(['/usr/bin/tini', '--'], ['/usr/local/bin/node', '--max-old-space-size=512', '-r', 'dotenv/config', '/srv/index.mjs']),
    { entry: '/srv/index.mjs', args: [], nodeArgs: ['--max-old-space-size=512', '-r', 'dotenv/config'] })
  assert.deepEqual(at(['node'], ['server.js'], ''), { entry: '/server.js', args: [], nodeArgs: [] })
  assert.deepEqual(at(['/bin/sh', '-c', 'exec node ./app.js'], []), { entry: '/app/app.js', args: [], nodeArgs: [] })
  for (const [entrypoint, cmd] of [[[], ['npm', 'start']], [['docker-entrypoint.sh'], ['node']], [[], ['node', '-e', 'x()']],
    [['/bin/sh', '-c', 'node a.js && node b.js'], []], [[], []]]) {
    assert.equal(at(entrypoint, cmd), null, JSON.stringify([entrypoint, cmd]))
  }
  assert.deepEqual(userImagePort({ exposed: [3000] }, undefined), { port: 3000, why: 'the one port the image EXPOSEs' })
  assert.equal(userImagePort({ exposed: [3000] }, 9000).port, 9000)
  assert.match(userImagePort({ exposed: [] }).why, /EXPOSEs no port: assumed 8080/)
  assert.match(userImagePort({ exposed: [80, 443] }).why, /EXPOSEs 80, 443.*assumed 8080/)
  for (const v of ['v18.19.0', 'v18.20.4', 'v20.6.0', 'v20.20.2', 'v22.1.0']) assert.ok(nodeHasImport(v), v)
  for (const v of ['v18.18.2', 'v19.9.0', 'v20.5.1', 'v16.20.0', 'bash: node: not found']) assert.ok(!nodeHasImport(v), v)
})

test('--server: the register image carries the server at /server, a new tag when one of its files changes', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodescale-server-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), '{"name":"s"}\n')
  writeFileSync(join(dir, 'server.js'), 'console.log(1)\n')
  const first = await buildImage(docker, { kind: 'register', base: 'host', server: join(dir, 'server.js') })
  t.after(() => docker.getImage(first.tag).remove({ force: true }).catch(() => {}))
  assert.deepEqual(first.server, { entry: '/server/server.js', folder: dir })
  assert.equal((await buildImage(docker, { kind: 'register', base: 'host', server: join(dir, 'server.js') })).tag, first.tag, 'unchanged: reused')
  writeFileSync(join(dir, 'server.js'), 'console.log(2)\n')
  const second = await buildImage(docker, { kind: 'register', base: 'host', server: join(dir, 'server.js') })
  t.after(() => docker.getImage(second.tag).remove({ force: true }).catch(() => {}))
  assert.notEqual(second.tag, first.tag)
  assert.notEqual(second.tag, (await testImages(docker)).register.tag)
})
