// Waits until a deployed stack's tasks all run and its published port answers /healthz for every instance (or a user's
// server's health path with a 2xx, or for a user's image run as it is just that path); fails fast with the tasks' own
// errors.
import { setTimeout as sleep } from 'node:timers/promises'
import { fail } from '../../lib/messages.js'
import { dockerError } from './engine.js'
import { is2xx, probe } from '../../lib/net.js'
import { INSTANCE_HEADER } from '../../lib/wire.js'

const FAILED = new Set(['failed', 'rejected', 'orphaned'])

/** Docker's log stream for a non-TTY container is framed (8-byte headers): keep the text. */
export function demuxLogs (buf) {
  if (!Buffer.isBuffer(buf)) return String(buf ?? '')
  const out = []
  let i = 0
  while (i + 8 <= buf.length && buf[i] <= 2 && buf[i + 1] === 0 && buf[i + 2] === 0 && buf[i + 3] === 0) {
    const len = buf.readUInt32BE(i + 4)
    out.push(buf.subarray(i + 8, i + 8 + len).toString())
    i += 8 + len
  }
  return i === 0 ? buf.toString() : out.join('')
}

/** The last lines a task's container wrote, if the container is still there. */
export async function taskLogs (docker, task, lines = 15) {
  const id = task.Status?.ContainerStatus?.ContainerID
  if (!id) return ''
  try {
    const buf = await docker.getContainer(id).logs({ stdout: true, stderr: true, tail: lines })
    return demuxLogs(buf).trim()
  } catch {
    return ''
  }
}

/**
 * One line per task state, for messages; with `nodeName` each task names its node (a multi-node swarm).
 * @param {any[]} tasks
 * @param {(serviceId: string) => string} nameOf
 * @param {(nodeId: string) => string | undefined} [nodeName]
 */
export function describeTasks (tasks, nameOf, nodeName) {
  return tasks.map(t => {
    const on = nodeName && t.NodeID ? ` on node ${nodeName(t.NodeID) ?? t.NodeID.slice(0, 12)}` : ''
    return `${nameOf(t.ServiceID)}.${t.Slot ?? t.NodeID?.slice(0, 6)}${on}: ${t.Status?.State}${t.Status?.Err ? ` (${t.Status.Err})` : ''}`
  }).join('; ')
}

/**
 * The fix for tasks that failed because their node lacks the image (a node without --registry), else undefined.
 * @param {any[]} failed
 */
export function missingImageHint (failed) {
  if (!failed.some(t => /No such image|manifest unknown|pull access denied|HTTP response to HTTPS client/i.test(t.Status?.Err ?? ''))) return undefined
  return 'a node lacks the image: run with --registry builtin (the control plane\'s registry; the nodes must trust MANAGER:5000) ' +
    'or --registry HOST:PORT, or docker load it on that node'
}

/** Node id → hostname, for messages (empty when the nodes cannot be read). */
export async function nodeNames (docker) {
  try {
    const map = new Map((await docker.listNodes()).map(n => [n.ID, n.Description?.Hostname]))
    return (id) => map.get(id)
  } catch {
    return () => undefined
  }
}

/** A status that a server's health path will keep answering: the path is wrong, waiting will not help. */
const settled = (status) => status >= 400 && status < 500 && ![408, 425, 429].includes(status)

/**
 * Polls tasks and the entry URL until every service has its replicas running and `expect` distinct instances answered
 * `health` (200 from ours; any 2xx from a user's server, `any2xx`). With `readiness` 'health-only' (a user's image run
 * as it is, no instance header) one 2xx answer is enough, and no instance is named. A user's server that answers its
 * health path with a 4xx fails at once: the path is wrong.
 * @param {import('dockerode')} docker
 * @param {{ services: { id: string, name: string, replicas: number }[], url: () => Promise<string | null>, expect:
 *   number, timeoutMs: number, pendingGraceMs?: number, signal?: AbortSignal, log?: (line: string) => void, health?:
 *   string, any2xx?: boolean, readiness?: 'instances' | 'health-only' }} opts
 * @returns {Promise<{ tasks: any[], instances: string[], url: string }>}
 */
export async function waitReady (docker, {
  services,
  url,
  expect,
  timeoutMs,
  pendingGraceMs = 8000,
  signal,
  log = () => {},
  health = '/healthz',
  any2xx = false,
  readiness = 'instances'
}) {
  const ok = any2xx ? is2xx : (status) => status === 200
  const healthOnly = readiness === 'health-only'
  const started = Date.now()
  const deadline = started + timeoutMs
  const nameOf = (id) => services.find(s => s.id === id)?.name ?? id.slice(0, 12)
  const pendingSince = new Map()
  const seen = new Set()
  let lastProbe = 'not probed: tasks not running yet'
  let tasks = []
  let running = false
  let target = null
  while (Date.now() < deadline) {
    signal?.throwIfAborted()
    tasks = await stackTasks(docker, services)
    await failOnFailed(docker, tasks, nameOf)
    failOnUnplaceable(tasks, pendingSince, pendingGraceMs, nameOf)
    const live = tasks.filter(t => t.DesiredState === 'running' && t.Status?.State === 'running')
    const wasRunning = running
    running = services.every(s => live.filter(t => t.ServiceID === s.id).length >= s.replicas)
    if (running && !wasRunning) log(`swarm: all ${live.length} tasks run after ${Date.now() - started} ms`)
    if (running) {
      target ??= await url()
      if (!target) {
        lastProbe = 'the published port is not known yet'
      } else {
        const probed = await probeHealth(`${target}${health}`, { expect, ok, any2xx, healthOnly, seen, health })
        lastProbe = probed.lastProbe ?? lastProbe
        if (probed.answered) {
          log(`swarm: ${target}${health} answers a 2xx after ${Date.now() - started} ms (every task runs; the image names no instance)`)
          return { tasks: live, instances: [], url: target }
        }
        if (seen.size >= expect) {
          log(`swarm: ${seen.size} instances answer ${target}${health} after ${Date.now() - started} ms`)
          return { tasks: live, instances: [...seen].sort(), url: target }
        }
      }
    }
    await sleep(running ? 100 : 200)
  }
  const states = describeTasks(tasks, nameOf, await nodeNames(docker))
  throw fail('STACK_NOT_READY', { timeoutMs, running, states, healthOnly, target, health, seen: seen.size, expect, last: lastProbe })
}

/** The stack's services' tasks (those of other services of the same name left out). */
async function stackTasks (docker, services) {
  let tasks
  try {
    tasks = await docker.listTasks({ filters: { service: services.map(s => s.name) } })
  } catch (err) {
    throw dockerError(err, 'listing tasks')
  }
  return tasks.filter(t => services.some(s => s.id === t.ServiceID))
}

/** A task that failed while the stack started fails the deploy, with what its containers printed. */
async function failOnFailed (docker, tasks, nameOf) {
  const failed = tasks.filter(t => FAILED.has(t.Status?.State))
  if (!failed.length) return
  const logs = (await Promise.all(failed.slice(0, 3).map(t => taskLogs(docker, t)))).filter(Boolean)
  throw fail('TASK_FAILED_AT_START', { tasks: describeTasks(failed, nameOf, await nodeNames(docker)), logs, imageHint: missingImageHint(failed) }, {
    details: { tasks: failed.map(t => ({ id: t.ID, state: t.Status?.State, err: t.Status?.Err })) }
  })
}

/**
 * A task the scheduler cannot place (pending with an error for pendingGraceMs) fails the deploy; `pendingSince` keeps
 * when each such task was first seen, across polls.
 */
function failOnUnplaceable (tasks, pendingSince, pendingGraceMs, nameOf) {
  const now = Date.now()
  for (const t of tasks) {
    if (t.Status?.State === 'pending' && t.Status?.Err) {
      if (!pendingSince.has(t.ID)) pendingSince.set(t.ID, now)
      if (now - pendingSince.get(t.ID) >= pendingGraceMs) {
        throw fail('TASK_NOT_PLACED', { service: nameOf(t.ServiceID), why: t.Status.Err, pendingMs: now - pendingSince.get(t.ID) })
      }
    } else {
      pendingSince.delete(t.ID)
    }
  }
}

/**
 * Up to max(2, 2 · expect) probes of the health URL, until `expect` instances (added to `seen`) or, health-only, one
 * 2xx answered: `answered` (health-only) and the last probe's failure (null where none failed). A user's server that
 * answers with a 4xx that waiting will not change fails at once.
 */
async function probeHealth (healthUrl, { expect, ok, any2xx, healthOnly, seen, health }) {
  let lastProbe = null
  for (let i = 0; i < Math.max(2, expect * 2) && seen.size < expect; i++) {
    let res
    try {
      res = await probe(healthUrl, { timeoutMs: 1000 })
    } catch (err) {
      return { answered: false, lastProbe: err.code ?? err.message }
    }
    if (any2xx && settled(res.status)) {
      throw fail('HEALTH_NOT_2XX', { health, status: res.status })
    }
    if (ok(res.status) && healthOnly) return { answered: true, lastProbe }
    if (ok(res.status) && res.instance) seen.add(res.instance)
    else lastProbe = `HTTP ${res.status}${res.instance ? '' : ` without ${INSTANCE_HEADER}`}`
  }
  return { answered: false, lastProbe }
}
