// The run's option table: every flag of `executor run` in one row (type, limits, default, --help line, experiment key,
// the backends and strategies it applies to), and the one validation that turns a run's values into a frozen config.
import { availableParallelism, totalmem } from 'node:os'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { badApp } from './errors.js'
import { INSTANCES, STRATEGIES, strategyOf } from './strategies.js'
import { checkOption, badOption, keyOf, option, optionsHelp } from './options.js'
import { DEFAULT_SLO, checkSlo, parseSlo } from './slo.js'
import { SAMPLES_FILES } from './run-files.js'
import { LOAD_METHODS } from './wire.js'
import { JMETER_REFUSAL, evaluatedByJmeter } from './jmeter-text.js'
import { cpuListText, parseCpuList } from './cpu-list.js'

/** @typedef {import('./options.js').Option} Option */

/**
 * A run's config as run.json records it: every option's value, defaults filled in (lib/run-options.js).
 * @typedef {{ strategy: string, instances: number, benchmark?: string, params: Readonly<Record<string, string>>,
 *   app?: string, concurrency?: number, rate?: number, connection: 'keep-alive'|'close', duration: number|'auto',
 *   minDuration: number, maxDuration: number, warmup: number, driver: string, samples: string, backend: string,
 *   cpusPerInstance?: number, affinity?: 'pin'|'none', loadProcs?: number|'auto', serverCpus?: string,
 *   loadCpus?: string, lbCpus?: string, memoryPerInstance?: number, lb: string, port: number,
 *   readyTimeout: number, nodes?: number, placement: string, constraints: readonly string[], registry?: string,
 *   registryTls?: { cert: string, key: string }, server?: string, serverArgs?: readonly string[], path?: string,
 *   method?: string, body?: string, health?: string, image?: string, containerPort?: number, out: string, json:
 *   boolean, quiet: boolean, [more: string]: any }} RunConfig
 */

/**
 * `--duration auto`: the run measures until its mean throughput is known to within this share at 95%, from
 * --min-duration to --max-duration seconds: after each whole second, a sequential rule on the completions per tenth
 * (analyzer/samples/steady-state.js autoDurationReached: 10 s judged and room for 20 batches of the size the
 * autocorrelation
 * asks for at least, and the 99% interval within the share, so that the stopping's optimism still leaves ±share
 * holding at 95%; docs/statistics/validity.md).
 */
export const AUTO_DURATION = Object.freeze({ relHalfWidth: 0.02 })

/** The longest a run's steady window may last, in seconds: its duration, or its maximum when the duration is auto. */
export const longestSeconds = (/** @type {{ duration: number|'auto', maxDuration?: number }} */ c) =>
  (c.duration === 'auto' ? c.maxDuration ?? RUN_OPTION.maxDuration.default : c.duration)

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([kmg])i?b?\s*$/i
const SIZE_TEXT = 'a size like 256M or 1G, from 6M to the machine\'s memory'
const SWARM = Object.freeze(['swarm'])
const LOCAL = Object.freeze(['local'])
/** --affinity: up's one process pinned to cores 0..N-1 (the local default), or on every core as the OS schedules it. */
export const AFFINITIES = Object.freeze(['pin', 'none'])

/** A memory size like 512M or 1G, in bytes. */
function sizeFromText (text, o) {
  const m = SIZE.exec(text)
  if (!m) throw badOption(o, `"${text}" is not a size; allowed: ${SIZE_TEXT}`)
  return Math.floor(Number(m[1]) * 1024 ** ({ k: 1, m: 2, g: 3 }[m[2].toLowerCase()]))
}

/** A list of this machine's cores (--server-cpus 0-1), written back the kernel's way. */
function checkCpuList (text, o) {
  const cores = availableParallelism()
  const list = parseCpuList(text)
  if (!list || !list.length) throw badOption(o, `"${text}" is not a list of cores; allowed: numbers and ranges like 0-1 or 0,2`)
  const outside = list.filter(c => c >= cores)
  if (outside.length) throw badOption(o, `names core${outside.length === 1 ? '' : 's'} ${cpuListText(outside)}, but this machine has ${cores} (0-${cores - 1})`)
  return cpuListText(list)
}

/** Swarm constraint expressions as `docker service create --constraint` takes them: `<attribute> ==|!= <value>`. */
function checkConstraints (list, o) {
  for (const c of list) {
    if (!/^\s*node\.[\w.-]+\s*(==|!=)\s*\S+\s*$/.test(c)) {
      throw badOption(o, `"${c}" is not a Swarm constraint; allowed: node.<attribute> == or != <value>, ` +
        'e.g. node.labels.io.nodescale.node==nodescale-w1 or node.hostname!=vm')
    }
  }
  return Object.freeze(list.map(c => c.trim()))
}

/** A request path: from the root, no spaces (a query is fine), nothing JMeter would evaluate (lib/jmeter-text.js). */
function checkPath (text, o) {
  if (!/^\/[^\s#]*$/.test(text)) throw badOption(o, `"${text}" is not a path; allowed: a path from the root like /, /api/items or /prime?n=1009`)
  if (evaluatedByJmeter(text)) throw badOption(o, `"${text}" ${JMETER_REFUSAL}; write $ as %24 (the same request)`)
  return text
}

/** A label for the run: printed text, so one line of at most 100 characters and no control characters. */
function checkTag (text, o) {
  // eslint-disable-next-line no-control-regex
  if (text.length > 100 || /[\u0000-\u001f\u007f]/.test(text) || !text.trim()) {
    throw badOption(o, `${JSON.stringify(text.slice(0, 120))} is not a tag; allowed: 1 to 100 characters on one line, e.g. --tag "kernel 6.8, THP off"`)
  }
  return text.trim()
}

/** An image reference as docker takes it: [registry/]name[:tag][@digest]. */
function checkImageRef (text, o) {
  if (!/^[a-z0-9]+([._/:-][a-z0-9]+)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/i.test(text)) {
    throw badOption(o, `"${text}" is not an image reference; allowed: NAME[:TAG] or NAME@sha256:DIGEST, e.g. my-api:1.4`)
  }
  return text
}

/** How the images reach the nodes: HOST:PORT (a port is required: a local registry has no default), builtin or none. */
function checkRegistry (raw, o) {
  if (raw === 'builtin' || raw === 'none') return raw
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})$/i.test(raw) || Number(raw.split(':')[1]) > 65535) {
    throw badOption(o, `"${raw}" is not allowed; HOST:PORT (e.g. --registry 10.0.0.5:5000), builtin (the control plane's registry on the manager) or none`)
  }
  return raw
}

/**
 * Every flag of `executor run`, in --help order (which is also the order values are checked in).
 * @type {readonly Readonly<Option>[]}
 */
export const RUN_OPTIONS = Object.freeze([
  option({
    flag: 'strategy',
    side: 'shape',
    also: ['capacity'],
    short: 's',
    type: 'choice',
    choices: STRATEGIES,
    arg: 'S',
    help: `${STRATEGIES.join(' | ')} (required)`,
    experiment: 'strategies'
  }),
  option({
    flag: 'instances',
    side: 'shape',
    also: ['capacity'],
    short: 'n',
    type: 'whole',
    ...INSTANCES,
    arg: 'N',
    help: `${INSTANCES.min}..${INSTANCES.max} (required; local up: at most the core count, unless N x cpus-per-instance fits)`,
    experiment: 'instances'
  }),
  option({
    flag: 'benchmark',
    side: 'shape',
    also: ['capacity'],
    short: 'b',
    type: 'text',
    default: 'page',
    arg: 'NAME',
    help: 'baseline | page | cpu | net-out | net-in | disk | mem, or a custom app\'s name (default {default})',
    check: (v, o) => { if (!NAME.test(v)) throw badOption(o, `"${v}" is not a name (letters, digits, - and _)`); return v },
    experiment: 'benchmark'
  }),
  option({
    flag: 'param',
    side: 'shape',
    also: ['capacity'],
    short: 'p',
    key: 'params',
    type: 'map',
    arg: 'KEY=VALUE',
    help: 'a benchmark option, repeatable (e.g. --param n=104729 for cpu, --param kb=10 for net-out)',
    experiment: 'params'
  }),
  option({
    flag: 'app',
    side: 'shape',
    also: ['capacity'],
    type: 'text',
    arg: 'PATH',
    help: [
      'load a custom app module (a handler, an express Router or a benchmark object),',
      'or cmd:"program args" to serve a command-line program (stdin = body, stdout = answer)'
    ],
    experiment: 'app'
  }),
  option({
    flag: 'server',
    side: 'shape',
    type: 'text',
    arg: 'FILE',
    help: [
      'your own whole server, unchanged: its entry file, run with node from its folder (the',
      'nearest with a package.json); it listens on $PORT or on {port} given in --server-arg.',
      'With --image: the entry file inside the image (cm, pm2)'
    ],
    experiment: 'server'
  }),
  option({
    flag: 'server-arg',
    side: 'shape',
    key: 'serverArgs',
    type: 'list',
    arg: 'ARG',
    help: 'an argument of the --server, repeatable; {port} in it becomes the port to listen on',
    verbatim: true,
    experiment: 'server-args'
  }),
  option({
    flag: 'path',
    side: 'load',
    type: 'text',
    arg: 'P',
    help: 'what the load requests of a --server or --image (default /), with its query',
    check: checkPath,
    experiment: 'path'
  }),
  option({
    flag: 'method',
    side: 'load',
    type: 'choice',
    choices: LOAD_METHODS,
    arg: 'M',
    help: `the load's method for --path: ${LOAD_METHODS.join(' | ')} (default GET)`,
    experiment: 'method'
  }),
  option({
    flag: 'body',
    side: 'load',
    type: 'text',
    arg: 'FILE',
    help: 'a file the load sends as the body of each --method POST | PUT | PATCH request',
    experiment: 'body'
  }),
  option({
    flag: 'health',
    side: 'shape',
    type: 'text',
    arg: 'P',
    help: 'the readiness probe of a --server or --image: a path that answers GET with a 2xx (default --path)',
    check: checkPath,
    experiment: 'health'
  }),
  option({
    flag: 'concurrency',
    side: 'load',
    toDriver: true,
    short: 'c',
    type: 'whole',
    min: 1,
    max: 10000,
    default: 10,
    arg: 'C',
    help: 'closed model: C connections (default {default})',
    experiment: 'concurrency'
  }),
  option({
    flag: 'rate',
    side: 'load',
    toDriver: true,
    short: 'r',
    type: 'number',
    min: 0,
    above: true,
    max: 1000000,
    arg: 'R',
    help: 'open model: R requests/s, latency from the intended send time',
    experiment: 'rate'
  }),
  option({
    flag: 'connection',
    side: 'load',
    toDriver: true,
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: Object.freeze(['keep-alive', 'close']),
    default: 'keep-alive',
    arg: 'K',
    help: [
      'how the clients use their connections (default {default}):',
      'keep-alive  one connection per client, reused for every request',
      'close       a new connection for every request (Connection: close), as clients without keep-alive',
      '            open them: the server accepts one per request, a cluster primary hands each to a worker'
    ],
    experiment: 'connection'
  }),
  option({
    flag: 'duration',
    side: 'load',
    short: 'd',
    type: 'number',
    min: 0,
    above: true,
    max: 86400,
    default: 10,
    words: Object.freeze(['auto']),
    arg: 'S',
    help: [
      'steady-state seconds measured (default {default}); auto: until the mean throughput is known to',
      `±${AUTO_DURATION.relHalfWidth * 100}% at 95% (a sequential rule), between --min-duration and --max-duration`
    ],
    experiment: 'duration'
  }),
  option({
    flag: 'min-duration',
    side: 'load',
    type: 'number',
    min: 3,
    max: 86400,
    default: 10,
    arg: 'S',
    help: '--duration auto: measure at least S seconds (default {default})',
    experiment: 'min-duration'
  }),
  option({
    flag: 'max-duration',
    side: 'load',
    type: 'number',
    min: 3,
    max: 86400,
    default: 60,
    arg: 'S',
    help: '--duration auto: measure at most S seconds, reached or not (default {default})',
    experiment: 'max-duration'
  }),
  option({
    flag: 'warmup',
    side: 'load',
    toDriver: true,
    short: 'w',
    type: 'number',
    min: 0,
    max: 3600,
    default: 2,
    arg: 'S',
    help: 'warm-up seconds before it, not recorded (default {default})',
    experiment: 'warmup'
  }),
  option({
    flag: 'driver',
    side: 'load',
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: Object.freeze(['autocannon', 'jmeter']),
    default: 'autocannon',
    arg: 'D',
    help: 'autocannon | jmeter (default {default}); JMeter is installed on first use',
    experiment: 'driver'
  }),
  option({
    flag: 'samples',
    side: 'output',
    type: 'choice',
    choices: Object.freeze(Object.keys(SAMPLES_FILES)),
    default: 'jtl',
    arg: 'F',
    help: [
      'what the run keeps of every request (default {default}; gz in a sweep whose file names none):',
      'jtl   samples.jtl, JMeter\'s CSV JTL (~100 bytes a request)',
      'gz    samples.jtl.gz, the same rows gzipped as they are written (~10x smaller)',
      'none  no per-request file; latency.json (kept by every run) still gives every figure'
    ],
    experiment: 'samples'
  }),
  option({
    flag: 'load-procs',
    side: 'load',
    type: 'whole',
    min: 1,
    max: 64,
    default: 'auto',
    words: Object.freeze(['auto']),
    arg: 'P',
    help: [
      'drive the load from P generator processes on this machine, each pinned to a core apart',
      'from the server\'s, the load split between them; auto (default, local): as many as a 2.5 s probe',
      'before the run finds needed for none to pass 60% of its core (room to grow: the flag is at 90%), one while a single core',
      'or none is free of the server (none free: one, unpinned); run.json\'s load.procs says why'
    ],
    experiment: 'load-procs'
  }),
  option({
    flag: 'server-cpus',
    side: 'shape',
    type: 'text',
    arg: 'LIST',
    help: [
      'local: pin the whole server to these cores (e.g. 0-1 or 0,2): up\'s process, cm\'s primary and',
      'workers, PM2\'s daemon and instances, every hs replica; the load and HAProxy go on the rest'
    ],
    check: checkCpuList,
    backends: LOCAL,
    experiment: 'server-cpus'
  }),
  option({
    flag: 'load-cpus',
    side: 'shape',
    type: 'text',
    arg: 'LIST',
    help: 'local, with --server-cpus: the cores of the load generators (default: the cores the server is not given)',
    check: checkCpuList,
    backends: LOCAL,
    experiment: 'load-cpus'
  }),
  option({
    flag: 'lb-cpus',
    side: 'shape',
    type: 'text',
    arg: 'LIST',
    help: 'local, hs, with --server-cpus: the cores of HAProxy (default: the cores the server is not given)',
    check: checkCpuList,
    // only a replicated strategy runs behind HAProxy
    strategies: STRATEGIES.filter(s => strategyOf(s).replicated),
    backends: LOCAL,
    experiment: 'lb-cpus'
  }),
  option({
    flag: 'load-nodes',
    side: 'load',
    type: 'whole',
    min: 1,
    max: 64,
    arg: 'K',
    help: [
      'Swarm: drive the load from K generators, one per node labelled io.nodescale.role=load',
      '(never a node of the server), the load split between them; the manager only orchestrates'
    ],
    backends: SWARM,
    experiment: 'load-nodes'
  }),
  option({
    flag: 'load-placement',
    side: 'load',
    type: 'choice',
    choices: Object.freeze(['labelled', 'free']),
    default: 'labelled',
    arg: 'L',
    help: [
      'Swarm, --load-nodes: where the generators may go (default {default}):',
      'labelled  only nodes labelled io.nodescale.role=load',
      'free      those first, then any node that runs no server task'
    ],
    backends: SWARM,
    experiment: 'load-placement'
  }),
  option({
    flag: 'backend',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: Object.freeze(['auto', 'local', 'swarm']),
    default: 'auto',
    arg: 'B',
    help: 'auto | local | swarm (default {default})',
    experiment: 'backend'
  }),
  option({
    flag: 'cpus-per-instance',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'number',
    min: 0,
    above: true,
    max: () => availableParallelism(),
    arg: 'X',
    help: 'CPU quota per instance (e.g. 0.25) to emulate more cores than the machine has',
    experiment: 'cpus-per-instance'
  }),
  option({
    flag: 'affinity',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: AFFINITIES,
    arg: 'A',
    help: [
      'up only: pin | none, the cores its one process may run on (default: pin locally; none on Swarm)',
      'pin   pinned to cores 0..N-1 (CPU affinity): N vCPUs for one event loop (with --server-cpus,',
      '      the first N of those)',
      'none  no affinity: every core (with --server-cpus, every core of those), as the OS schedules',
      '      it (within --cpus-per-instance\'s quota);',
      '      all Swarm does (a container there has no cpuset)'
    ],
    // only the strategy whose one process is pinned has a choice; cluster workers, PM2 and replicas are never pinned
    strategies: STRATEGIES.filter(s => strategyOf(s).pinned),
    experiment: 'affinity'
  }),
  option({
    flag: 'memory-per-instance',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'whole',
    min: 6 * 1024 ** 2,
    max: () => totalmem(),
    arg: 'M',
    help: 'memory limit per instance on Swarm (e.g. 256M; cm/pm2/up: N x M for the one replica)',
    fromText: (text, o) => {
      const bytes = sizeFromText(text, o)
      if (bytes < o.min || bytes > totalmem()) throw badOption(o, `${text} is out of range; allowed: ${SIZE_TEXT}`)
      return bytes
    }
  }),
  option({
    flag: 'lb',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: Object.freeze(['auto', 'haproxy', 'ingress']),
    default: 'auto',
    arg: 'L',
    help: 'hs only: auto | haproxy | ingress (default {default})',
    // the load balancer stands in front of replicas: only a replicated strategy has one
    strategies: STRATEGIES.filter(s => strategyOf(s).replicated),
    experiment: 'lb'
  }),
  option({
    flag: 'port',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'whole',
    min: 0,
    max: 65535,
    default: 0,
    arg: 'P',
    help: 'port the load is sent to (default: a free one)'
  }),
  option({
    flag: 'ready-timeout',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'number',
    min: 0,
    above: true,
    max: 3600,
    default: 30,
    arg: 'S',
    help: 'how long the server may take to answer (default {default})',
    experiment: 'ready-timeout'
  }),
  option({
    flag: 'slo',
    side: 'output',
    type: 'object',
    default: DEFAULT_SLO,
    arg: 'SPEC',
    help: [
      'the objective the run is held to: errors=<percent>%, p50|p90|p95|p99=<ms>ms, comma-separated',
      '(default errors=0.1%; e.g. --slo p99=50ms,errors=0.1%)'
    ],
    fromText: (text, o) => { try { return parseSlo(text) } catch (err) { throw badOption(o, err.message) } },
    check: (value, o) => { try { return checkSlo(value) } catch (err) { throw badOption(o, err.message) } },
    experiment: 'slo'
  }),
  option({
    flag: 'nodes',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'whole',
    min: 1,
    max: 64,
    arg: 'K',
    help: [
      'Swarm: run the server on K worker nodes (default: every ready worker; the manager',
      'keeps the RC and the load balancer when workers exist)'
    ],
    backends: SWARM,
    experiment: 'nodes'
  }),
  option({
    flag: 'placement',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'choice',
    choices: Object.freeze(['spread', 'pack']),
    default: 'spread',
    arg: 'P',
    help: 'Swarm, hs: spread | pack (default {default}); pack fills a node up to its CPUs first',
    backends: SWARM
  }),
  option({
    flag: 'constraint',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    key: 'constraints',
    type: 'list',
    arg: 'EXPR',
    help: 'Swarm placement constraint, repeatable (e.g. node.labels.io.nodescale.node==nodescale-w1)',
    check: checkConstraints,
    backends: SWARM
  }),
  option({
    flag: 'registry',
    side: 'shape',
    also: ['capacity', 'calibrate'],
    type: 'text',
    arg: 'R',
    help: [
      'Swarm: how the images reach the worker nodes (default: loaded into the local swarm\'s',
      'workers through the API; the builtin registry for any other worker)',
      'HOST:PORT  push to your registry, deploy by digest (every engine must trust it)',
      'builtin    the control plane\'s registry on the manager (MANAGER:5000, credentials required)',
      'none       the nodes have the images already'
    ],
    check: checkRegistry,
    backends: SWARM
  }),
  option({
    flag: 'registry-tls',
    side: 'shape',
    key: 'registryTls',
    type: 'text',
    arg: 'CERT,KEY',
    help: [
      'Swarm: the builtin registry speaks HTTPS with this PEM certificate and key (every engine',
      'must trust the certificate); without it, plain HTTP and a warning (docs/SECURITY.md)'
    ],
    check: (raw, o) => {
      if (!/^[^,]+,[^,]+$/.test(raw)) {
        throw badOption(o, `"${raw}" is not allowed; give the certificate and key files separated by a comma, ` +
          'e.g. --registry-tls registry.crt,registry.key')
      }
      return raw
    },
    backends: SWARM
  }),
  option({
    flag: 'image',
    side: 'shape',
    type: 'text',
    arg: 'REF',
    help: [
      'Swarm: your own image as the server: any image for up and hs; for cm and pm2 one with',
      'Node 18.19 or later, its entry file from its command (node FILE ...) or --server'
    ],
    check: checkImageRef,
    backends: SWARM,
    experiment: 'image'
  }),
  option({
    flag: 'container-port',
    side: 'shape',
    key: 'containerPort',
    type: 'whole',
    min: 1,
    max: 65535,
    arg: 'P',
    help: 'the port --image listens on in its container (default: its one EXPOSEd port, else 8080)',
    backends: SWARM,
    experiment: 'container-port'
  }),
  option({
    flag: 'tag',
    side: 'output',
    also: ['capacity'],
    type: 'text',
    arg: 'TEXT',
    help: 'a label of your own, kept in run.json (config.tag) and printed beside the run\'s status',
    check: checkTag,
    experiment: 'tag'
  }),
  option({
    flag: 'out',
    side: 'output',
    also: ['capacity'],
    short: 'o',
    type: 'text',
    default: 'results',
    arg: 'DIR',
    help: 'results folder (default ./{default})'
  }),
  option({ flag: 'json', side: 'output', type: 'boolean', help: 'print run.json on stdout and nothing else there' }),
  option({ flag: 'quiet', side: 'output', short: 'q', type: 'boolean', help: 'no progress or log lines on stderr' }),
  option({ flag: 'help', side: 'output', short: 'h', type: 'boolean', help: 'this help' })
])

/**
 * A run option's row by its key (`instances`, `cpusPerInstance`, `params`).
 * @type {Readonly<Record<string, Readonly<Option>>>}
 */
export const RUN_OPTION = Object.freeze(Object.fromEntries(RUN_OPTIONS.map(o => [keyOf(o), o])))

/**
 * The rows an experiment file can set, by experiment key.
 * @type {Readonly<Record<string, Readonly<Option>>>}
 */
export const EXPERIMENT_OPTIONS = Object.freeze(Object.fromEntries(RUN_OPTIONS.filter(o => o.experiment).map(o => [o.experiment, o])))

/** The keys of the load rows the drivers take as they are (`toDriver`): a run passes them, an agent accepts them. */
export const DRIVER_KEYS = Object.freeze(RUN_OPTIONS.filter(o => o.toDriver).map(keyOf))

/**
 * A run's values of the DRIVER_KEYS, for its load's options (undefined ones too: the drivers read an absent value as
 * not given).
 * @param {Record<string, any>} config
 */
export const driverValuesOf = (config) => Object.fromEntries(DRIVER_KEYS.map(k => [k, config[k]]))

/** The Options lines of `executor run --help`. */
export const runOptionsHelp = () => optionsHelp(RUN_OPTIONS)

/**
 * Checks a run's values (typed, by key, as the command line or an experiment file gives them) and fills in the
 * defaults: the one validation every run goes through. No side effects; checks that need the machine (a custom app's
 * loading, HAProxy, Docker) and the backend's own rules come later, still before anything starts.
 * @param {Record<string, any>} values
 * @param {{ cwd?: string }} [ctx]
 * @returns {Readonly<RunConfig>} the run config (run.json's `config`)
 * @throws {NsError} NS_ERR_BAD_FLAG (or NS_ERR_BAD_APP for a missing --app) with `details.flag` and `details.key`
 */
export function validateRunConfig (values, { cwd = process.cwd() } = {}) {
  const o = RUN_OPTION
  if (values.strategy === undefined) throw badOption(o.strategy, `is required; one of: ${STRATEGIES.join(', ')}`)
  const strategy = checkOption(o.strategy, values.strategy)
  if (values.instances === undefined) throw badOption(o.instances, `is required: how many ${strategyOf(strategy).means} (a whole number >= 1)`)
  if (values.concurrency !== undefined && values.rate !== undefined) {
    throw badOption(o.rate, 'cannot be combined with --concurrency: choose the closed model (--concurrency C) or the open model (--rate R)')
  }
  // the open model has no concurrency, and a custom app names itself unless --benchmark says otherwise
  const defaults = {
    ...Object.fromEntries(RUN_OPTIONS.filter(x => x.default !== undefined).map(x => [keyOf(x), x.default])),
    ...(values.rate !== undefined ? { concurrency: undefined } : {}),
    ...(values.app !== undefined || values.server !== undefined || values.image !== undefined ? { benchmark: undefined } : {}),
    params: {},
    constraints: []
  }
  /** @type {RunConfig} */
  const config = /** @type {any} */ ({})
  for (const row of RUN_OPTIONS) {
    const key = keyOf(row)
    if (key === 'help') continue
    const value = values[key]
    if (value === undefined) {
      config[key] = row.type === 'boolean' ? false : defaults[key]
      continue
    }
    if (row.strategies && !row.strategies.includes(strategy)) {
      throw badOption(row, `only applies to --strategy ${row.strategies.join(', ')} (got --strategy ${strategy})`)
    }
    config[key] = checkOption(row, value)
  }
  checkBackendOptions(values, config.backend)
  checkAffinity(config, config.backend)
  checkPartition(config)
  checkAutoDuration(values, config)
  checkGenerators(values, config)
  checkServer(values, config, cwd)
  checkRegistryTls(config, cwd)
  if (config.app !== undefined) {
    config.app = config.app.startsWith('cmd:') ? config.app : resolve(cwd, config.app)
    if (!config.app.startsWith('cmd:') && !existsSync(config.app)) throw badApp('', `no file at ${config.app}`)
  }
  config.out = resolve(cwd, config.out)
  // JMeter's plan names files in the run's folder (the body it sends)
  if (config.driver === 'jmeter' && evaluatedByJmeter(config.out)) {
    throw badOption(o.out, `${config.out} ${JMETER_REFUSAL}, and with --driver jmeter the run's folder is named in its plan; choose another folder`)
  }
  if (existsSync(config.out) && !statSync(config.out).isDirectory()) throw badOption(o.out, `${config.out} exists and is not a folder`)
  config.params = Object.freeze({ ...config.params })
  return Object.freeze(config)
}

/** The options that describe a whole server under test and its request (--server, --image and what goes with them). */
export const WHOLE_SERVER_KEYS = Object.freeze(['server', 'serverArgs', 'path', 'method', 'body', 'health', 'image', 'containerPort'])

/**
 * A whole server (--server, or --image on Swarm) instead of a benchmark app: not with --app or --param; the request and
 * readiness options only with one; the files it names exist (an entry file inside --image is the image's business).
 */
function checkServer (values, config, cwd) {
  const o = RUN_OPTION
  const whole = config.server !== undefined || config.image !== undefined
  if (config.app !== undefined && whole) {
    throw badOption(config.server !== undefined ? o.server : o.image,
      'cannot be combined with --app: --app mounts a handler in nodescale\'s server, --server and --image measure your own whole server; give one')
  }
  if (whole && Object.keys(config.params).length) {
    throw badOption(o.params, 'is for benchmark apps; your own server takes its options from --server-arg ARG or its environment ' +
      `(got ${Object.keys(config.params).join(', ')})`)
  }
  for (const row of [o.serverArgs, o.path, o.method, o.body, o.health]) {
    const given = Array.isArray(config[keyOf(row)]) ? config[keyOf(row)].length > 0 : config[keyOf(row)] !== undefined
    if (given && !whole) throw badOption(row, 'only applies to your own server: give --server FILE (or --image REF on Swarm)')
  }
  if (config.containerPort !== undefined && config.image === undefined) {
    throw badOption(o.containerPort, 'only applies with --image REF: the port your image listens on')
  }
  if (config.server !== undefined && config.image === undefined) {
    config.server = resolve(cwd, config.server)
    if (!existsSync(config.server) || !statSync(config.server).isFile()) {
      throw badOption(o.server, `no file at ${config.server}; give your server's entry file (the one you run with node)`)
    }
  } else if (config.server !== undefined && !config.server.startsWith('/')) {
    throw badOption(o.server, `"${config.server}" is not a path inside the image; with --image give the entry file's absolute path in it, like /app/server.js`)
  }
  if (config.body !== undefined) {
    config.body = resolve(cwd, config.body)
    if (!existsSync(config.body) || !statSync(config.body).isFile()) throw badOption(o.body, `no file at ${config.body}`)
    if (!['POST', 'PUT', 'PATCH'].includes(config.method ?? 'GET')) {
      throw badOption(o.body, `is sent with --method POST, PUT or PATCH (got ${config.method ?? 'GET (the default)'})`)
    }
  }
  if (whole) config.serverArgs = Object.freeze([...(config.serverArgs ?? [])])
}

/**
 * --registry-tls: PEM files that exist, a certificate and a private key, and only for the builtin registry (your own
 * --registry has its own TLS).
 */
export function checkRegistryTls (config, cwd) {
  const o = RUN_OPTION.registryTls
  if (config.registryTls === undefined) return
  if (config.registry !== undefined && config.registry !== 'builtin') {
    throw badOption(o, `is for nodescale's builtin registry; --registry ${config.registry} ` +
      `${config.registry === 'none' ? 'moves no images' : 'is a registry of yours, with its own TLS'}`)
  }
  const [cert, key] = String(config.registryTls).split(',').map(f => resolve(cwd, f.trim()))
  /** @type {[string, string, RegExp, string][]} */
  const pem = [
    [cert, 'certificate', /-----BEGIN CERTIFICATE-----/, 'BEGIN CERTIFICATE'],
    [key, 'key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'BEGIN ... PRIVATE KEY']
  ]
  for (const [file, what, mark, line] of pem) {
    let text
    try { text = readFileSync(file, 'utf8') } catch (err) { throw badOption(o, `cannot read the ${what} ${file} (${err.code})`) }
    if (!mark.test(text)) throw badOption(o, `${file} is not a PEM ${what} (no "-----${line}-----" line)`)
  }
  config.registryTls = Object.freeze({ cert, key })
}

/**
 * --affinity pin needs a backend that pins: on Swarm a container has no cpuset (up gets a CPU limit, if any), so its
 * one process runs as the OS schedules it whatever was asked; refused there rather than recorded and not done.
 * @param {Record<string, any>} config
 * @param {string} backend the backend that runs it (auto: not known yet; the chosen backend checks again)
 */
export function checkAffinity (config, backend) {
  if (config.affinity === 'pin' && backend === 'swarm') {
    throw badOption(RUN_OPTION.affinity, 'pin is not possible on Swarm: a container there has no cpuset, ' +
      'so the one process runs on every core of its node as the OS schedules it (with --cpus-per-instance, within its quota); ' +
      'give --affinity none or leave it out, or run pinned with --backend local')
  }
}

/**
 * The cores partitioned (--server-cpus, --load-cpus, --lb-cpus): the load's and HAProxy's only beside the server's,
 * neither on a core of the server's, and the server leaves a core for them; up pinned to N of them (with --affinity
 * none, on all of them as the OS schedules it).
 * @param {Record<string, any>} config
 */
export function checkPartition (config) {
  const o = RUN_OPTION
  if (config.serverCpus === undefined) {
    for (const row of [o.loadCpus, o.lbCpus]) {
      if (config[keyOf(row)] !== undefined) throw badOption(row, 'only applies with --server-cpus LIST: the cores the server is given, which these keep off')
    }
    return
  }
  const server = parseCpuList(config.serverCpus) ?? []
  const rest = Array.from({ length: availableParallelism() }, (_, c) => c).filter(c => !server.includes(c))
  if (!rest.length) {
    throw badOption(o.serverCpus, `${config.serverCpus} gives the server every core of this machine: leave at least one for the load generators`)
  }
  for (const row of [o.loadCpus, o.lbCpus]) {
    const list = config[keyOf(row)] === undefined ? [] : parseCpuList(config[keyOf(row)]) ?? []
    const both = list.filter(c => server.includes(c))
    if (both.length) {
      throw badOption(row, `${config[keyOf(row)]} shares core${both.length === 1 ? '' : 's'} ${cpuListText(both)} with --server-cpus ${config.serverCpus}; ` +
        `give cores the server is not given (${cpuListText(rest)})`)
    }
  }
  if (strategyOf(config.strategy).pinned && config.instances > server.length && config.cpusPerInstance === undefined) {
    throw badOption(o.instances, `${config.instances} vCPUs for --strategy ${config.strategy} (one core each), ` +
      `but --server-cpus ${config.serverCpus} gives the server ${server.length}; allowed: 1..${server.length}`)
  }
}

/**
 * --duration auto's bounds are only for it, the minimum not above the maximum, and only the autocannon driver stops
 * early.
 */
function checkAutoDuration (values, config) {
  const o = RUN_OPTION
  if (config.duration !== 'auto') {
    for (const row of [o.minDuration, o.maxDuration]) {
      if (values[keyOf(row)] !== undefined) throw badOption(row, `only applies to --duration auto (got --duration ${config.duration})`)
    }
    return
  }
  if (config.minDuration > config.maxDuration) {
    throw badOption(o.minDuration, `${config.minDuration} is above --max-duration ${config.maxDuration}; give a minimum no longer than the maximum`)
  }
  if (config.driver !== 'autocannon') {
    throw badOption(o.duration, 'auto needs --driver autocannon: JMeter runs for a fixed time; give --duration S seconds with --driver jmeter')
  }
}

/**
 * Several generators: from processes or from nodes, not both; --load-placement only with --load-nodes; a fixed
 * duration (each generator would end --duration auto on its own share); a connection for each.
 */
function checkGenerators (values, config) {
  const o = RUN_OPTION
  // --load-procs auto (the default) settles on a count once the server runs: one here, as far as these checks go
  const procs = typeof config.loadProcs === 'number' ? config.loadProcs : undefined
  if (procs !== undefined && config.loadNodes !== undefined) {
    throw badOption(o.loadNodes, 'cannot be combined with --load-procs: the load comes from processes of this machine or from swarm nodes')
  }
  if (values.loadPlacement !== undefined && config.loadNodes === undefined) throw badOption(o.loadPlacement, 'only applies with --load-nodes K')
  const count = config.loadNodes ?? procs ?? 1
  const row = config.loadNodes !== undefined ? o.loadNodes : o.loadProcs
  if (count > 1 && config.duration === 'auto') {
    throw badOption(o.duration, `auto cannot end the load of ${count} generators together; give --duration S seconds with --${row.flag}`)
  }
  if (config.concurrency !== undefined && config.concurrency < count) {
    throw badOption(row, `${count} generators cannot share --concurrency ${config.concurrency}: each needs a connection at least; ` +
      `raise --concurrency to ${count} or more`)
  }
}

/**
 * The options that only some backends take (--nodes, --registry, ... only Swarm): refused for another backend, named
 * as given (`--backend local`) or as chosen (`--backend auto` found no Docker daemon and chose local).
 * @param {Record<string, any>} values a run's values as given, or its config (where a default counts as not given)
 * @param {string} backend the backend that runs it (auto: not known yet, nothing is refused)
 * @param {{ why?: string }} [opts] why `auto` chose this backend, for the message
 */
export function checkBackendOptions (values, backend, { why } = {}) {
  if (backend === 'auto') return
  for (const row of RUN_OPTIONS) {
    const value = values[keyOf(row)]
    const given = Array.isArray(value) ? value.length > 0 : value !== undefined && value !== row.default
    if (!row.backends || row.backends.includes(backend) || !given) continue
    const runs = row.backends.map(b => (b === 'swarm' ? 'Swarm runs (--backend swarm or auto)' : `--backend ${b}`)).join(' or ')
    throw badOption(row, `only applies to ${runs}, not to the ${backend} backend${why ? ` (--backend auto chose it: ${why})` : ''}`)
  }
}
