// Where a local run's load generator ran beside the server: the cores each may use, the cores they share, and why
// (run.json's `load.cpus` and `load.sharing`, and the run's log line).
import { cpuListText, parseCpuList } from '../lib/cpu-list.js'

/**
 * @typedef {object} LoadSharing
 * @property {number[]} server the cores the server may use (every replica's `placement[].cpus` together)
 * @property {number[] | null} generator the cores the generators are pinned to (their taskset cpus together), null when
 *   not pinned: any core the OS gives them
 * @property {number[]} shared the cores both may use
 * @property {boolean} apart the generators kept off every core of the server
 * @property {string} why the choice in a sentence, also the run's log line
 */

const cores = (list) => `core${list.length === 1 ? '' : 's'} ${cpuListText(list)}`

/**
 * Where the load ran against the server's cores, on this machine: null when a place is not a process of this machine
 * (--load-nodes agents) or the placement did not record the server's cores (the Swarm backend).
 * @param {{ placement: readonly Record<string, any>[], places?: readonly { where?: Record<string, any> }[] | null,
 *   machine?: readonly number[] | null }} opts places: the generators of a run with several (null: the one, unpinned,
 *   of runLoad); machine: this machine's online cores
 * @returns {LoadSharing | null}
 */
export function loadSharing ({ placement, places = null, machine = null }) {
  if (!placement.length || placement.some(p => !Array.isArray(p.cpus))) return null
  if (places && places.some(p => p.where?.kind !== 'process')) return null
  const server = [...new Set(placement.flatMap(p => p.cpus))].sort((a, b) => a - b)
  const pinned = places !== null && places.length > 0 && places.every(p => Array.isArray(p.where?.cpus) && p.where.cpus.length > 0)
  const generator = places && pinned ? [...new Set(places.flatMap(p => p.where?.cpus ?? []))].sort((a, b) => a - b) : null
  const all = machine?.length ? machine : server
  const shared = (generator ?? all).filter(c => server.includes(c))
  const apart = generator !== null && shared.length === 0
  const many = places !== null && places.length > 1
  const them = places && many ? `the ${places.length} load generators` : 'the load generator'
  const share = many ? 'share' : 'shares'
  const how = generator ? `pinned to ${cores(generator)}` : 'not pinned'
  let why
  if (apart) {
    why = `${them}, ${how}, kept off the server's ${cores(server)}`
  } else if (all.every(c => server.includes(c))) {
    why = `the server may use every core (${cpuListText(server)}): ${them} cannot be kept off its cores and, ${how}, ${share} ${cores(shared)} with it`
  } else if (!generator) {
    why = `${them} is not pinned (one generator runs where the OS puts it; --load-procs P pins generators off the server's cores): ` +
      `it may share the server's ${cores(shared)}`
  } else {
    why = `${them}, ${how}, ${share} ${cores(shared)} with the server (on ${cores(server)})`
  }
  return { server, generator, shared, apart, why }
}

/**
 * The cores of a local run partitioned (--server-cpus, --load-cpus, --lb-cpus; lib/run-options.js checkPartition):
 * the server's as given, the load's and HAProxy's as given or, by default, every core of the machine the server is not
 * given; null without --server-cpus (the server where its strategy puts it, the generators off it as far as they can).
 * @param {{ serverCpus?: string, loadCpus?: string, lbCpus?: string }} config
 * @param {number} cpus this machine's cores
 * @returns {{ server: number[], load: number[], lb: number[], derived: ('load'|'lb')[] } | null} derived: the lists
 *   not given, worked out
 */
export function cpuPartition (config, cpus) {
  if (!config.serverCpus) return null
  const server = parseCpuList(config.serverCpus) ?? []
  const rest = Array.from({ length: cpus }, (_, c) => c).filter(c => !server.includes(c))
  const list = (text) => (text ? parseCpuList(text) ?? rest : rest)
  /** @type {('load'|'lb')[]} */
  const derived = []
  if (!config.loadCpus) derived.push('load')
  if (!config.lbCpus) derived.push('lb')
  return { server, load: list(config.loadCpus), lb: list(config.lbCpus), derived }
}
