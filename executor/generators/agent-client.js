// A generator on a swarm node, driven through its agent (executor/load-agent/): its clock measured against ours, its
// share of the load started at the shared time on its clock, its progress polled, its samples fetched, and a node
// that stops answering told apart from a load that failed.
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { NsError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { AUTH_HEADER, ANSWER_HEADER, answerSigned, callReceiver } from '../../lib/request-auth.js'
import { clock } from '../drivers/load-common.js'
import { GeneratorLost } from './run-generators.js'
import { LOAD_FIELDS } from '../load-agent/agent.js'

/** How often the agent is asked how its load goes, and after how long without an answer it counts as lost. */
export const AGENT_POLL_MS = 500
export const AGENT_LOST_MS = 5000
/** Round trips to the agent's clock; the one with the shortest round trip gives the offset. */
const CLOCK_PROBES = 9
/** After an abort, how long the agent may take to finish its samples. */
const ABORT_GRACE_MS = 20_000

/**
 * The most bytes of samples taken from one agent: 16 MiB and 64 bytes per request it reported (a gzip JTL takes ~4,
 * executor/sweep/sweep-estimate.js), and never more than 2 GiB. Past it the download stops with a coded error.
 * @param {number} requests
 */
export const samplesLimit = (requests) => Math.min(2 * 1024 ** 3, 16 * 1024 ** 2 + 64 * Math.max(0, Number(requests) || 0))

/**
 * Signed calls to one agent: each request signed for the agent's id (its /healthz; lib/request-auth.js).
 * @param {string} base the agent's address, http://host:port
 * @param {string} token
 */
export function agentCaller (base, token) {
  /** @type {Map<string, string>} */
  const ids = new Map()
  /** @type {(method: string, path: string, opts?: { body?: any, timeoutMs?: number, onSigned?: (header: string) =>
   *   void }) => Promise<Response>} onSigned: the header the request went with (an answer is signed for its nonce) */
  return async (method, path, { body, timeoutMs = 2000, onSigned } = {}) => {
    const text = body ? JSON.stringify(body) : undefined
    return callReceiver({ base, token, ids }, (sign) => {
      const header = sign({ method, path, body: text })
      onSigned?.(header)
      return fetch(`${base}${path}`, {
        method,
        headers: { [AUTH_HEADER]: header, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: text,
        signal: AbortSignal.timeout(timeoutMs)
      })
    })
  }
}

/**
 * Downloads an agent's samples to `dest`: at most `maxBytes` (past that it stops reading, and the part is removed),
 * and kept only when the agent signed them for this request (lib/request-auth.js, signAnswer). A refused download is
 * an NsError naming the agent; a network failure is thrown as it came.
 * @param {ReturnType<typeof agentCaller>} call
 * @param {{ token: string, dest: string, who: string, maxBytes: number, timeoutMs?: number }} opts who: the
 *   generator and its agent, as the error names them
 */
export async function fetchSamples (call, { token, dest, who, maxBytes, timeoutMs = 300_000 }) {
  let header = ''
  const res = await call('GET', '/samples', { timeoutMs, onSigned: (h) => { header = h } })
  if (!res.ok || !res.body) throw new Error(`${res.status} ${await res.text()}`)
  const tooMany = () => fail('AGENT_SAMPLES_TOO_LARGE', { agent: who, maxBytes }, { details: { agent: who } })
  if (Number(res.headers.get('content-length')) > maxBytes) {
    await res.body.cancel().catch(() => {})
    throw tooMany()
  }
  const hash = createHash('sha256')
  let bytes = 0
  const meter = new Transform({
    transform (chunk, _, done) {
      bytes += chunk.length
      if (bytes > maxBytes) return done(tooMany())
      hash.update(chunk)
      done(null, chunk)
    }
  })
  try {
    await pipeline(Readable.fromWeb(/** @type {any} */ (res.body)), meter, createWriteStream(dest))
  } catch (err) {
    await rm(dest, { force: true })
    throw err
  }
  if (!answerSigned(token, header, res.headers.get(ANSWER_HEADER), { bytes, sha256: hash.digest('hex') })) {
    await rm(dest, { force: true })
    throw fail('AGENT_SAMPLES_UNSIGNED', { agent: who }, { details: { agent: who } })
  }
  return { bytes }
}

/**
 * The agent's clock against ours: for each of a few round trips, its reading minus the midpoint of ours; the round
 * trip that was shortest bounds the error best (half of it).
 * @param {(method: string, path: string) => Promise<Response>} call
 * @returns {Promise<{ offsetMs: number, rttMs: number, probes: number, machine: string | null }>} machine: the agent's
 *   machine (lib/machine-id.js), null from an agent that does not say it
 */
export async function measureClock (call) {
  let best = null
  let machine = null
  for (let i = 0; i < CLOCK_PROBES; i++) {
    const t1 = clock()
    const answer = await (await call('GET', '/clock')).json()
    const t2 = clock()
    const rtt = t2 - t1
    machine ??= typeof answer.machine === 'string' ? answer.machine : null
    if (!best || rtt < best.rttMs) best = { offsetMs: answer.now - (t1 + t2) / 2, rttMs: rtt }
  }
  const r3 = (x) => Math.round(x * 1000) / 1000
  return { offsetMs: r3(/** @type {any} */ (best).offsetMs), rttMs: r3(/** @type {any} */ (best).rttMs), probes: CLOCK_PROBES, machine }
}

/**
 * A generator place (run-generators.js) for the agent at `url` on a node.
 * @param {{ name: string, group: number, url: string, token: string, node: { id: string, hostname: string, label:
 *   string | null, addr: string }, task: string, partsDir: string, clock: { offsetMs: number, rttMs: number, machine?:
 *   string | null } }} opts
 * @returns {import('./run-generators.js').GeneratorPlace}
 */
export function agentPlace ({ name, group, url, token, node, task, partsDir, clock: measured }) {
  const call = agentCaller(url, token)
  const { machine = null, ...offset } = measured
  return {
    name,
    group,
    where: { kind: 'agent', node: node.hostname, nodeId: node.id, label: node.label, addr: node.addr, machine, task, agent: url },
    clock: offset,
    // the start request crosses the network: a round trip more than a local child
    leadMs: 1500 + offset.rttMs * 2,
    async run (opts, { signal, onProgress, log }) {
      const { driver, startAt, body } = opts
      const load = { ...Object.fromEntries(LOAD_FIELDS.map(k => [k, opts[k]])), body: body ? Buffer.from(body).toString('base64') : undefined }
      const started = await call('POST', '/start', { body: { driver, load, startAt: startAt + offset.offsetMs, group }, timeoutMs: 5000 })
      // after the shared start (> 0), the agent heard of it too late to begin with the others
      const startAnsweredMs = Math.round(clock() - startAt)
      if (!started.ok) {
        throw fail('AGENT_REFUSED_LOAD', { name, host: node.hostname, status: started.status, said: await started.text() })
      }
      let lastSeenAt = clock()
      let last = null
      let abortedAt = null
      const abort = () => { abortedAt = clock(); call('POST', '/abort').catch(() => {}) }
      signal.addEventListener('abort', abort, { once: true })
      try {
        for (;;) {
          await sleep(AGENT_POLL_MS)
          let status = null
          try {
            const res = await call('GET', '/status')
            if (res.ok) status = await res.json()
          } catch {}
          const now = clock()
          if (status) {
            lastSeenAt = now
            last = status
            if (status.progress) onProgress(status.progress)
            if (status.state === 'failed') throw fail('GENERATOR_FAILED', { name, host: node.hostname, why: status.error?.message })
            if (status.state === 'done') break
          } else if (now - lastSeenAt > AGENT_LOST_MS) {
            throw new GeneratorLost(`its agent at ${url} did not answer for ${((now - lastSeenAt) / 1000).toFixed(1)} s`,
              { lastSeenAt, lostAt: now, progress: last?.progress ?? null })
          }
          if (abortedAt !== null && now - /** @type {number} */ (abortedAt) > ABORT_GRACE_MS) {
            throw fail('GENERATOR_DID_NOT_STOP', { name, host: node.hostname, graceS: ABORT_GRACE_MS / 1000 })
          }
        }
      } finally {
        signal.removeEventListener('abort', abort)
      }
      const samplesPath = `${partsDir}/${name}.jtl.gz`
      await mkdir(dirname(samplesPath), { recursive: true })
      try {
        await fetchSamples(call, {
          token,
          dest: samplesPath,
          who: `generator ${name} on ${node.hostname} (agent ${url})`,
          maxBytes: samplesLimit(last?.result?.requests)
        })
      } catch (err) {
        if (err instanceof NsError) throw err
        const now = clock()
        throw new GeneratorLost(`its samples could not be fetched from ${url}: ${err.message}`, { lastSeenAt, lostAt: now, progress: last?.progress ?? null })
      }
      log(`${name}: ${last.result.requests} requests from ${node.label ?? node.hostname}`)
      return { result: last.result, cpu: last.cpu, samplesPath, startAnsweredMs }
    }
  }
}
