#!/usr/bin/env node
// `npm run docs:examples`: runs the README's main job exactly as the README writes it (its `npx executor run ...` line,
// through a shell in the repository, as a user types it) and writes what it printed on stdout (the run's summary; the
// log lines on stderr scroll past) into README.md between `<!-- example: main-job -->` and `<!-- end example -->`, with
// the date and the machine it ran on. So the README's example output is always something the tool printed. A run that
// exits non-zero changes nothing (exit 1); a run that says NOT VALID is written as it is, with a warning here: the
// README's text says how to read it.
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
export const README = join(ROOT, 'README.md')
export const START = '<!-- example: main-job -->'
export const END = '<!-- end example -->'

/**
 * The main job's command as the README writes it: the `npx executor run` line of its first shell block (the three
 * commands), its comment left out.
 * @param {string} readme
 */
export function mainJobCommand (readme) {
  const block = readme.match(/^```sh\n([\s\S]*?)^```/m)
  if (!block) throw new Error('README.md: no ```sh block with the three commands')
  const line = block[1].split('\n').find(l => /^npx (executor|nodescale) run /.test(l))
  if (!line) throw new Error('README.md: the first ```sh block has no `npx executor run` line (the main job)')
  return line.replace(/\s+#.*$/, '').trim()
}

/**
 * The README with the example between the markers replaced.
 * @param {string} readme
 * @param {{ command: string, output: string, when: Date, machine: string }} example
 */
export function withExample (readme, { command, output, when, machine }) {
  const from = readme.indexOf(START)
  const to = readme.indexOf(END)
  if (from === -1 || to < from) throw new Error(`README.md: no ${START} ... ${END} markers`)
  const day = when.toISOString().slice(0, 16).replace('T', ' ')
  const body = [
    START,
    `Printed on ${day} UTC on ${machine}, written here by \`npm run docs:examples\` (stdout only):`,
    '',
    '```console',
    `$ ${command}`,
    output.trimEnd(),
    '```',
    ''
  ].join('\n')
  return readme.slice(0, from) + body + readme.slice(to)
}

/** This machine in a few words: cores, CPU model, how busy it was. */
export function machineWords () {
  const model = cpus()[0]?.model?.replace(/\s+/g, ' ').trim() ?? 'an unknown CPU'
  return `a ${availableParallelism()}-core machine (${model}, load average ${loadavg()[0].toFixed(1)} at the start)`
}

/**
 * Runs a command line through a shell in the repository; resolves with its stdout and exit code (stderr passes through
 * to this terminal, as the user would see it).
 * @param {string} command
 */
export function runAsUser (command) {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; process.stdout.write(d) })
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, code }))
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8')
  const command = mainJobCommand(readme)
  const machine = machineWords()
  const when = new Date()
  process.stderr.write(`docs:examples: ${command}\n`)
  const { stdout, code } = await runAsUser(command)
  if (code !== 0 || !stdout.trim()) {
    process.stderr.write(`docs:examples: the main job exited ${code}${stdout.trim() ? '' : ' and printed nothing'}: README.md left as it was\n`)
    process.exitCode = 1
  } else {
    writeFileSync(README, withExample(readFileSync(README, 'utf8'), { command, output: stdout, when, machine }))
    process.stderr.write('docs:examples: README.md\'s main-job example written\n')
    if (/NOT VALID/.test(stdout)) process.stderr.write('docs:examples: warning: the run says NOT VALID; the README shows it as printed\n')
  }
}
