// Before a sweep with a nodes axis runs anything: does the swarm have enough ready worker nodes for its largest K?
import { connectDocker, dockerError } from '../docker/engine.js'
import { planPlacement } from '../docker/placement.js'
import { NsError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'

/**
 * The cell that asks for the most worker nodes (null when no cell names nodes).
 * @param {any[]} cells buildCells' cells (config, paths)
 * @returns {any}
 */
export function largestNodes (cells) {
  return cells.reduce((best, c) => (c.config.nodes && (!best || c.config.nodes > best.config.nodes) ? c : best), null)
}

/**
 * The swarm's nodes as listNodes gives them; an engine in no swarm yet has none to offer (a run would make it a
 * single-node swarm, whose one node is the manager).
 * @param {import('dockerode')} docker
 */
async function swarmNodes (docker) {
  let info
  try { info = await docker.info() } catch (err) { throw dockerError(err, 'reading the engine info', { refused: 'SWARM_UNREADABLE' }) }
  if (info.Swarm?.LocalNodeState !== 'active') return []
  if (!info.Swarm.ControlAvailable) {
    throw fail('ENGINE_CANNOT_LIST_NODES', { node: info.Swarm.NodeID })
  }
  try { return await docker.listNodes() } catch (err) { throw dockerError(err, 'listing swarm nodes', { refused: 'SWARM_UNREADABLE' }) }
}

/**
 * Checks the swarm has as many ready, active worker nodes as the largest K of the cells (the test a run makes at
 * deploy time, made once before the first run). Throws the run's own `--nodes` error (NS_ERR_BAD_FLAG) with a fix;
 * NS_ERR_MISSING_DOCKER when no engine answers. Resolves with what it found.
 * @param {{ config: { nodes?: number, strategy: string, instances: number } }[]} cells
 * @param {{ connect?: () => Promise<any> }} [opts] connect: a dockerode client (tests pass a fake)
 * @returns {Promise<{ needed: number, workers: number } | null>} null when no cell names nodes
 */
export async function checkSwarmNodes (cells, { connect = () => connectDocker({ timeoutMs: 3000 }) } = {}) {
  const largest = largestNodes(cells)
  if (!largest) return null
  const needed = largest.config.nodes
  const nodes = await swarmNodes(await connect())
  try {
    planPlacement(nodes, { ...largest.config, constraints: [] })
  } catch (err) {
    if (!(err instanceof NsError)) throw err
    err.hint = `executor cluster up --nodes ${needed + 1} (a manager and ${needed} workers on this machine), ` +
      'or join workers to the swarm (docker swarm join-token worker, on the manager)'
    throw err
  }
  return { needed, workers: nodes.filter(n => n.Spec?.Role === 'worker').length }
}
