// run.json's environment.fingerprint: this machine's, read back against /proc and /sys independently; recorded
// machines (test/fixtures/machine-*) for what this one cannot show (SMT, cpufreq, cgroup v2) and for null with why;
// the analyzer's reading of old and new run.json files and its side-by-side with a study's set-up.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { release, availableParallelism } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machineFingerprint, runFingerprint, describeEnvironment, fingerprintLoad, parseCpuList } from '../executor/environment.js'
import { fingerprintOf, fingerprintLines, fingerprintRows, machinePart, NOT_RECORDED } from '../analyzer/fingerprint.js'
import { environmentsOf } from '../analyzer/report/report-runs.js'
import { environmentTable } from '../analyzer/report/report-tables.js'

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

/** Every null field of a record (and of its quota and load) has its why. */
function assertNullsExplained (fp, where = 'fingerprint') {
  for (const [k, v] of Object.entries(fp)) {
    if (k === 'why' || k === 'notes') continue
    if (v === null) assert.ok(typeof fp.why?.[k] === 'string' && fp.why[k].length > 0, `${where}.${k} is null without a why`)
    else if (v && typeof v === 'object' && !Array.isArray(v)) assertNullsExplained(v, `${where}.${k}`)
  }
}

test('this machine: model, logical, online and physical cores, SMT, kernel, cgroup and frequency as /proc and /sys say', () => {
  const fp = machineFingerprint()
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? null
  assert.equal(fp.cpuModel, model)
  const processors = cpuinfo.match(/^processor\s*:/gm).length
  assert.equal(fp.logicalCores, processors)
  assert.equal(fp.logicalCores, availableParallelism(), 'this test machine: every core usable')
  const online = readFileSync('/sys/devices/system/cpu/online', 'utf8').trim()
  assert.equal(fp.online, online)
  assert.equal(fp.onlineCores, processors)
  // physical cores: the distinct sibling lists of the online cores
  const siblings = new Set(parseCpuList(online).map(c => readFileSync(`/sys/devices/system/cpu/cpu${c}/topology/thread_siblings_list`, 'utf8').trim()))
  assert.equal(fp.physicalCores, siblings.size)
  assert.equal(fp.smt, fp.threadsPerCore > 1)
  assert.equal(fp.physicalCores * fp.threadsPerCore, fp.logicalCores)
  assert.equal(fp.kernel, release())
  const cgroup = existsSync('/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu') || existsSync('/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage_percpu')
    ? 'v1'
    : existsSync('/sys/fs/cgroup/cgroup.controllers') ? 'v2' : null
  assert.equal(fp.cgroup, cgroup)
  const governor = '/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'
  if (existsSync(governor)) assert.equal(fp.governor, readFileSync(governor, 'utf8').trim())
  else assert.match(fp.why.governor, /no .*cpufreq/)
  assert.equal(fp.virtual, /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo))
  assertNullsExplained(fp)
})

test('a recorded machine with SMT, cpufreq, DMI and cgroup v2 reads as recorded', () => {
  const fp = machineFingerprint({ root: join(FIX, 'machine-smt') })
  assert.equal(fp.cpuModel, 'Intel(R) Core(TM) i7-9700 CPU @ 3.00GHz')
  assert.deepEqual([fp.logicalCores, fp.onlineCores, fp.physicalCores, fp.sockets, fp.threadsPerCore, fp.smt], [4, 4, 2, 1, 2, true])
  assert.deepEqual([fp.governor, fp.maxMHz, fp.curMHz], ['performance', 4600, 3900])
  assert.deepEqual([fp.kernel, fp.distro, fp.cgroup], ['5.15.0-91-generic', 'Ubuntu 22.04.3 LTS', 'v2'])
  assert.equal(fp.virtual, false, 'no hypervisor flag')
  assert.equal(fp.hypervisor, null)
  assert.match(fp.why.hypervisor, /hypervisor/)
  assertNullsExplained(fp)
})

test('a machine that exposes nothing: each field null with why, never a guess', () => {
  const fp = machineFingerprint({ root: join(FIX, 'machine-bare') })
  assert.equal(fp.logicalCores, 2, 'the processors cpuinfo lists')
  for (const k of ['cpuModel', 'online', 'onlineCores', 'physicalCores', 'sockets', 'threadsPerCore', 'smt', 'governor', 'maxMHz', 'curMHz', 'kernel', 'distro',
    'virtual', 'hypervisor', 'cgroup']) {
    assert.equal(fp[k], null, k)
  }
  assert.match(fp.why.cpuModel, /model name/)
  assert.match(fp.why.physicalCores, /topology/)
  assert.match(fp.why.governor, /cpufreq/)
  assert.match(fp.why.virtual, /hypervisor/)
  assert.match(fp.why.cgroup, /cgroup/)
  assertNullsExplained(fp)
})

test('a run\'s fingerprint: versions, quotas as the config has them, and where the load ran', () => {
  const env = { host: 'h1', cpus: 4, backend: 'local', docker: null }
  const fp = runFingerprint(env, { strategy: 'hs', instances: 2, cpusPerInstance: 0.5, driver: 'autocannon' }, { root: join(FIX, 'machine-smt') })
  assert.equal(fp.node, process.version)
  assert.equal(fp.v8, process.versions.v8)
  assert.equal(fp.docker, null)
  assert.match(fp.why.docker, /local backend/)
  assert.deepEqual([fp.quota.cpusPerInstance, fp.quota.memoryPerInstance, fp.quota.see], [0.5, null, 'config'])
  assert.match(fp.quota.why.memoryPerInstance, /none asked/)
  assert.deepEqual([fp.load.generators, fp.load.where, fp.load.hosts, fp.load.sharesServerHost, fp.load.cpus], [1, 'this host', ['h1'], true, null])
  assert.match(fp.load.why.cpus, /not pinned: any of this host's 4 cores/)
  assertNullsExplained(fp)
  // the Swarm backend's engine version is the one place docker's version is read; a registry-based image's Node is not
  const swarm = runFingerprint({ host: 'm', cpus: 2, backend: 'swarm', docker: '27.3.1', imageBase: 'registry' }, { strategy: 'up', instances: 1 })
  assert.equal(swarm.docker, '27.3.1')
  assert.equal(swarm.node, null)
  assert.match(swarm.why.node, /-slim/)
  // several generators: their hosts and cores, referring to load.generators for the rest
  const procs = fingerprintLoad({ loadProcs: 2 },
    { generators: [{ name: 'g1', kind: 'process', host: 'h1', cpus: [3] }, { name: 'g2', kind: 'process', host: 'h1', cpus: [2] }], generator: { cores: 0.8 } },
    env)
  assert.deepEqual([procs.generators, procs.hosts, procs.cpus, procs.see, procs.generatorCores], [2, ['h1'], [2, 3], 'load.generators', 0.8])
  // locally, the one generator pinned off the server's cores (load.cpus, load.sharing as the run records them)
  const apart = fingerprintLoad({ driver: 'autocannon' }, { cpus: [1], sharing: { server: [0], generator: [1], shared: [], apart: true, why: '...' } }, env)
  assert.deepEqual([apart.cpus, apart.serverCpus, apart.sharedCpus, apart.apart, apart.see], [[1], [0], [], true, 'load.sharing'])
  assert.equal(apart.why, undefined)
  const nodes = fingerprintLoad({ loadNodes: 1 }, { generators: [{ name: 'g1', kind: 'agent', node: 'w3' }] }, { host: 'm', backend: 'swarm' },
    [{ node: 'w1' }, { node: 'w2' }])
  assert.deepEqual([nodes.where, nodes.hosts, nodes.sharesServerHost], ['load nodes', ['w3'], false])
})

test('describeEnvironment carries the fingerprint beside the facts it had', () => {
  const env = describeEnvironment({ backend: 'local', config: { strategy: 'up', instances: 1 } })
  assert.equal(env.cpus, availableParallelism())
  assert.equal(env.fingerprint.version, 1)
  assert.equal(env.fingerprint.logicalCores, readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s*:/gm).length)
  assert.equal(env.fingerprint.quota.instances, 1)
})

test('fingerprintOf: a new run.json\'s as recorded; an older one\'s from what it has, the rest not recorded', () => {
  const fp = { version: 1, cpuModel: 'X', why: {} }
  assert.equal(fingerprintOf({ environment: { fingerprint: fp } }), fp)
  const old = fingerprintOf({
    environment: { cpuModel: 'AMD EPYC', cpus: 2, kernel: '6.1.0', node: 'v20.1.0', docker: null, backend: 'local', host: 'h' },
    config: { strategy: 'up', instances: 1 },
    load: { generator: { cores: 0.3 } }
  })
  assert.deepEqual([old.version, old.cpuModel, old.logicalCores, old.kernel, old.node], [0, 'AMD EPYC', 2, '6.1.0', 'v20.1.0'])
  assert.equal(old.smt, null)
  assert.equal(old.why.smt, NOT_RECORDED)
  assert.match(old.why.docker, /local backend/)
  assert.equal(old.load.sharesServerHost, true)
  assertNullsExplained(old)
  // nothing at all: still a record, every field explained
  assertNullsExplained(fingerprintOf({}))
})

test('fingerprintLines: this machine beside a study\'s set-up, the differing rows marked', () => {
  const fp = {
    cpuModel: 'AMD EPYC',
    logicalCores: 2,
    physicalCores: 2,
    threadsPerCore: 1,
    smt: false,
    virtual: true,
    hypervisor: null,
    kernel: '6.18.44',
    distro: 'Debian GNU/Linux 12 (bookworm)',
    cgroup: 'v1',
    node: 'v20.20.2',
    v8: '11.3',
    docker: null,
    why: { docker: 'local backend: no Docker engine ran the server' },
    quota: { cpusPerInstance: null },
    load: { generators: 1, where: 'this host', hosts: ['h'], cpus: null, sharesServerHost: true, driver: 'autocannon' }
  }
  const setup = {
    name: 'a made-up study',
    machine: 'AMD EPYC',
    cores: '4 vCPUs',
    smt: 'off',
    os: 'Debian 12',
    node: '20.11',
    docker: '18.09',
    load: 'separate machine',
    quota: 'none'
  }
  const rows = Object.fromEntries(fingerprintRows(fp, setup).map(r => [r.row, r.differs]))
  assert.deepEqual(rows, { machine: false, cores: true, smt: false, os: false, node: false, docker: true, load: true, quota: false })
  const lines = fingerprintLines(fp, setup)
  assert.match(lines[0], /this machine\s+a made-up study/)
  assert.match(lines.find(l => /\bcores\b/.test(l)), /^≠\s+cores\s+2 logical, 2 physical\s+4 vCPUs/)
  assert.match(lines.find(l => /Node\.js/.test(l)), /^=\s+Node\.js\s+v20\.20\.2 \(V8 11\.3\)/)
  assert.equal(lines.at(-1), '3 of 8 rows differ: cores, Docker, load generator')
  // what the study does not say, or what cannot be compared, is neither = nor ≠
  const unsaid = fingerprintRows(fp, { os: 'Ubuntu 18.04', smt: 'unknown' })
  assert.equal(unsaid.find(r => r.row === 'os').differs, true)
  assert.equal(unsaid.find(r => r.row === 'machine').differs, null)
  assert.match(unsaid.find(r => r.row === 'smt').why, /neither on nor off/)
})

test('the report: one environment for one machine\'s runs, the fingerprint\'s facts as rows', () => {
  const base = { host: 'h', kernel: '6.1', cpus: 2, node: 'v20' }
  const fp = (q, mhz) => ({
    cpuModel: 'X',
    logicalCores: 2,
    physicalCores: 1,
    threadsPerCore: 2,
    smt: true,
    governor: null,
    maxMHz: null,
    curMHz: mhz,
    virtual: true,
    hypervisor: 'KVM',
    cgroup: 'v2',
    v8: '11.3',
    quota: { cpusPerInstance: q },
    load: { generators: 1 },
    why: { governor: 'none', curMHz: 'x' }
  })
  const runs = [{ environment: { ...base, fingerprint: fp(0.5, 2500) } }, { environment: { ...base, fingerprint: fp(null, 2600) } }]
  assert.deepEqual(machinePart(runs[0].environment.fingerprint), machinePart(runs[1].environment.fingerprint))
  const environments = environmentsOf(/** @type {any} */ (runs))
  assert.equal(environments.length, 1)
  const rows = Object.fromEntries(environmentTable(/** @type {any} */ ({ environments })).rows.map(r => [r[0], r[1]]))
  assert.equal(rows.SMT, 'on (2 threads a core)')
  assert.equal(rows.virtualisation, 'VM (KVM)')
  assert.equal(rows.frequency, '-')
  assert.equal(rows.fingerprint, undefined, 'not dumped as JSON')
})
