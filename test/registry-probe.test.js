// The image registry's readiness probe over HTTPS (registryStatus, executor/docker/image-registry.js) verifies the
// certificate the registry was given (--registry-tls) and the address it was issued for before it sends the
// credentials: a server with another certificate, or ours for another address, gets nothing (issue 27, finding 6).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { registryStatus } from '../executor/docker/image-registry.js'

let openssl = true
try { execFileSync('openssl', ['version'], { stdio: 'ignore' }) } catch { openssl = false }
const skip = openssl ? false : 'openssl is not installed (it makes the test certificates)'

/** A self-signed certificate for 127.0.0.1 (or what `san` names), as PEM { cert, key }. */
function selfSigned (dir, name, san = 'IP:127.0.0.1') {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`),
    '-days', '1', '-subj', '/CN=nodescale-test', '-addext', `subjectAltName=${san}`], { stdio: 'ignore' })
  return { cert: readFileSync(join(dir, `${name}.crt`)), key: readFileSync(join(dir, `${name}.key`)) }
}

const CREDS = { user: 'nodescale', password: 'the-registry-password-0123456789' }

/** A registry's /v2/ in miniature: 200 with the credentials, else 401; it notes every Authorization it was sent. */
async function fakeRegistry (t, pair) {
  const seen = []
  const server = createServer(pair, (req, res) => {
    if (req.headers.authorization) seen.push(req.headers.authorization)
    const good = req.headers.authorization === `Basic ${Buffer.from(`${CREDS.user}:${CREDS.password}`).toString('base64')}`
    res.writeHead(good ? 200 : 401).end()
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => server.close())
  // @ts-ignore TCP address
  return { url: `https://127.0.0.1:${server.address().port}`, seen }
}

test('the HTTPS probe takes the registry\'s own certificate and refuses another, sending no credentials to it', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-probe-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const ours = selfSigned(dir, 'ours')
  const theirs = selfSigned(dir, 'theirs')
  const forOther = selfSigned(dir, 'other-ip', 'IP:10.99.0.7')

  const good = await fakeRegistry(t, ours)
  assert.equal(await registryStatus(good.url, CREDS, { ca: ours.cert, host: '127.0.0.1' }), 200, 'our certificate, for our address')
  assert.equal(await registryStatus(good.url, undefined, { ca: ours.cert, host: '127.0.0.1' }), 401)

  const impostor = await fakeRegistry(t, theirs)
  await assert.rejects(registryStatus(impostor.url, CREDS, { ca: ours.cert, host: '127.0.0.1' }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_DEPLOY' &&
      /presented a certificate that is not --registry-tls's, or not issued for 127\.0\.0\.1/.test(err.message))
  assert.deepEqual(impostor.seen, [], 'the credentials never reached a server with another certificate')

  // our certificate's name is checked too: one issued for another address is refused where the nodes pull from this one
  const elsewhere = await fakeRegistry(t, forOther)
  await assert.rejects(registryStatus(elsewhere.url, CREDS, { ca: forOther.cert, host: '127.0.0.1' }),
    (/** @type {any} */ err) => err.code === 'NS_ERR_DEPLOY' && /not issued for 127\.0\.0\.1/.test(err.message))
  assert.deepEqual(elsewhere.seen, [])
  assert.equal(await registryStatus(elsewhere.url, CREDS, { ca: forOther.cert, host: '10.99.0.7' }), 200, 'the address it names')

  // an HTTPS probe without the certificate to verify against is a bug, not an unverified request
  assert.throws(() => registryStatus(good.url, CREDS), /NS_ERR_INTERNAL|without the certificate/)
})

test('a leaf the user\'s own CA signed is verified against the leaf given, without that CA', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-probe-ca-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const sh = (args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  sh(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=a lab CA'])
  sh(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=registry'])
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1" > ext && ' +
    'openssl x509 -req -in leaf.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out leaf.crt -days 1 -extfile ext'], { cwd: dir, stdio: 'ignore' })
  const leaf = { cert: readFileSync(join(dir, 'leaf.crt')), key: readFileSync(join(dir, 'leaf.key')) }
  const reg = await fakeRegistry(t, leaf)
  assert.equal(await registryStatus(reg.url, CREDS, { ca: leaf.cert, host: '127.0.0.1' }), 200)
})
