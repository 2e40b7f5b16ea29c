// The executor's side of the RC service: calls each node's RC with the deployment token and turns their timelines into one.
import { request } from 'node:http'
import { NsError } from '../errors.js'
import { TOKEN_HEADER } from '../../rc/service.js'

/**
 * One JSON call to an RC (node:http with a hard timeout: no pooled socket can hang the run).
 * @param {{ url: string, token: string }} rc
 * @param {'GET'|'POST'} method
 * @param {string} path
 * @param {any} [body]
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<{ status: number, body: any }>}
 */
export function rcCall (rc, method, path, body, { timeoutMs = 5000 } = {}) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, rc.url), {
      method,
      agent: false,
      timeout: timeoutMs,
      headers: { [TOKEN_HEADER]: rc.token, connection: 'close', ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) }
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
    throw new NsError('NS_ERR_RUN', `the RC at ${rc.url} did not answer ${method} ${path}: ${err.message}`, { cause: err })
  }
  if (res.status < 200 || res.status > 299) {
    const said = typeof res.body === 'object' ? res.body?.error ?? JSON.stringify(res.body) : String(res.body).slice(0, 200)
    throw new NsError('NS_ERR_RUN', `the RC at ${rc.url} answered ${method} ${path} with ${res.status}: ${said}`)
  }
  return res.body
}

/**
 * Joins the timelines of several nodes' RCs into one: cores are numbered node after node (node 0's cores first), samples
 * are paired by their order (every RC samples each interval from its start), and `nodes` says which cores are whose.
 * One node's timeline is returned as it is, with `nodes` added.
 * @param {{ node: string, timeline: any }[]} parts
 */
export function mergeTimelines (parts) {
  const withData = parts.filter(p => p.timeline)
  if (!withData.length) return null
  let offset = 0
  const nodes = withData.map(({ node, timeline }) => {
    const entry = { node, firstCore: offset, cpus: timeline.cpus, source: timeline.source, lastError: timeline.lastError ?? null }
    offset += timeline.cpus
    return entry
  })
  if (withData.length === 1) return { ...withData[0].timeline, nodes }
  const count = Math.min(...withData.map(p => p.timeline.samples.length))
  const samples = []
  for (let i = 0; i < count; i++) {
    const row = withData.map(p => p.timeline.samples[i])
    samples.push({
      t: Math.max(...row.map(s => s.t)),
      server: row.flatMap(s => s.server),
      serverTotal: row.reduce((a, s) => a + (s.serverTotal ?? 0), 0),
      host: row.flatMap(s => s.host),
      containers: Object.assign({}, ...row.map(s => s.containers ?? {}))
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
 * A sampler with the interface of rc/sampler.js (start, stop → timeline) over the RCs of the nodes that run the containers.
 * @param {{ rcs: { node: string, url: string }[], token: string, containers: { node: string, containerId: string | null }[], log?: (line: string) => void }} opts
 */
export function createRcSampler ({ rcs, token, containers, log = () => {} }) {
  const byNode = new Map()
  for (const c of containers) {
    if (!c.containerId) continue
    const rc = rcs.find(r => r.node === c.node)
    if (!rc) throw new NsError('NS_ERR_RUN', `no RC runs on node ${c.node}, where container ${c.containerId.slice(0, 12)} is; is the control plane up? (executor up)`)
    if (!byNode.has(c.node)) byNode.set(c.node, { rc: { url: rc.url, token }, ids: [] })
    byNode.get(c.node).ids.push(c.containerId)
  }
  /** @type {{ node: string, rc: { url: string, token: string }, session: string }[]} */
  let sessions = []
  return {
    async start () {
      for (const [node, { rc, ids }] of byNode) {
        const { session } = await rcJson(rc, 'POST', '/start', { containers: ids })
        sessions.push({ node, rc, session })
      }
    },
    async stop () {
      const open = sessions
      sessions = []
      const parts = await Promise.all(open.map(async ({ node, rc, session }) => {
        try {
          return { node, timeline: await rcJson(rc, 'POST', '/stop', { session }) }
        } catch (err) {
          log(`rc: ${err.message}`)
          return { node, timeline: null }
        }
      }))
      return mergeTimelines(parts)
    }
  }
}
