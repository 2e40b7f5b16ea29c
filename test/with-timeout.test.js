// The one bound every Docker, node and registry call uses: resolves, rejects and times out as it says.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawnSync } from 'node:child_process'
import { withTimeout, waitAtMost } from '../lib/with-timeout.js'

test('withTimeout passes a value or an error through, and rejects with ETIMEDOUT when the promise is late', async () => {
  assert.equal(await withTimeout(sleep(5, 'v'), 1000), 'v')
  await assert.rejects(withTimeout(Promise.reject(new Error('boom')), 1000), /boom/)
  const started = Date.now()
  await assert.rejects(withTimeout(sleep(2000), 50), (/** @type {any} */ err) => err.code === 'ETIMEDOUT' && /no answer within 50 ms/.test(err.message))
  assert.ok(Date.now() - started < 1000, 'rejected at the bound, not when the promise settled')
})

test('waitAtMost ends at the bound or when the promise settles, and its timer does not keep the process alive', async () => {
  let started = Date.now()
  await waitAtMost(new Promise(() => {}), 50)
  assert.ok(Date.now() - started < 1000, 'a promise that never settles is waited for 50 ms')
  await waitAtMost(Promise.reject(new Error('gone badly')), 1000)
  // a process whose last wait settled at once exits at once, not when the 5 s bound would have passed
  started = Date.now()
  const code = `import('${new URL('../lib/with-timeout.js', import.meta.url).href}').then(m => m.waitAtMost(Promise.resolve(), 5000))`
  const child = spawnSync(process.execPath, ['-e', code])
  assert.equal(child.status, 0, String(child.stderr))
  assert.ok(Date.now() - started < 3000, `the process took ${Date.now() - started} ms to exit`)
})
