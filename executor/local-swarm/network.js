// The local swarm's LAN: a bridge in a namespace of its own (so the host's FORWARD policy does not drop node-to-node
// traffic), the manager on it through a veth with 10.99.0.1, and each worker in a network namespace with 10.99.0.(1+i),
// reaching the LAN only.
import { fail } from '../../lib/messages.js'
import { ip, ipJson } from './host.js'

export const LAN_NS = 'nodescale-lan'
export const MANAGER_VETH = 'nsc-m0'
export const WORKER_PREFIX = 'nodescale-w'
const SUBNET = '10.99.0'
const PREFIX = 24
export const MANAGER_ADDR = `${SUBNET}.1`

/** The name of worker i (1-based): its netns, its hostname and its node label. */
export const workerName = (i) => `${WORKER_PREFIX}${i}`
/** Worker i's address on the LAN. */
export const workerAddr = (i) => `${SUBNET}.${1 + i}`
/** The index of a worker name, or null for other names. */
export function workerIndex (name) {
  const m = new RegExp(`^${WORKER_PREFIX}(\\d+)$`).exec(name ?? '')
  return m ? Number(m[1]) : null
}

/** Names of the network namespaces of this machine. */
export async function listNetns () {
  return (await ipJson('netns', 'list')).map(n => n.name)
}

async function linkExists (name, ns) {
  try {
    await ip(...(ns ? ['-n', ns] : []), 'link', 'show', name)
    return true
  } catch {
    return false
  }
}

/**
 * Refuses when an address of the LAN's subnet is on one of the host's own interfaces other than ours: the cluster would
 * shadow a network the machine uses.
 */
export async function checkSubnetFree () {
  const links = await ipJson('-4', 'addr', 'show')
  for (const link of links) {
    if (link.ifname === MANAGER_VETH) continue
    const used = (link.addr_info ?? []).find(a => a.local?.startsWith(`${SUBNET}.`))
    if (used) {
      throw fail('SUBNET_TAKEN', { link: link.ifname, address: used.local, prefix: used.prefixlen, subnet: SUBNET, subnetPrefix: PREFIX })
    }
  }
}

/**
 * Creates the LAN (namespace, bridge, manager veth with its address) unless it is complete already.
 * @returns {Promise<boolean>} whether anything was created
 */
export async function ensureLan () {
  const spaces = await listNetns()
  if (spaces.includes(LAN_NS) && await linkExists('br0', LAN_NS) && await linkExists(MANAGER_VETH)) return false
  await removeLan()
  await checkSubnetFree()
  await ip('netns', 'add', LAN_NS)
  await ip('-n', LAN_NS, 'link', 'set', 'lo', 'up')
  await ip('-n', LAN_NS, 'link', 'add', 'br0', 'type', 'bridge')
  await ip('-n', LAN_NS, 'link', 'set', 'br0', 'up')
  await ip('link', 'add', MANAGER_VETH, 'type', 'veth', 'peer', 'name', 'm0', 'netns', LAN_NS)
  await ip('-n', LAN_NS, 'link', 'set', 'm0', 'master', 'br0', 'up')
  await ip('addr', 'add', `${MANAGER_ADDR}/${PREFIX}`, 'dev', MANAGER_VETH)
  await ip('link', 'set', MANAGER_VETH, 'up')
  return true
}

/**
 * Removes the LAN: the manager's veth (its peer goes with it) and the LAN namespace (the bridge and the workers' LAN
 * ends).
 */
export async function removeLan () {
  if (await linkExists(MANAGER_VETH)) await ip('link', 'del', MANAGER_VETH)
  if ((await listNetns()).includes(LAN_NS)) await ip('netns', 'del', LAN_NS)
}

/**
 * Worker i's namespace, plugged into the LAN by a veth (eth0 inside, w<i> on the bridge), with its address.
 * A half-made namespace of an earlier attempt is replaced.
 * @param {number} i
 */
export async function ensureWorkerNet (i) {
  const ns = workerName(i)
  if ((await listNetns()).includes(ns)) {
    const addrs = await ipJson('-n', ns, '-4', 'addr', 'show', 'dev', 'eth0').catch(() => [])
    if (addrs[0]?.addr_info?.some(a => a.local === workerAddr(i))) return false
    await ip('netns', 'del', ns)
  }
  await ip('netns', 'add', ns)
  await ip('-n', ns, 'link', 'set', 'lo', 'up')
  await ip('-n', ns, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', `w${i}`, 'netns', LAN_NS)
  await ip('-n', LAN_NS, 'link', 'set', `w${i}`, 'master', 'br0', 'up')
  await ip('-n', ns, 'addr', 'add', `${workerAddr(i)}/${PREFIX}`, 'dev', 'eth0')
  await ip('-n', ns, 'link', 'set', 'eth0', 'up')
  // No default route: a node reaches the LAN only. Swarm tries to pull every task's image first; with no route, a pull
  // of an image that is not on the LAN fails at once (the loaded copy is used) instead of waiting for DNS timeouts.
  return true
}

/** Removes worker i's namespace; its veth pair goes with it. */
export async function removeWorkerNet (i) {
  const ns = workerName(i)
  if (await linkExists(`w${i}`, LAN_NS)) await ip('-n', LAN_NS, 'link', 'del', `w${i}`)
  if ((await listNetns()).includes(ns)) await ip('netns', 'del', ns)
}

/** The path nsenter takes for a namespace made by `ip netns add`. */
export const netnsPath = (name) => `/var/run/netns/${name}`
