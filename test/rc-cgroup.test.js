// rc/cgroup.js: v1 and v2 CPU readers and cgroup detection, against recorded cgroup trees (v2 cannot be mounted here).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readUsagePercpu, readCpuStat, readCgroupProcs, detectCgroup, cpuacctRoot } from '../rc/cgroup.js'

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')
const V1_CONTAINER = join(FIX, 'cgroup-v1', 'cpuacct', 'docker', '3f1c0e5b9a2d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6')
const V2_CONTAINER = join(FIX, 'cgroup-v2', 'system.slice', 'docker-9b8a7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021a1b2c3d4e5f60718.scope')

test('detectCgroup: v1 (alone or co-mounted as cpu,cpuacct), v1 wins on hybrid hosts, v2, none', (t) => {
  assert.equal(detectCgroup(join(FIX, 'cgroup-v1')), 'v1')
  assert.equal(detectCgroup(join(FIX, 'cgroup-v1-comount')), 'v1')
  assert.equal(cpuacctRoot(join(FIX, 'cgroup-v1-comount')), join(FIX, 'cgroup-v1-comount', 'cpu,cpuacct'))
  assert.equal(detectCgroup(join(FIX, 'cgroup-hybrid')), 'v1')
  assert.equal(detectCgroup(join(FIX, 'cgroup-hybrid', 'unified')), 'v2')
  assert.equal(detectCgroup(join(FIX, 'cgroup-v2')), 'v2')
  const empty = mkdtempSync(join(tmpdir(), 'ns-cg-none-'))
  t.after(() => rmSync(empty, { recursive: true, force: true }))
  assert.equal(detectCgroup(empty), 'none')
  assert.equal(detectCgroup(join(empty, 'missing')), 'none')
})

test('readUsagePercpu: ns per CPU as numbers, for the hierarchy root and for a container group', () => {
  assert.deepEqual(readUsagePercpu(join(FIX, 'cgroup-v1', 'cpuacct')), [335265198193, 329448594297])
  assert.deepEqual(readUsagePercpu(V1_CONTAINER), [12000000000, 3500000000, 0, 250000000])
  assert.deepEqual(readUsagePercpu(join(FIX, 'cgroup-v1-comount', 'cpu,cpuacct')), [804030201, 102030405])
})

test('readCpuStat: usage/user/system usec from a v2 cpu.stat, with or without the cpu controller lines', () => {
  assert.deepEqual(readCpuStat(V2_CONTAINER), { usageUsec: 2136872, userUsec: 1592563, systemUsec: 544309 })
  assert.deepEqual(readCpuStat(join(FIX, 'cgroup-v2')), { usageUsec: 9231468273, userUsec: 6120339810, systemUsec: 3111128463 })
  assert.deepEqual(readCpuStat(join(FIX, 'cgroup-hybrid', 'unified')), { usageUsec: 641882090, userUsec: 380908397, systemUsec: 260973692 })
})

test('readCgroupProcs lists the member pids; an empty group is an empty list', (t) => {
  assert.deepEqual(readCgroupProcs(V2_CONTAINER), [4211, 4260, 4261])
  assert.deepEqual(readCgroupProcs(join(FIX, 'cgroup-v1', 'cpuacct')), [1, 87])
})

test('malformed files are NS_ERR_BAD_FILE naming the file; a missing group keeps its ENOENT (the container is gone)', () => {
  assert.throws(() => readUsagePercpu(join(FIX, 'cgroup-malformed', 'v1')), { code: 'NS_ERR_BAD_FILE', message: /cgroup-malformed\/v1\/cpuacct\.usage_percpu/ })
  assert.throws(() => readCpuStat(join(FIX, 'cgroup-malformed', 'v2')), { code: 'NS_ERR_BAD_FILE', message: /usage_usec/ })
  assert.throws(() => readCpuStat(join(FIX, 'cgroup-v2', 'no-such-group')), { code: 'ENOENT' })
  assert.throws(() => readUsagePercpu(join(FIX, 'cgroup-v1', 'cpuacct', 'docker', 'gone')), { code: 'ENOENT' })
})

test('the readers work on the live cgroup filesystem of this host', (t) => {
  const kind = detectCgroup()
  if (kind === 'none') return t.skip('no cgroup filesystem is mounted at /sys/fs/cgroup')
  if (kind === 'v1') {
    const percpu = readUsagePercpu(cpuacctRoot())
    assert.ok(percpu.length >= 1 && percpu.every(n => Number.isInteger(n) && n >= 0))
    assert.ok(percpu.reduce((a, b) => a + b, 0) > 0, 'the root group has used CPU')
  } else {
    const s = readCpuStat('/sys/fs/cgroup')
    assert.ok(s.usageUsec > 0 && s.usageUsec >= s.userUsec)
  }
})
