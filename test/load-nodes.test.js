// Load from load nodes on the real engine: a 5-node local swarm (executor cluster up --nodes 5 --load-nodes 2), HS
// runs whose server tasks and generators are on disjoint nodes, one generator and two (the load split, their samples
// merged in time order, the summary the sum of their parts), and a load node's engine stopped mid-run (degraded, the
// loss window counted, not hung).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkHost } from '../executor/local-swarm/host.js'
import { swarmEngine } from './swarm-helper.js'
import { runCli, readRun } from './helpers/cli.js'
import { cluster, enginePidOf } from './helpers/cluster.js'

const engine = await swarmEngine()
let skip = engine.skip
if (!skip) {
  try { checkHost() } catch (err) { skip = `the local cluster cannot run here: ${err.message}` }
  if (skip && process.env.CI === 'true') throw new Error(`${skip} (CI=true: the cluster suite must run)`)
}

/**
 * An hs x2 run on the two server workers with load from `loadNodes` load nodes; onLoad runs when the load starts.
 * @param {number} loadNodes
 * @param {{ duration?: number, warmup?: number, onLoad?: () => void, samples?: string, driver?: string }} [opts]
 */
async function loadRun (loadNodes, { duration = 4, warmup = 1, onLoad, samples = 'jtl', driver = 'autocannon' } = {}) {
  const out = mkdtempSync(join(tmpdir(), 'ns-load-nodes-'))
  let started = false
  // --ready-timeout 90: once on a CI run, just after the load-jmeter image was loaded into four engines of this local
  // swarm, a replica answered through HAProxy later than the default 30 s (its task running): the readiness is not
  // what this checks
  const r = await runCli('executor', ['run', '--backend', 'swarm', '--strategy', 'hs', '--instances', '2', '--nodes', '2', '--benchmark', 'baseline',
    '--cpus-per-instance', '0.25', '--load-nodes', String(loadNodes), '--concurrency', '6', '--ready-timeout', '90', '--duration', String(duration),
    '--warmup', String(warmup), '--samples', samples, '--driver', driver, '--out', out], {
    timeoutMs: 240_000,
    onStderr (text) {
      if (started || !/starting together/.test(text)) return
      started = true
      onLoad?.()
    }
  })
  assert.equal(r.code, 0, r.stderr)
  return { ...readRun(out), stderr: r.stderr }
}

const appNodes = (run) => run.placement.filter(p => p.service.endsWith('_app')).map(p => p.nodeLabel)

test('load nodes: generators on their own nodes, split, merged, and one lost mid-run', { skip, timeout: 900_000 }, async (t) => {
  const up = await cluster(['up', '--nodes', '5', '--load-nodes', '2', '--json'])
  assert.equal(up.code, 0, up.stderr)
  assert.deepEqual(JSON.parse(up.stdout).nodes.filter(n => n.loadNode).map(n => n.label), ['nodescale-w3', 'nodescale-w4'])
  try {
    await t.test('--load-nodes 1: the generator on a load node, the server on the two others, the summary its part', async () => {
      // while the load runs: the agents' token is a Swarm secret's file, not in the environment service inspect shows
      let agents = null
      const { run } = await loadRun(1,
        { onLoad: () => { agents = engine.docker?.listServices().then(list => list.filter(x => x.Spec.Name.endsWith('-load_agent'))) } })
      const [spec] = (await /** @type {Promise<any[]>} */ (agents)).map(x => x.Spec.TaskTemplate.ContainerSpec)
      assert.ok(spec.Env.includes('NODESCALE_AGENT_TOKEN_FILE=/run/secrets/nodescale_agent_token'), spec.Env.join(' '))
      assert.ok(!spec.Env.some(e => e.startsWith('NODESCALE_AGENT_TOKEN=')), 'no token in the environment')
      assert.deepEqual(spec.Secrets.map(x => [x.File.Name, x.File.Mode, x.File.UID]), [['nodescale_agent_token', 0o400, '64101']])
      // least privilege (loadServiceSpec): its own user, a read-only root and a tmpfs, no capability, limits
      assert.deepEqual([spec.User, spec.ReadOnly, spec.CapabilityDrop, spec.Mounts?.map(m => [m.Type, m.Target])],
        ['64101:64101', true, ['ALL'], [['tmpfs', '/tmp']]])
      const limits = (await /** @type {Promise<any[]>} */ (agents))[0].Spec.TaskTemplate.Resources?.Limits
      assert.ok(limits?.NanoCPUs > 0 && limits?.MemoryBytes > 0, JSON.stringify(limits))
      const [g] = run.load.generators
      assert.equal(g.label, 'nodescale-w3')
      assert.deepEqual(appNodes(run).sort(), ['nodescale-w1', 'nodescale-w2'])
      assert.ok(!run.placement.some(p => p.nodeLabel === g.label), 'no server task on the load node')
      assert.equal(run.summary.requests, g.requests)
      assert.equal(run.summary.errors, g.errors)
      assert.ok(g.clock && Math.abs(g.clock.offsetMs) < 50 && g.clock.rttMs > 0, JSON.stringify(g.clock))
      assert.ok(g.cpu.share !== null && g.validity.checked.includes('generator-saturated'), JSON.stringify(g))
      assert.equal(run.status, 'done')
    })

    await t.test('--load-nodes 2: the load split, the samples merged in the order they ended, the summary the sum', async () => {
      const { run, dir } = await loadRun(2)
      const gens = run.load.generators
      assert.deepEqual(gens.map(g => [g.name, g.label, g.load.concurrency]), [['g1', 'nodescale-w3', 3], ['g2', 'nodescale-w4', 3]])
      assert.equal(run.summary.requests, gens[0].requests + gens[1].requests)
      const rows = readFileSync(join(dir, 'samples.jtl'), 'utf8').split('\n').slice(1, -1).map(l => l.split(','))
      assert.equal(rows.length, run.summary.requests)
      const ends = rows.map(f => Number(f[0]) + Number(f[1]))
      // each generator writes its rows as they end (start floored, elapsed rounded: a ms either way)
      assert.ok(ends.every((e, i) => i === 0 || e >= ends[i - 1] - 2), 'in the order they ended')
      const early = new Set(rows.slice(0, Math.ceil(rows.length / 10)).map(f => f[5].split(' ').pop().split('-')[0]))
      // how each began (its own account, and when its agent answered the start): what a failure here needs to be read
      const began = JSON.stringify(gens.map(g => [g.name, g.startSkewMs, g.startAnsweredMs]))
      const late = run.validity.flags.find(f => f.name === 'late-start')
      if (late) {
        // a busy machine held one generator back past the warm-up: the run names it, and is not valid
        const named = gens.find(g => late.message.startsWith(`generator ${g.name} began its load`))
        assert.ok(named && named.startSkewMs > 1000 && !run.validity.ok, `${late.message} ${began}`)
      } else {
        assert.deepEqual([...early].sort(), ['1', '2'], `both generators from the start: interleaved, not one after the other ${began}`)
      }
      assert.ok(run.validity.checked.includes('late-start') && gens.every(g => typeof g.startAnsweredMs === 'number'), began)
    })

    await t.test('--driver jmeter --load-nodes 2: JMeter on the load nodes from the load-jmeter image, the sum of the parts', async () => {
      // --warmup 3: in CI, beside the other tests, two JVMs starting on this 2-core machine's two load nodes, besides
      // five engines, reached JMeter's first log line 8.4 s after they were started
      const { run, stderr } = await loadRun(2, { driver: 'jmeter', samples: 'gz', warmup: 3 })
      assert.match(stderr, /nodescale\/load-jmeter:/)
      // the agents' image goes to the load nodes only: the server's workers never run it
      const loaded = stderr.split('\n').filter(l => /load-jmeter:\S+ loaded into/.test(l))
      assert.ok(loaded.length <= 1 && loaded.every(l => /loaded into nodescale-w3, nodescale-w4 in/.test(l)), loaded.join('\n'))
      const gens = run.load.generators
      // the two load nodes are namespaces of this machine: their JVMs are given the lead of two on one machine
      assert.ok(gens[0].machine && gens[0].machine === gens[1].machine, JSON.stringify(gens.map(g => g.machine)))
      assert.match(stderr, /2 start on one machine, 5\.5 s ahead/)
      assert.deepEqual(gens.map(g => g.label), ['nodescale-w3', 'nodescale-w4'])
      assert.ok(gens.every(g => g.version.startsWith('JMeter') && g.requests > 0), JSON.stringify(gens))
      assert.equal(run.summary.requests, gens[0].requests + gens[1].requests)
    })

    await t.test('a load node\'s engine stopped mid-run: the run is degraded, the other generator\'s samples kept', async () => {
      const { run } = await loadRun(2, { duration: 12, onLoad: () => setTimeout(() => process.kill(enginePidOf('nodescale-w4'), 'SIGTERM'), 3000) })
      assert.equal(run.status, 'degraded', JSON.stringify(run.error))
      const lost = run.load.generators.find(g => g.lost)
      assert.equal(lost?.label, 'nodescale-w4')
      assert.equal(run.degraded.nodes[0].generator, lost.name)
      assert.ok(run.degraded.window.ms > 0 && run.degraded.duringLoss.requests > 0, JSON.stringify(run.degraded))
      const kept = run.load.generators.find(g => !g.lost)
      assert.equal(run.summary.requests, kept.requests)
      t.diagnostic(`lost ${lost.name} after ${run.degraded.nodes[0].lostAfterMs} ms; reported ${lost.lost.requestsReported} requests before`)
    })
  } finally {
    await cluster(['down'])
  }
})
