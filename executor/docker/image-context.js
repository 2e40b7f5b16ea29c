// What goes into an image: the register's source closure, its production dependencies (from package-lock.json), custom
// apps, a user's whole server folder (--server), nodescale's launchers for a user's image (--image), and host rootfs
// files (a binary and the libraries ldd lists).
import { readFileSync, readdirSync, statSync, lstatSync, existsSync, realpathSync, openSync, readSync, closeSync } from 'node:fs'
import { join, relative, dirname, resolve, basename, sep, isAbsolute } from 'node:path'
import { homedir } from 'node:os'
import { builtinModules } from 'node:module'
import { spawnSync } from 'node:child_process'
import dockerignoreModule from '@balena/dockerignore'
import { badApp, badFlag } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { cacheDir, readCacheJson } from '../../lib/paths.js'
import { checkServerFolder, serverFolder } from '../../benchmarks/whole-server.js'

/**
 * @typedef {{ name: string, source?: string, content?: Buffer, mode?: number, type?: 'file' | 'directory' }}
 * ContextEntry
 */

const SKIP_DIRS = new Set(['node_modules', '.git', 'test', 'tests', '__tests__'])
const IMPORT_RE = /(?:\bimport\s*(?:[\w*{}\s,$]+?\s*from\s*)?|\bexport\s*[\w*{}\s,$]+?\s*from\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"\n]+)['"]/g

/** Files under dir (recursively), skipping node_modules, tests and dot folders. */
export function listFiles (dir) {
  const out = []
  for (const ent of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, ent.name)
    if (ent.isDirectory()) {
      if (!SKIP_DIRS.has(ent.name) && !ent.name.startsWith('.')) out.push(...listFiles(full))
    } else if (ent.isFile()) {
      out.push(full)
    }
  }
  return out
}

/**
 * The module specifiers a source file imports, statically written ones only.
 * @param {string} text
 * @returns {string[]}
 */
export function importsOf (text) {
  return [...text.matchAll(IMPORT_RE)].map(m => m[1])
}

const BUILTINS = new Set(builtinModules)
function packageName (spec) {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * Follows relative imports from the start files; bare imports become dependency roots.
 * @param {string[]} startFiles absolute paths
 * @param {{ within?: string }} [opts] imports that leave this folder are an error (custom apps)
 * @returns {{ files: string[], packages: Set<string> }}
 */
export function importClosure (startFiles, { within } = {}) {
  const files = new Set()
  const packages = new Set()
  const todo = [...startFiles]
  while (todo.length) {
    const file = todo.pop()
    if (files.has(file)) continue
    files.add(file)
    if (!/\.(mjs|cjs|js)$/.test(file)) continue
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('node:') || BUILTINS.has(spec) || BUILTINS.has(packageName(spec))) continue
      if (spec.startsWith('.') || spec.startsWith('/')) {
        let target = resolve(dirname(file), spec)
        if (!existsSync(target) && existsSync(`${target}.js`)) target = `${target}.js`
        if (existsSync(target) && statSync(target).isDirectory() && existsSync(join(target, 'index.js'))) target = join(target, 'index.js')
        if (!existsSync(target)) continue
        if (within && relative(within, target).startsWith('..')) {
          throw badApp('', `${file} imports ${spec}, outside the app's folder ${within}; put the app and what it imports in one folder and pass the folder`)
        }
        todo.push(target)
      } else {
        packages.add(packageName(spec))
      }
    }
  }
  return { files: [...files].sort(), packages }
}

/**
 * The production dependency closure of some packages, resolved the way Node resolves them in the installed tree
 * (package-lock v2/v3 `packages`).
 * @param {string} root project folder holding package-lock.json and node_modules
 * @param {Iterable<string>} names root package names
 * @returns {{ dirs: string[], missing: string[] }} lockfile keys like `node_modules/express`, and names not installed
 */
export function dependencyClosure (root, names) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
  const pkgs = lock.packages
  if (!pkgs) {
    throw fail('LOCKFILE_TOO_OLD', { file: join(root, 'package-lock.json'), version: lock.lockfileVersion })
  }
  const find = (from, name) => {
    let base = from
    for (;;) {
      const key = `${base ? `${base}/` : ''}node_modules/${name}`
      if (pkgs[key] && existsSync(join(root, key))) return key
      if (!base) return null
      const i = base.lastIndexOf('/node_modules/')
      base = i < 0 ? '' : base.slice(0, i)
    }
  }
  const seen = new Set()
  const missing = []
  const visit = (key) => {
    if (seen.has(key)) return
    seen.add(key)
    const p = pkgs[key]
    const optional = new Set([...Object.keys(p.optionalDependencies ?? {}), ...Object.keys(p.peerDependencies ?? {})])
    for (const dep of Object.keys({ ...p.dependencies, ...p.optionalDependencies, ...p.peerDependencies })) {
      const found = find(key, dep)
      if (found) visit(found)
      else if (!optional.has(dep)) missing.push(`${dep} (needed by ${key})`)
    }
  }
  for (const name of names) {
    const key = find('', name)
    if (key) visit(key)
    else missing.push(name)
  }
  return { dirs: [...seen].sort(), missing }
}

/**
 * Files of an installed package folder, without nested node_modules (those are separate closure entries) or .bin links.
 */
function packageFiles (dir) {
  const out = []
  for (const ent of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, ent.name)
    if (ent.isDirectory()) {
      if (ent.name !== 'node_modules') out.push(...packageFiles(full))
    } else if (ent.isFile()) {
      out.push(full)
    }
  }
  return out
}

/**
 * Source files and what they import (relative imports followed), package.json, and the production dependency closure
 * of the packages they import and of `extraPackages`, named relative to the project root.
 * @param {string} root project root
 * @param {string[]} starts absolute source files
 * @param {{ extraPackages?: Iterable<string>, needs?: string }} [opts] needs: what needs them, for the message
 * @returns {{ entries: ContextEntry[], packages: Set<string> }}
 */
function codeTree (root, starts, { extraPackages = [], needs = 'the image' } = {}) {
  const own = importClosure(starts)
  const packages = new Set([...own.packages, ...extraPackages])
  const entries = own.files.map(f => ({ name: relative(root, f), source: f }))
  entries.push({ name: 'package.json', source: join(root, 'package.json') })
  const { dirs, missing } = dependencyClosure(root, packages)
  const hard = missing.filter(m => !m.includes('(needed by'))
  if (hard.length) {
    throw fail('PACKAGES_NOT_INSTALLED', { needs, missing: hard, dir: join(root, 'node_modules') })
  }
  for (const key of dirs) {
    for (const f of packageFiles(join(root, key))) entries.push({ name: relative(root, f), source: f })
  }
  return { entries, packages }
}

/**
 * The /app tree of the register image: register/, benchmarks/, what they import, package.json, production node_modules,
 * custom apps.
 * @param {string} root project root
 * The same with other `dirs` makes other images' trees (the RC: dirs ['rc'], required 'rc').
 * @param {{ apps?: string[], dirs?: string[], extraPackages?: string[], required?: string }} [opts]
 * @returns {{ entries: ContextEntry[], apps: { source: string, path: string }[], packages: string[] }}
 */
export function registerTree (root, { apps = [], dirs = ['register', 'benchmarks'], extraPackages = ['pm2'], required = 'register' } = {}) {
  const starts = dirs.map(d => join(root, d)).filter(d => existsSync(d)).flatMap(d => listFiles(d))
  if (!starts.some(f => f.startsWith(join(root, required) + sep))) {
    throw fail('IMAGE_FOLDER_MISSING', { dir: join(root, required) })
  }
  const appEntries = []
  const appPackages = new Set(extraPackages)
  const appOut = []
  const used = new Set()
  for (const app of apps) {
    if (app.startsWith('cmd:')) continue
    const abs = resolve(app)
    if (!existsSync(abs)) throw badApp('', `no file or folder at ${abs}`)
    let name = basename(abs)
    for (let i = 2; used.has(name); i++) name = `${basename(abs)}-${i}`
    used.add(name)
    const isDir = statSync(abs).isDirectory()
    const base = isDir ? abs : dirname(abs)
    const closure = importClosure(isDir ? listFiles(abs) : [abs], { within: base })
    for (const f of closure.files) appEntries.push({ name: join('apps', name, isDir ? relative(abs, f) : relative(base, f)), source: f })
    if (isDir && existsSync(join(abs, 'node_modules'))) {
      // An app folder with its own dependencies brings them along.
      for (const f of packageFiles(join(abs, 'node_modules'))) appEntries.push({ name: join('apps', name, relative(abs, f)), source: f })
    } else {
      for (const p of closure.packages) appPackages.add(p)
    }
    appOut.push({ source: abs, path: isDir ? `/app/apps/${name}` : `/app/apps/${name}/${basename(abs)}` })
  }
  const { entries, packages } = codeTree(root, starts, { extraPackages: appPackages })
  return { entries: dedupe([...entries, ...appEntries]), apps: appOut, packages: [...packages].sort() }
}

/**
 * Folders that hold credentials, left out of a server's image wherever they are in its folder (a path relative to it
 * that ends with one of these).
 */
export const CREDENTIAL_DIRS = Object.freeze(['.ssh', '.gnupg', '.aws', '.azure', '.kube', '.docker', '.config/gcloud', '.cache/nodescale'])

/** Docker's .dockerignore rules (a CommonJS package: its default export is the factory itself). */
const ignore = /** @type {() => import('@balena/dockerignore').Ignore} */ (/** @type {any} */ (dockerignoreModule))

const realOr = (p) => { try { return realpathSync(p) } catch { return resolve(p) } }

/** nodescale's own secrets as saved on this machine (the RC token, the registry password), to find copies of them. */
function savedSecrets () {
  const texts = [readCacheJson('control-plane.json')?.token, readCacheJson('registry.json')?.password]
  return texts.filter(t => typeof t === 'string' && t.length >= 16).map(t => Buffer.from(t))
}

/** Whether a file holds one of the texts, read in 1 MB chunks (a copy that straddles two chunks is found too). */
function holdsAny (file, needles) {
  if (!needles.length) return false
  const overlap = Math.max(...needles.map(n => n.length)) - 1
  const buf = Buffer.alloc((1 << 20) + overlap)
  const fd = openSync(file, 'r')
  try {
    let kept = 0
    for (;;) {
      const n = readSync(fd, buf, kept, buf.length - kept, null)
      const view = buf.subarray(0, kept + n)
      if (needles.some(x => view.includes(x))) return true
      if (n === 0) return false
      kept = Math.min(overlap, view.length)
      view.copyWithin(0, view.length - kept)
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * Why a path of a server's folder stays out of its image, or null: .git, credential folders (CREDENTIAL_DIRS),
 * nodescale's cache folder, a dot folder of the home, or the folder's .dockerignore (Docker's own rules).
 * @param {string} folder
 * @returns {(rel: string) => string | null} rel: relative to the folder, with /
 */
function serverRules (folder) {
  const file = join(folder, '.dockerignore')
  const dockerignore = ignore().add(existsSync(file) ? readFileSync(file, 'utf8') : '')
  const home = realOr(homedir())
  const cache = realOr(cacheDir())
  const root = realOr(folder)
  return (rel) => {
    if (basename(rel) === '.git') return 'git'
    if (CREDENTIAL_DIRS.some(d => rel === d || rel.endsWith(`/${d}`))) return 'credentials'
    const abs = join(root, rel)
    if (abs === cache) return 'nodescale\'s cache, its tokens'
    if (dirname(abs) === home && basename(abs).startsWith('.')) return 'a dot folder of the home'
    if (dockerignore.ignores(rel)) return '.dockerignore'
    return null
  }
}

/**
 * Every file under dir, nested node_modules included, as paths relative to dir, but what serverRules leaves out and
 * symlinks; what was left out, with why.
 * @param {string} dir
 * @returns {{ files: string[], left: { path: string, why: string }[] }}
 */
function folderFiles (dir) {
  const why = serverRules(dir)
  const files = []
  const left = []
  const walk = (rel) => {
    for (const ent of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${ent.name}` : ent.name
      if (!ent.isDirectory() && !ent.isFile()) continue
      const reason = why(r)
      if (reason && ent.isDirectory() && reason !== '.dockerignore') {
        left.push({ path: `${r}/`, why: reason })
      } else if (ent.isDirectory()) {
        // a folder .dockerignore leaves out may hold files it takes back (!pattern): its files are looked at one by one
        if (reason) left.push({ path: `${r}/`, why: reason })
        walk(r)
      } else if (reason) {
        left.push({ path: r, why: reason })
      } else {
        files.push(r)
      }
    }
  }
  walk('')
  // a file that holds a copy of nodescale's own secrets stays out too, whatever its name
  const secrets = savedSecrets()
  const kept = files.filter(f => !holdsAny(join(dir, f), secrets))
  for (const f of files) if (!kept.includes(f)) left.push({ path: f, why: 'holds a nodescale secret' })
  return { files: kept, left }
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 1)} MB`

/**
 * What a server's image carries, in words: how many files, their size, the largest, and what was left out and why.
 * @param {{ folder: string, entries: ContextEntry[], left: { path: string, why: string }[] }} tree
 */
export function serverTreeText ({ folder, entries, left }) {
  const sized = entries.map(e => ({ name: e.name.replace(/^server\//, ''), size: e.source ? statSync(e.source).size : 0 }))
  const total = sized.reduce((a, e) => a + e.size, 0)
  const largest = [...sized].sort((a, b) => b.size - a.size).slice(0, 3).map(e => `${e.name} ${mb(e.size)}`)
  // a folder left out shows once, not file by file
  const shown = left.filter(l => !left.some(o => o !== l && o.path.endsWith('/') && l.path.startsWith(o.path) && o.why === l.why))
  const out = shown.slice(0, 8).map(l => `${l.path} (${l.why})`)
  return `server: ${folder} into ${SERVER_DIR}: ${entries.length} files, ${mb(total)}; largest: ${largest.join(', ')}` +
    (shown.length ? `; left out: ${out.join(', ')}${shown.length > out.length ? ` and ${shown.length - out.length} more` : ''}` : '')
}

/** Where a --server's folder goes in the register image. */
export const SERVER_DIR = '/server'

/**
 * A user's whole server (--server FILE on Swarm) for the register image: its folder (`serverFolder`: the nearest one
 * with a package.json; never the home folder, / or a folder above the home) under server/, node_modules and all, but
 * .git, symlinks, credential folders, nodescale's cache and secrets, and what its .dockerignore leaves out; the entry
 * file as node runs it in the image: its real path under /server (node_modules/.bin/<cli> is a link to the package's
 * own file).
 * @param {string} entry absolute, on this machine
 * @param {{ log?: (line: string) => void }} [opts] log: what went in and what was left out
 * @returns {{ folder: string, entry: string, entries: ContextEntry[], left: { path: string, why: string }[] }} entry:
 *   the path inside the image
 */
export function serverTree (entry, { log } = {}) {
  const folder = serverFolder(entry)
  checkServerFolder(folder, entry)
  const realFolder = realpathSync(folder)
  const realEntry = realpathSync(entry)
  const rel = relative(realFolder, realEntry)
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) {
    throw badFlag('--server', `${entry} is really ${realEntry}, outside the folder the server runs from (${realFolder}, the nearest with a package.json); ` +
      'the image carries that folder only: give the entry file inside it', { key: 'server' })
  }
  const { files, left } = folderFiles(folder)
  const relEntry = rel.split(sep).join('/')
  if (!files.includes(relEntry)) {
    const out = left.find(l => l.path === relEntry) ?? left.find(l => l.path.endsWith('/') && relEntry.startsWith(l.path))
    if (out) throw badFlag('--server', `${entry} is left out of the image (${out.path}: ${out.why}); give an entry file the image carries`, { key: 'server' })
    throw badFlag('--server',
      `${entry} (really ${realEntry}) is reached through a symbolic link inside ${folder}, and the image carries no links: give the file's own path`,
      { key: 'server' })
  }
  const entries = files.map(f => {
    const source = join(folder, f)
    return { name: `server/${f}`, source, mode: statSync(source).mode & 0o777 }
  })
  const tree = { folder, entry: `${SERVER_DIR}/${relEntry}`, entries, left }
  log?.(serverTreeText(tree))
  return tree
}

/** Where nodescale's launchers go in a user's image (--image with cm or pm2). */
export const LAUNCHER_DIR = '/opt/nodescale'
/** The launchers a user's image needs, each with what it imports: the cluster primary, the PM2 starter, the hook. */
const LAUNCHERS = Object.freeze(['register/cluster.js', 'register/pm2-start.js', 'register/server-hook.js'])

/**
 * nodescale's launchers for a user's own image: the cluster primary, the PM2 starter and the hook with their import
 * closure (register/, lib/), our package.json (the files are ES modules) and PM2's production dependency closure,
 * named as they go under /opt/nodescale (`opt/nodescale/...`). Nothing of the user's image is touched.
 * @param {string} root project root
 * @returns {ContextEntry[]}
 */
export function launcherTree (root) {
  const { entries } = codeTree(root, LAUNCHERS.map(f => join(root, f)), { extraPackages: ['pm2'], needs: 'the launchers' })
  const prefix = LAUNCHER_DIR.replace(/^\//, '')
  return dedupe(entries.map(e => ({ ...e, name: `${prefix}/${e.name}` })))
}

function dedupe (entries) {
  const byName = new Map()
  for (const e of entries) byName.set(e.name.split(sep).join('/'), { ...e, name: e.name.split(sep).join('/') })
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * The shared libraries `ldd` lists for a binary (absolute paths, the loader included).
 * @param {string} binary
 * @returns {string[]}
 */
export function sharedLibraries (binary) {
  const r = spawnSync('ldd', [binary], { encoding: 'utf8', timeout: 10000 })
  if (r.error || r.status !== 0) {
    throw fail('LDD_FAILED', { binary, why: r.error?.message ?? r.stderr.trim() })
  }
  const libs = []
  for (const line of r.stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line)
    if (m) libs.push(m[1])
  }
  return [...new Set(libs)].sort()
}

/** The shared libraries of a binary as rootfs entries at their own paths. */
function libraryEntries (binary) {
  return sharedLibraries(binary).map(lib => ({ name: lib.replace(/^\//, ''), source: realpathSync(lib), mode: lstatSync(realpathSync(lib)).mode & 0o777 }))
}

/**
 * A minimal root filesystem for a FROM scratch image: binaries at their paths (symlinks followed), their libraries,
 * /etc/passwd, /etc/group and /tmp.
 * @param {{ binaries: { source: string, path: string }[] }} opts
 * @returns {ContextEntry[]} names relative to the rootfs
 */
export function hostRootfs ({ binaries }) {
  const entries = []
  for (const { source, path } of binaries) {
    const real = realpathSync(source)
    entries.push({ name: path.replace(/^\//, ''), source: real, mode: 0o755 })
    entries.push(...libraryEntries(real))
  }
  entries.push({
    name: 'etc/passwd',
    content: Buffer.from('root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n'),
    mode: 0o644
  })
  entries.push({ name: 'etc/group', content: Buffer.from('root:x:0:\nnogroup:x:65534:\n'), mode: 0o644 })
  entries.push({ name: 'tmp', type: 'directory', mode: 0o1777 })
  entries.push({ name: 'root', type: 'directory', mode: 0o700 })
  return dedupe(entries)
}

/** What a JVM that runs JMeter without a screen does not need: sources, compile-time files, docs, X11 and GUI parts. */
const JVM_SKIP = new RegExp(String.raw`^(bin\/(?!java$)|jmods|docs|include|man|legal|demo|lib\/src\.zip|lib\/ct\.sym|lib\/libawt_xawt\.so|` +
  String.raw`lib\/libsplashscreen\.so|lib\/libatk-wrapper\.so|lib\/libjawt\.so)`)

/** Files under a folder as [path relative to it, real path], following symlinks and skipping broken ones. */
function treeFiles (dir, rel = '') {
  const out = []
  for (const ent of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const r = rel ? `${rel}/${ent.name}` : ent.name
    let real
    try { real = realpathSync(join(dir, r)) } catch { continue }
    if (statSync(real).isDirectory()) out.push(...treeFiles(dir, r))
    else out.push([r, real])
  }
  return out
}

/**
 * The host's Java runtime under /opt/java (its libraries where ldd finds them) and a JMeter install under /opt/jmeter,
 * for the load image of a `--driver jmeter --load-nodes` run: the same JVM and JMeter as the executor's host runs.
 * @param {{ javaHome: string, jmeterHome: string }} opts
 * @returns {ContextEntry[]} names relative to the rootfs
 */
export function jvmRootfs ({ javaHome, jmeterHome }) {
  const entries = []
  const libsOf = new Set()
  for (const [rel, real] of treeFiles(javaHome)) {
    if (JVM_SKIP.test(rel)) continue
    entries.push({ name: `opt/java/${rel}`, source: real, mode: statSync(real).mode & 0o777 })
    if (rel === 'bin/java' || /\.so$/.test(rel)) libsOf.add(real)
  }
  for (const file of libsOf) {
    // a library whose own dependencies are not installed is one the headless JVM never loads
    try { entries.push(...libraryEntries(file)) } catch {}
  }
  for (const [rel, real] of treeFiles(jmeterHome)) entries.push({ name: `opt/jmeter/${rel}`, source: real, mode: statSync(real).mode & 0o777 })
  return dedupe(entries)
}
