// The rule the tests that assert a bottleneck kind or a core count read first (test/helpers/host.js): a run's host was
// busy when its validity says processes outside the run used the `disturbed` bound or more, or saturated the host
// beside them; a run that fills the host by itself is not "busy", and its test's assertions stand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { judgeRun } from '../executor/validity.js'
import { hostWasBusy, hostsWereBusy, busyBound } from './helpers/host.js'

const steady = {
  judged: true,
  why: null,
  seconds: 8,
  mean: 1000,
  halfWidth: 10,
  relHalfWidth: 0.01,
  se: 4.6,
  df: 13.5,
  batch: 8,
  batches: 10,
  needed: 2,
  warmup: { cut: 0, settled: true, bias: 0, significant: false },
  drift: 0.001,
  driftP: 0.9,
  driftSignificant: false
}

/** A run.json as the executor writes it (validity by judgeRun, the roles in diagnosis) from a run's CPU figures. */
function runOf ({ roles, hostIdle }) {
  const figures = {
    summary: { errorRate: 0, latency: { p99: 20 }, stability: steady },
    cpu: { throttling: null },
    generator: { share: 0.3, cores: 0.3, hostIdle },
    roles: { roles, hostCores: 2 },
    slo: { errors: 0.001 }
  }
  return { validity: judgeRun(figures), diagnosis: { roles, host: { cores: 2, busy: 2 - hostIdle / 50 } }, environment: { cpus: 2 } }
}

test('a run beside other work is a busy host, with the figure; a quiet one, or one that fills the host itself, is not', () => {
  assert.equal(busyBound(2), 0.3)
  assert.equal(busyBound(16), 2.4)
  const quiet = runOf({ roles: { workers: 1, 'load-generator': 0.3, other: 0.05 }, hostIdle: 30 })
  assert.equal(hostWasBusy(quiet), null)
  // another process spinning on a core: 1.37 cores outside the run (issue 28's failures), the host 0% idle
  const hog = runOf({ roles: { workers: 0.6, 'load-generator': 0.03, other: 1.37 }, hostIdle: 0 })
  assert.equal(hostWasBusy(hog), 'host busy: processes outside the run used 1.37 cores of 2 (disturbed)')
  // saturated by the run's own processes: the test's assertions stand
  const own = runOf({ roles: { workers: 1.3, 'load-generator': 0.65, other: 0.05 }, hostIdle: 2 })
  assert.deepEqual(own.validity.flags.map(f => f.name), ['host-saturated'])
  assert.equal(hostWasBusy(own), null)
  // saturated in its busiest second with some work outside the run, under the disturbed bound on average
  const burst = runOf({ roles: { workers: 1.2, 'load-generator': 0.5, other: 0.2 }, hostIdle: 1 })
  assert.equal(hostWasBusy(burst), 'host busy: 1% idle at its busiest, processes outside the run 0.2 cores of 2 (host-saturated)')
  assert.equal(hostsWereBusy([quiet, own]), null)
  assert.equal(hostsWereBusy([quiet, hog, burst]), hostWasBusy(hog))
})
