// A request signed with the deployment's token (lib/request-auth.js): it passes once, within the clock window, for the
// method, path, query and body it was signed for; nothing that crosses the network lets anyone make another.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { signRequest, createRequestCheck, AUTH_WINDOW_MS } from '../lib/request-auth.js'

const TOKEN = 'a-deployment-token-0123456789abcdef'

test('a signed request passes once, and only as signed', () => {
  const t = 1_700_000_000_000
  const check = createRequestCheck(TOKEN, { now: () => t })
  const req = { method: 'POST', path: '/start?x=1', body: '{"containers":[]}' }
  const header = signRequest(TOKEN, { ...req, now: t })
  assert.ok(!header.includes(TOKEN), 'the token is not in the header')
  assert.equal(check({ ...req, header }), null)
  assert.match(check({ ...req, header }), /a replay/)
  /** @type {[string, Record<string, string>][]} */
  const changes = [['method', { method: 'GET' }], ['path', { path: '/stop?x=1' }], ['query', { path: '/start?x=2' }], ['body', { body: '{"containers":["x"]}' }]]
  for (const [what, changed] of changes) {
    const fresh = signRequest(TOKEN, { ...req, now: t })
    assert.match(check({ ...req, ...changed, header: fresh }), /a wrong signature/, `another ${what}`)
  }
  assert.match(check({ ...req, header: signRequest('another-deployment-token-000000', { ...req, now: t }) }), /a wrong signature/)
  for (const bad of [undefined, '', TOKEN, 'x.y.z', `${t}.${'0'.repeat(32)}.${'0'.repeat(63)}`]) assert.match(check({ ...req, header: bad }), /no x-nodescale-auth header/)
})

test('the clock window: a request signed too far from the receiver\'s clock is refused, saying by how much', () => {
  let t = 1_700_000_000_000
  const check = createRequestCheck(TOKEN, { now: () => t })
  const req = { method: 'GET', path: '/status' }
  assert.equal(check({ ...req, header: signRequest(TOKEN, { ...req, now: t - AUTH_WINDOW_MS + 1000 }) }), null, 'late within the window')
  assert.equal(check({ ...req, header: signRequest(TOKEN, { ...req, now: t + AUTH_WINDOW_MS - 1000 }) }), null, 'early within the window')
  assert.match(check({ ...req, header: signRequest(TOKEN, { ...req, now: t - AUTH_WINDOW_MS - 60_000 }) }), /signed 360 s away from this node's clock .* keep the nodes' clocks in sync/)
  // a nonce is forgotten once its time has left the window, when it could not pass anyway
  const header = signRequest(TOKEN, { ...req, now: t })
  assert.equal(check({ ...req, header }), null)
  t += AUTH_WINDOW_MS + 1
  assert.match(check({ ...req, header }), /away from this node's clock/)
})
