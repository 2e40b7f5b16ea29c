// A request signed with the deployment's token for one receiver (lib/request-auth.js): it passes once, within the clock
// window, at that receiver only, for the method, path, query and body it was signed for; nothing that crosses the
// network lets anyone make another, send it to another receiver, or send it again after the receiver restarted.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import {
  signRequest, createRequestCheck, AUTH_WINDOW_MS, newReceiverId, receiverKey, signAnswer, answerSigned, callReceiver, AUTH_HEADER
} from '../lib/request-auth.js'

const TOKEN = 'a-deployment-token-0123456789abcdef'
const A = newReceiverId()

test('a signed request passes once, and only as signed', () => {
  const t = 1_700_000_000_000
  const check = createRequestCheck(TOKEN, { receiver: A, now: () => t })
  const req = { method: 'POST', path: '/start?x=1', body: '{"containers":[]}' }
  const header = signRequest(TOKEN, { ...req, receiver: A, now: t })
  assert.ok(!header.includes(TOKEN), 'the token is not in the header')
  assert.equal(check({ ...req, header }), null)
  assert.match(check({ ...req, header }), /a replay/)
  /** @type {[string, Record<string, string>][]} */
  const changes = [['method', { method: 'GET' }], ['path', { path: '/stop?x=1' }], ['query', { path: '/start?x=2' }],
    ['body', { body: '{"containers":["x"]}' }]]
  for (const [what, changed] of changes) {
    const fresh = signRequest(TOKEN, { ...req, receiver: A, now: t })
    assert.match(check({ ...req, ...changed, header: fresh }), /a wrong signature/, `another ${what}`)
  }
  assert.match(check({ ...req, header: signRequest('another-deployment-token-000000', { ...req, receiver: A, now: t }) }), /a wrong signature/)
  for (const bad of [undefined, '', TOKEN, 'x.y.z', `${A}.${t}.${'0'.repeat(32)}.${'0'.repeat(63)}`, `${t}.${'0'.repeat(32)}.${'0'.repeat(64)}`]) {
    assert.match(check({ ...req, header: bad }), /no x-nodescale-auth header/)
  }
})

test('the clock window: a request signed too far from the receiver\'s clock is refused, saying by how much', () => {
  let t = 1_700_000_000_000
  const check = createRequestCheck(TOKEN, { receiver: A, now: () => t })
  const req = { method: 'GET', path: '/status' }
  assert.equal(check({ ...req, header: signRequest(TOKEN, { ...req, receiver: A, now: t - AUTH_WINDOW_MS + 1000 }) }), null, 'late within the window')
  assert.equal(check({ ...req, header: signRequest(TOKEN, { ...req, receiver: A, now: t + AUTH_WINDOW_MS - 1000 }) }), null, 'early within the window')
  assert.match(check({ ...req, header: signRequest(TOKEN, { ...req, receiver: A, now: t - AUTH_WINDOW_MS - 60_000 }) }),
    /signed 360 s away from this node's clock .* keep the nodes' clocks in sync/)
  // a nonce is forgotten once its time has left the window, when it could not pass anyway
  const header = signRequest(TOKEN, { ...req, receiver: A, now: t })
  assert.equal(check({ ...req, header }), null)
  t += AUTH_WINDOW_MS + 1
  assert.match(check({ ...req, header }), /away from this node's clock/)
})

test('a request signed for receiver A is refused by B, also with B\'s id written into its header', () => {
  const B = newReceiverId()
  const req = { method: 'POST', path: '/abort' }
  const atA = createRequestCheck(TOKEN, { receiver: A })
  const atB = createRequestCheck(TOKEN, { receiver: B })
  const forA = signRequest(TOKEN, { ...req, receiver: A })
  assert.match(atB({ ...req, header: forA }), /signed for another receiver/, 'g1\'s abort resent to g2')
  // the id in the header is not what binds it: the key is A's, so naming B makes a wrong signature
  assert.match(atB({ ...req, header: forA.replace(A, B) }), /a wrong signature/)
  assert.equal(atA({ ...req, header: forA }), null, 'A takes it')
  assert.notDeepEqual(receiverKey(TOKEN, A), receiverKey(TOKEN, B))
  assert.throws(() => receiverKey(TOKEN, 'not-an-id'), /32 hex digits/)
})

test('a replay after the receiver restarted (a new id, its nonces forgotten) is refused', () => {
  const req = { method: 'POST', path: '/abort' }
  const before = A
  const header = signRequest(TOKEN, { ...req, receiver: before })
  assert.equal(createRequestCheck(TOKEN, { receiver: before })({ ...req, header }), null)
  // the restarted receiver remembers no nonce, but has another id: the same header, within the window, is refused
  const after = createRequestCheck(TOKEN, { receiver: newReceiverId() })
  assert.match(after({ ...req, header }), /signed for another receiver/)
  // nor can the header be moved to the new id: the HMAC was made with the old receiver's key
  const restarted = newReceiverId()
  assert.match(createRequestCheck(TOKEN, { receiver: restarted })({ ...req, header: header.replace(before, restarted) }), /a wrong signature/)
})

test('the old single-token signature (HMAC keyed by the token itself) is refused', () => {
  const req = { method: 'GET', path: '/status', body: '' }
  const check = createRequestCheck(TOKEN, { receiver: A })
  const ms = Date.now()
  const nonce = randomBytes(16).toString('hex')
  const text = `GET\n/status\n${ms}\n${nonce}\n${createHash('sha256').update('').digest('hex')}`
  const old = createHmac('sha256', TOKEN).update(text).digest('hex')
  assert.match(check({ ...req, header: `${ms}.${nonce}.${old}` }), /no x-nodescale-auth header/, 'the old header form')
  assert.match(check({ ...req, header: `${A}.${ms}.${nonce}.${old}` }), /a wrong signature/, 'the old HMAC in the new form')
  // and the same text with A's key passes: only the key differs
  const now = createHmac('sha256', receiverKey(TOKEN, A)).update(text).digest('hex')
  assert.equal(check({ ...req, header: `${A}.${ms}.${nonce}.${now}` }), null)
})

test('an answer is signed for the request\'s nonce and body: another body, request or receiver does not pass', () => {
  const B = newReceiverId()
  const body = { bytes: 5, sha256: createHash('sha256').update('hello').digest('hex') }
  const req = signRequest(TOKEN, { receiver: A, method: 'GET', path: '/samples' })
  const answer = signAnswer(TOKEN, req, body)
  assert.ok(answerSigned(TOKEN, req, answer, body))
  assert.ok(!answerSigned(TOKEN, req, answer, { ...body, bytes: 6 }), 'another length')
  assert.ok(!answerSigned(TOKEN, req, answer, { ...body, sha256: createHash('sha256').update('hellO').digest('hex') }), 'another body')
  assert.ok(!answerSigned(TOKEN, signRequest(TOKEN, { receiver: A, method: 'GET', path: '/samples' }), answer, body), 'an answer to an earlier request')
  assert.ok(!answerSigned(TOKEN, req, signAnswer(TOKEN, signRequest(TOKEN, { receiver: B, method: 'GET', path: '/samples' }), body), body), 'from B')
  assert.ok(!answerSigned(TOKEN, req, undefined, body), 'no signature')
  assert.ok(!answerSigned('another-deployment-token-000000', req, answer, body))
})

test('callReceiver reads the receiver\'s id from its /healthz and, when it restarted, once more', async (t) => {
  let id = newReceiverId()
  let check = createRequestCheck(TOKEN, { receiver: id })
  let healthz = 0
  const server = createServer((req, res) => {
    if (req.url === '/healthz') { healthz++; return res.end(JSON.stringify({ ok: true, id })) }
    res.writeHead(check({ method: req.method ?? 'GET', path: req.url ?? '/', header: String(req.headers[AUTH_HEADER]) }) ? 401 : 200).end()
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => server.close())
  // @ts-ignore TCP address
  const base = `http://127.0.0.1:${server.address().port}`
  const ids = new Map()
  const get = () => callReceiver({ base, token: TOKEN, ids }, (sign) => fetch(`${base}/x`, { headers: { [AUTH_HEADER]: sign({ method: 'GET', path: '/x' }) } }))
  assert.equal((await get()).status, 200)
  assert.equal((await get()).status, 200)
  assert.equal(healthz, 1, 'the id is read once')
  id = newReceiverId()
  check = createRequestCheck(TOKEN, { receiver: id })
  assert.equal((await get()).status, 200, 'a restarted receiver: its new id read, the request signed for it')
  assert.equal(healthz, 2)
  check = createRequestCheck('another-deployment-token-000000', { receiver: id })
  assert.equal((await get()).status, 401, 'a 401 with the same id is not retried')
  assert.equal(healthz, 3)
})
