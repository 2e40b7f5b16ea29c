// What `executor cluster up` created, kept on disk so that `cluster down` removes exactly that (and a run finds the
// workers' engines).
import { readFileSync, writeFileSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { DATA_ROOT, engineClient } from './worker-engine.js'

export const stateFile = () => join(DATA_ROOT, 'state.json')

/**
 * @typedef {{ index: number, name: string, addr: string, nodeId: string | null, socket: string }} WorkerEntry
 * @typedef {{ managerNodeId: string | null, advertiseBefore: string | null, workers: WorkerEntry[], updatedAt?: string
 *   }} ClusterState
 */

/** @returns {ClusterState} */
export function readState () {
  try {
    const s = JSON.parse(readFileSync(stateFile(), 'utf8'))
    return { managerNodeId: s.managerNodeId ?? null, advertiseBefore: s.advertiseBefore ?? null, workers: Array.isArray(s.workers) ? s.workers : [] }
  } catch {
    return { managerNodeId: null, advertiseBefore: null, workers: [] }
  }
}

/** @param {ClusterState} state */
export function writeState (state) {
  mkdirSync(DATA_ROOT, { recursive: true })
  const tmp = `${stateFile()}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify({ ...state, workers: [...state.workers].sort((a, b) => a.index - b.index), updatedAt: new Date().toISOString() }, null, 2))
  renameSync(tmp, stateFile())
}

export function clearState () {
  rmSync(stateFile(), { force: true })
}

/**
 * The engines of this machine's local swarm workers, for the swarm backend to load images into (none without a local
 * cluster).
 * @returns {{ nodeId: string | null, name: string, docker: import('dockerode') }[]}
 */
export function localWorkerEngines () {
  return readState().workers.map(w => ({ nodeId: w.nodeId, name: w.name, docker: engineClient(w.index) }))
}
