// Builds the register and HAProxy images through the Docker API from a streamed tar context, tagged by a content hash
// so an unchanged tree is reused; reads a user's own image (--image) and adds nodescale's launchers to it.
import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, statSync, realpathSync } from 'node:fs'
import { dirname, posix } from 'node:path'
import { spawnSync } from 'node:child_process'
import { pipeline } from 'node:stream/promises'
import tar from 'tar-stream'
import { ROOT } from '../../lib/paths.js'
import { badFlag, internalError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { withTimeout } from '../../lib/with-timeout.js'
import { dockerError, dockerMessage } from './engine.js'
import { demuxLogs } from './stack-wait.js'
import { registerTree, hostRootfs, jvmRootfs, serverTree, launcherTree } from './image-context.js'
import { haproxyVersion } from '../haproxy.js'
import { APP_PORT, LOAD_AGENT_PORT, RC_PORT, REGISTRY_PORT } from '../../lib/wire.js'
import { registryAuthFor } from './registry-auth.js'

/** @typedef {import('./image-context.js').ContextEntry} ContextEntry */

export const IMAGE_BASES = Object.freeze(['auto', 'registry', 'host'])
export const IMAGE_KINDS = Object.freeze(['register', 'haproxy', 'rc', 'registry', 'load'])
const PATH_ENV = 'PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin'
const EPOCH = new Date(0)

const fileHashes = new Map()
/**
 * Files up to this size are read whole: a stream per file costs more than its hash (the register's 3,668 files took
 * 2.3 s streamed, 0.12 s read whole), and every Swarm run checks its images this way.
 */
const READ_WHOLE_BYTES = 1 << 20
/** sha256 of a file, remembered by path, size and mtime: the node binary is 100 MB and rarely changes. */
async function hashFile (path) {
  const st = statSync(path)
  const key = `${path}\0${st.size}\0${st.mtimeMs}`
  if (fileHashes.has(key)) return fileHashes.get(key)
  const h = createHash('sha256')
  if (st.size <= READ_WHOLE_BYTES) h.update(readFileSync(path))
  else await pipeline(createReadStream(path), h)
  const digest = h.digest('hex')
  fileHashes.set(key, digest)
  return digest
}

/**
 * The content hash of a build context: Dockerfile text plus every entry's name, mode and content.
 * @param {string} dockerfile
 * @param {ContextEntry[]} entries
 */
export async function contextHash (dockerfile, entries) {
  const h = createHash('sha256').update(dockerfile).update('\0')
  for (const e of entries) {
    const body = e.type === 'directory' ? 'dir' : e.content ? createHash('sha256').update(e.content).digest('hex') : await hashFile(e.source)
    h.update(`${e.name}\0${(e.mode ?? 0o644).toString(8)}\0${body}\n`)
  }
  return h.digest('hex')
}

/** Streams the Dockerfile and the entries into a tar pack, one after the other. */
async function fillTar (pack, dockerfile, entries) {
  try {
    pack.entry({ name: 'Dockerfile', mode: 0o644, mtime: EPOCH }, dockerfile)
    for (const e of entries) {
      if (e.type === 'directory') {
        pack.entry({ name: e.name, type: 'directory', mode: e.mode ?? 0o755, mtime: EPOCH })
      } else if (e.content) {
        pack.entry({ name: e.name, mode: e.mode ?? 0o644, mtime: EPOCH }, e.content)
      } else {
        const size = statSync(e.source).size
        const sink = pack.entry({ name: e.name, size, mode: e.mode ?? 0o644, mtime: EPOCH })
        await pipeline(createReadStream(e.source), sink)
      }
    }
    pack.finalize()
  } catch (err) {
    pack.destroy(err)
  }
}

/** Reads the build's JSON-lines progress; resolves with the image id, rejects with the builder's error text. */
function followBuild (stream, log) {
  return new Promise((resolve, reject) => {
    let buf = ''
    let id = null
    let error = null
    const tail = []
    stream.on('data', chunk => {
      buf += chunk.toString()
      let nl
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim()
        buf = buf.slice(nl + 1)
        if (!line) continue
        let evt
        try { evt = JSON.parse(line) } catch { continue }
        if (evt.error) error = evt.errorDetail?.message ?? evt.error
        if (evt.aux?.ID) id = evt.aux.ID
        if (evt.stream?.trim()) {
          tail.push(evt.stream.trim())
          if (tail.length > 8) tail.shift()
          if (/^Step \d+\/\d+/.test(evt.stream)) log(`  ${evt.stream.trim()}`)
        }
      }
    })
    stream.on('error', reject)
    stream.on('end', () => (error ? reject(Object.assign(new Error(error), { tail })) : resolve(id)))
  })
}

async function imageId (docker, tag) {
  try {
    return (await docker.getImage(tag).inspect()).Id
  } catch (err) {
    if (/** @type {any} */ (err).statusCode === 404) return null
    throw dockerError(err, `inspecting image ${tag}`)
  }
}

/**
 * Builds `<repo>:<hash12>` from a Dockerfile and entries, unless an image with that tag exists.
 * @param {import('dockerode')} docker
 * @param {{ repo: string, dockerfile: string, entries: ContextEntry[], log?: (line: string) => void }} opts
 * @returns {Promise<{ tag: string, id: string, reused: boolean }>}
 */
export async function buildContext (docker, { repo, dockerfile, entries, log = () => {} }) {
  const tag = `${repo}:${(await contextHash(dockerfile, entries)).slice(0, 12)}`
  const existing = await imageId(docker, tag)
  if (existing) return { tag, id: existing, reused: true }
  log(`image: building ${tag} (${entries.length} files)`)
  const pack = tar.pack()
  const filling = fillTar(pack, dockerfile, entries)
  let stream
  try {
    stream = await docker.buildImage(/** @type {any} */ (pack), { t: tag, rm: true, forcerm: true })
  } catch (err) {
    pack.destroy()
    throw dockerError(err, `building ${tag}`)
  }
  let id
  try {
    id = await followBuild(stream, log)
  } catch (err) {
    throw fail('IMAGE_BUILD_FAILED', { tag, said: dockerMessage(err), tail: err.tail }, { cause: err })
  }
  await filling
  return { tag, id: id ?? await imageId(docker, tag), reused: false }
}

/** The images of nodescale's own Node programs: the folders whose files (and what they import) go in, the entry. */
const NODE_IMAGES = Object.freeze({
  register: { dirs: ['register'], main: 'register/serve.js', port: APP_PORT },
  rc: { dirs: ['rc'], main: 'rc/service.js', port: RC_PORT },
  // the drivers' folder whole: the autocannon driver spawns its child (load-child.js) by path, not by import
  load: { dirs: ['executor/load-agent', 'executor/drivers'], main: 'executor/load-agent/agent.js', port: LOAD_AGENT_PORT }
})

/** The registry image a kind builds on. */
export function registryBaseFor (kind) {
  if (kind === 'haproxy') return `haproxy:${/^\d+\.\d+/.exec(haproxyVersion() ?? '')?.[0] ?? 'lts'}`
  if (kind === 'registry') return 'registry:2'
  return `node:${process.versions.node.split('.')[0]}-slim`
}

/**
 * Pulls an image through the API and resolves when its progress stream ends; rejects on an error in the stream.
 * @param {import('dockerode')} docker
 * @param {string} name
 */
export async function pullImage (docker, name) {
  // the builtin registry's credentials when the image comes from there
  const stream = await docker.pull(name, { authconfig: registryAuthFor(name) })
  return new Promise((resolve, reject) => docker.modem.followProgress(stream, (err, out) => {
    const failed = err ?? out?.find(o => o.error)?.error
    failed ? reject(new Error(String(failed))) : resolve(out)
  }))
}

async function tryPull (docker, name, timeoutMs) {
  try {
    await withTimeout(pullImage(docker, name), timeoutMs)
    return { ok: true }
  } catch (err) {
    return { ok: false, why: dockerMessage(err) }
  }
}

/**
 * Picks the base: `registry` when the registry image is here or can be pulled, else `host`; says which.
 * @param {import('dockerode')} docker
 * @param {{ kind: 'register' | 'haproxy' | 'rc' | 'registry' | 'load', base: string, log: (line: string) => void,
 *   pullTimeoutMs?: number }} opts
 * @returns {Promise<{ base: 'registry' | 'host', from: string | null }>}
 */
export async function resolveBase (docker, { kind, base, log, pullTimeoutMs = 20000 }) {
  if (!IMAGE_BASES.includes(base)) throw internalError(`--base: "${base}" is not one of: ${IMAGE_BASES.join(', ')} (the command line lets no other through)`)
  const name = registryBaseFor(kind)
  if (base === 'host') return { base: 'host', from: null }
  if (await imageId(docker, name)) {
    if (base === 'auto') log(`image: base auto -> registry (${name} is present)`)
    return { base: 'registry', from: name }
  }
  const pulled = await tryPull(docker, name, pullTimeoutMs)
  if (pulled.ok) {
    log(`image: pulled ${name}${base === 'auto' ? '; base auto -> registry' : ''}`)
    return { base: 'registry', from: name }
  }
  if (base === 'registry') {
    throw fail('BASE_NOT_PULLED', { name, why: pulled.why })
  }
  log(`image: base auto -> host (${name} is not here and cannot be pulled: ${pulled.why})`)
  return { base: 'host', from: null }
}

function label (kind, base) {
  return `LABEL io.nodescale.kind="${kind}" io.nodescale.base="${base}"`
}

/**
 * The FROM scratch image with the host's node binary (the register's host base).
 * @param {import('dockerode')} docker
 * @param {(line: string) => void} [log]
 */
export async function nodeHostBase (docker, log = () => {}) {
  const entries = hostRootfs({ binaries: [{ source: process.execPath, path: '/usr/local/bin/node' }] }).map(e => ({ ...e, name: `rootfs/${e.name}` }))
  const dockerfile = ['FROM scratch', 'COPY rootfs/ /', `ENV ${PATH_ENV}`, label('node-base', 'host'), ''].join('\n')
  return buildContext(docker, { repo: 'nodescale/node-base', dockerfile, entries, log })
}

/** A plain-HTTP registry without auth, its blobs under /var/lib/registry (a volume), as `registry:2` configures it. */
const REGISTRY_CONFIG = `version: 0.1
log: { fields: { service: registry } }
storage:
  filesystem: { rootdirectory: /var/lib/registry }
  delete: { enabled: true }
http: { addr: ":${REGISTRY_PORT}" }
`

/**
 * The host's program on PATH (or sbin) for an image made of host files, or a missing-part error that says how to
 * install it.
 * @param {string} name
 * @param {'HAPROXY_NOT_ON_HOST' | 'REGISTRY_NOT_ON_HOST' | 'JAVA_NOT_ON_HOST'} missing its message
 * @param {string} [image] the image that needs it, for the message
 */
function hostProgram (name, missing, image = 'the host image base') {
  const found = spawnSync('sh', ['-c', `PATH="$PATH:/usr/sbin:/sbin" command -v ${name}`], { encoding: 'utf8' }).stdout.trim()
  if (!found) throw fail(missing, { image, name })
  return found
}

/**
 * A FROM scratch image of one host program, its libraries and extra rootfs entries.
 * @param {import('dockerode')} docker
 * @param {{ kind: string, binary: string, path: string, cmd: string[], extra?: ContextEntry[], log: (line: string) =>
 *   void }} opts
 */
function hostProgramImage (docker, { kind, binary, path, cmd, extra = [], log }) {
  const entries = [...hostRootfs({ binaries: [{ source: binary, path }] }), ...extra].map(e => ({ ...e, name: `rootfs/${e.name}` }))
  const dockerfile = ['FROM scratch', 'COPY rootfs/ /', `ENV ${PATH_ENV}`, `CMD ${JSON.stringify(cmd)}`, label(kind, 'host'), ''].join('\n')
  return buildContext(docker, { repo: `nodescale/${kind}`, dockerfile, entries, log })
}

/**
 * Builds (or reuses) the image a stack needs. register: register/ + benchmarks/ + what they import + production
 * node_modules + custom apps, on node (registry) or the host's node (host); with `server` (--server FILE), also that
 * server's whole folder under /server (`serverTree`), so a change to any of its files is a new tag. haproxy: the
 * registry haproxy image, or the host's /usr/sbin/haproxy and its libraries FROM scratch. rc: rc/ and what it imports
 * (the resource collector service of docker-compose.yml), on the same node base. registry: the control plane's image
 * registry: `registry:2`, or Debian's docker-registry binary FROM scratch. load: the load generator agent of
 * --load-nodes runs (executor/load-agent/, the drivers, what they import), on the node base; with `jmeterHome`, also
 * the host's JVM (/opt/java) and that JMeter install (/opt/jmeter), as nodescale/load-jmeter.
 *
 * A server's native addons (.node files in its node_modules) were built on this machine for its node and its C
 * library. The host base carries this machine's node and the libraries ldd lists for it, so they load as they do here
 * (an addon's own extra libraries, if any, are not carried). The registry base is node:<major>-slim, Debian 12's
 * glibc: an addon built on a glibc of that age or older loads; one built against a newer glibc, or against musl, does
 * not, and the server fails at start with its dlopen error: rebuild it there (npm rebuild inside node:<major>-slim)
 * or use the host base.
 * @param {import('dockerode')} docker
 * @param {{ kind: 'register' | 'haproxy' | 'rc' | 'registry' | 'load', base?: 'auto' | 'registry' | 'host', apps?:
 *   string[], log?: (line: string) => void, root?: string, pullTimeoutMs?: number, jmeterHome?: string | null,
 *   server?: string }} opts
 * @returns {Promise<{ tag: string, id: string, base: 'registry' | 'host', reused: boolean, apps: { source: string,
 *   path: string }[], server: { entry: string, folder: string } | null }>} server.entry: the entry file in the image
 */
export async function buildImage (docker, { kind, base = 'auto', apps = [], log = () => {}, root = ROOT, pullTimeoutMs, jmeterHome, server }) {
  if (!IMAGE_KINDS.includes(kind)) throw internalError(`image kind "${kind}" is not one of: ${IMAGE_KINDS.join(', ')}`)
  const chosen = await resolveBase(docker, { kind, base, log, pullTimeoutMs })
  if (server !== undefined && kind !== 'register') throw internalError(`a --server goes into the register image, not the ${kind} image`)
  let built
  let appPaths = []
  const own = server === undefined ? null : serverTree(server, { log })
  if (kind === 'haproxy' || kind === 'registry') {
    if (chosen.base === 'registry') {
      built = await buildContext(docker, {
        repo: `nodescale/${kind}`,
        dockerfile: [`FROM ${chosen.from}`, ...(kind === 'haproxy' ? ['USER root'] : []), label(kind, 'registry'), ''].join('\n'),
        entries: [],
        log
      })
    } else if (kind === 'haproxy') {
      const binary = hostProgram('haproxy', 'HAPROXY_NOT_ON_HOST')
      const extra = [
        { name: 'var/lib/haproxy', type: /** @type {'directory'} */ ('directory'), mode: 0o755 },
        { name: 'run', type: /** @type {'directory'} */ ('directory'), mode: 0o755 }
      ]
      built = await hostProgramImage(docker, { kind, binary, path: '/usr/sbin/haproxy', cmd: ['haproxy', '-v'], extra, log })
    } else {
      const binary = hostProgram('docker-registry', 'REGISTRY_NOT_ON_HOST')
      const extra = [
        { name: 'etc/docker/registry/config.yml', content: Buffer.from(REGISTRY_CONFIG), mode: 0o644 },
        { name: 'var/lib/registry', type: /** @type {'directory'} */ ('directory'), mode: 0o755 }
      ]
      built = await hostProgramImage(docker, { kind, binary, path: '/bin/registry', cmd: ['registry', 'serve', '/etc/docker/registry/config.yml'], extra, log })
    }
  } else {
    const from = chosen.base === 'registry' ? chosen.from : (await nodeHostBase(docker, log)).tag
    const tree = kind === 'register'
      ? registerTree(root, { apps })
      : registerTree(root, { dirs: NODE_IMAGES[kind].dirs, required: NODE_IMAGES[kind].dirs[0], extraPackages: [] })
    appPaths = tree.apps
    // a load image for the jmeter driver carries the host's JVM and JMeter install
    const jvm = kind === 'load' && jmeterHome
      ? jvmRootfs({
        javaHome: dirname(dirname(realpathSync(
          hostProgram('java', 'JAVA_NOT_ON_HOST', 'the load image for --driver jmeter (it carries the JVM)')
        ))),
        jmeterHome
      })
      : []
    const dockerfile = [
      `FROM ${from}`,
      'WORKDIR /app',
      'COPY app/ /app/',
      ...(own ? ['COPY server/ /server/'] : []),
      ...(jvm.length
        ? ['COPY rootfs/ /', `ENV JAVA_HOME=/opt/java NODESCALE_JMETER_HOME=/opt/jmeter ${PATH_ENV.replace('PATH=', 'PATH=/opt/java/bin:')}`]
        : []),
      // pm2 keeps its state under PM2_HOME; HOME may not exist in a scratch image.
      'ENV NODE_ENV=production HOME=/tmp PM2_HOME=/tmp/.pm2',
      `EXPOSE ${NODE_IMAGES[kind].port}`,
      `CMD ["node", "${NODE_IMAGES[kind].main}"]`,
      label(kind, chosen.base),
      ''
    ].join('\n')
    const entries = [
      ...tree.entries.map(e => ({ ...e, name: `app/${e.name}` })),
      ...(own?.entries ?? []),
      ...jvm.map(e => ({ ...e, name: `rootfs/${e.name}` }))
    ]
    built = await buildContext(docker, { repo: `nodescale/${jvm.length ? 'load-jmeter' : kind}`, dockerfile, entries, log })
  }
  log(`image: ${built.tag} (${chosen.base} base${built.reused ? ', unchanged: reused' : ', built'}${own ? `; the server ${own.folder} at /server` : ''})`)
  return { ...built, base: chosen.base, apps: appPaths, server: own && { entry: own.entry, folder: own.folder } }
}

// A user's own image (--image): read it, find its node and its entry file, add nodescale's launchers to it.

/**
 * What nodescale reads of a user's image on the manager's engine: its id, command, working folder, exposed ports and
 * environment. An image the engine does not have is exit 2, with how to get it there.
 * @param {import('dockerode')} docker
 * @param {string} ref
 * @returns {Promise<{ ref: string, id: string, entrypoint: string[], cmd: string[], workingDir: string, exposed:
 *   number[], env: Record<string, string> }>}
 */
export async function inspectUserImage (docker, ref) {
  let info
  try {
    info = await docker.getImage(ref).inspect()
  } catch (err) {
    if (/** @type {any} */ (err).statusCode === 404) {
      throw badFlag('--image', `${ref} is not an image of this machine's Docker engine (the swarm's manager, where nodescale starts from): ` +
        `build it here (docker build -t ${ref} .), load it (docker load -i FILE) or pull it (docker pull ${ref}) first`, { key: 'image' })
    }
    throw dockerError(err, `inspecting image ${ref}`)
  }
  const c = /** @type {any} */ (info.Config ?? {})
  const exposed = Object.keys(c.ExposedPorts ?? {}).filter(p => /\/tcp$/.test(p) || !p.includes('/')).map(p => Number(p.split('/')[0])).sort((a, b) => a - b)
  const env = Object.fromEntries((c.Env ?? []).map(e => [
    e.slice(0, e.indexOf('=') < 0 ? e.length : e.indexOf('=')),
    e.includes('=') ? e.slice(e.indexOf('=') + 1) : ''
  ]))
  const list = (v) => (v === null || v === undefined ? [] : [].concat(v))
  return { ref, id: info.Id, entrypoint: list(c.Entrypoint), cmd: list(c.Cmd), workingDir: c.WorkingDir || '/', exposed, env }
}

/**
 * The port a user's image listens on in its container: --container-port, else its one EXPOSEd TCP port, else 8080;
 * `why` says which, for the log.
 * @param {{ exposed: number[] }} image
 * @param {number} [containerPort]
 * @returns {{ port: number, why: string }}
 */
export function userImagePort (image, containerPort) {
  if (containerPort !== undefined) return { port: containerPort, why: '--container-port' }
  if (image.exposed.length === 1) return { port: image.exposed[0], why: 'the one port the image EXPOSEs' }
  if (image.exposed.length > 1) {
    return { port: APP_PORT, why: `the image EXPOSEs ${image.exposed.join(', ')}, so no one of them is its port: assumed ${APP_PORT} (give --container-port)` }
  }
  return { port: APP_PORT, why: `the image EXPOSEs no port: assumed ${APP_PORT} (give --container-port)` }
}

/**
 * Whether a node version can preload nodescale's hook with --import (18.19 and later in 18, 20.6 and later).
 * @param {string} version as `node --version` prints it
 */
export function nodeHasImport (version) {
  const m = /^v?(\d+)\.(\d+)\./.exec(version.trim())
  if (!m) return false
  const [major, minor] = [Number(m[1]), Number(m[2])]
  return (major === 18 && minor >= 19) || (major === 20 && minor >= 6) || major >= 21
}

/**
 * `node --version` in a throwaway container of the image (no network, removed after): the version, or null and why.
 * @param {import('dockerode')} docker
 * @param {string} ref
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<{ version: string | null, why: string }>}
 */
export async function imageNodeVersion (docker, ref, { timeoutMs = 30_000 } = {}) {
  let container
  try {
    container = await docker.createContainer({
      Image: ref,
      Entrypoint: ['node'],
      Cmd: ['--version'],
      Labels: { 'io.nodescale.probe': 'node-version' },
      HostConfig: { NetworkMode: 'none' }
    })
  } catch (err) {
    throw dockerError(err, `creating a container of ${ref} to run node --version`)
  }
  try {
    try {
      await container.start()
    } catch (err) {
      // the runtime could not start node: it is not in the image (or not on its PATH)
      return { version: null, why: `node does not start in it (${dockerMessage(err)})` }
    }
    const { StatusCode } = await withTimeout(container.wait(), timeoutMs)
    const out = demuxLogs(await container.logs({ stdout: true, stderr: true })).trim()
    if (StatusCode !== 0 || !/^v\d+\.\d+\.\d+/.test(out)) {
      return { version: null, why: `node --version exited with ${StatusCode}: ${out.slice(0, 200) || 'no output'}` }
    }
    return { version: out.split('\n')[0], why: '' }
  } catch (err) {
    return { version: null, why: `node --version did not answer: ${dockerMessage(err)}` }
  } finally {
    await container.remove({ force: true }).catch(() => {})
  }
}

// node options that take the next argument as their value, and those that run no file
const NODE_VALUE_OPTIONS = new Set([
  '-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--env-file', '--title', '--inspect-port',
  '--openssl-config', '--icu-data-dir', '--redirect-warnings', '--diagnostic-dir', '--report-dir'
])
const NODE_NO_FILE = /^(-e|-p|--eval|--print|-i|--interactive|--test|-c|--check|-v|--version|-h|--help)(=|$)/
const SHELLS = /(^|\/)(sh|bash|dash|ash)$/

/**
 * The entry file an image's command runs with node, made absolute with its working folder: `node [options] FILE
 * ARGS`, also behind an entrypoint script (`docker-entrypoint.sh node server.js`, `tini -- node server.js`) or a
 * plain `sh -c "node server.js"`. Null when the command is not that (npm start, a binary, node alone).
 * @param {{ entrypoint: string[], cmd: string[], workingDir: string }} image
 * @returns {{ entry: string, args: string[], nodeArgs: string[] } | null} nodeArgs: the node options before FILE
 */
export function entryFromCommand ({ entrypoint, cmd, workingDir }) {
  let argv = [...(entrypoint ?? []), ...(cmd ?? [])]
  if (argv.length === 3 && SHELLS.test(argv[0]) && argv[1] === '-c') {
    const text = argv[2].trim().replace(/^exec\s+/, '')
    if (!/^[\w./=:@+,%-]+(\s+[\w./=:@+,%-]+)*$/.test(text)) return null
    argv = text.split(/\s+/)
  }
  const at = argv.findIndex(a => /(^|\/)(node|nodejs)$/.test(a))
  if (at < 0) return null
  const nodeArgs = []
  let i = at + 1
  for (; i < argv.length && argv[i].startsWith('-'); i++) {
    const a = argv[i]
    if (a === '--') { i++; break }
    if (NODE_NO_FILE.test(a)) return null
    nodeArgs.push(a)
    if (NODE_VALUE_OPTIONS.has(a) && i + 1 < argv.length) nodeArgs.push(argv[++i])
  }
  if (i >= argv.length) return null
  return { entry: posix.resolve(workingDir || '/', argv[i]), args: argv.slice(i + 1), nodeArgs }
}

/**
 * A user's image with nodescale's launchers added under /opt/nodescale (`launcherTree`), built FROM it and nothing
 * else changed (its user, working folder, entrypoint, command and environment stay); tagged by the launchers' content
 * and the user image's id, so a new build of the user's image is a new tag.
 * @param {import('dockerode')} docker
 * @param {{ image: { ref: string, id: string }, root?: string, log?: (line: string) => void }} opts
 * @returns {Promise<{ tag: string, id: string, reused: boolean }>}
 */
export async function buildLauncherImage (docker, { image, root = ROOT, log = () => {} }) {
  const entries = launcherTree(root)
  // the id in a comment: in the hash, not in the image
  const dockerfile = [`# nodescale's launchers on ${image.ref} (${image.id})`, `FROM ${image.ref}`, 'COPY opt/ /opt/', ''].join('\n')
  const built = await buildContext(docker, { repo: 'nodescale/with-launchers', dockerfile, entries, log })
  log(`image: ${built.tag}: ${image.ref} with nodescale's launchers under /opt/nodescale (${built.reused ? 'unchanged: reused' : 'built'})`)
  return built
}
