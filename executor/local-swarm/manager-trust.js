// The manager's engine trusts the control plane's registry over plain HTTP, as the local workers' engines do: it pushes
// the run's images to the address the workers pull from, and runs its own tasks (the RC) from there, by digest.
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fail } from '../../lib/messages.js'
import { dockerError } from '../docker/engine.js'
import { trustsPlainHttp } from '../docker/image-registry.js'
import { BUILTIN_REGISTRY } from './worker-engine.js'

/**
 * Adds the builtin registry to this machine's engine's insecure registries (/etc/docker/daemon.json, reloaded with
 * SIGHUP: no restart, nothing running stops) unless it trusts it already. Only for this machine's engine, started
 * without --insecure-registry flags (a flag and the file may not both set them: the engine would not start again).
 * @param {import('dockerode')} docker the manager's engine
 * @param {{ log?: (line: string) => void, daemonJson?: string, pidFile?: string }} [opts]
 * @returns {Promise<boolean>} whether the engine's settings were changed
 */
export async function trustRegistryOnManager (docker, { log = () => {}, daemonJson = '/etc/docker/daemon.json', pidFile = '/var/run/docker.pid' } = {}) {
  const trusted = async () => {
    try { return trustsPlainHttp(await docker.info(), BUILTIN_REGISTRY) } catch (err) { throw dockerError(err, 'reading the engine\'s registry settings') }
  }
  if (await trusted()) return false
  let pid
  try { pid = Number(readFileSync(pidFile, 'utf8').trim()) } catch { pid = 0 }
  const flags = pid ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') : []
  const local = Boolean(/** @type {any} */ (docker).modem?.socketPath)
  if (!local || !pid || flags.some(f => f.startsWith('--insecure-registry'))) {
    throw fail('MANAGER_DISTRUSTS_REGISTRY', { registry: BUILTIN_REGISTRY, daemonJson })
  }
  // the pid file names dockerd, or the signal would go to whatever process has that pid now
  const name = (() => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() } catch { return null } })()
  if (name !== 'dockerd') {
    throw fail('PID_NOT_DOCKERD', { pidFile, pid, name, registry: BUILTIN_REGISTRY, daemonJson })
  }
  const conf = existsSync(daemonJson) ? JSON.parse(readFileSync(daemonJson, 'utf8')) : {}
  conf['insecure-registries'] = [...new Set([...(conf['insecure-registries'] ?? []), BUILTIN_REGISTRY])]
  // the engine's settings keep their mode (a new file: 0644, as dockerd's packages make it), whatever the umask
  const mode = existsSync(daemonJson) ? statSync(daemonJson).mode & 0o777 : 0o644
  writeFileSync(`${daemonJson}.tmp`, JSON.stringify(conf, null, 2) + '\n', { mode })
  chmodSync(`${daemonJson}.tmp`, mode)
  renameSync(`${daemonJson}.tmp`, daemonJson)
  process.kill(pid, 'SIGHUP')
  for (let i = 0; i < 50 && !await trusted(); i++) await sleep(100)
  if (!await trusted()) {
    throw fail('REGISTRY_NOT_TAKEN', { registry: BUILTIN_REGISTRY, daemonJson })
  }
  log(`cluster: the manager's engine now trusts the control plane's registry ${BUILTIN_REGISTRY} over plain HTTP, ` +
    `as the workers' do (insecure-registries in ${daemonJson}, reloaded: nothing restarted)`)
  return true
}
