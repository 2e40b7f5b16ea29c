// The one bound every Docker, node and registry call uses: resolves, rejects and times out as it says.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { withTimeout } from '../lib/with-timeout.js'

test('withTimeout passes a value or an error through, and rejects with ETIMEDOUT when the promise is late', async () => {
  assert.equal(await withTimeout(sleep(5, 'v'), 1000), 'v')
  await assert.rejects(withTimeout(Promise.reject(new Error('boom')), 1000), /boom/)
  const started = Date.now()
  await assert.rejects(withTimeout(sleep(2000), 50), (/** @type {any} */ err) => err.code === 'ETIMEDOUT' && /no answer within 50 ms/.test(err.message))
  assert.ok(Date.now() - started < 1000, 'rejected at the bound, not when the promise settled')
})
