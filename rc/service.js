// The RC as an HTTP service, one per Swarm node: samples named containers' CPU per core, memory and network bytes every
// second, behind a per-deployment token that signs each request.
import express from 'express'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cpuacctRoot, cpuRoot, detectCgroup, dockerGroupOf, readUsagePercpu, readCpuStat } from './cgroup.js'
import { containerPids } from './container-pid.js'
import { addThrottle, createThrottleMeter } from './throttle.js'
import { readProcStat, coreUsage, interruptCores } from './proc-stat.js'
import { splitTotal } from './sampler.js'
import { createRoleCpu, ROLE_NAME } from './role-cpu.js'
import { readText } from './read-text.js'
import { RC_PORT } from '../lib/wire.js'
import { AUTH_HEADER, createRequestCheck, newReceiverId } from '../lib/request-auth.js'
import { secretFromEnv } from '../lib/secret-env.js'
import { portFromEnv } from '../lib/net.js'
import { formatError, exitCodeOf } from '../lib/errors.js'

/** What a container id looks like; anything else never reaches a path. */
export const CONTAINER_ID = /^[0-9a-f]{64}$/
const SESSION_ID = /^[0-9a-f-]{36}$/

const round1 = (x) => Math.round(x * 10) / 10
const round3 = (x) => Math.round(x * 1000) / 1000

class HttpError extends Error {
  constructor (status, message) { super(message); this.status = status }
}

/**
 * Where a container's accounting lives: v1 cpuacct/<group> (per-CPU ns) or the v2 group (cpu.stat total), and where its
 * CPU quota's throttling is counted (v1 cpu/<group>, v2 the same folder; null when there is none). The group is either
 * runtime layout (dockerGroups: cgroupfs docker/<id>, systemd system.slice/docker-<id>.scope), on either version.
 * @param {string} id a 64-hex container id (checked here again)
 * @param {string} cgroupRoot
 * @returns {{ kind: 'cgroup-v1' | 'cgroup-v2', cpuDir: string, memFile: string, throttleDir: string | null } | null}
 */
export function containerCgroup (id, cgroupRoot) {
  if (!CONTAINER_ID.test(id)) throw new HttpError(400, `"${String(id).slice(0, 80)}" is not a container id (64 hex characters)`)
  const v1 = cpuacctRoot(cgroupRoot)
  if (v1) {
    const group = dockerGroupOf(v1, id)
    if (!group) return null
    const quota = cpuRoot(cgroupRoot)
    const throttleDir = quota && existsSync(join(quota, group, 'cpu.stat')) ? join(quota, group) : null
    return { kind: 'cgroup-v1', cpuDir: join(v1, group), memFile: join(cgroupRoot, 'memory', group, 'memory.usage_in_bytes'), throttleDir }
  }
  const group = dockerGroupOf(cgroupRoot, id, 'cpu.stat')
  if (!group) return null
  const dir = join(cgroupRoot, group)
  return { kind: 'cgroup-v2', cpuDir: dir, memFile: join(dir, 'memory.current'), throttleDir: dir }
}

function readNumber (file) {
  try { return Number(readText(file).trim()) } catch { return null }
}

/** Received and sent bytes over a process's network interfaces but loopback (its /proc/<pid>/net/dev). */
export function readNetBytes (pid, procRoot) {
  if (!pid) return null
  try {
    let rx = 0
    let tx = 0
    for (const line of readText(join(procRoot, String(pid), 'net', 'dev')).split('\n').slice(2)) {
      const m = /^\s*([^:]+):\s*(.*)$/.exec(line)
      if (!m || m[1] === 'lo') continue
      const f = m[2].trim().split(/\s+/).map(Number)
      rx += f[0]
      tx += f[8]
    }
    return { rx, tx }
  } catch {
    return null
  }
}

/** A container's CPU counter: per core in ns (cgroup v1's usage_percpu), or its total in ns (v2's cpu.stat). */
const readContainerCpu = (s) => (s.kind === 'cgroup-v1' ? readUsagePercpu(s.cpuDir) : readCpuStat(s.cpuDir).usageUsec * 1000)

/**
 * A container's CPU ns per core since its last read, which it becomes (v2 has no per-CPU file: its total is split like
 * the host's cores).
 */
function coreNsSince (s, host, cpus) {
  const cur = readContainerCpu(s)
  const ns = Array.isArray(cur)
    ? Array.from({ length: cpus }, (_, i) => Math.max(0, (cur[i] ?? 0) - (s.prev?.[i] ?? 0)))
    : splitTotal(Math.max(0, cur - (s.prev ?? cur)), host, host, cpus)
  s.prev = cur
  return ns
}

/**
 * A server container's entry in a sample, its per-core percent added to the sample's `server` and its quota's periods
 * to its `throttle` (in `into`) as they are read.
 * @param {any} s @param {number[]} ns @param {number} dtNs @param {{ server: number[], throttle: any }} into
 * @param {{ rx: number, tx: number } | null} net
 */
function serverEntry (s, ns, dtNs, into, net) {
  const pct = ns.map(x => x / dtNs * 100)
  pct.forEach((x, i) => { into.server[i] += x })
  const quota = s.quota.read()
  if (quota) into.throttle = addThrottle(into.throttle ?? { periods: 0, throttled: 0, throttledMs: 0 }, quota)
  return {
    cores: pct.map(x => round1(Math.min(100, x))),
    total: round3(ns.reduce((a, b) => a + b, 0) / dtNs),
    memoryBytes: readNumber(s.memFile),
    net,
    ...(quota ? { throttle: quota } : {})
  }
}

/**
 * The samples a session keeps, at most `maxSamples`, in time order. since (ms epoch): only the samples taken after it,
 * so a client that keeps a copy fetches what is new. drop: the client holds every sample up to since, so they are
 * forgotten: the memory stays that of the samples since the last fetch however long the run (a lost answer is
 * harmless: the next fetch, with the same since, gets them again). `dropped` counts what was forgotten, so a timeline
 * that starts late says why.
 * @param {number} maxSamples
 */
function sampleStore (maxSamples) {
  const samples = []
  let dropped = 0
  return {
    push (sample) { samples.push(sample); if (samples.length > maxSamples) samples.shift() },
    since (since = -Infinity, drop = false) {
      let from = samples.length
      while (from > 0 && samples[from - 1].t > since) from--
      if (drop && from > 0) {
        samples.splice(0, from)
        dropped += from
        from = 0
      }
      return { samples: samples.slice(from), dropped }
    }
  }
}

/**
 * A 1 s sampler of some containers: per-container and summed per-core CPU (the Timeline shape of rc/sampler.js),
 * memory, network. The containers in `roles` (id -> role) are not the server's: their CPU is summed by role into each
 * sample's `roles`, beside this RC's own (`rc`).
 */
function createSession ({ containers, roles = {}, cgroupRoot, procRoot, intervalMs, pids, maxSamples }) {
  let hostPrev = readProcStat(procRoot)
  const cpus = Math.max(1, ...hostPrev.map(c => c.core + 1))
  const self = createRoleCpu({ self: 'rc', procRoot })
  self.read(0)
  const state = new Map(containers.map(c => [c.id, {
    ...c,
    role: roles[c.id] ?? null,
    prev: null,
    quota: createThrottleMeter(() => (c.throttleDir ? [c.throttleDir] : []))
  }]))
  const source = containers[0]?.kind ?? 'cgroup-v1'
  const store = sampleStore(maxSamples)
  let wallPrev = process.hrtime.bigint()
  let lastError = null
  for (const s of state.values()) { try { s.prev = readContainerCpu(s); s.quota.read() } catch (err) { lastError = err } }

  const tick = () => {
    const wall = process.hrtime.bigint()
    const dtNs = Number(wall - wallPrev)
    wallPrev = wall
    const hostCur = readProcStat(procRoot)
    const host = coreUsage(hostPrev, hostCur)
    const kernel = interruptCores(hostPrev, hostCur)
    hostPrev = hostCur
    if (dtNs <= 0) return
    const into = { server: new Array(cpus).fill(0), throttle: null }
    const per = {}
    /** @type {Record<string, number>} */
    const roleCores = { ...self.read(dtNs / 1e9), kernel }
    for (const s of state.values()) {
      try {
        const ns = coreNsSince(s, host, cpus)
        if (s.role) roleCores[s.role] = round3((roleCores[s.role] ?? 0) + ns.reduce((a, b) => a + b, 0) / dtNs)
        else per[s.id] = serverEntry(s, ns, dtNs, into, readNetBytes(pids.get(s.id), procRoot))
      } catch (err) {
        lastError = err // the container went away (a replica was killed): skip it in this sample
      }
    }
    store.push({
      t: Date.now(),
      server: into.server.map(x => round1(Math.min(100, x))),
      serverTotal: round3(into.server.reduce((a, b) => a + b, 0) / 100),
      host: Array.from({ length: cpus }, (_, i) => round1(host[i] ?? 0)),
      containers: per,
      ...(into.throttle ? { throttle: into.throttle } : {}),
      roles: roleCores
    })
  }
  const timer = setInterval(() => { try { tick() } catch (err) { lastError = err } }, intervalMs)
  timer.unref()
  const timeline = (since = -Infinity, { drop = false } = {}) => ({
    intervalMs,
    cpus,
    source,
    containers: [...state.keys()],
    ...store.since(since, drop),
    lastError: lastError ? String(lastError.message ?? lastError) : null
  })
  return { timeline, stop () { clearInterval(timer); return timeline() } }
}

/**
 * How long a sampling session lives without a read (its /start or a /timeline renews it): an executor reads every few
 * seconds (executor/docker/rc-client.js), so the sessions of one killed with -9 end, and free their slot, within this.
 * NODESCALE_RC_LEASE_MS sets it for the service.
 */
export const RC_LEASE_MS = 30_000

/** @typedef {ReturnType<typeof createSession> & { renewedAt: number }} LeasedSession a session and its last read */

/**
 * The RC's sessions by id, and a sweeper that ends the sessions nobody read for a lease: their executor is gone
 * (killed, or cut off from this node). close stops the sweeper and every session.
 * @param {number} leaseMs @param {(line: string) => void} log
 */
function createSessionTable (leaseMs, log) {
  /** @type {Map<string, LeasedSession>} */
  const sessions = new Map()
  const expire = () => {
    const now = Date.now()
    for (const [id, s] of sessions) {
      if (now - s.renewedAt <= leaseMs) continue
      s.stop()
      sessions.delete(id)
      log(`session ${id} expired: not read for ${Math.round((now - s.renewedAt) / 1000)} s`)
    }
  }
  const sweeper = setInterval(expire, Math.max(50, Math.min(1000, leaseMs / 4)))
  sweeper.unref()
  return { sessions, close: () => { clearInterval(sweeper); for (const s of sessions.values()) s.stop(); sessions.clear() } }
}

/**
 * A request's containers' pids: pidOf's, else one pass over the cgroup and proc files for all of them.
 * @param {((id: string) => Promise<number | null>) | undefined} pidOf
 * @param {string} cgroupRoot @param {string} procRoot
 */
function pidLookup (pidOf, cgroupRoot, procRoot) {
  return async (/** @type {string[]} */ ids) => {
    if (!pidOf) return containerPids(ids, { cgroupRoot, procRoot })
    /** @type {Map<string, number | null>} */
    const out = new Map()
    for (const id of ids) out.set(id, await pidOf(id))
    return out
  }
}

/** The middleware that answers 401 to a request not signed for this RC (its check: lib/request-auth.js's). */
function signedOnly (check) {
  return (req, res, next) => {
    const why = check({ method: req.method, path: req.originalUrl, header: req.get(AUTH_HEADER), body: /** @type {any} */ (req).rawBody })
    if (why) return res.status(401).json({ error: `not authorised: ${why}` })
    next()
  }
}

/** A /start's roles (id -> role, for containers of its list), checked; {} when it names none. */
function rolesOf (roles, ids) {
  if (roles === undefined) return {}
  const ok = roles && typeof roles === 'object' && !Array.isArray(roles) &&
    Object.entries(roles).every(([id, role]) => ids.includes(id) && ROLE_NAME.test(String(role)) && role !== 'rc' && role !== 'kernel')
  if (!ok) {
    throw new HttpError(400, 'roles: expected { containerId: role } for containers of the list, ' +
      'a role in lower-case words joined by dashes (not "rc" or "kernel": the RC says those)')
  }
  return roles
}

/** A request's container ids, each with its cgroup files; 400 for a bad list, 404 for one not on this node. */
function resolveContainers (ids, cgroupRoot) {
  if (!Array.isArray(ids) || !ids.length || ids.length > 256) throw new HttpError(400, 'containers: expected a list of 1 to 256 container ids')
  return ids.map(id => {
    const c = containerCgroup(id, cgroupRoot)
    if (!c) throw new HttpError(404, `no container ${id} on this node (no cgroup for it)`)
    return { id, ...c }
  })
}

/**
 * GET /snapshot?containers=id,id: the host's cores and each container's CPU counters, memory and network bytes, now.
 * @param {string} cgroupRoot @param {string} procRoot @param {ReturnType<typeof pidLookup>} pidsOf
 */
function snapshotRoute (cgroupRoot, procRoot, pidsOf) {
  return async (req, res) => {
    const containers = resolveContainers(String(req.query.containers ?? '').split(',').filter(Boolean), cgroupRoot)
    const out = {}
    const pids = await pidsOf(containers.map(c => c.id))
    for (const c of containers) {
      out[c.id] = {
        kind: c.kind,
        ...(c.kind === 'cgroup-v1' ? { usagePercpuNs: readUsagePercpu(c.cpuDir) } : { usageUsec: readCpuStat(c.cpuDir).usageUsec }),
        memoryBytes: readNumber(c.memFile),
        net: readNetBytes(pids.get(c.id), procRoot)
      }
    }
    res.json({ t: Date.now(), host: readProcStat(procRoot), containers: out })
  }
}

/**
 * POST /start, GET /timeline and POST /stop: a sampling session's life. A /start or a /timeline renews its lease.
 * @param {import('express').Express} app
 * @param {{ sessions: Map<string, LeasedSession>, pidsOf: ReturnType<typeof pidLookup>, cgroupRoot: string,
 *   procRoot: string, intervalMs: number, maxSessions: number, maxSamples: number, leaseMs: number }} opts
 */
function addSessionRoutes (app, { sessions, pidsOf, cgroupRoot, procRoot, intervalMs, maxSessions, maxSamples, leaseMs }) {
  app.post('/start', async (req, res) => {
    const containers = resolveContainers(req.body?.containers, cgroupRoot)
    const roles = rolesOf(req.body?.roles, req.body.containers)
    if (sessions.size >= maxSessions) throw new HttpError(429, `already ${sessions.size} sessions; stop one first`)
    const pids = await pidsOf(containers.map(c => c.id))
    const session = randomUUID()
    sessions.set(session, Object.assign(createSession({ containers, roles, cgroupRoot, procRoot, intervalMs, pids, maxSamples }), { renewedAt: Date.now() }))
    res.status(201).json({ session, containers: containers.map(c => c.id), source: containers[0].kind, intervalMs, leaseMs })
  })

  const sessionOf = (id) => {
    if (!SESSION_ID.test(String(id ?? ''))) throw new HttpError(400, 'session: expected the id /start returned')
    const s = sessions.get(id)
    if (!s) throw new HttpError(404, `no session ${id}`)
    return s
  }
  app.get('/timeline', (req, res) => {
    const since = req.query.since === undefined ? undefined : Number(req.query.since)
    if (since !== undefined && !Number.isFinite(since)) throw new HttpError(400, 'since: a time in ms since the epoch (the t of the last sample you have)')
    if (req.query.drop !== undefined && (req.query.drop !== '1' || since === undefined)) {
      throw new HttpError(400, 'drop: 1, with since (the t of the last sample you hold)')
    }
    const s = sessionOf(req.query.session)
    s.renewedAt = Date.now()
    res.json(s.timeline(since, { drop: req.query.drop === '1' }))
  })
  app.post('/stop', (req, res) => {
    const s = sessionOf(req.body?.session)
    sessions.delete(req.body.session)
    res.json(s.stop())
  })
}

/** The error handler: an HttpError's status, 400 for a body that is not JSON, else 500; the message as { error }. */
function sendError (err, req, res, next) {
  res.status(err.status ?? (err.type === 'entity.parse.failed' ? 400 : 500)).json({ error: err.message })
}

/**
 * The RC's express app. Every route but /healthz needs a request signed for this RC (lib/request-auth.js: the key
 * is the token's for this RC's id, which /healthz says; the token itself never crosses the network). POST /start
 * {containers: [id...], roles?: {id: role}} -> {session, leaseMs}; GET /timeline?session=[&since=t[&drop=1]];
 * POST /stop {session} -> timeline (after drops, what is left); GET /snapshot?containers=id,id. A session not read
 * for leaseMs ends by itself (its slot freed, its samples gone). A container's network bytes are those of its pid's
 * /proc/<pid>/net/dev: the pid from pidOf when given, else from cgroup and proc files (rc/container-pid.js; no engine
 * socket).
 * @param {{ token: string, cgroupRoot?: string, procRoot?: string, intervalMs?: number, pidOf?: (id: string) =>
 *   Promise<number | null>, maxSessions?: number, maxSamples?: number, leaseMs?: number,
 *   log?: (line: string) => void, receiverId?: string }} opts receiverId: this RC's id (a new random one by default)
 * @returns {{ app: import('express').Express, close: () => void, id: string }}
 */
export function createRcApp ({
  token, cgroupRoot = '/sys/fs/cgroup', procRoot = '/proc', intervalMs = 1000, pidOf, maxSessions = 16, maxSamples = 86_400,
  leaseMs = RC_LEASE_MS, log = () => {}, receiverId = newReceiverId()
}) {
  if (!token || token.length < 16) throw new Error('the RC needs a token of at least 16 characters')
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) throw new Error(`the RC's lease must be a number of ms > 0 (got ${leaseMs})`)
  const check = createRequestCheck(token, { receiver: receiverId })
  const { sessions, close } = createSessionTable(leaseMs, log)
  const pidsOf = pidLookup(pidOf, cgroupRoot, procRoot)
  const app = express()
  app.disable('x-powered-by')
  // the body as sent, which the request's signature covers
  app.use(express.json({ limit: '64kb', verify: (req, res, buf) => { /** @type {any} */ (req).rawBody = buf } }))

  app.get('/healthz', (req, res) => { res.json({ status: 'ok', cgroup: detectCgroup(cgroupRoot), id: receiverId }) })
  app.use(signedOnly(check))
  app.get('/snapshot', snapshotRoute(cgroupRoot, procRoot, pidsOf))
  addSessionRoutes(app, { sessions, pidsOf, cgroupRoot, procRoot, intervalMs, maxSessions, maxSamples, leaseMs })
  app.use(sendError)
  return { app, id: receiverId, close }
}

async function main () {
  // NODESCALE_RC_TOKEN, or the file NODESCALE_RC_TOKEN_FILE names (the Swarm secret)
  const token = secretFromEnv('NODESCALE_RC_TOKEN', '/run/secrets/nodescale_rc_token')
  if (!token) {
    console.error('nodescale rc: no token (set NODESCALE_RC_TOKEN or mount the nodescale_rc_token secret); refusing to serve without one')
    process.exit(3)
  }
  let port
  try {
    port = portFromEnv(process.env.PORT, RC_PORT)
  } catch (err) {
    console.error(`nodescale rc: ${formatError(err)}`)
    process.exit(exitCodeOf(err))
  }
  const lease = process.env.NODESCALE_RC_LEASE_MS ? Number(process.env.NODESCALE_RC_LEASE_MS) : RC_LEASE_MS
  const { app, close } = createRcApp({
    token,
    cgroupRoot: process.env.NODESCALE_CGROUP_ROOT,
    procRoot: process.env.NODESCALE_PROC_ROOT,
    leaseMs: lease,
    log: (line) => console.log(`nodescale rc: ${line}`)
  })
  const server = app.listen(port, process.env.HOST || '0.0.0.0', () => {
    console.log(`nodescale rc: listening on ${JSON.stringify(server.address())}, cgroup ${detectCgroup(process.env.NODESCALE_CGROUP_ROOT)}`)
  })
  const stop = () => { close(); server.close(() => process.exit(0)); server.closeAllConnections() }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main()
