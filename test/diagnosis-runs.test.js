// Each run names what limited it, on real servers of this machine: UP given more vCPUs than its one loop can use, HS
// replicas at a tiny quota behind HAProxy, a disk app waiting on synchronous writes. (The generator-limited run is in
// run-validity.test.js; every strategy's roles and telemetry are checked by assertDiagnosis on every complete run.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, assertCompleteRun } from './helpers/cli.js'
import { BOTTLENECK_THRESHOLDS } from '../analyzer/bottleneck.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'ns-diagnosis-'))
const local = ['--backend', 'local', '--warmup', '1']

test('up x4 at 0.5 CPU each on the cpu app: the one event loop is the bottleneck, the quota has CPU left', { timeout: 60000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '4', '--cpus-per-instance', '0.5', '--benchmark', 'cpu', '--concurrency', '8', '--duration', '4', '--out', out, ...local])
  assert.equal(r.code, 0, r.stderr)
  const { run } = assertCompleteRun(out, { strategy: 'up', instances: 4 })
  const b = run.diagnosis.bottleneck
  assert.equal(b.kind, 'event-loop', JSON.stringify(run.diagnosis))
  assert.ok(b.evidence[0].value >= 0.95, JSON.stringify(b.evidence))
  assert.ok(run.diagnosis.roles.workers < 1.3, 'one loop uses about one core of the two allowed')
  assert.match(r.stdout, /bottleneck: event-loop — instance \S+ ELU (0\.9\d|1\.00), [\d.]+ cores of 2\.0 allowed, host \d+% idle/)
  assert.match(r.stdout, /cores by role: workers [\d.]+ .*load-generator/)
})

test('hs x2 at 0.1 CPU each: the quota is the bottleneck; HAProxy\'s CPU is a role and its queue is read', { timeout: 60000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'hs', '--instances', '2', '--cpus-per-instance', '0.1', '--benchmark', 'cpu', '--concurrency', '8', '--duration', '4', '--out', out, ...local])
  assert.equal(r.code, 0, r.stderr)
  const { run } = assertCompleteRun(out, { strategy: 'hs', instances: 2 })
  assert.equal(run.diagnosis.bottleneck.kind, 'cpu-quota', JSON.stringify(run.diagnosis.bottleneck))
  assert.ok(run.diagnosis.roles['load-balancer'] > 0, JSON.stringify(run.diagnosis.roles))
  assert.ok(run.diagnosis.lb.samples >= 3, JSON.stringify(run.diagnosis.lb))
  assert.ok(run.diagnosis.lb.sessions > 0, 'the clients\' sessions are in HAProxy')
})

test('disk with O_SYNC writes: the loop partly idle while requests wait on the thread pool\'s writes: io', { timeout: 60000 }, async () => {
  const out = tmp()
  const r = await runCli('executor', ['run', '--strategy', 'up', '--instances', '1', '--benchmark', 'disk', '--param', 'sync=true', '--concurrency', '16', '--duration', '4', '--out', out, ...local])
  assert.equal(r.code, 0, r.stderr)
  const { run } = assertCompleteRun(out, { strategy: 'up', instances: 1 })
  assert.equal(run.diagnosis.bottleneck.kind, 'io', JSON.stringify(run.diagnosis))
  assert.equal(run.summary.errors, 0, 'every write succeeded')
  const [elu, wait] = run.diagnosis.bottleneck.evidence
  assert.ok(elu.value < BOTTLENECK_THRESHOLDS.ioElu && wait.value >= BOTTLENECK_THRESHOLDS.ioWait, JSON.stringify(run.diagnosis.bottleneck))
})
