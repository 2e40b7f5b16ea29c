// Facts about the machine a run ran on, for run.json's `environment`.
import os from 'node:os'
import { spawnSync } from 'node:child_process'

function versionOf (cmd, args, pattern) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 })
  if (r.error || r.status !== 0) return null
  const m = pattern.exec(`${r.stdout}\n${r.stderr}`)
  return m ? m[1] : null
}

/**
 * @param {{ backend: string, extra?: object }} opts
 */
export function describeEnvironment ({ backend, extra = {} }) {
  const cpus = os.cpus()
  return {
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
}

/** The HAProxy version on PATH, or null. */
export function haproxyVersion () {
  return versionOf('haproxy', ['-v'], /version (\S+)/i)
}
