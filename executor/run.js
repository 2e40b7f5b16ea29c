// One run end to end: deploy, sample CPU, drive load, tear down (always), judge (run-judge.js), write run.json.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fail } from '../lib/messages.js'
import { RUN_FILES, TIMELINE_SCHEMA, newRunId, newRunRecord, makeDirs, makeWritableDir, writeJsonAtomic } from '../lib/run-files.js'
import { loadTarget } from '../benchmarks/index.js'
import { summarizeCpu } from '../rc/cpu-summary.js'
import { createGeneratorMeter, summarizeGenerator } from '../rc/generator-cpu.js'
import { onlineCpus } from '../rc/cpu-affinity.js'
import { runLoad } from './drivers/index.js'
import { generatorPlaces } from './generators/index.js'
import { loadSharing } from './load-cpus.js'
import { runGenerators, combineGenerators } from './generators/run-generators.js'
import { PROBE } from './generators/auto.js'
import { ensureJmeter } from './jmeter-install.js'
import { resolveBackend } from './backends/index.js'
import { describeEnvironment, fingerprintLoad } from './environment.js'
import { AUTO_DURATION, driverValuesOf, longestSeconds } from '../lib/run-options.js'
import { judgeRunRecord } from './run-judge.js'

/**
 * Everything checked before anything starts: the output folder (made and written to, within a bound on time), the
 * benchmark and its params, the backend's own rules and parts, the driver's parts.
 * @param {import('./backends/index.js').RunConfig} config
 * @param {{ log?: (line: string) => void, signal?: AbortSignal }} [opts]
 * @returns {Promise<{ backend: import('./backends/index.js').Backend, benchmark: string, mount: string, health?:
 *   string, server?: object, request: any, body?: Buffer, backendInfo: object, driverInfo: object }>}
 */
export async function prepareRun (config, { log = () => {}, signal } = {}) {
  await makeWritableDir(config.out, { flag: '--out' })
  const bench = await loadTarget(config)
  const options = bench.options(config.params)
  const request = bench.request(options)
  // the load's body: a benchmark's size of filler, or a whole server's --body file as it is
  const body = request.bodyFile ? await readFile(request.bodyFile) : request.bodyBytes ? Buffer.alloc(request.bodyBytes, 'x') : undefined
  const backend = await resolveBackend(config, { log })
  signal?.throwIfAborted()
  const backendInfo = await backend.prepare(config, { log, signal })
  const driverInfo = config.driver === 'jmeter' ? { jmeterHome: (await ensureJmeter({ log })).home } : {}
  return { backend, benchmark: bench.name, mount: bench.mount, health: bench.health, server: bench.about, request, body, backendInfo, driverInfo }
}

/**
 * Deploys the shape of a config (strategy, instances, benchmark, quota) and resolves when every instance answers.
 * A sweep keeps the returned deployment across runs of the same shape and tears it down itself.
 * @param {import('./backends/index.js').RunConfig} config
 * @param {{ prepared: any, id: string, dir: string, log?: (line: string) => void, signal?: AbortSignal }} opts
 *   id names the deployment's groups (cgroups, stack); dir receives its files (haproxy.cfg, stack files)
 * @returns {Promise<import('./backends/index.js').Deployment>}
 */
export async function deployFor (config, { prepared, id, dir, log = () => {}, signal }) {
  const { backend, benchmark, health } = prepared
  log(`deploying ${config.strategy} x${config.instances} (${benchmark}) on the ${backend.name} backend`)
  return backend.deploy({ ...config, benchmark, ...(health !== undefined && { health }) }, { runId: id, runDir: dir, log, signal })
}

/**
 * Runs one configuration. Never leaves processes behind; run.json is readable whatever happens.
 * With `deployment` (from deployFor or an earlier run, same shape as config) the run uses it and neither deploys nor
 * tears down. With `keepDeployment` the deployment it makes is handed to `onDeployed` and left running for the caller.
 * @param {import('./backends/index.js').RunConfig} config a validated run config (lib/run-options.js)
 * @param {{ log?: (line: string) => void, onProgress?: (p: any) => void, signal?: AbortSignal, prepared?: any,
 *   deployment?: any, keepDeployment?: boolean, onDeployed?: (deployment: any) => void }} [opts]
 * @returns {Promise<any>} the run.json object
 */
export async function run (config, { log = () => {}, onProgress, signal, prepared, deployment: shared, keepDeployment = false, onDeployed } = {}) {
  prepared ??= await prepareRun(config, { log, signal })
  const { backend, benchmark, request, backendInfo, driverInfo } = prepared
  config = { ...config, benchmark }
  const id = newRunId(config)
  const dir = join(config.out, id)
  await makeDirs(dir)
  /** @type {Record<string, any>} */
  const runJson = newRunRecord({
    id,
    dir,
    config,
    environment: describeEnvironment({ backend: backend.name, extra: { ...backendInfo, ...driverInfo }, config }),
    request
  })
  // a whole server: which one was measured (its entry, folder, package name and version; or its image)
  if (prepared.server) runJson.server = prepared.server
  const save = () => writeJsonAtomic(join(dir, RUN_FILES.run), runJson)
  await save()

  let deployment = shared ?? null
  let teardownError = null
  const m = newMeasuring()
  try {
    signal?.throwIfAborted()
    if (!deployment) {
      deployment = await deployFor(config, { prepared, id, dir, log, signal })
      onDeployed?.(deployment)
    }
    await measure(runJson, m, { config, prepared, deployment, dir, log, signal, onProgress })
  } catch (err) {
    runJson.status = signal?.aborted ? 'interrupted' : 'failed'
    runJson.error = { code: err.code ?? null, message: err.message }
    throw err
  } finally {
    await release(m)
    // the generators' stack and the server's go together: on Swarm each waits seconds for its tasks to be reported gone
    // a stack that will not go must not cost the results: run.json is written first, then the error is thrown below
    const ours = deployment && !shared && !keepDeployment
    const [, removeError] = await Promise.all([
      m.generators?.teardown().catch(err => log(`removing the generators: ${err.message}`)),
      ours ? deployment.teardown().then(() => null, err => err) : null
    ])
    teardownError = removeError
    if (teardownError && !runJson.error) runJson.error = { code: teardownError.code ?? null, message: `teardown: ${teardownError.message}` }
    m.generatorTimeline ??= m.generator.stop()
    if (m.timeline) await writeJsonAtomic(join(dir, RUN_FILES.timeline), { schema: TIMELINE_SCHEMA, ...m.timeline, generator: m.generatorTimeline })
    const { timeline, telemetry, losses, placementAfter } = m
    await judgeRunRecord(runJson, { config, dir, timeline, telemetry, losses, placementAfter, readiness: deployment?.readiness, log })
    runJson.finishedAt = new Date().toISOString()
    await save()
  }
  // reached only when the run itself did not throw: its error wins over the teardown's
  if (teardownError) throw teardownError
  return runJson
}

/**
 * What the measure step started and gathered: the release (always) and the judging read it, whatever happened.
 * @typedef {{ generator: ReturnType<typeof createGeneratorMeter>, generatorTimeline: any, sampler: any, watch: any,
 *   timeline: any, generators: Awaited<ReturnType<typeof generatorPlaces>>, losses:
 *   import('./docker/node-watch.js').LossEpisode[], placementAfter: any,
 *   telemetry: import('../lib/telemetry.js').TelemetryRecord[] }} Measuring
 *   generator: the load generator's own CPU and its host's, beside the server's (how far the run can be trusted);
 *   generators: the generators of a run with several (their teardown)
 * @returns {Measuring}
 */
function newMeasuring () {
  return {
    generator: createGeneratorMeter(),
    generatorTimeline: null,
    sampler: null,
    watch: null,
    timeline: null,
    generators: null,
    losses: [],
    placementAfter: null,
    telemetry: []
  }
}

/**
 * The load as one generator drives it: the run's driver values, the request, its files and duration.
 * @param {any} config @param {any} prepared @param {string} url @param {string} dir @param {Measuring} m
 * @param {{ log: (line: string) => void, signal?: AbortSignal, onProgress?: (p: any) => void }} o
 */
function loadOptionsOf (config, prepared, url, dir, m, { log, signal, onProgress }) {
  const { request, body } = prepared
  return {
    driver: config.driver,
    url,
    method: request.method,
    headers: request.headers,
    body,
    ...driverValuesOf(config),
    duration: longestSeconds(config),
    until: config.duration === 'auto' ? { minSeconds: config.minDuration, relHalfWidth: AUTO_DURATION.relHalfWidth } : undefined,
    jtlPath: join(dir, RUN_FILES.samples),
    samples: config.samples,
    histogramPath: join(dir, RUN_FILES.latency),
    label: config.benchmark,
    signal,
    onProgress,
    onSpawn: (pid, engine) => m.generator.add(pid, { engine }),
    log
  }
}

/**
 * The load, from its generators once placed (--load-procs auto probes first: a probe's load is the run's for a few
 * seconds, its files apart, its processes not the run's), with the generators' CPU timed; locally the cores the server
 * may use (read from /proc once it answered) beside the generators' (their taskset, or none), kept apart as far as
 * the machine allows, and said. Resolves with the load's result and where it went.
 * @param {Record<string, any>} runJson @param {Measuring} m @param {any} loadOptions @param {string} path
 */
async function driveLoad (runJson, m, loadOptions, path, { config, deployment, dir, log, signal }) {
  /** @type {import('./generators/auto.js').LoadProcs | null} */
  let procs = null
  const probeLoad = (places, where) => runGenerators(places, { ...loadOptions, onProgress: undefined, onSpawn: undefined, until: undefined, ...PROBE }, {
    jtlPath: join(where, RUN_FILES.samples), samples: 'none', signal, log, flag: '--load-procs', partsDir: where
  })
  const generators = m.generators = await generatorPlaces(config, { deployment, dir, log, signal, probeLoad, onProcs: (p) => { procs = p } })
  const loadUrl = generators?.url ? `${generators.url.replace(/\/$/, '')}${path}` : loadOptions.url
  const sharing = loadSharing({ placement: runJson.placement, places: generators?.places, machine: onlineCpus() })
  if (sharing) log(`cores: ${config.affinity ? `--affinity ${config.affinity}: ` : ''}${sharing.why}`)
  log(`load: ${config.driver} -> ${loadUrl}`)
  m.generator.start()
  const load = generators
    ? await runGenerators(generators.places, { ...loadOptions, url: loadUrl }, { ...loadOptions, flag: generators.flag, partsDir: generators.partsDir })
    : await runLoad(loadOptions)
  m.generatorTimeline = m.generator.stop()
  return { load, loadUrl, sharing, procs }
}

/**
 * After the load: the nodes' and generators' losses, the watch and the sampler stopped (a daemon that restarted under
 * the load measured nothing: it throws), and what the instances said of themselves over the steady window (a run
 * without it is still a run; a run that lost a node has lost that node's part of it).
 * @param {Measuring} m @param {any} deployment @param {any} load @param {(line: string) => void} log
 */
async function endWatching (m, deployment, load, log) {
  // a generator that stopped answering is a loss like a node's: the run goes on with the others, degraded
  m.losses.push(...generatorLosses(load.generators))
  if (m.watch) {
    m.losses.push(...await m.watch.stop())
    const outages = m.watch.outages?.() ?? []
    m.watch = null
    if (outages.length) throw daemonOutageError(outages)
    if (m.losses.length) m.placementAfter = await deployment.currentPlacement?.().catch(err => { log(`placement after the loss: ${err.message}`); return null })
  }
  m.timeline = await m.sampler.stop()
  m.sampler = null
  if (!m.losses.some(l => !l.generator)) {
    m.telemetry = await deployment.telemetry({ from: load.steadyStart, to: load.steadyEnd + 1000 })
      .catch(err => { log(`telemetry: ${err.message}`); return [] })
  }
}

/**
 * The measure step: on a deployment that answers, the CPU sampled and the nodes watched while the load runs (its
 * generators placed first), then what the instances said of themselves; the load's, the CPU's and the placement's
 * figures written into the run record.
 * @param {Record<string, any>} runJson
 * @param {Measuring} m
 * @param {{ config: any, prepared: any, deployment: any, dir: string, log: (line: string) => void,
 *   signal?: AbortSignal, onProgress?: (p: any) => void }} opts
 */
async function measure (runJson, m, { config, prepared, deployment, dir, log, signal, onProgress }) {
  runJson.placement = deployment.placement
  // --server-cpus: the cores given to the server, the load and HAProxy (derived: worked out, not given), and where
  // HAProxy runs as the kernel has it (the server's are placement[].cpus, the generators' load.generators[].cpus)
  if (deployment.partition) runJson.partition = { ...deployment.partition, ...(deployment.lbPlace ? { lbAllowed: deployment.lbPlace.cpus } : {}) }
  signal?.throwIfAborted()
  m.sampler = deployment.createSampler()
  await m.sampler.start()
  // a node lost while the load runs makes the run degraded, not failed: Swarm reschedules, the load goes on (only a
  // backend with nodes to lose has a watch: see the contract in backends/index.js)
  m.watch = deployment.createWatch?.() ?? null
  m.watch?.start()
  const path = `${prepared.mount}${prepared.request.path}`
  const loadOptions = loadOptionsOf(config, prepared, `${deployment.url.replace(/\/$/, '')}${path}`, dir, m, { log, signal, onProgress })
  const { load, loadUrl, sharing, procs } = await driveLoad(runJson, m, loadOptions, path, { config, deployment, dir, log, signal })
  // several generators: each measured its own CPU (a remote one on its node), the busiest one speaks for the run
  const generatorFigures = load.generators
    ? combineGenerators(load.generators.map(g => g.cpu))
    : summarizeGenerator(m.generatorTimeline, { from: load.steadyStart, to: load.steadyEnd })
  // url: where the load was sent (on Swarm, this node's published port at docker_gwbridge's address, not loopback:
  // executor/docker/stack-deploy.js localAddress)
  runJson.load = { ...load, url: loadUrl, generator: generatorFigures, ...(sharing && { cpus: sharing.generator, sharing }), ...(procs && { procs }) }
  // where the load ran, as the run recorded it: the fingerprint's summary (a reader compares it with a study's)
  runJson.environment.fingerprint.load = fingerprintLoad(config, runJson.load, runJson.environment, runJson.placement)
  await endWatching(m, deployment, load, log)
  runJson.status = load.interrupted ? 'interrupted' : m.losses.length ? 'degraded' : 'done'
  // locally the table is of the cores the server was given (pinned or partitioned), as the study's of its server
  runJson.cpu = summarizeCpu(m.timeline, { from: load.steadyStart, to: load.steadyEnd }, { serverCores: runJson.load?.sharing?.server })
}

/**
 * What the measure step started, stopped whatever happened: the node watch and the CPU sampler (its timeline kept).
 * The generators go with the deployment, after these (run's finally).
 * @param {Measuring} m
 */
async function release (m) {
  if (m.watch) await m.watch.stop().catch(() => [])
  if (m.sampler) m.timeline = await m.sampler.stop().catch(() => null)
}

/**
 * The loss episodes (as the node watch reports a lost node) of the generators that stopped answering.
 * @param {any[] | undefined} generators run.json's load.generators
 * @returns {import('./docker/node-watch.js').LossEpisode[]}
 */
function generatorLosses (generators) {
  return (generators ?? []).filter(g => g.lost).map(g => /** @type {any} */ ({
    node: g.node ?? g.host ?? g.name,
    nodeId: g.nodeId ?? null,
    label: g.label ?? null,
    why: `generator ${g.name} stopped answering: ${g.lost.message}`,
    generator: g.name,
    lastSeenAt: g.lost.lastSeenAt,
    lostAt: g.lost.lostAt,
    swarmDownAt: null,
    recoveredAt: null
  }))
}

/** The error of a run during which the manager's Docker daemon did not answer (a restart, a crash). */
function daemonOutageError (outages) {
  const o = outages[0]
  return fail('DAEMON_LOST_DURING_LOAD', { why: o.why, seconds: o.to === null ? null : ((o.to - o.from) / 1000).toFixed(1) }, { details: { outages } })
}
