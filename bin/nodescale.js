#!/usr/bin/env node
// `nodescale <command>`: the executor's and the analyzer's commands under one name. Each is handed, arguments as they
// are, to the same function as `executor <command>` or `analyzer <command>` (bin/dispatch.js): same options, output,
// signals and exit codes.
import { COMMANDS as EXECUTOR_COMMANDS, MAIN_HELP as EXECUTOR_HELP } from '../executor/cli.js'
import { MAIN_HELP as ANALYZER_HELP } from '../analyzer/cli-help.js'
import { readFileSync } from 'node:fs'
import { EXIT, formatError } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { runAnalyzer, runExecutor } from './dispatch.js'

/**
 * The command lines of a program's help (between "Commands:" and the next blank line), each pointing at `nodescale`.
 * @param {string} help
 */
function commandLines (help) {
  const lines = help.split('\n')
  const from = lines.indexOf('Commands:') + 1
  const to = lines.indexOf('', from)
  return lines.slice(from, to === -1 ? undefined : to).map(l => l.replace(/\((executor|analyzer) /g, '(nodescale '))
}

/** The names of the commands a program's help lists, in its order. */
const namesOf = (help) => commandLines(help).map(l => l.trim().split(/\s+/)[0])

export const NODESCALE_HELP = `Usage: nodescale <command> [options]     (nodescale <command> --help: its options)

Measure (the executor's commands; also as \`executor <command>\`):
${commandLines(EXECUTOR_HELP).join('\n')}

Analyse (the analyzer's commands; also as \`analyzer <command>\`):
${commandLines(ANALYZER_HELP).join('\n')}

  --version prints nodescale's version

Exit codes: 0 done · 1 failed · 2 bad input (the message names the flag or file) · 3 a part is missing`

const [command, ...rest] = process.argv.slice(2)
if (!command || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(NODESCALE_HELP + '\n')
  process.exitCode = command ? EXIT.OK : EXIT.BAD_INPUT
} else if (command === '--version' || command === '-v') {
  process.stdout.write(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version + '\n')
} else if (Object.hasOwn(EXECUTOR_COMMANDS, command)) {
  await runExecutor([command, ...rest])
} else if (namesOf(ANALYZER_HELP).includes(command)) {
  await runAnalyzer([command, ...rest])
} else {
  const all = [...Object.keys(EXECUTOR_COMMANDS), ...namesOf(ANALYZER_HELP)]
  process.stderr.write(formatError(fail('UNKNOWN_COMMAND', { command, commands: all, help: 'nodescale --help' })) + '\n')
  process.exitCode = EXIT.BAD_INPUT
}
