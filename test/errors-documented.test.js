// Every error code nodescale raises is documented in the generated errors reference (docs/reference/errors.md, made
// from CODES by scripts/docs-reference.js) with its exit code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { CODES, NsError, exitCodeOf, formatError } from '../lib/errors.js'

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
