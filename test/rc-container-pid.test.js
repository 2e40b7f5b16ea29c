// rc/container-pid.js: a container's host pid from cgroup and proc files (no engine socket), on recorded layouts of
// cgroup v1 and v2, each with Docker's cgroupfs and systemd drivers; and containerCgroup finding either layout.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { containerPid, containerPids, containerOfPath, containersOfCgroupText } from '../rc/container-pid.js'
import { containerCgroup, createRcApp } from '../rc/service.js'
import { AUTH_HEADER, signRequest } from '../lib/request-auth.js'

const A = 'a1'.repeat(32)
const B = 'b2'.repeat(32)
const C = 'c3'.repeat(32)

/** Docker's group of a container, relative to a hierarchy: the cgroupfs driver's or the systemd driver's. */
const groupOf = (layout, id) => (layout === 'cgroupfs' ? `docker/${id}` : `system.slice/docker-${id}.scope`)

/** A /proc/<pid>/cgroup text in the kernel's format: v1 one line per hierarchy (and the hybrid 0:: line), v2 one. */
function cgroupText (version, path) {
  if (version === 'v2') return `0::${path}\n`
  return ['12:memory', '11:pids', '4:cpu,cpuacct', '3:blkio', '1:name=systemd', '0:'].map(h => `${h}:${path}`).join('\n') + '\n'
}

/**
 * A cgroup root and a proc root on disk. containers: id -> its group's cgroup.procs text (and v1 tasks); procs: pid ->
 * its cgroup path (null: a host process in /init.scope).
 */
function fixture (t, { version, layout, containers = {}, procs = {} }) {
  const dir = mkdtempSync(join(tmpdir(), `ns-cpid-${version}-`))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const cgroupRoot = join(dir, 'cgroup')
  const procRoot = join(dir, 'proc')
  const hierarchy = version === 'v1' ? join(cgroupRoot, 'cpu,cpuacct') : cgroupRoot
  mkdirSync(hierarchy, { recursive: true })
  if (version === 'v1') {
    writeFileSync(join(hierarchy, 'cpuacct.usage_percpu'), '100 200 \n')
    writeFileSync(join(hierarchy, 'cpu.cfs_quota_us'), '-1\n')
  } else {
    writeFileSync(join(cgroupRoot, 'cgroup.controllers'), 'cpuset cpu io memory pids\n')
  }
  for (const [id, listed] of Object.entries(containers)) {
    const group = join(hierarchy, groupOf(layout, id))
    mkdirSync(group, { recursive: true })
    writeFileSync(join(group, 'cgroup.procs'), listed)
    if (version === 'v1') {
      writeFileSync(join(group, 'tasks'), listed)
      writeFileSync(join(group, 'cpuacct.usage_percpu'), '5000 7000 \n')
      writeFileSync(join(group, 'cpu.stat'), 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n')
      const mem = join(cgroupRoot, 'memory', groupOf(layout, id))
      mkdirSync(mem, { recursive: true })
      writeFileSync(join(mem, 'memory.usage_in_bytes'), '4096\n')
    } else {
      writeFileSync(join(group, 'cpu.stat'), 'usage_usec 10\nuser_usec 5\nsystem_usec 5\n')
      writeFileSync(join(group, 'memory.current'), '8192\n')
    }
  }
  mkdirSync(procRoot, { recursive: true })
  writeFileSync(join(procRoot, 'stat'), 'cpu  4 0 4 100 0 0 0 0 0 0\ncpu0 2 0 2 50 0 0 0 0 0 0\ncpu1 2 0 2 50 0 0 0 0 0 0\n')
  for (const [pid, path] of Object.entries({ 1: null, ...procs })) {
    mkdirSync(join(procRoot, pid, 'net'), { recursive: true })
    writeFileSync(join(procRoot, pid, 'cgroup'), cgroupText(version, path ?? '/init.scope'))
    // each process's network namespace counts different bytes, so a test sees whose counters it got
    writeFileSync(join(procRoot, pid, 'net', 'dev'), [
      'Inter-|   Receive                                                |  Transmit',
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
      '    lo: 999 9 0 0 0 0 0 0 999 9 0 0 0 0 0 0',
      `  eth0: ${pid}00 5 0 0 0 0 0 0 ${pid}01 5 0 0 0 0 0 0`,
      ''
    ].join('\n'))
  }
  // neither a pid nor a process: what else /proc holds
  mkdirSync(join(procRoot, 'self'), { recursive: true })
  return { cgroupRoot, procRoot }
}

test('containerOfPath: cgroupfs, systemd, a private cgroup namespace\'s relative path, any parent; innermost wins', () => {
  assert.equal(containerOfPath(`/docker/${A}`), A)
  assert.equal(containerOfPath(`/system.slice/docker-${A}.scope`), A)
  assert.equal(containerOfPath(`/../docker-${A}.scope`), A)
  assert.equal(containerOfPath(`/../${A}`), A)
  assert.equal(containerOfPath(`/kubepods/besteffort/pod1234/${A}`), A)
  assert.equal(containerOfPath(`/system.slice/docker-${A}.scope/init.scope`), A)
  assert.equal(containerOfPath(`/docker/${A}/docker/${B}`), B, 'a container inside another is its own')
  for (const none of ['/', '/init.scope', '/user.slice/user-1000.slice', `/docker/${A}0`, `/docker/x${A}`, `/system.slice/docker-${A}.service`,
    `/docker/${A.toUpperCase()}`]) {
    assert.equal(containerOfPath(none), null, none)
  }
  assert.deepEqual([...containersOfCgroupText(cgroupText('v1', `/docker/${A}`))], [A])
  assert.deepEqual([...containersOfCgroupText('12:memory:/\n0::/init.scope\n')], [])
})

for (const version of ['v1', 'v2']) {
  for (const layout of ['cgroupfs', 'systemd']) {
    const path = (id) => `/${groupOf(layout, id)}`
    const what = `cgroup ${version}, ${layout} layout`

    test(`${what}: a pid listed in the group's cgroup.procs whose cgroup names the container is taken`, (t) => {
      // 300 names the container too, but 4711 is the group's own listing: no scan of /proc happens
      const roots = fixture(t, { version, layout, containers: { [A]: '4711\n4712\n' }, procs: { 300: path(A), 4711: path(A), 4712: path(A) } })
      assert.equal(containerPid(A, roots), 4711)
    })

    test(`${what}: the group's list empty or all 0 (another pid namespace) -> the lowest pid of /proc naming it`, (t) => {
      const listed = version === 'v1' ? '' : '0\n0\n0\n'
      const procs = { 2: null, 57: path(B), 812: path(A), 813: path(A), 90: `${path(A)}/init.scope`, 1200: path(C) }
      const roots = fixture(t, { version, layout, containers: { [A]: listed, [B]: listed }, procs })
      assert.equal(containerPid(A, roots), 90)
      assert.equal(containerPid(B, roots), 57)
      // one pass for several ids; one of them with no process at all
      assert.deepEqual(Object.fromEntries(containerPids([A, B, C, 'd4'.repeat(32)], roots)), { [A]: 90, [B]: 57, [C]: 1200, ['d4'.repeat(32)]: null })
    })

    test(`${what}: a listed pid whose cgroup names another container is not taken`, (t) => {
      // 70 is B's process in this namespace's numbering; A's own process is 800
      const roots = fixture(t, { version, layout, containers: { [A]: '70\n' }, procs: { 70: path(B), 800: path(A) } })
      assert.equal(containerPid(A, roots), 800)
      const alone = fixture(t, { version, layout, containers: { [A]: '70\n' }, procs: { 70: path(B) } })
      assert.equal(containerPid(A, alone), null)
    })

    test(`${what}: no such container is null; a bad id is refused before any path is built`, (t) => {
      const roots = fixture(t, { version, layout, containers: { [A]: '' }, procs: { 500: path(A) } })
      assert.equal(containerPid(B, roots), null)
      for (const bad of ['../../etc', A.slice(1), `${A.slice(1)}g`, A.toUpperCase(), `${A}/..`, '']) {
        assert.throws(() => containerPid(bad, roots), { name: 'TypeError', message: /is not a container id/ }, bad)
      }
    })

    test(`${what}: containerCgroup finds the group, its memory and quota files; the RC reads the pid's network`, async (t) => {
      const roots = fixture(t, { version, layout, containers: { [A]: '' }, procs: { 33: path(A) } })
      const c = containerCgroup(A, roots.cgroupRoot)
      if (version === 'v1') {
        const hierarchy = join(roots.cgroupRoot, 'cpu,cpuacct')
        assert.deepEqual(c, {
          kind: 'cgroup-v1',
          cpuDir: join(hierarchy, groupOf(layout, A)),
          memFile: join(roots.cgroupRoot, 'memory', groupOf(layout, A), 'memory.usage_in_bytes'),
          throttleDir: join(hierarchy, groupOf(layout, A))
        })
      } else {
        const dir = join(roots.cgroupRoot, groupOf(layout, A))
        assert.deepEqual(c, { kind: 'cgroup-v2', cpuDir: dir, memFile: join(dir, 'memory.current'), throttleDir: dir })
      }
      assert.equal(containerCgroup(B, roots.cgroupRoot), null)
      // the service's own lookup (no pidOf given): the bytes of pid 33's eth0, not loopback's
      const { app, close } = createRcApp({ token: 'test-token-0123456789abcdef', receiverId: 'ab'.repeat(16), ...roots })
      const server = await new Promise(resolve => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
      t.after(() => { close(); server.closeAllConnections(); server.close() })
      const res = await fetch(`http://127.0.0.1:${server.address().port}/snapshot?containers=${A}`, {
        headers: { [AUTH_HEADER]: signRequest('test-token-0123456789abcdef', { receiver: 'ab'.repeat(16), method: 'GET', path: `/snapshot?containers=${A}` }) }
      })
      const snap = await res.json()
      assert.equal(res.status, 200, JSON.stringify(snap))
      assert.deepEqual(snap.containers[A].net, { rx: 3300, tx: 3301 })
      assert.equal(snap.containers[A].memoryBytes, version === 'v1' ? 4096 : 8192)
    })
  }
}
