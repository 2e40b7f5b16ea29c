// A worker's Docker engine: dockerd in the worker's network namespace and a UTS namespace of its own (its hostname is
// its node name), with its own data and exec roots and socket; started detached, stopped by its pid.
import { spawn } from 'node:child_process'
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, existsSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Docker from 'dockerode'
import { fail } from '../../lib/messages.js'
import { withTimeout } from '../../lib/with-timeout.js'
import { alive, run } from './host.js'
import { workerName, netnsPath, MANAGER_ADDR } from './network.js'
import { REGISTRY_PORT } from '../../lib/wire.js'

/** Where the local swarm keeps its engines' data (images, swarm state) and its state file. */
export const DATA_ROOT = process.env.NODESCALE_CLUSTER_ROOT || '/var/lib/nodescale-cluster'
/** Where the engines' sockets, pid files and exec roots live. */
export const RUN_ROOT = '/var/run/nodescale-cluster'

/** The files of worker i's engine. */
export function enginePaths (i) {
  const name = workerName(i)
  return {
    name,
    dataRoot: join(DATA_ROOT, name, 'data'),
    log: join(DATA_ROOT, name, 'dockerd.log'),
    execRoot: join(RUN_ROOT, name),
    socket: join(RUN_ROOT, `${name}.sock`),
    pidFile: join(RUN_ROOT, `${name}.pid`),
    config: join(DATA_ROOT, name, 'daemon.json')
  }
}

/** The control plane's registry as the workers reach it: the manager's LAN address. */
export const BUILTIN_REGISTRY = `${MANAGER_ADDR}:${REGISTRY_PORT}`

/** Whether worker i's engine trusts the builtin registry over plain HTTP. */
async function trustsRegistry (i) {
  const info = await engineClient(i).info().catch(() => null)
  return info?.RegistryConfig?.IndexConfigs?.[BUILTIN_REGISTRY]?.Secure === false
}

/** The pid in worker i's pid file when that process runs, else null. */
export function enginePid (i) {
  try {
    const pid = Number(readFileSync(enginePaths(i).pidFile, 'utf8').trim())
    return alive(pid) ? pid : null
  } catch {
    return null
  }
}

/** A dockerode client for worker i's engine (not checked). */
export const engineClient = (i) => new Docker({ socketPath: enginePaths(i).socket })

/** Whether worker i's engine answers a ping within timeoutMs. */
export async function engineAnswers (i, timeoutMs = 2000) {
  return withTimeout(engineClient(i).ping(), timeoutMs).then(() => true, () => false)
}

/**
 * Starts worker i's engine unless it answers already, and waits until it answers.
 * @param {number} i
 * @param {{ log?: (line: string) => void, timeoutMs?: number }} [opts]
 * @returns {Promise<{ started: boolean, pid: number | null, ms: number }>}
 */
export async function startEngine (i, { log = () => {}, timeoutMs = 60_000 } = {}) {
  const started = Date.now()
  const p = enginePaths(i)
  if (await engineAnswers(i)) {
    if (await trustsRegistry(i)) return { started: false, pid: enginePid(i), ms: 0 }
    // an engine of an older cluster up: restarted with the flag (its swarm state is on disk and comes back)
    log(`cluster: ${p.name}'s engine does not trust the control plane's registry ${BUILTIN_REGISTRY}; restarting it with --insecure-registry`)
    await stopEngine(i, { log })
  }
  if (enginePid(i)) {
    log(`cluster: ${p.name}'s engine runs (pid ${enginePid(i)}) but does not answer; stopping it`)
    await stopEngine(i, { log })
  }
  // a killed engine leaves its pid files behind, and the next one refuses to start
  rmSync(p.pidFile, { force: true })
  rmSync(join(p.execRoot, 'containerd', 'containerd.pid'), { force: true })
  mkdirSync(p.dataRoot, { recursive: true })
  mkdirSync(p.execRoot, { recursive: true })
  writeFileSync(p.config, '{}\n')
  const out = openSync(p.log, 'a')
  // unshare gives the engine a UTS namespace; `hostname` names it there (Swarm's node name); nsenter puts it in the
  // worker's netns (not `ip netns exec`, which remounts /sys and leaves the engine without its cgroup mounts)
  const child = spawn('unshare', ['--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', p.name,
    'nsenter', `--net=${netnsPath(p.name)}`, '--',
    'dockerd', '--data-root', p.dataRoot, '--exec-root', p.execRoot, '-H', `unix://${p.socket}`, '--pidfile', p.pidFile,
    // a settings file of its own: not the manager's /etc/docker/daemon.json, whose insecure registries would clash
    // with the flag below (an engine refuses a setting given both ways)
    '--config-file', p.config,
    // the control plane's registry on the manager speaks plain HTTP (images pushed there: --registry builtin)
    '--insecure-registry', BUILTIN_REGISTRY],
  { detached: true, stdio: ['ignore', out, out] })
  closeSync(out)
  child.unref()
  let exited = null
  child.on('exit', (code) => { exited = code })
  child.on('error', (err) => { exited = err.message })
  while (Date.now() - started < timeoutMs) {
    if (exited !== null) break
    if (await engineAnswers(i, 1000)) {
      log(`cluster: ${p.name}'s engine answers (pid ${child.pid}, ${Date.now() - started} ms)`)
      return { started: true, pid: child.pid ?? null, ms: Date.now() - started }
    }
    await sleep(200)
  }
  let tail = ''
  try { tail = readFileSync(p.log, 'utf8').trim().split('\n').slice(-5).join('\n') } catch {}
  if (exited === null && child.pid) try { process.kill(child.pid, 'SIGTERM') } catch {}
  throw fail('WORKER_ENGINE_SILENT', { name: p.name, timeoutMs, exited, log: p.log, tail })
}

/**
 * Stops worker i's engine (SIGTERM, SIGKILL after timeoutMs) and waits until it is gone.
 * @param {number} i
 * @param {{ log?: (line: string) => void, timeoutMs?: number }} [opts]
 */
export async function stopEngine (i, { log = () => {}, timeoutMs = 20_000 } = {}) {
  const pid = enginePid(i)
  if (!pid) return false
  const deadline = Date.now() + timeoutMs
  try { process.kill(pid, 'SIGTERM') } catch {}
  while (alive(pid) && Date.now() < deadline) await sleep(100)
  if (alive(pid)) {
    log(`cluster: ${workerName(i)}'s engine (pid ${pid}) did not stop within ${timeoutMs} ms; killing it`)
    try { process.kill(pid, 'SIGKILL') } catch {}
    while (alive(pid)) await sleep(100)
  }
  return true
}

/**
 * Mounts under a folder, from /proc/self/mountinfo (an engine that died may leave its overlay and network-namespace
 * mounts): never delete through them. The folder is compared by its real path too (/var/run is a link to /run).
 * @param {string} dir
 * @returns {{ point: string, fstype: string }[]}
 */
export function mountsUnder (dir) {
  let text = ''
  try { text = readFileSync('/proc/self/mountinfo', 'utf8') } catch { return [] }
  let real = dir
  try { real = realpathSync(dir) } catch {}
  const inside = (m) => [dir, real].some(d => m === d || m.startsWith(`${d}/`))
  return text.split('\n').filter(Boolean).map(l => {
    const fields = l.split(' ')
    return { point: fields[4], fstype: fields[fields.indexOf('-') + 1] }
  }).filter(m => m.point && inside(m.point))
}

/**
 * Unmounts the network-namespace files a stopped engine left under its exec root (nsfs bind mounts of its overlay
 * networks' sandboxes): nothing uses them once the engine is gone, and they make the folder undeletable.
 * @param {string} dir
 */
async function releaseNetnsMounts (dir) {
  for (const m of mountsUnder(dir).filter(x => x.fstype === 'nsfs')) await run('umount', ['-l', m.point]).catch(() => {})
}

/**
 * Deletes worker i's data and exec roots, unless something is still mounted under them (then says so and keeps them).
 * @param {number} i
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function removeEngineFiles (i, { log = () => {} } = {}) {
  const p = enginePaths(i)
  if (!enginePid(i)) await releaseNetnsMounts(p.execRoot)
  for (const dir of [join(DATA_ROOT, p.name), p.execRoot]) {
    if (!existsSync(dir)) continue
    const mounted = mountsUnder(dir)
    if (mounted.length) {
      log(`cluster: keeping ${dir}: ${mounted.length} mount(s) remain under it (e.g. ${mounted[0].point})`)
      continue
    }
    rmSync(dir, { recursive: true, force: true })
  }
  rmSync(p.socket, { force: true })
  rmSync(p.pidFile, { force: true })
}
