// The `executor` command line: parses arguments and calls the library; nothing else lives here.
import { parseFlags, RUN_OPTIONS, validateRunConfig } from './config.js'
import { createProgress } from './progress.js'
import { formatRunSummary } from './summary-text.js'
import { EXIT, NsError, exitCodeOf, formatError } from './errors.js'
import { DEFAULTS } from './defaults.js'

export const RUN_HELP = `Usage: executor run --strategy <up|cm|pm2|hs> --instances N [options]

Deploys a Node.js server in a scaling strategy, drives HTTP load at it, samples CPU
per core, and writes <out>/<run-id>/{run.json,samples.jtl,timeline.json}.

Strategies (what --instances N means):
  up    one Node process given N vCPUs (local: CPU affinity to N cores)
  cm    Node's cluster module with N workers
  pm2   PM2 cluster mode with N instances
  hs    N single-process replicas behind a load balancer (local: HAProxy)

Options:
  -s, --strategy S            up | cm | pm2 | hs (required)
  -n, --instances N           1..64 (required; local up: at most the core count, unless N x cpus-per-instance fits)
  -b, --benchmark NAME        baseline | page | cpu | net-out | net-in | disk | mem, or a custom app's name (default ${DEFAULTS.benchmark})
  -p, --param KEY=VALUE       a benchmark option, repeatable (e.g. --param n=104729 for cpu, --param kb=10 for net-out)
      --app PATH              load a custom app module (a handler, an express Router or a benchmark object),
                              or cmd:"program args" to serve a command-line program (stdin = body, stdout = answer)
  -c, --concurrency C         closed model: C connections (default ${DEFAULTS.concurrency})
  -r, --rate R                open model: R requests/s, latency from the intended send time
  -d, --duration S            steady-state seconds measured (default ${DEFAULTS.duration})
  -w, --warmup S              warm-up seconds before it, not recorded (default ${DEFAULTS.warmup})
      --driver D              autocannon | jmeter (default ${DEFAULTS.driver}); JMeter is installed on first use
      --backend B             auto | local | swarm (default ${DEFAULTS.backend})
      --cpus-per-instance X   CPU quota per instance (e.g. 0.25) to emulate more cores than the machine has
      --memory-per-instance M memory limit per instance on Swarm (e.g. 256M; cm/pm2/up: N x M for the one replica)
      --lb L                  hs only: auto | haproxy | ingress (default ${DEFAULTS.lb})
      --port P                port the load is sent to (default: a free one)
      --ready-timeout S       how long the server may take to answer (default ${DEFAULTS.readyTimeout})
      --nodes K               Swarm: run the server on K worker nodes (default: every ready worker; the manager
                              keeps the RC and the load balancer when workers exist)
      --placement P           Swarm, hs: spread | pack (default ${DEFAULTS.placement}); pack fills a node up to its CPUs first
      --constraint EXPR       Swarm placement constraint, repeatable (e.g. node.labels.io.nodescale.node==nodescale-w1)
      --registry R            Swarm: how the images reach the worker nodes (default: loaded into the local cluster's
                              workers through the API; the builtin registry for any other worker)
                              HOST:PORT  push to your registry, deploy by that reference (every engine must trust it)
                              builtin    the control plane's registry on the manager (MANAGER:5000, plain HTTP)
                              none       the nodes have the images already
  -o, --out DIR               results folder (default ./${DEFAULTS.out})
      --json                  print run.json on stdout and nothing else there
  -q, --quiet                 no progress or log lines on stderr
  -h, --help                  this help

Examples:
  executor run --strategy cm --instances 2 --benchmark page --duration 10
  executor run --strategy up --instances 2 --benchmark cpu --concurrency 4 --json
  executor run --strategy hs --instances 2 --cpus-per-instance 0.25 --driver jmeter
  executor run --strategy cm --instances 2 --app ./my-app.js --benchmark my-app

Exit codes: 0 done (also degraded: a Swarm node was lost, run.json says what) · 1 the run failed or was interrupted · 2 bad input · 3 a needed part is missing`

export const MAIN_HELP = `Usage: executor <command> [options]

Commands:
  run       one measured run of a server in a strategy (executor run --help)
  image     build the Swarm images a run needs (executor image build --help)
  up        start the Swarm control plane: the RC on every node (executor up --help)
  down      remove the control plane and every stack nodescale left behind
  cluster   a local multi-node swarm: cluster up --nodes K | down | status (executor cluster --help)
  sweep     run an experiment file's grid, resumable (executor sweep --help)
  calibrate find the relaxed and exhausted run-levels (executor calibrate --help)

nodescale: how does a Node.js server scale when you add cores, processes or containers?`

/**
 * Parses `executor run` arguments into a validated config (throws NsError on bad input).
 * @param {string[]} argv the arguments after `run`
 */
export function parseArguments (argv) {
  const { values, positionals } = parseFlags(argv, RUN_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length) throw new NsError('NS_ERR_BAD_FLAG', `unexpected argument "${positionals[0]}" (flags start with --; see executor run --help)`)
  return { help: false, config: validateRunConfig(values) }
}

/**
 * Commands other than run, each a module exporting `command(argv, io)` → exit code, loaded only when used.
 * @type {Record<string, () => Promise<{ command: (argv: string[], io: { stdout: any, stderr: any, signal?: AbortSignal }) => Promise<number> }>>}
 */
export const COMMANDS = {
  image: () => import('./cli-swarm.js').then(m => ({ command: m.imageCommand })),
  up: () => import('./cli-swarm.js').then(m => ({ command: m.upCommand })),
  down: () => import('./cli-swarm.js').then(m => ({ command: m.downCommand })),
  cluster: () => import('./cli-cluster.js').then(m => ({ command: m.clusterCommand })),
  sweep: () => import('./cli-sweep.js').then(m => ({ command: m.sweepCommand })),
  calibrate: () => import('./cli-calibrate.js').then(m => ({ command: m.calibrateCommand }))
}

/**
 * Runs the CLI. Returns the exit code.
 * @param {string[]} argv process.argv.slice(2)
 * @param {{ stdout?: NodeJS.WritableStream & { isTTY?: boolean }, stderr?: NodeJS.WritableStream & { isTTY?: boolean }, signal?: AbortSignal }} [io]
 */
export async function main (argv, { stdout = process.stdout, stderr = process.stderr, signal } = {}) {
  const [command, ...rest] = argv
  try {
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      stdout.write(MAIN_HELP + '\n')
      return command ? EXIT.OK : EXIT.BAD_INPUT
    }
    if (COMMANDS[command]) return await (await COMMANDS[command]()).command(rest, { stdout, stderr, signal })
    if (command !== 'run') throw new NsError('NS_ERR_BAD_FLAG', `unknown command "${command}"; commands: run, ${Object.keys(COMMANDS).join(', ')}`)
    const parsed = parseArguments(rest)
    if (parsed.help) { stdout.write(RUN_HELP + '\n'); return EXIT.OK }
    const { config } = parsed
    const log = config.quiet ? () => {} : line => stderr.write(`${line}\n`)
    const progress = createProgress({ enabled: !config.json && !config.quiet && Boolean(stderr.isTTY), stream: /** @type {any} */ (stderr) })
    // loaded here so that --help and flag errors answer without loading the whole product
    const { run, prepareRun } = await import('./run.js')
    const prepared = await prepareRun(config, { log })
    const result = await run(config, { log, signal, prepared, onProgress: p => progress.update(p) })
    progress.done()
    if (config.json) stdout.write(JSON.stringify(result, null, 2) + '\n')
    else stdout.write(formatRunSummary(result) + '\n')
    // degraded (a node lost mid-run) is a finished run whose run.json says what was lost: exit 0, as the load ran its course
    return result.status === 'done' || result.status === 'degraded' ? EXIT.OK : EXIT.FAILED
  } catch (err) {
    stderr.write(formatError(err) + '\n')
    return exitCodeOf(err)
  }
}
