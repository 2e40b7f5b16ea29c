// Facts about the machine a run ran on, for run.json's `environment`.
import os from 'node:os'

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
