// Every error code nodescale raises is documented in the generated errors reference (docs/reference/errors.md, made
// from CODES by scripts/docs-reference.js) with its exit code, and every message comes from lib/messages.js' table.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './helpers/cli.js'
import { CODES, NsError, exitCodeOf, formatError } from '../lib/errors.js'
import { MESSAGES, fail, template } from '../lib/messages.js'

const reference = readFileSync(new URL('../docs/reference/errors.md', import.meta.url), 'utf8')

for (const [code, { exit }] of Object.entries(CODES)) {
  test(`${code} is in docs/reference/errors.md with exit ${exit}`, () => {
    assert.match(reference, new RegExp(`\\| \`${code}\` \\| ${exit} \\|`))
  })
}

test('coded errors map to their exit code, anything else to 1', () => {
  assert.equal(exitCodeOf(new NsError('NS_ERR_BAD_FLAG', 'x')), 2)
  assert.equal(exitCodeOf(new NsError('NS_ERR_MISSING_HAPROXY', 'x')), 3)
  assert.equal(exitCodeOf(new Error('boom')), 1)
  assert.match(formatError(new NsError('NS_ERR_MISSING_JAVA', 'no java', { hint: 'apt-get install x' })),
    /NS_ERR_MISSING_JAVA: no java\n {2}fix: apt-get install x/)
})

// Messages come from one table (lib/messages.js): no module writes its own, every entry has a known code, is raised
// somewhere and makes a message from any values.
const SOURCE_FOLDERS = ['lib', 'benchmarks', 'rc', 'register', 'analyzer', 'executor', 'bin', 'perf', 'calibration']
const TABLE_FILES = ['lib/errors.js', 'lib/messages.js']
const sources = SOURCE_FOLDERS.flatMap(dir => readdirSync(join(ROOT, dir), { recursive: true }).map(String)
  .filter(f => f.endsWith('.js')).map(f => join(dir, f)))
  .map(file => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }))

test('no module writes its own error message: new NsError( only in lib/errors.js and lib/messages.js', () => {
  const writers = sources.filter(s => !TABLE_FILES.includes(s.file) && s.text.includes('new NsError('))
  assert.deepEqual(writers.map(s => s.file), [], 'raise a message of lib/messages.js with fail(\'NAME\', values)')
})

test('every message of the table has a known code, is raised somewhere, and makes a message from any values', () => {
  const used = sources.filter(s => s.file !== 'lib/messages.js').map(s => s.text).join('\n')
  for (const id of /** @type {(keyof typeof MESSAGES)[]} */ (Object.keys(MESSAGES))) {
    assert.ok(MESSAGES[id].code in CODES, `${id}: ${MESSAGES[id].code} is not in CODES`)
    assert.ok(used.includes(`'${id}'`), `${id} is raised nowhere: remove it, or raise it`)
    // each value a `{name}` string, as the reference page shows the message
    const { text, hint } = template(id)
    assert.ok(typeof text === 'string' && text.trim(), `${id}: its text is empty`)
    assert.ok(hint === undefined || (typeof hint === 'string' && hint.trim()), `${id}: its hint is empty`)
  }
})

test('fail() makes the coded error of a message, with its hint, cause and details', () => {
  const cause = new Error('x')
  const err = fail('ROW_TOO_LONG', { file: 'a.jtl', line: 3, maxMiB: 1 }, { cause, details: { bound: 'row' } })
  assert.ok(err instanceof NsError)
  assert.equal(err.code, 'NS_ERR_BAD_FILE')
  assert.equal(exitCodeOf(err), 2)
  assert.equal(err.message, 'a.jtl:3: a row longer than 1 MiB (a quoted field never closed?)')
  assert.equal(err.cause, cause)
  assert.deepEqual(err.details, { bound: 'row' })
  assert.equal(fail('CLUSTER_TOOLS_MISSING', { tools: ['ip', 'nsenter'], packages: ['iproute2', 'util-linux'] }).hint,
    'apt-get install -y iproute2 util-linux')
})
