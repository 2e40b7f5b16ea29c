// The builtin registry on a single-node swarm: credentials for every request (an unauthenticated push is 401), HTTPS
// with --registry-tls and a warning without it, `executor up` saying where it listens and never printing a secret;
// --registry-tls checked before anything starts; the helpers that decide trust and digests.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { swarmEngine } from './swarm-helper.js'
import { runCli } from './helpers/cli.js'
import { cacheDir } from '../lib/paths.js'
import { trustsPlainHttp, registryStatus } from '../executor/docker/image-registry.js'
import { pushedDigest } from '../executor/docker/image-copy.js'
import { deployedImage } from '../executor/docker/engine.js'

const DIGEST = `sha256:${'ab'.repeat(32)}`

test('trust, digests and deployed references are read as the engine means them', () => {
  const info = {
    RegistryConfig: { InsecureRegistryCIDRs: ['127.0.0.0/8'], IndexConfigs: { '10.99.0.1:5000': { Secure: false }, 'docker.io': { Secure: true } } }
  }
  assert.equal(trustsPlainHttp(info, '127.0.0.1:5000'), true, 'loopback by CIDR')
  assert.equal(trustsPlainHttp(info, '10.99.0.1:5000'), true, 'by name')
  assert.equal(trustsPlainHttp(info, '10.99.0.2:5000'), false)
  assert.equal(trustsPlainHttp({ RegistryConfig: { InsecureRegistryCIDRs: ['10.99.0.0/24'] } }, '10.99.0.7:5000'), true)
  assert.equal(trustsPlainHttp({ RegistryConfig: { InsecureRegistryCIDRs: ['10.99.0.0/24'] } }, 'reg.lan:5000'), false, 'a name is not in a CIDR')
  const stream = ['{"status":"Pushed"}', `{"status":"x: digest: ${DIGEST} size: 1"}`,
    `{"progressDetail":{},"aux":{"Tag":"x","Digest":"${DIGEST}","Size":1}}`, ''].join('\n')
  assert.equal(pushedDigest(stream), DIGEST)
  assert.equal(pushedDigest('{"status":"Pushed"}\n'), null)
  assert.equal(deployedImage(`reg:5000/a/b:v1@${DIGEST}`), 'reg:5000/a/b:v1', 'a digest the engine appended to a tag is dropped')
  assert.equal(deployedImage(`reg:5000/a/b@${DIGEST}`), `reg:5000/a/b@${DIGEST}`, 'a reference by digest stays whole')
})

test('--registry-tls is checked before anything starts: PEM files that exist, for the builtin registry only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ns-tls-'))
  writeFileSync(join(dir, 'not.pem'), 'hello\n')
  const base = ['run', '--strategy', 'hs', '--instances', '1', '--backend', 'swarm', '--duration', '1', '--out', join(dir, 'out')]
  /** @type {[string[], RegExp][]} */
  const cases = [
    [['--registry-tls', 'only-one.pem'], /--registry-tls: "only-one.pem" is not allowed; give the certificate and key files separated by a comma/],
    [['--registry-tls', `${dir}/missing.crt,${dir}/missing.key`], /--registry-tls: cannot read the certificate .*missing\.crt \(ENOENT\)/],
    [['--registry-tls', `${dir}/not.pem,${dir}/not.pem`], /--registry-tls: .*not\.pem is not a PEM certificate/],
    [['--registry', 'none', '--registry-tls', 'a,b'], /--registry-tls: is for nodescale's builtin registry; --registry none moves no images/],
    [['--registry', 'reg.lan:5000', '--registry-tls', 'a,b'], /--registry reg\.lan:5000 is a registry of yours, with its own TLS/]
  ]
  for (const [args, message] of cases) {
    const r = await runCli('executor', [...base, ...args], { timeoutMs: 20_000 })
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, message)
  }
  const local = await runCli('executor',
    ['run', '--strategy', 'hs', '--instances', '1', '--backend', 'local', '--registry-tls', 'a,b', '--duration', '1', '--out', join(dir, 'o2')])
  assert.equal(local.code, 2)
  assert.match(local.stderr, /--registry-tls: only applies to Swarm runs/)
})

const engine = await swarmEngine()

/** GET /v2/ over HTTPS without verifying the certificate, answering the protocol the registry speaks. */
function httpsStatus (path, { method = 'GET' } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(`https://127.0.0.1:5000${path}`, { method, rejectUnauthorized: false }, (res) => { res.resume(); resolve(res.statusCode) })
    req.on('error', reject)
    req.end()
  })
}

test('executor up --registry builtin: HTTPS with --registry-tls, credentials for every request, where it listens said, ' +
  'no secret printed', { skip: engine.skip, timeout: 240_000 }, async (t) => {
  t.after(() => runCli('executor', ['down'], { timeoutMs: 120_000 }))
  const dir = mkdtempSync(join(tmpdir(), 'ns-tls-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'r.key'), '-out', join(dir, 'r.crt'), '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })

  const tls = await runCli('executor', ['up', '--registry', 'builtin', '--registry-tls', `${dir}/r.crt,${dir}/r.key`, '--json'], { timeoutMs: 180_000 })
  assert.equal(tls.code, 0, tls.stderr)
  const up = JSON.parse(tls.stdout)
  assert.deepEqual([up.registry.address, up.registry.tls], ['127.0.0.1:5000', true])
  assert.match(up.image, /^127\.0\.0\.1:5000\/nodescale\/rc@sha256:[0-9a-f]{64}$/, 'the RC deployed by digest')
  const creds = JSON.parse(readFileSync(join(cacheDir(), 'registry.json'), 'utf8'))
  assert.equal(await httpsStatus('/v2/'), 401, 'HTTPS, and no answer without credentials')
  assert.equal(await httpsStatus('/v2/nodescale/rc/blobs/uploads/', { method: 'POST' }), 401, 'an unauthenticated push is refused')
  const verify = { ca: readFileSync(join(dir, 'r.crt')), host: '127.0.0.1' }
  assert.equal(await registryStatus('https://127.0.0.1:5000', creds, verify), 200)
  assert.equal(await registryStatus('https://127.0.0.1:5000', { user: creds.user, password: 'guess' }, verify), 401)
  assert.ok(!`${tls.stdout}${tls.stderr}`.includes(creds.password), 'the password is not printed')
  assert.doesNotMatch(tls.stderr, /plain HTTP/)

  const plain = await runCli('executor', ['up', '--registry', 'builtin'], { timeoutMs: 180_000 })
  assert.equal(plain.code, 0, plain.stderr)
  assert.match(plain.stdout, /image registry: listening on 127\.0\.0\.1:5000 \(plain HTTP/)
  assert.match(plain.stderr, /warning: the image registry at 127\.0\.0\.1:5000 speaks plain HTTP: .* give --registry-tls CERT,KEY/)
  const again = JSON.parse(readFileSync(join(cacheDir(), 'registry.json'), 'utf8'))
  assert.notEqual(again.password, creds.password, 'a new deployment, new credentials')
  assert.equal(await registryStatus('http://127.0.0.1:5000'), 401)
  assert.equal(await registryStatus('http://127.0.0.1:5000', creds), 401, 'the old credentials no longer work')
  assert.ok(!`${plain.stdout}${plain.stderr}`.includes(again.password))
})
