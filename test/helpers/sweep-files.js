// An experiment file written to a fresh folder, and a sweep folder read back: what the sweep tests share.
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Writes `text` as study.yml in a fresh folder; `out` is a folder beside it for the sweep.
 * @param {string} text
 * @param {string} [prefix] the temporary folder's name prefix
 */
export function experiment (text, prefix = 'ns-sweep-') {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const file = join(dir, 'study.yml')
  writeFileSync(file, text)
  return { file, out: join(dir, 'out') }
}

/**
 * The one sweep folder under out, its sweep.json and every run.json in it.
 * @param {string} out
 */
export function readSweep (out) {
  const [id] = readdirSync(out)
  const dir = join(out, id)
  const sweep = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'))
  const runs = readdirSync(dir).filter(d => existsSync(join(dir, d, 'run.json'))).map(d => JSON.parse(readFileSync(join(dir, d, 'run.json'), 'utf8')))
  return { dir, sweep, runs }
}
