#!/usr/bin/env node
// `npm run stats:calibrate [-- --quick] [--only AREA|ID]... [--markdown] [--json] [--seed N]`: the calibration table.
import { parseArgs } from 'node:util'
import { readFileSync, writeFileSync } from 'node:fs'
import { calibrate, markdownTable, textTable, withTable } from './harness.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
    markdown: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'write-docs': { type: 'boolean', default: false },
    seed: { type: 'string', default: '20261126' },
    help: { type: 'boolean', short: 'h', default: false }
  }
})

if (values.help) {
  process.stdout.write(`Usage: npm run stats:calibrate -- [--quick] [--only AREA|ID]... [--markdown | --json] [--seed N]

Runs nodescale's own statistical code over synthetic data with a known truth and prints, for every interval, flag,
test and verdict it prints, the figure that says whether it means what it says (coverage, false alarms, detection,
size, power, bias) against its target. docs/STATISTICS.md holds the full table and what each figure means.

  --quick       the short form npm test runs (fewer trials)
  --only X      only the scenarios whose id is X or starts with X. (repeatable): validity, fit, compare, capacity, replicate
  --markdown    the table as docs/STATISTICS.md holds it
  --json        every result, with each cell of its grid
  --write-docs  the full table written into docs/STATISTICS.md (with its seed and date)
  --seed N      the seed (default 20261126): the same seed gives the same table
`)
  process.exit(0)
}

const seed = Number(values.seed)
if (!Number.isSafeInteger(seed)) {
  process.stderr.write(`--seed must be a whole number, not ${values.seed}\n`)
  process.exit(2)
}
const results = await calibrate({
  mode: values.quick ? 'quick' : 'full',
  seed,
  only: values.only,
  onResult: values.json || values.markdown ? undefined : (r) => process.stderr.write(`${r.ok ? 'ok' : 'NO'} ${r.id} ${r.seconds.toFixed(1)} s\n`)
})
if (values.json) {
  process.stdout.write(JSON.stringify({ seed, mode: values.quick ? 'quick' : 'full', results: results.map(({ run, ...r }) => r) }, null, 2) + '\n')
} else if (values.markdown) process.stdout.write(markdownTable(results) + '\n')
else process.stdout.write(textTable(results) + '\n')
if (values['write-docs']) {
  const doc = new URL('../docs/STATISTICS.md', import.meta.url)
  const stamp = `Made by \`npm run stats:calibrate -- --write-docs\` (${values.quick ? 'quick' : 'full'} form, seed ${seed}) ` +
    `on ${new Date().toISOString().slice(0, 10)}.`
  writeFileSync(doc, withTable(readFileSync(doc, 'utf8'), `${stamp}\n\n${markdownTable(results)}`))
}
const failed = results.filter(r => !r.ok).length
const tally = values.json ? process.stderr : process.stdout
tally.write(`${results.length - failed} met, ${failed} missed\n`)
process.exitCode = failed ? 1 : 0
