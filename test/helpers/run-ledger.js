// Where the suite's time goes: every executor command a test spawns (test/helpers/cli.js runCli) adds a line to the
// ledger scripts/test.js names in NODESCALE_TEST_LEDGER: the command, its wall time, and the runs it left under its
// --out (each run.json's own start and end, and the load it was configured for: warm-up plus a numeric duration).
// Runs a test makes through the library, or whose folder it removed before the command ended, are not seen: the
// figures are a floor.
import { appendFileSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { findRunFiles } from '../../lib/run-files.js'

/** The run.json files already counted in this test process (several commands may share one --out). */
const seen = new Set()

/**
 * The folders an executor command writes runs to: its --out (or -o), or for calibrate, whose --out is a file, its
 * probes' folder beside it (`<file without .json>-probes`) or --runs.
 * @param {string[]} args
 */
function foldersOf (args) {
  const value = (...flags) => {
    const at = args.findIndex(a => flags.includes(a))
    return at >= 0 ? args[at + 1] ?? null : null
  }
  const out = value('--out', '-o')
  const runs = value('--runs')
  if (runs) return [runs]
  if (out?.endsWith('.json')) return [out.replace(/\.json$/, '-probes')]
  return out ? [out] : []
}

/**
 * Adds an executor command to the ledger, when the suite keeps one.
 * @param {string[]} args the command's arguments @param {number} wallMs @param {string} root the repository
 */
export async function noteCommand (args, wallMs, root) {
  const ledger = process.env.NODESCALE_TEST_LEDGER
  if (!ledger) return
  let runs = 0
  let runMs = 0
  let loadS = 0
  // a folder the command never made (it failed first) holds no runs
  const files = await Promise.all(foldersOf(args).map(dir => findRunFiles(dir).catch(() => [])))
  for (const file of files.flat()) {
    if (seen.has(file)) continue
    seen.add(file)
    let run
    try { run = JSON.parse(readFileSync(file, 'utf8')) } catch { continue }
    const ms = Date.parse(run.finishedAt) - Date.parse(run.startedAt)
    if (!Number.isFinite(ms)) continue
    runs++
    runMs += ms
    loadS += (typeof run.config?.duration === 'number' ? run.config.duration : 0) + (run.config?.warmup ?? 0)
  }
  const file = relative(root, process.argv[1] ?? '')
  appendFileSync(ledger, `${JSON.stringify({ file, command: args[0], wallMs, runs, runMs, loadS })}\n`)
}

/**
 * The ledger summed over a set of test files.
 * @param {string} ledger @param {string[]} files
 * @returns {{ commands: number, commandMs: number, runs: number, runMs: number, loadS: number }}
 */
export function sumLedger (ledger, files) {
  const sum = { commands: 0, commandMs: 0, runs: 0, runMs: 0, loadS: 0 }
  let text = ''
  try { text = readFileSync(ledger, 'utf8') } catch { return sum }
  for (const line of text.split('\n')) {
    if (!line) continue
    const e = JSON.parse(line)
    if (!files.includes(e.file)) continue
    sum.commands++
    sum.commandMs += e.wallMs
    sum.runs += e.runs
    sum.runMs += e.runMs
    sum.loadS += e.loadS
  }
  return sum
}
