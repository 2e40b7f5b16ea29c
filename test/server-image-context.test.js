// Finding 2 of docs/SECURITY.md: a --server image holds what the user meant. Its build context (serverTree's entries,
// what goes into the tar under server/) leaves out credential folders (.ssh, .aws, ...), nodescale's cache, files that
// hold a copy of nodescale's saved secrets and what the folder's .dockerignore says; a home folder, / or a folder above
// the home is refused as the server's folder; what went in and what stayed out is printed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { serverTree } from '../executor/docker/image-context.js'

/** Runs fn with HOME and the cache folder in a temp folder, restoring them afterwards. */
function withHome (t) {
  const top = mkdtempSync(join(tmpdir(), 'ns-srvctx-'))
  const saved = { HOME: process.env.HOME, NODESCALE_CACHE: process.env.NODESCALE_CACHE }
  const home = join(top, 'home')
  mkdirSync(home)
  process.env.HOME = home
  process.env.NODESCALE_CACHE = join(home, '.cache', 'nodescale')
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v }
    rmSync(top, { recursive: true, force: true })
  })
  return { top, home }
}

function write (file, text) {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

test('a server folder with .ssh/, .cache/nodescale/, secrets and a .dockerignore: the image context holds none of them', (t) => {
  const { home } = withHome(t)
  const token = randomBytes(24).toString('hex')
  const password = randomBytes(32).toString('hex')
  write(join(home, '.cache', 'nodescale', 'control-plane.json'), JSON.stringify({ token }))
  write(join(home, '.cache', 'nodescale', 'registry.json'), JSON.stringify({ user: 'nodescale', password, pullHost: 'x:5000' }))
  const dir = join(home, 'srv')
  write(join(dir, 'package.json'), '{"name":"srv"}\n')
  write(join(dir, 'server.js'), 'console.log(1)\n')
  write(join(dir, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n')
  write(join(dir, '.cache', 'nodescale', 'control-plane.json'), JSON.stringify({ token: 'an old one' }))
  write(join(dir, '.cache', 'babel', 'kept.json'), '{}\n')
  write(join(dir, 'lib', '.aws', 'credentials'), '[default]\n')
  write(join(dir, '.next', 'app.js'), 'built\n')
  write(join(dir, '.dockerignore'), 'secret.txt\nlogs\n*.pem\n!keep.pem\n')
  write(join(dir, 'secret.txt'), 'x\n')
  write(join(dir, 'logs', 'a.log'), 'x\n')
  write(join(dir, 'x.pem'), 'x\n')
  write(join(dir, 'keep.pem'), 'x\n')
  // copies of the saved RC token and registry password, wherever they are and whatever the file is called
  write(join(dir, 'config', 'copied.json'), `{ "t": "${token}" }\n`)
  // the scan reads 1 MB and 63 bytes (the longest secret less one) at first: this copy starts 30 bytes before its end
  write(join(dir, 'config', 'big.bin'), Buffer.concat([Buffer.alloc((1 << 20) + 63 - 30, 'a'), Buffer.from(password), Buffer.alloc(100, 'b')]))
  write(join(dir, 'config', 'app.json'), '{ "port": 1 }\n')
  const lines = []
  const tree = serverTree(join(dir, 'server.js'), { log: (l) => lines.push(l) })
  const names = tree.entries.map(e => e.name)
  assert.deepEqual(names, ['server/.cache/babel/kept.json', 'server/.dockerignore', 'server/.next/app.js', 'server/config/app.json', 'server/keep.pem',
    'server/package.json', 'server/server.js'])
  for (const out of ['.ssh', '.cache/nodescale', '.aws', 'secret.txt', 'logs', 'x.pem', 'copied.json', 'big.bin']) {
    assert.ok(!names.some(n => n.includes(out)), `${out} stays out`)
  }
  assert.deepEqual(tree.left.map(l => `${l.path} ${l.why}`).sort(), [
    '.cache/nodescale/ credentials', '.ssh/ credentials', 'config/big.bin holds a nodescale secret', 'config/copied.json holds a nodescale secret',
    'lib/.aws/ credentials', 'logs/ .dockerignore', 'logs/a.log .dockerignore', 'secret.txt .dockerignore', 'x.pem .dockerignore'
  ])
  assert.equal(lines.length, 1)
  assert.match(lines[0], /^server: .*srv into \/server: 7 files, 0\.00 MB; largest: .*; left out: .*\.ssh\/ \(credentials\)/)
  assert.ok(lines[0].includes('logs/ (.dockerignore)') && !lines[0].includes('logs/a.log'), lines[0])
})

test('the home folder, a folder above it and an entry the image leaves out are refused (exit 2, naming --server)', (t) => {
  const { top, home } = withHome(t)
  const refused = (entry, pattern) => assert.throws(() => serverTree(entry), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_BAD_FLAG')
    assert.equal(err.exitCode, 2)
    assert.match(err.message, pattern)
    return true
  })
  // `npm i` in the home made ~/package.json: a server below it would pack the home
  write(join(home, 'package.json'), '{}\n')
  write(join(home, 'srv', 'server.js'), '\n')
  write(join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n')
  refused(join(home, 'srv', 'server.js'), /^--server: .*server\.js runs from your home folder .*will not pack that into an image/)
  rmSync(join(home, 'package.json'))
  write(join(home, 'server.js'), '\n')
  refused(join(home, 'server.js'), /your home folder/)
  // a package.json above the home holds the home
  write(join(top, 'package.json'), '{}\n')
  write(join(top, 'srv', 'server.js'), '\n')
  refused(join(top, 'srv', 'server.js'), /which holds your home folder/)
  rmSync(join(top, 'package.json'))
  // an entry file the folder's .dockerignore leaves out
  write(join(top, 'app', 'package.json'), '{}\n')
  write(join(top, 'app', 'src', 'main.js'), '\n')
  write(join(top, 'app', '.dockerignore'), 'src\n')
  refused(join(top, 'app', 'src', 'main.js'), /main\.js is left out of the image \(src\/main\.js: \.dockerignore\)/)
})
