// A user's own whole server on the real Swarm: --server FILE in the register image (every strategy), and --image REF
// (a user's image built here: as it is for up and hs, with nodescale's launchers added for cm; an image without Node
// refused for cm before anything is deployed). Each case is one short run that must leave no stack behind.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stackResources, removeLeftovers } from '../executor/docker/stack-deploy.js'
import { RUN_LABEL } from '../executor/docker/stack-render.js'
import { buildContext, nodeHostBase } from '../executor/docker/image-build.js'
import { swarmEngine } from './swarm-helper.js'
import { runCli, readRun } from './helpers/cli.js'

const { docker, skip } = await swarmEngine()
if (!skip) await removeLeftovers(docker)

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-whole-swarm-'))
const short = ['--backend', 'swarm', '--duration', '2', '--warmup', '1', '--concurrency', '4', '--quiet']
const server = ['--server', 'examples/http-server/server.js', '--path', '/prime?n=1000003', '--health', '/health']

/** Nothing of the run is left: no service with its run label, and nothing of its stack (services, containers, ...). */
async function assertGone (run) {
  const services = await docker.listServices({ filters: { label: [`${RUN_LABEL}=${run.id}`] } })
  assert.deepEqual(services.map(s => s.Spec?.Name), [], 'services of the run left')
  const stack = run.placement?.[0]?.service?.replace(/_app$/, '') ?? `ns-${run.id}`
  const left = await stackResources(docker, stack)
  assert.deepEqual([left.services.length, left.containers.length, left.networks.length, left.configs.length], [0, 0, 0, 0], `left of ${stack}`)
}

/**
 * A finished run of a user's server: done, requests and no errors, the server's CPU sampled. (Not assertDiagnosis's
 * sum of roles against the host's busy cores: at this server's 20k req/s on two cores the kernel's interrupt work is
 * counted in the containers' CPU too, and the sum runs ahead by more than its margin.)
 */
function assertDone (out, { strategy, instances }) {
  const { run } = readRun(out)
  assert.equal(run.status, 'done', JSON.stringify(run.error))
  assert.deepEqual([run.config.strategy, run.config.instances], [strategy, instances])
  assert.ok(run.summary.requests > 50, `only ${run.summary.requests} requests`)
  assert.equal(run.summary.errors, 0)
  assert.ok(run.cpu.samples >= 1 && run.cpu.total > 0.02, JSON.stringify(run.cpu.total))
  assert.ok(run.diagnosis?.bottleneck?.kind, 'a diagnosis')
  return run
}

/** The app tasks of run.json's placement, and the distinct workers that said their telemetry (from our hook). */
function served (run) {
  return {
    tasks: run.placement.filter(p => p.service.endsWith('_app')).length,
    workers: [...new Set(run.diagnosis.instances.filter(i => i.role === 'worker').map(i => i.id))].sort()
  }
}

for (const [strategy, instances, tasks] of /** @type {Array<[string, number, number]>} */ ([['up', 1, 1], ['cm', 2, 1], ['pm2', 2, 1], ['hs', 2, 2]])) {
  test(`swarm --server: ${strategy} x${instances} runs the server's own file from /server in our image`, { skip, timeout: 120_000 }, async () => {
    const out = tmp()
    const r = await runCli('executor', ['run', ...server, '--strategy', strategy, '--instances', String(instances), '--out', out, ...short])
    assert.equal(r.code, 0, r.stderr)
    const run = assertDone(out, { strategy, instances })
    const { serverImage } = run.environment
    assert.equal(serverImage.runs, 'register')
    assert.equal(serverImage.entry, '/server/server.js')
    assert.match(serverImage.folder, /examples\/http-server$/)
    assert.equal(serverImage.readiness, 'instances')
    // every instance answered and named itself (the hook's telemetry), one per worker or replica
    const { tasks: appTasks, workers } = served(run)
    assert.equal(appTasks, tasks)
    assert.equal(workers.length, instances, JSON.stringify(workers))
    assert.equal(run.diagnosis.instances.some(i => i.role === 'primary'), strategy === 'cm', 'a cluster\'s primary says its own')
    await assertGone(run)
  })
}

// a user's image, built here: a plain node:http server FROM the host's node base, CMD node /srv/server.js, EXPOSE 3000
const USER_SERVER = `const http = require('node:http')
http.createServer((req, res) => res.end(req.url === '/health' ? 'ok' : 'hello ' + process.pid + '\\n'))
  .listen(Number(process.env.PORT || 3000), process.env.HOST || '0.0.0.0')
`
/** @type {Promise<string> | null} */
let userImage = null
const built = new Set()
const imageOf = () => (userImage ??= (async () => {
  const base = await nodeHostBase(docker)
  const dockerfile = [`FROM ${base.tag}`, 'COPY srv/ /srv/', 'EXPOSE 3000', 'CMD ["node", "/srv/server.js"]', ''].join('\n')
  const { tag } = await buildContext(docker,
    { repo: 'nodescale-test/user-server', dockerfile, entries: [{ name: 'srv/server.js', content: Buffer.from(USER_SERVER) }] })
  built.add(tag)
  return tag
})())
after(async () => {
  // the images FROM the user's (nodescale's launchers added) first, then the user's
  for (const tag of [...built].reverse()) await docker?.getImage(tag).remove({ force: true }).catch(() => {})
})

for (const [strategy, instances] of /** @type {Array<[string, number]>} */ ([['up', 1], ['hs', 2]])) {
  test(`swarm --image: ${strategy} x${instances} runs the user's image as it is, on its EXPOSEd port, ` +
    'ready by its health path', { skip, timeout: 120_000 }, async () => {
    const image = await imageOf()
    const out = tmp()
    const r = await runCli('executor',
      ['run', '--image', image, '--health', '/health', '--strategy', strategy, '--instances', String(instances), '--out', out, ...short])
    assert.equal(r.code, 0, r.stderr)
    const run = assertDone(out, { strategy, instances })
    const { serverImage } = run.environment
    assert.equal(serverImage.ref, image)
    assert.match(serverImage.id, /^sha256:[0-9a-f]{64}$/)
    assert.deepEqual([serverImage.runs, serverImage.containerPort, serverImage.readiness], ['as-is', 3000, 'health-only'])
    assert.equal(run.environment.image, serverImage.id, 'the service ran the user\'s image itself')
    // no hook, no instance figures; each replica's container measured (every one of them served)
    assert.equal(served(run).tasks, strategy === 'hs' ? instances : 1)
    assert.deepEqual(served(run).workers, [])
    assert.match(run.diagnosis.instancesUnseen, /ran as it is .* without nodescale's hook/, 'the run says why it has no instance figures')
    assert.equal(run.cpu.containers.length, served(run).tasks)
    for (const c of run.cpu.containers) assert.ok(c.total > 0, `container ${c.id.slice(0, 12)} used no CPU`)
    await assertGone(run)
  })
}

test('swarm --image: cm x2 runs the image\'s own entry file (from its CMD) under nodescale\'s cluster primary', { skip, timeout: 120_000 }, async () => {
  const image = await imageOf()
  const out = tmp()
  const r = await runCli('executor', ['run', '--image', image, '--health', '/health', '--strategy', 'cm', '--instances', '2', '--out', out, ...short])
  assert.equal(r.code, 0, r.stderr)
  const run = assertDone(out, { strategy: 'cm', instances: 2 })
  const { serverImage } = run.environment
  assert.deepEqual([serverImage.runs, serverImage.entry, serverImage.workingDir, serverImage.readiness], ['launchers', '/srv/server.js', '/', 'instances'])
  assert.match(serverImage.node, /^v\d+\.\d+\.\d+$/)
  assert.match(serverImage.launcherImage, /^nodescale\/with-launchers:[0-9a-f]{12}$/)
  built.add(serverImage.launcherImage)
  assert.deepEqual(served(run), { tasks: 1, workers: ['r1-w1', 'r1-w2'] })
  assert.ok(run.diagnosis.instances.some(i => i.role === 'primary'), 'the primary runs in the user\'s image too')
  await assertGone(run)
})

test('swarm --image without Node and --strategy cm: exit 2 naming --image and the strategy, nothing deployed', { skip, timeout: 60_000 }, async () => {
  const { tag } = await buildContext(docker, {
    repo: 'nodescale-test/no-node',
    dockerfile: 'FROM scratch\nCOPY hello.txt /hello.txt\nCMD ["/hello"]\n',
    entries: [{ name: 'hello.txt', content: Buffer.from('hello\n') }]
  })
  built.add(tag)
  const runs = async () => (await docker.listServices({ filters: { label: [RUN_LABEL] } })).map(s => s.ID).sort()
  const before = await runs()
  const out = tmp()
  const r = await runCli('executor', ['run', '--image', tag, '--strategy', 'cm', '--instances', '2', '--out', out, ...short])
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /NS_ERR_BAD_FLAG: --image: --strategy cm needs Node 18\.19 or later/)
  assert.match(r.stderr, /cluster primary with the image's node; use --strategy up or hs for an image without Node/)
  assert.deepEqual(await runs(), before, 'no stack deployed')
  assert.deepEqual(await docker.listContainers({ all: true, filters: { label: ['io.nodescale.probe'] } }), [], 'the node --version container is removed')
})
