// cluster up makes this machine's engine trust the control plane's registry (executor/local-swarm/manager-trust.js):
// it signals only dockerd (a pid file naming another process changes nothing), and daemon.json keeps its mode.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { swarmEngine } from './swarm-helper.js'
import { trustRegistryOnManager } from '../executor/local-swarm/manager-trust.js'
import { BUILTIN_REGISTRY } from '../executor/local-swarm/worker-engine.js'

const engine = await swarmEngine()
const DAEMON_JSON = '/etc/docker/daemon.json'
const skip = engine.skip || (!existsSync('/var/run/docker.pid') && 'no dockerd pid file here (an engine this test cannot reload)')
const docker = /** @type {import('dockerode')} */ (engine.docker)
const trusts = async () => Boolean((await docker.info()).RegistryConfig.IndexConfigs[BUILTIN_REGISTRY])

/** Takes the builtin registry out of the engine's insecure registries (daemon.json, reloaded), as before cluster up. */
async function untrust () {
  if (!existsSync(DAEMON_JSON)) return
  const conf = JSON.parse(readFileSync(DAEMON_JSON, 'utf8'))
  conf['insecure-registries'] = (conf['insecure-registries'] ?? []).filter(r => r !== BUILTIN_REGISTRY)
  writeFileSync(DAEMON_JSON, JSON.stringify(conf, null, 2))
  process.kill(Number(readFileSync('/var/run/docker.pid', 'utf8')), 'SIGHUP')
  for (let i = 0; i < 50 && await trusts(); i++) await sleep(100)
}

test('a pid file naming another process is refused and nothing is signalled; dockerd is reloaded and daemon.json keeps its mode', { skip }, async (t) => {
  const before = existsSync(DAEMON_JSON) ? readFileSync(DAEMON_JSON) : null
  const mode = before ? statSync(DAEMON_JSON).mode & 0o777 : null
  t.after(() => {
    if (before) { writeFileSync(DAEMON_JSON, before); chmodSync(DAEMON_JSON, /** @type {number} */ (mode)) }
    process.kill(Number(readFileSync('/var/run/docker.pid', 'utf8')), 'SIGHUP')
  })
  await untrust()
  assert.equal(await trusts(), false)
  if (existsSync(DAEMON_JSON)) chmodSync(DAEMON_JSON, 0o640)
  // a stale pid file whose pid is now another process's: a process that would die of SIGHUP
  const other = spawn('sleep', ['30'])
  t.after(() => other.kill('SIGKILL'))
  const pidFile = join(mkdtempSync(join(tmpdir(), 'ns-trust-')), 'docker.pid')
  writeFileSync(pidFile, String(other.pid))
  const unchanged = existsSync(DAEMON_JSON) ? readFileSync(DAEMON_JSON, 'utf8') : null
  await assert.rejects(trustRegistryOnManager(docker, { pidFile }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'NS_ERR_DEPLOY')
    assert.match(err.message, new RegExp(`names pid ${other.pid}, which is "sleep", not dockerd: the engine's settings were not changed`))
    return true
  })
  assert.equal(other.exitCode, null, 'the other process got no signal')
  assert.equal(other.signalCode, null)
  assert.equal(existsSync(DAEMON_JSON) ? readFileSync(DAEMON_JSON, 'utf8') : null, unchanged)
  // the real pid file: the engine reloads and trusts the registry; the file keeps the mode it had
  assert.equal(await trustRegistryOnManager(docker), true)
  assert.equal(await trusts(), true)
  assert.ok(JSON.parse(readFileSync(DAEMON_JSON, 'utf8'))['insecure-registries'].includes(BUILTIN_REGISTRY))
  assert.equal(statSync(DAEMON_JSON).mode & 0o777, existsSync(DAEMON_JSON) && unchanged !== null ? 0o640 : 0o644)
})
