// The soak test's short mode (npm run soak -- --short): a 12-run sweep on the Swarm backend through kill -9 at random
// moments, a Docker daemon restart and a full disk, resumed each time, against the same plan run without faults.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from './helpers/cli.js'

test('soak, short: every planned run done exactly once through kill -9, a daemon restart and a full disk; nothing left; ' +
  'the points the plan makes', { timeout: 20 * 60_000 }, async () => {
  const child = spawn(process.execPath, [join(ROOT, 'perf', 'soak.js'), '--short', '--json'], { cwd: ROOT })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', d => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', d => { stderr += d })
  const code = await new Promise(resolve => child.on('close', resolve))
  const line = stdout.trim().split('\n').at(-1)
  assert.ok(line?.startsWith('{'), `no result from the soak (exit ${code}):\n${stderr.slice(-4000)}`)
  const r = JSON.parse(line)
  const faults = r.faulted.faults.map(f => f.fault).sort()
  assert.deepEqual(faults, ['disk-full', 'kill', 'kill', 'restart'], 'every fault was applied')
  assert.equal(r.checks.everyRunDoneOnce, true, `runs done twice ${r.checks.twice}, missing ${r.checks.missing}`)
  assert.equal(r.checks.diskFullStoppedCleanly, true, JSON.stringify(r.faulted.faults))
  assert.equal(r.checks.nothingLeft, true, JSON.stringify(r.checks.left))
  assert.equal(r.checks.noLock, true)
  assert.deepEqual(r.checks.points.faulted, r.checks.points.clean)
  assert.ok(r.faulted.sessions >= 4, `a session per kill and the disk: ${r.faulted.sessions}`)
  assert.equal(r.pass, true)
  assert.equal(code, 0)
})
