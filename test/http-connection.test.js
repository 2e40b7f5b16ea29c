// The load drivers' raw HTTP/1.1 connection against real servers: answers sized by length, by chunks and by the
// connection's close, an interim 100, keep-alive reuse and close, and a server that hangs up before answering.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { createConnection, requestBytes } from '../executor/drivers/http-connection.js'

const clock = () => performance.timeOrigin + performance.now()

/** A server on a free port of loopback; closed after the test. */
async function serve (t, handler) {
  const server = handler instanceof net.Server ? handler : http.createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const sockets = new Set()
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  t.after(() => { for (const s of sockets) s.destroy(); server.close() })
  return /** @type {net.AddressInfo} */ (server.address()).port
}

/** Sends `n` requests one after another on one connection; resolves with each outcome. */
function exchange (port, request, n = 1) {
  return new Promise(resolve => {
    const outcomes = []
    const opened = []
    const conn = createConnection({
      host: '127.0.0.1',
      port,
      request,
      clock,
      onAnswer: (a) => { outcomes.push({ ...a, connectMs: conn.connectMs, open: conn.open }); next() },
      onFail: (f) => { outcomes.push({ fail: f }); next() }
    })
    const next = () => { if (outcomes.length === n) { conn.destroy(); resolve({ outcomes, opened }) } else go() }
    const go = () => { opened.push(conn.open); conn.send() }
    go()
  })
}

test('the request: built once, its Host, the caller\'s headers, a body\'s length, keep-alive or close', () => {
  const url = new URL('http://127.0.0.1:8080/a/b?x=1')
  assert.equal(requestBytes(url, {}).toString(), 'GET /a/b?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: keep-alive\r\n\r\n')
  const post = requestBytes(url, { method: 'POST', headers: { 'X-Run': 'r1', Connection: 'close' }, body: Buffer.from('{"a":1}') }).toString()
  assert.equal(post, 'POST /a/b?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Run: r1\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}')
  assert.equal(requestBytes(url, { headers: { host: 'example' }, close: true }).toString(),
    'GET /a/b?x=1 HTTP/1.1\r\nhost: example\r\nConnection: close\r\n\r\n')
})

test('answers by length and by chunks on one kept-alive connection; each answer\'s bytes, status and first byte', async (t) => {
  let n = 0
  const port = await serve(t, (req, res) => {
    n++
    if (n === 2) { res.writeHead(404, { 'content-type': 'text/plain' }); res.write('not '); setTimeout(() => res.end('here'), 20); return }
    res.end('hello')
  })
  const url = new URL(`http://127.0.0.1:${port}/`)
  const before = clock()
  const { outcomes, opened } = await exchange(port, requestBytes(url, {}), 3)
  assert.deepEqual(opened, [false, true, true], 'opened once, then reused')
  assert.deepEqual(outcomes.map(o => [o.status, o.message]), [[200, 'OK'], [404, 'Not Found'], [200, 'OK']])
  // the chunked answer ("4\r\nnot \r\n4\r\nhere\r\n0\r\n\r\n") is read to its last chunk, or the third is misread
  assert.ok(outcomes[1].bytes > outcomes[0].bytes, JSON.stringify(outcomes))
  assert.ok(outcomes.every(o => o.firstByteAt >= before && o.open), JSON.stringify(outcomes))
  assert.ok(outcomes[0].connectMs >= 0 && outcomes[1].connectMs === 0)
})

test('an answer without a length ends at the close; a server that hangs up first is a failure; an interim 100 is skipped', async (t) => {
  const raw = (reply) => net.createServer(socket => socket.once('data', () => reply(socket)))
  const closing = await serve(t, raw(s => s.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it')))
  const { outcomes: [closed] } = await exchange(closing, requestBytes(new URL(`http://127.0.0.1:${closing}/`), {}))
  assert.deepEqual([closed.status, closed.bytes, closed.open], [200, 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it'.length, false])
  const rude = await serve(t, raw(s => s.destroy()))
  const { outcomes: [hung] } = await exchange(rude, requestBytes(new URL(`http://127.0.0.1:${rude}/`), {}))
  assert.ok(['NoHttpResponse', 'ECONNRESET'].includes(hung.fail.code), JSON.stringify(hung))
  const interim = await serve(t, raw(s => s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok')))
  const { outcomes: [created] } = await exchange(interim, requestBytes(new URL(`http://127.0.0.1:${interim}/`), {}))
  assert.deepEqual([created.status, created.message, created.bytes], [201, 'Created', 'HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok'.length])
  // nothing listens: the connect's own error
  const { outcomes: [refused] } = await exchange(1, requestBytes(new URL('http://127.0.0.1:1/'), {}))
  assert.equal(refused.fail.code, 'ECONNREFUSED')
})

test('Connection: close, asked or answered, ends the connection after its answer: the next request opens another', async (t) => {
  const port = await serve(t, (req, res) => res.end('x'))
  const url = new URL(`http://127.0.0.1:${port}/`)
  const { outcomes, opened } = await exchange(port, requestBytes(url, { close: true }), 2)
  assert.deepEqual(opened, [false, false])
  assert.deepEqual(outcomes.map(o => [o.status, o.open]), [[200, false], [200, false]])
})

test('answers that come in pieces on two connections at once: each read shares one buffer, an unfinished answer is kept whole', async (t) => {
  // a raw server: each connection's answer (its own status and sizes) in 3 pieces 15 ms apart, both connections writing
  // in the same moments, so one connection's reads land between the other's: a piece not copied out of the shared
  // buffer would be overwritten by the other's, and its status or length read wrong
  const expected = []
  const port = await serve(t, net.createServer(s => {
    const i = expected.length
    const body = 'b'.repeat(1000 + 500 * i)
    const whole = `HTTP/1.1 ${200 + i} OK\r\nX-Pad: ${'p'.repeat(300 + 200 * i)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    expected.push({ status: 200 + i, bytes: whole.length })
    s.once('data', () => {
      const cuts = [0, 12, whole.length - 300, whole.length]
      cuts.slice(1).forEach((end, k) => setTimeout(() => s.write(whole.slice(cuts[k], end)), 15 * k))
    })
  }))
  const request = requestBytes(new URL(`http://127.0.0.1:${port}/`), {})
  const both = await Promise.all([exchange(port, request), exchange(port, request)])
  const got = both.map(({ outcomes: [o] }) => ({ status: o.status, bytes: o.bytes })).sort((x, y) => x.status - y.status)
  assert.deepEqual(got, expected)
})
