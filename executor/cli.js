// The `executor` command line: hands each command to its own CLI module (loaded only when used) and turns a thrown
// error into its message and exit code.
import { EXIT, exitCodeOf, formatError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'

export const MAIN_HELP = `Usage: executor <command> [options]

Commands:
  run       one measured run of a server in a strategy (executor run --help)
  image     build the Swarm images a run needs (executor image build --help)
  up        start the Swarm control plane: the RC on every node (executor up --help)
  down      remove the control plane and every stack nodescale left behind
  cluster   a local multi-node swarm: cluster up --nodes K | down | status (executor cluster --help)
  sweep     run an experiment file's grid, resumable (executor sweep --help)
  calibrate find the relaxed and exhausted run-levels (executor calibrate --help)
  capacity  the rate a shape serves within an objective half the time, with its interval (executor capacity --help)

nodescale: how does a Node.js server scale when you add cores, processes or containers?`

/**
 * Each command: a module exporting `command(argv, io)` → exit code.
 * @type {Record<string, () => Promise<(argv: string[], io: { stdout: any, stderr: any, signal?: AbortSignal }) =>
 *   Promise<number>>>}
 */
export const COMMANDS = {
  run: () => import('./cli-run.js').then(m => m.runCommand),
  image: () => import('./cli-swarm.js').then(m => m.imageCommand),
  up: () => import('./cli-swarm.js').then(m => m.upCommand),
  down: () => import('./cli-swarm.js').then(m => m.downCommand),
  cluster: () => import('./cli-local-swarm.js').then(m => m.clusterCommand),
  sweep: () => import('./sweep/cli-sweep.js').then(m => m.sweepCommand),
  calibrate: () => import('./calibrate/cli-calibrate.js').then(m => m.calibrateCommand),
  capacity: () => import('./capacity/cli-capacity.js').then(m => m.capacityCommand)
}

/**
 * Runs the CLI. Returns the exit code.
 * @param {string[]} argv process.argv.slice(2)
 * @param {{ stdout?: NodeJS.WritableStream & { isTTY?: boolean }, stderr?: NodeJS.WritableStream & { isTTY?: boolean },
 *   signal?: AbortSignal }} [io]
 */
export async function main (argv, { stdout = process.stdout, stderr = process.stderr, signal } = {}) {
  const [command, ...rest] = argv
  try {
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      stdout.write(MAIN_HELP + '\n')
      return command ? EXIT.OK : EXIT.BAD_INPUT
    }
    if (!COMMANDS[command]) throw fail('UNKNOWN_COMMAND', { command, commands: Object.keys(COMMANDS) })
    return await (await COMMANDS[command]())(rest, { stdout, stderr, signal })
  } catch (err) {
    stderr.write(formatError(err) + '\n')
    // a run stopped by Ctrl-C fails (1) whatever error the stop caused on the way
    return signal?.aborted ? EXIT.FAILED : exitCodeOf(err)
  }
}
