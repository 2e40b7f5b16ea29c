// `executor run`: parses the flags by the run's option table, calls run(), prints the run's summary or run.json.
import { EXIT } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { parseCommandLine } from '../lib/options.js'
import { RUN_OPTIONS, runOptionsHelp, validateRunConfig } from '../lib/run-options.js'
import { STRATEGY_TABLE } from '../lib/strategies.js'
import { createProgress } from './progress.js'
import { formatRunSummary } from './run-text.js'

export const RUN_HELP = `Usage: executor run --strategy <up|cm|pm2|hs> --instances N [options]

Deploys a Node.js server in a scaling strategy, drives HTTP load at it, samples CPU
per core, and writes <out>/<run-id>/{run.json,samples.jtl,latency.json,timeline.json}
(samples.jtl.gz with --samples gz, no samples file with --samples none).

Strategies (what --instances N means):
${Object.values(STRATEGY_TABLE).map(s => `  ${s.name.padEnd(5)} ${s.summary}`).join('\n')}

Options:
${runOptionsHelp()}

Examples:
  executor run --strategy cm --instances 2 --benchmark page --duration 10
  executor run --strategy up --instances 2 --benchmark cpu --concurrency 4 --json
  executor run --strategy hs --instances 2 --cpus-per-instance 0.25 --driver jmeter
  executor run --strategy cm --instances 2 --app ./my-app.js --benchmark my-app

Ctrl-C (or SIGTERM) stops the load, removes what the run started and leaves its folder readable; a second one exits at once.
Exit codes: 0 done (also degraded: a Swarm node was lost, run.json says what) · 1 the run failed or was interrupted · 2 bad input · 3 a needed part is missing`

/**
 * Parses `executor run` arguments into a validated config (throws NsError on bad input).
 * @param {string[]} argv the arguments after `run`
 * @param {{ cwd?: string }} [ctx]
 * @returns {{ help: boolean, config?: Readonly<import('../lib/run-options.js').RunConfig> }}
 */
export function parseArguments (argv, ctx) {
  const { values, positionals } = parseCommandLine(argv, RUN_OPTIONS)
  if (values.help) return { help: true }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor run', flags: true })
  return { help: false, config: validateRunConfig(values, ctx) }
}

/**
 * `executor run ...` → exit code.
 * @param {string[]} argv
 * @param {{ stdout: any, stderr: any, signal?: AbortSignal }} io
 */
export async function runCommand (argv, { stdout, stderr, signal }) {
  const parsed = parseArguments(argv)
  if (parsed.help) { stdout.write(RUN_HELP + '\n'); return EXIT.OK }
  const { config } = parsed
  const log = config.quiet ? () => {} : line => stderr.write(`${line}\n`)
  const progress = createProgress({ enabled: !config.json && !config.quiet && Boolean(stderr.isTTY), stream: stderr })
  // loaded here so that --help and flag errors answer without loading the whole product
  const { run, prepareRun } = await import('./run.js')
  const prepared = await prepareRun(config, { log, signal })
  const result = await run(config, { log, signal, prepared, onProgress: p => progress.update(p) })
  progress.done()
  stdout.write((config.json ? JSON.stringify(result, null, 2) : formatRunSummary(result)) + '\n')
  // degraded (a node lost mid-run) is a finished run whose run.json says what was lost: exit 0, as the load ran its
  // course
  return result.status === 'done' || result.status === 'degraded' ? EXIT.OK : EXIT.FAILED
}
