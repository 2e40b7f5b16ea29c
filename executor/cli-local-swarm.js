// `executor cluster up|down|status`: a local multi-node swarm (worker engines in network namespaces) for tests, demos
// and MIMN runs. The command keeps its first name, `cluster`; in the code it is the local swarm (Node's cluster module
// is cm).
import { EXIT, badFlag } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { option, optionsHelp, parseCommandLine } from '../lib/options.js'
import { clusterUp, clusterDown, clusterStatus, checkLoadNodes, MAX_LOCAL_NODES } from './local-swarm/local-swarm.js'

const OPTIONS = Object.freeze([
  option({ flag: 'nodes', type: 'whole', min: 1, max: MAX_LOCAL_NODES, arg: 'K', help: `1..${MAX_LOCAL_NODES} (up only)` }),
  option({
    flag: 'load-nodes',
    type: 'whole',
    min: 0,
    max: MAX_LOCAL_NODES - 1,
    arg: 'L',
    help: '0..K-1: the last L workers are kept for the load (up only; default 0)'
  }),
  option({ flag: 'force', type: 'boolean', help: 're-initialise the swarm even while other stacks run (they are removed)' }),
  option({ flag: 'json', type: 'boolean', help: 'print the result as JSON on stdout' }),
  option({ flag: 'help', short: 'h', type: 'boolean', help: 'this help' })
])

export const CLUSTER_HELP = `Usage: executor cluster <up|down|status> [options]

Turns this machine into a multi-node Docker Swarm: this engine is the manager, and each extra node is a Docker
engine in a network namespace of its own (10.99.0.x on a local LAN), with its own data folder, hostname and
node label io.nodescale.node=<name>. Needs root, ip, nsenter, unshare and dockerd.

  up --nodes K [--load-nodes L] [--force]
                           K nodes in all: the manager plus K-1 workers; again with another K grows or shrinks.
                           The last L workers are labelled io.nodescale.role=load: they run no server task and are
                           where executor run --load-nodes puts the load generators (the label is removed from the
                           other workers, so up again with another L relabels; L is 0 unless given).
                           A swarm that advertises 127.0.0.1 (workers cannot reach it) is re-initialised to
                           advertise 10.99.0.1 (leave + init: its services go); it refuses while stacks other than
                           nodescale's control plane run, unless --force.
  down [--force]           removes the workers (engines, namespaces, veths, node entries, files) and the LAN, and
                           re-initialises the swarm to advertise 127.0.0.1: single-node runs work as before.
  status                   the swarm's nodes, their labels (load: a load node), addresses and engines.

Options:
${optionsHelp(OPTIONS, { width: 17 })}

Every local node shares this machine's cores: a local swarm shows how a run distributes, not more capacity.

Examples:
  executor cluster up --nodes 3
  executor run --strategy hs --instances 4 --nodes 2 --cpus-per-instance 0.25
  executor cluster up --nodes 4 --load-nodes 1
  executor run --strategy hs --instances 2 --nodes 2 --load-nodes 1
  executor cluster down`

/** One line per node, for people. */
function statusLines (status) {
  const head = `swarm ${status.swarm}, manager advertises ${status.advertise ?? '-'}, ` +
    `${status.nodes.length} node${status.nodes.length === 1 ? '' : 's'}${status.lan ? ' (local swarm LAN up)' : ''}`
  return [head, ...status.nodes.map(n => `  ${(n.label ?? '-').padEnd(14)} ${n.hostname.padEnd(16)} ${n.role.padEnd(8)} ` +
    `${(n.loadNode ? 'load' : '').padEnd(4)} ${n.state.padEnd(7)} ${n.availability.padEnd(7)} ${n.addr.padEnd(12)} ${n.engine ?? ''}`)]
}

/** @type {(argv: string[], io: { stdout: any, stderr: any }) => Promise<number>} */
export async function clusterCommand (argv, { stdout, stderr }) {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '--help' || sub === '-h') { stdout.write(CLUSTER_HELP + '\n'); return sub ? EXIT.OK : EXIT.BAD_INPUT }
  if (!['up', 'down', 'status'].includes(sub)) {
    throw fail('UNKNOWN_COMMAND', { command: `cluster ${sub}`, commands: ['cluster up', 'cluster down', 'cluster status'] })
  }
  const { values, positionals } = parseCommandLine(rest, OPTIONS)
  if (values.help) { stdout.write(CLUSTER_HELP + '\n'); return EXIT.OK }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor cluster' })
  if (sub !== 'up' && values.nodes !== undefined) throw badFlag('--nodes', `only applies to cluster up (got cluster ${sub})`)
  if (sub !== 'up' && values.loadNodes !== undefined) throw badFlag('--load-nodes', `only applies to cluster up (got cluster ${sub})`)
  if (sub === 'status' && values.force) throw badFlag('--force', 'only applies to cluster up and cluster down')
  const log = (line) => stderr.write(`${line}\n`)
  const print = (data, lines) => stdout.write(values.json ? JSON.stringify(data, null, 2) + '\n' : lines.join('\n') + '\n')
  if (sub === 'up') {
    if (values.nodes === undefined) throw badFlag('--nodes', `is required: how many nodes in all, the manager included (1..${MAX_LOCAL_NODES})`)
    const loadNodes = values.loadNodes ?? 0
    const badLoad = checkLoadNodes(values.nodes, loadNodes)
    if (badLoad) throw badLoad
    const status = await clusterUp({ nodes: values.nodes, loadNodes, force: Boolean(values.force), log })
    print(status, [...statusLines(status), `up in ${status.ms} ms`])
  } else if (sub === 'down') {
    const result = await clusterDown({ force: Boolean(values.force), log })
    print(result, [`cluster down in ${result.ms} ms${result.removed.length ? `: removed ${result.removed.join(', ')}` : ' (no local workers)'}`])
  } else {
    const status = await clusterStatus()
    print(status, statusLines(status))
  }
  return EXIT.OK
}
