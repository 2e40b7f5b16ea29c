#!/usr/bin/env node
// Getting a run's images (register + rc) onto the local swarm's workers: nodescale's save/load through the API and
// its builtin registry (push, then every worker pulls), against the docker CLI loop `docker save | docker -H worker
// load`.
import { spawnSync } from 'node:child_process'
import { median } from 'simple-statistics'
import { option, parseCommandLine, withDefaults } from '../lib/options.js'
import { pathToFileURL } from 'node:url'
import { connectDocker } from '../executor/docker/engine.js'
import { buildImage, pullImage } from '../executor/docker/image-build.js'
import { copyImages } from '../executor/docker/image-copy.js'
import { ensureRegistry, pushToRegistry } from '../executor/docker/image-registry.js'
import { localWorkerEngines } from '../executor/local-swarm/state.js'
import { enginePaths } from '../executor/local-swarm/worker-engine.js'
import { workerIndex } from '../executor/local-swarm/network.js'

/** Removes the images (under any registry prefix) from a worker, so that each method starts from none. */
async function drop (engine, repos) {
  for (const img of await engine.listImages()) {
    if ([...(img.RepoTags ?? []), ...(img.RepoDigests ?? [])].some(t => repos.some(r => t.includes(`${r}:`) || t.includes(`${r}@`)))) {
      await engine.getImage(img.Id).remove({ force: true })
    }
  }
}

/**
 * The shell loop a script would run: for every worker, docker save (all the images at once) | docker -H worker load.
 */
function cliLoad (workers, tags) {
  for (const w of workers) {
    const r = spawnSync('sh', ['-c', 'docker save "$@" | docker -H "unix://$0" load -q', enginePaths(workerIndex(w.name)).socket, ...tags],
      { encoding: 'utf8', timeout: 300_000 })
    if (r.status !== 0) throw new Error(`docker save ${tags.join(' ')} | docker -H ${w.name} load: ${r.stderr.trim()}`)
  }
}

export async function main (argv = process.argv.slice(2)) {
  const options = [option({ flag: 'rounds', type: 'whole', min: 1, max: 10, default: 3 }), option({ flag: 'json', type: 'boolean', default: false })]
  const values = withDefaults(parseCommandLine(argv, options).values, options)
  const rounds = values.rounds
  const docker = await connectDocker()
  const workers = localWorkerEngines()
  if (workers.length < 2) throw new Error('perf:images needs a local swarm with 2 workers: npx executor cluster up --nodes 3')
  const log = () => {}
  const tags = [(await buildImage(docker, { kind: 'register', log })).tag, (await buildImage(docker, { kind: 'rc', log })).tag]
  const repos = tags.map(t => t.split(':')[0])
  const registry = await ensureRegistry(docker, { image: (await buildImage(docker, { kind: 'registry', log })).tag, log })
  const sizes = await Promise.all(tags.map(async t => (await docker.getImage(t).inspect()).Size))
  const ms = { api: [], cli: [], registry: [] }
  const time = async (key, fn) => {
    await Promise.all(workers.map(w => drop(w.docker, repos)))
    const started = process.hrtime.bigint()
    await fn()
    ms[key].push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  for (let r = 0; r < rounds; r++) {
    // a different order each round, so that no method always follows another
    const order = [['api', () => copyImages(docker, workers, tags)], ['cli', () => cliLoad(workers, tags)],
      ['registry', async () => {
        const refs = await pushToRegistry(docker, registry, tags)
        await Promise.all(workers.flatMap(w => tags.map(t => pullImage(w.docker, refs[t]))))
      }]]
    for (let k = 0; k < order.length; k++) await time(...order[(k + r) % order.length])
  }
  const result = {
    workers: workers.length,
    images: tags.map((t, i) => ({ tag: t, mb: Math.round(sizes[i] / 1e6) })),
    rounds,
    medianMs: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, Math.round(median(v))])),
    allMs: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, v.map(Math.round)])),
    ratio: { apiVsCli: median(ms.cli) / median(ms.api), registryVsCli: median(ms.cli) / median(ms.registry) }
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } else {
    process.stdout.write([
      `images onto ${workers.length} workers: ${result.images.map(i => `${i.tag} (${i.mb} MB)`).join(', ')}; ${rounds} rounds, each method from no image`,
      `  docker save a b | docker -H w load, per worker median ${result.medianMs.cli} ms  (${result.allMs.cli.join(', ')})`,
      `  nodescale save/load through the API (default)  median ${result.medianMs.api} ms  (${result.allMs.api.join(', ')})  ` +
        `${result.ratio.apiVsCli.toFixed(2)}x the CLI loop`,
      `  nodescale builtin registry (push + pulls)      median ${result.medianMs.registry} ms  (${result.allMs.registry.join(', ')})  ` +
        `${result.ratio.registryVsCli.toFixed(2)}x the CLI loop`,
      '  (the registry keeps blobs between rounds: after the first, a push sends only what changed; the workers pull everything)'
    ].join('\n') + '\n')
  }
  return result
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch(err => { process.stderr.write(`perf:images: ${err.message}\n`); process.exit(1) })
}
