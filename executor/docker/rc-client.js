// The executor's side of the RC service: calls each node's RC, each request signed for that RC with the deployment
// token (lib/request-auth.js), and turns their timelines into one.
import { request } from 'node:http'
import { fail } from '../../lib/messages.js'
import { AUTH_HEADER, callReceiver } from '../../lib/request-auth.js'
import { addThrottle } from '../../rc/throttle.js'

/** Each RC's id by its address (its /healthz says it; read again when it restarted). */
const rcIds = new Map()

/**
 * One JSON call to an RC (node:http with a hard timeout: no pooled socket can hang the run), signed for that RC.
 * @param {{ url: string, token: string }} rc
 * @param {'GET'|'POST'} method
 * @param {string} path
 * @param {any} [body]
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<{ status: number, body: any }>}
 */
export function rcCall (rc, method, path, body, { timeoutMs = 5000 } = {}) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  const url = new URL(path, rc.url)
  const base = url.origin
  return callReceiver({ base, token: rc.token, ids: rcIds },
    (sign) => send(url, method, sign({ method, path: url.pathname + url.search, body: payload }), payload, timeoutMs))
}

/**
 * @param {URL} url
 * @param {string} method
 * @param {string} auth
 * @param {Buffer | undefined} payload
 * @param {number} timeoutMs
 * @returns {Promise<{ status: number, body: any }>}
 */
function send (url, method, auth, payload, timeoutMs) {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent: false,
      timeout: timeoutMs,
      headers: { [AUTH_HEADER]: auth, connection: 'close', ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) }
    }, (res) => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed = text
        try { parsed = JSON.parse(text) } catch {}
        resolve({ status: res.statusCode ?? 0, body: parsed })
      })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(payload)
  })
}

/** Like rcCall, but anything but a 2xx is an NsError naming the RC and what it said. */
async function rcJson (rc, method, path, body) {
  let res
  try {
    res = await rcCall(rc, method, path, body)
  } catch (err) {
    throw fail('RC_UNREACHABLE', { url: rc.url, method, path, why: err.message }, { cause: err })
  }
  if (res.status < 200 || res.status > 299) {
    const said = typeof res.body === 'object' ? res.body?.error ?? JSON.stringify(res.body) : String(res.body).slice(0, 200)
    throw fail('RC_REFUSED', { url: rc.url, method, path, status: res.status, said })
  }
  return res.body
}

/**
 * Joins the timelines of several nodes' RCs into one: cores are numbered node after node (node 0's cores first),
 * samples are paired by their order (every RC samples each interval from its start), and `nodes` says which cores are
 * whose. A node whose timeline ends early (lost mid-run: its last checkpoint) has null cores in the samples it lacks,
 * and its `nodes` entry says `partial`. One node's timeline is returned as it is, with `nodes` added. A node that runs
 * only a role's containers (`rolesOnly`) adds its roles and its busy cores (`apartBusy`, `apartCpus`), not its cores.
 * @param {{ node: string, timeline: any, partial?: boolean, rolesOnly?: boolean }[]} parts
 */
export function mergeTimelines (parts) {
  const withData = parts.filter(p => p.timeline && !p.rolesOnly)
  const merged = joinServerNodes(withData)
  const apart = parts.filter(p => p.timeline && p.rolesOnly)
  if (!merged || !apart.length) return merged
  // nodes that run no server container, only a role's (the load balancer on the manager): their roles and their busy
  // cores join each sample by its order, and the timeline says how many cores they add to the host
  for (let i = 0; i < merged.samples.length; i++) {
    const row = apart.map(p => p.timeline.samples[i]).filter(Boolean)
    merged.samples[i] = {
      ...merged.samples[i],
      roles: sumRoles([merged.samples[i].roles ?? {}, ...row.map(s => s.roles ?? {})]),
      apartBusy: Math.round(row.reduce((a, s) => a + s.host.reduce((b, x) => b + (x ?? 0), 0) / 100, 0) * 1000) / 1000
    }
  }
  return { ...merged, apartCpus: apart.reduce((a, p) => a + p.timeline.cpus, 0) }
}

/** mergeTimelines for the nodes that run the server's containers. */
function joinServerNodes (withData) {
  if (!withData.length) return null
  let offset = 0
  const nodes = withData.map(({ node, timeline, partial }) => {
    const entry = {
      node,
      firstCore: offset,
      cpus: timeline.cpus,
      source: timeline.source,
      lastError: timeline.lastError ?? null,
      ...(partial ? { partial: true } : {})
    }
    offset += timeline.cpus
    return entry
  })
  if (withData.length === 1) return { ...withData[0].timeline, nodes }
  const count = Math.max(...withData.map(p => p.timeline.samples.length))
  const none = (cpus) => new Array(cpus).fill(null)
  const samples = []
  for (let i = 0; i < count; i++) {
    const row = withData.map(p => p.timeline.samples[i])
    const present = row.filter(Boolean)
    const throttled = present.map(s => s.throttle).filter(Boolean)
    samples.push({
      t: Math.max(...present.map(s => s.t)),
      server: row.flatMap((s, k) => s ? s.server : none(withData[k].timeline.cpus)),
      serverTotal: present.reduce((a, s) => a + (s.serverTotal ?? 0), 0),
      host: row.flatMap((s, k) => s ? s.host : none(withData[k].timeline.cpus)),
      containers: Object.assign({}, ...present.map(s => s.containers ?? {})),
      roles: sumRoles(present.map(s => s.roles ?? {})),
      ...(throttled.length ? { throttle: throttled.reduce(addThrottle, { periods: 0, throttled: 0, throttledMs: 0 }) } : {})
    })
  }
  return {
    intervalMs: withData[0].timeline.intervalMs,
    cpus: offset,
    source: withData[0].timeline.source,
    containers: withData.flatMap(p => p.timeline.containers ?? []),
    samples,
    nodes
  }
}

/**
 * Cores by role summed over nodes.
 * @param {Record<string, number>[]} list
 */
function sumRoles (list) {
  /** @type {Record<string, number>} */
  const out = {}
  for (const roles of list) for (const [k, v] of Object.entries(roles)) out[k] = Math.round(((out[k] ?? 0) + v) * 1000) / 1000
  return out
}

/**
 * The containers to sample grouped by the node that runs them, each node with its RC, the container ids, the roles of
 * those that are not the server's, and whether any is the server's; a container on a node without an RC stops it.
 */
function containersByNode (rcs, token, containers) {
  const byNode = new Map()
  for (const c of containers) {
    if (!c.containerId) continue
    const rc = rcs.find(r => r.node === c.node)
    if (!rc) {
      throw fail('RC_NOT_ON_NODE', { node: c.node, container: c.containerId.slice(0, 12) })
    }
    if (!byNode.has(c.node)) byNode.set(c.node, { rc: { url: rc.url, token }, ids: [], roles: {}, server: false })
    const entry = byNode.get(c.node)
    entry.ids.push(c.containerId)
    if (c.role) entry.roles[c.containerId] = c.role
    else entry.server = true
  }
  return byNode
}

/**
 * A session's timeline so far, kept up to date now and then (only the samples since the last copy are fetched, and
 * appended): a node lost mid-run takes its RC's samples with it, and this copy is what run.json keeps of that node. One
 * fetch per node at a time: an RC slower than the interval (its call times out after 5 s) is not asked twice for the
 * same samples. The RC forgets what this copy holds: its memory does not grow with the run.
 */
async function checkpointSession (s) {
  if (s.fetching) return
  s.fetching = true
  const since = s.last?.samples.at(-1)?.t
  try {
    const fresh = await rcJson(s.rc, 'GET', `/timeline?session=${s.session}${since === undefined ? '' : `&since=${since}&drop=1`}`)
    const samples = s.last?.samples ?? []
    for (const x of fresh.samples) samples.push(x)
    s.last = { ...fresh, samples }
  } catch {
  } finally {
    s.fetching = false
  }
}

/**
 * A session stopped: its copy, then what came after it (what the RC dropped is in the copy); an RC that does not
 * answer leaves the copy, marked partial.
 */
async function stopSession ({ node, rc, session, last, rolesOnly }, log) {
  try {
    const rest = await rcJson(rc, 'POST', '/stop', { session })
    const held = last?.samples ?? []
    const after = held.at(-1)?.t ?? -Infinity
    return { node, rolesOnly, timeline: { ...rest, samples: [...held, ...rest.samples.filter(x => x.t > after)] } }
  } catch (err) {
    log(`rc: ${err.message}${last ? `; keeping its timeline up to ${last.samples?.length ?? 0} samples` : ''}`)
    return { node, rolesOnly, timeline: last, partial: Boolean(last) }
  }
}

/**
 * A sampler with the interface of rc/sampler.js (start, stop → timeline) over the RCs of the nodes that run the
 * containers. It reads each session every checkpointMs, and at least three times per lease the RC states.
 * Containers with a `role` (the load balancer's) are sampled for their CPU by role, not as the server's.
 * @param {{ rcs: { node: string, url: string }[], token: string, containers: { node: string, containerId: string |
 *   null, role?: string }[], log?: (line: string) => void, checkpointMs?: number }} opts
 */
export function createRcSampler ({ rcs, token, containers, log = () => {}, checkpointMs = 3000 }) {
  const byNode = containersByNode(rcs, token, containers)
  /** @type {{ node: string, rc: { url: string, token: string }, session: string, last: any, rolesOnly: boolean,
   *   fetching?: boolean }[]} */
  let sessions = []
  let timer = null
  return {
    async start () {
      let lease = Infinity
      for (const [node, { rc, ids, roles, server }] of byNode) {
        const { session, leaseMs } = await rcJson(rc, 'POST', '/start', { containers: ids, roles })
        sessions.push({ node, rc, session, last: null, rolesOnly: !server })
        if (Number.isFinite(leaseMs) && leaseMs > 0) lease = Math.min(lease, leaseMs)
      }
      // the reads renew each session's lease (rc/service.js): three a lease, so one lost answer does not end it; a
      // session this process stops reading (it was killed) ends by itself
      const every = Math.min(checkpointMs > 0 ? checkpointMs : Infinity, lease / 3)
      if (Number.isFinite(every)) {
        timer = setInterval(() => { Promise.all(sessions.map(checkpointSession)) }, Math.max(50, every))
        timer.unref()
      }
    },
    async stop () {
      clearInterval(timer)
      const open = sessions
      sessions = []
      return mergeTimelines(await Promise.all(open.map(s => stopSession(s, log))))
    }
  }
}
