// Facts about the machine a run ran on, for run.json's `environment`, and its fingerprint: what a reader of a
// replication compares with a study's stated set-up (cores and SMT, frequency, virtualisation, cgroups, versions, the
// quotas asked and where the load ran). Every fact is a value, or null with why; the files read are small and few.
import os from 'node:os'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { readText } from '../rc/read-text.js'
import { detectCgroup } from '../rc/cgroup.js'
import { loadOf, quotaOf } from '../analyzer/fingerprint.js'

/** Where the load ran, summarised from what the run recorded: the fingerprint's `load` (analyzer/fingerprint.js). */
export const fingerprintLoad = loadOf

/** The fingerprint's format: a reader can tell a later shape from this one. */
export const FINGERPRINT_VERSION = 1

/** At most this many CPUs' topology folders are read (a bound on the files one fingerprint opens). */
const MAX_CPUS = 1024

/**
 * @param {{ backend: string, extra?: object, config?: Record<string, any> }} opts extra: the backend's and driver's
 *   facts (docker, image, nodes); config: the run's (its quotas, its generators)
 */
export function describeEnvironment ({ backend, extra = {}, config }) {
  const cpus = os.cpus()
  const env = {
    host: os.hostname(),
    platform: os.platform(),
    kernel: os.release(),
    arch: os.arch(),
    cpus: os.availableParallelism(),
    cpuModel: cpus[0]?.model ?? null,
    memoryBytes: os.totalmem(),
    node: process.version,
    docker: null,
    image: null,
    swarmNodes: null,
    backend,
    ...extra
  }
  return { ...env, fingerprint: runFingerprint(env, config) }
}

/**
 * A run's fingerprint: this machine's (machineFingerprint), the runtime the server ran on, the Docker engine (read
 * once, by the Swarm backend's prepare: environment.docker), the quotas asked and, until the load has run, the load's
 * place as the config asks for it (fingerprintLoad replaces it with what the run recorded).
 * @param {Record<string, any>} env the environment without its fingerprint
 * @param {Record<string, any>} [config]
 * @param {{ root?: string }} [opts] root: where proc/ and sys/ are (a recorded machine in a test)
 * @returns {Record<string, any>}
 */
export function runFingerprint (env, config, { root = '/' } = {}) {
  const fp = machineFingerprint({ root })
  const runtime = serverRuntime(env)
  Object.assign(fp, { node: runtime.node, v8: runtime.v8, executorNode: process.version })
  Object.assign(fp.why, runtime.why)
  set(fp, 'docker', env.docker ?? null,
    env.backend === 'local' ? 'local backend: no Docker engine ran the server' : 'the backend did not report the engine\'s version')
  const { why, notes, ...facts } = fp
  return { ...facts, quota: quotaOf(config), load: loadOf(config, null, env), why, ...(notes && { notes }) }
}

/**
 * The processors: the model (x86's "model name", some ARM kernels' "Model" or "Hardware"); logical, the processors
 * present (cpuinfo lists the online ones only); online, the ones the kernel runs on now. Returns the CPU lists read.
 */
function processorsOf (fp, procs, cpuinfo, cpuDir) {
  const first = procs[0] ?? {}
  const model = first['model name'] ?? first.Model ?? first.Hardware ?? first['cpu model'] ?? null
  set(fp, 'cpuModel', model, cpuinfo.text === null ? `${cpuinfo.path}: ${cpuinfo.why}` : 'no "model name" line in /proc/cpuinfo (usual on ARM)')
  const listed = procs.filter(p => p.processor !== undefined).length
  const present = readMaybe(join(cpuDir, 'present'))
  const presentCpus = present.text === null ? null : parseCpuList(present.text)
  set(fp, 'logicalCores', presentCpus?.length || listed || null, `neither /proc/cpuinfo nor ${present.path} lists the processors`)
  const online = readMaybe(join(cpuDir, 'online'))
  const onlineCpus = online.text === null ? null : parseCpuList(online.text)
  set(fp, 'online', online.text === null ? null : online.text.trim(), `${online.path}: ${online.why}`)
  set(fp, 'onlineCores', onlineCpus?.length || null, online.text === null ? `${online.path}: ${online.why}` : `${online.path}: not a CPU list`)
  return { presentCpus, onlineCpus }
}

/** Physical cores and SMT: sysfs topology (every architecture), else /proc/cpuinfo's core id and physical id (x86). */
function topologyFieldsOf (fp, procs, cpuDir, cpus) {
  const topo = topologyOf(cpuDir, cpus)
  const ids = procs.filter(p => p['core id'] !== undefined && p['physical id'] !== undefined)
  let physical = null
  let sockets = null
  let threads = null
  let from = null
  if (topo) {
    ({ physical, sockets, threads } = topo)
    from = 'sysfs'
  } else if (ids.length) {
    physical = new Set(ids.map(p => `${p['physical id']}:${p['core id']}`)).size
    sockets = new Set(ids.map(p => p['physical id'])).size
    threads = Math.max(...[...countBy(ids, p => `${p['physical id']}:${p['core id']}`).values()])
    from = 'cpuinfo'
  }
  const noTopology = `no ${join(cpuDir, 'cpu0', 'topology')} and no "core id"/"physical id" in /proc/cpuinfo`
  set(fp, 'physicalCores', physical, noTopology)
  set(fp, 'sockets', sockets, topo ? 'no physical_package_id in the sysfs topology' : noTopology)
  set(fp, 'threadsPerCore', threads, noTopology)
  set(fp, 'smt', threads === null ? null : threads > 1, noTopology)
  if (from) fp.notes.topologyFrom = from === 'sysfs' ? 'sysfs thread_siblings_list' : '/proc/cpuinfo core id, physical id'
}

/** Frequency scaling (many VMs have no cpufreq at all): the governor, the maximum and the current clock. */
function frequencyOf (fp, first, cpuDir) {
  const freq = join(cpuDir, 'cpu0', 'cpufreq')
  const noFreq = existsSync(freq) ? null : `no ${freq}: the kernel exposes no frequency scaling here (usual on a VM)`
  const governor = readMaybe(join(freq, 'scaling_governor'))
  set(fp, 'governor', governor.text?.trim() || null, noFreq ?? `${governor.path}: ${governor.why}`)
  const max = readMaybe(join(freq, 'cpuinfo_max_freq'))
  set(fp, 'maxMHz', khzToMhz(max.text), noFreq ?? `${max.path}: ${max.why}`)
  const cur = readMaybe(join(freq, 'scaling_cur_freq'))
  const infoMHz = Number(first['cpu MHz'])
  if (khzToMhz(cur.text) !== null) fp.curMHz = khzToMhz(cur.text)
  else if (Number.isFinite(infoMHz) && infoMHz > 0) {
    fp.curMHz = Math.round(infoMHz)
    fp.notes.curMHz = '/proc/cpuinfo "cpu MHz" of cpu0 (no cpufreq reading; on a VM often the nominal clock)'
  } else set(fp, 'curMHz', null, noFreq ?? `${cur.path}: ${cur.why}`)
}

/** The distribution, the kernel, and whether it runs under a hypervisor. */
function systemOf (fp, root, proc, first) {
  const osRelease = readMaybe(join(root, 'etc', 'os-release'))
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease.text ?? '')?.[1]
  set(fp, 'distro', pretty, osRelease.text === null ? `${osRelease.path}: ${osRelease.why}` : 'no PRETTY_NAME in /etc/os-release')
  const release = readMaybe(join(proc, 'sys', 'kernel', 'osrelease'))
  set(fp, 'kernel', release.text?.trim() || null, `${release.path}: ${release.why}`)
  Object.assign(fp, virtualisationOf(root, first, fp))
  if (fp.virtual === true && fp.smt === false) fp.notes.smt = 'as the hypervisor presents its vCPUs: one may be a hyperthread of a host core'
}

/** Cgroups: which accounting nodescale reads (v1 wins on a hybrid host, as the RC does). */
function cgroupOf (fp, root) {
  const cgroupRoot = join(root, 'sys', 'fs', 'cgroup')
  const cg = detectCgroup(cgroupRoot)
  set(fp, 'cgroup', cg === 'none' ? null : cg, `${cgroupRoot}: neither v1 cpuacct nor v2 cgroup.controllers`)
  if (cg === 'v1' && existsSync(join(cgroupRoot, 'unified', 'cgroup.controllers'))) {
    fp.notes.cgroup = 'hybrid: v2 is mounted at unified/ too; nodescale reads v1'
  }
}

/**
 * This machine's CPU, frequency, kernel, virtualisation and cgroups, read from `root`'s proc/ and sys/.
 * Each field is a value or null with `why[field]`; `notes[field]` qualifies a value read from a weaker source.
 * @param {{ root?: string }} [opts]
 * @returns {Record<string, any>}
 */
export function machineFingerprint ({ root = '/' } = {}) {
  const proc = join(root, 'proc')
  const cpuDir = join(root, 'sys', 'devices', 'system', 'cpu')
  /** @type {Record<string, any>} */
  const fp = { version: FINGERPRINT_VERSION, why: {}, notes: {} }
  const cpuinfo = readMaybe(join(proc, 'cpuinfo'))
  const procs = cpuinfo.text === null ? [] : parseCpuinfo(cpuinfo.text)
  const first = procs[0] ?? {}
  const { presentCpus, onlineCpus } = processorsOf(fp, procs, cpuinfo, cpuDir)
  topologyFieldsOf(fp, procs, cpuDir, onlineCpus ?? presentCpus ?? procs.map(p => Number(p.processor)).filter(Number.isInteger))
  frequencyOf(fp, first, cpuDir)
  systemOf(fp, root, proc, first)
  cgroupOf(fp, root)
  const { why, notes, ...facts } = fp
  return { ...facts, why, ...(Object.keys(notes).length && { notes }) }
}

/**
 * The Node the server ran on and its V8. Locally and in an image built on the host base it is this process's binary;
 * the registry base is node:<major>-slim, same major, its exact version not read; a user's image says its own.
 * @param {Record<string, any>} env
 */
function serverRuntime (env) {
  const why = {}
  const same = { node: process.version, v8: process.versions.v8, why }
  if (env.backend !== 'swarm') return same
  const own = env.serverImage?.runs === 'launchers' || env.serverImage?.runs === 'as-is'
  if (own) {
    const node = env.serverImage.node ?? null
    if (node === null) {
      why.node = env.serverImage.runs === 'as-is'
        ? 'the user\'s image ran as it is: its Node was not asked'
        : 'the user\'s image did not say its Node version'
    }
    why.v8 = 'the server ran the user\'s image\'s Node: its V8 was not read'
    return { node, v8: null, why }
  }
  if (env.imageBase === 'host') return same
  if (env.imageBase === 'registry') {
    why.node = `the register image is node:${process.versions.node.split('.')[0]}-slim from a registry: ` +
      `the same major as ${process.version} here, its exact version not read`
    why.v8 = why.node
    return { node: null, v8: null, why }
  }
  why.node = 'the backend did not say which base the server\'s image was built on'
  why.v8 = why.node
  return { node: null, v8: null, why }
}

/** The topology of the given CPUs from sysfs: physical cores, sockets, threads per core; null when unreadable. */
function topologyOf (cpuDir, cpus) {
  if (!cpus.length) return null
  const cores = new Set()
  const packages = new Set()
  let threads = 0
  for (const c of cpus.slice(0, MAX_CPUS)) {
    const dir = join(cpuDir, `cpu${c}`, 'topology')
    const siblings = readMaybe(join(dir, 'thread_siblings_list')).text
    if (siblings === null) return null
    const list = parseCpuList(siblings)
    cores.add(list.join(','))
    threads = Math.max(threads, list.length)
    const pkg = readMaybe(join(dir, 'physical_package_id')).text
    if (pkg !== null) packages.add(pkg.trim())
  }
  return { physical: cores.size, sockets: packages.size || null, threads }
}

/**
 * Virtualisation, cheaply: x86's "hypervisor" cpuinfo flag, /sys/hypervisor/type (Xen), the DMI product name.
 * @returns {{ virtual: boolean | null, hypervisor: string | null }}
 */
function virtualisationOf (root, first, fp) {
  const sys = join(root, 'sys')
  const type = readMaybe(join(sys, 'hypervisor', 'type')).text?.trim() || null
  const dmi = ['sys_vendor', 'product_name'].map(f => readMaybe(join(sys, 'class', 'dmi', 'id', f)).text?.trim()).filter(Boolean)
  let virtual = null
  if (type) virtual = true
  else if (first.flags !== undefined) virtual = /(^|\s)hypervisor(\s|$)/.test(first.flags)
  const out = { virtual, hypervisor: null }
  if (virtual === null) {
    fp.why.virtual = 'no "hypervisor" flag to read in /proc/cpuinfo (not x86) and no /sys/hypervisor/type'
    fp.why.hypervisor = fp.why.virtual
  } else if (virtual === false) fp.why.hypervisor = 'none: the CPU does not report the "hypervisor" flag'
  else {
    out.hypervisor = type ?? (dmi.length ? dmi.join(' ') : null)
    if (out.hypervisor === null) fp.why.hypervisor = 'no /sys/hypervisor/type and no DMI product name (/sys/class/dmi/id) to name it'
  }
  return out
}

/** The processors of /proc/cpuinfo, each as its "key : value" lines. */
function parseCpuinfo (text) {
  const out = []
  for (const block of text.split(/\n\s*\n/)) {
    const rec = {}
    for (const line of block.split('\n')) {
      const i = line.indexOf(':')
      if (i > 0) rec[line.slice(0, i).trim()] = line.slice(i + 1).trim()
    }
    if (Object.keys(rec).length) out.push(rec)
  }
  // ARM lists its processors first and the model ("Hardware", "Model") in a block of its own at the end
  const tail = out.length > 1 && out.at(-1).processor === undefined ? out.pop() : null
  if (tail && out.length) Object.assign(out[0], { ...tail, ...out[0] })
  return out
}

/** A kernel CPU list ("0-3,6,8-9") as its CPU numbers. */
export function parseCpuList (text) {
  const out = []
  for (const part of text.trim().split(',')) {
    if (!part) continue
    const [a, b = a] = part.split('-').map(Number)
    if (!Number.isInteger(a) || !Number.isInteger(b) || b < a) return []
    for (let c = a; c <= b && out.length < MAX_CPUS * 4; c++) out.push(c)
  }
  return out
}

function countBy (xs, key) {
  const m = new Map()
  for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1)
  return m
}

function khzToMhz (text) {
  const n = Number(text?.trim())
  return text && Number.isFinite(n) && n > 0 ? Math.round(n / 1000) : null
}

/** A small kernel file's text, or null and why not. */
function readMaybe (path) {
  try {
    return { path, text: readText(path), why: null }
  } catch (err) {
    return { path, text: null, why: err.code === 'ENOENT' ? 'not there' : err.code ?? err.message }
  }
}

/** Sets a field to its value, or to null with why. */
function set (fp, key, value, why) {
  fp[key] = value ?? null
  if (fp[key] === null) fp.why[key] = why
}
