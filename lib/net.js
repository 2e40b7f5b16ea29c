// The one HTTP probe every readiness check uses, the wait for N distinct instances built on it, and a free port.
import { request } from 'node:http'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { INSTANCE_HEADER } from './wire.js'
import { badEnv } from './errors.js'

const INSTANCE = INSTANCE_HEADER.toLowerCase()

/**
 * GETs url once and resolves with the status, the instance header and the body; rejects on error or after timeoutMs.
 * node:http rather than fetch: docker-proxy accepts connections before the container listens, so a probe must time out
 * on its own, and a fresh connection per probe (agent false) reaches a different cluster worker each time.
 * @param {string} url
 * @param {{ timeoutMs?: number, agent?: import('node:http').Agent | false }} [opts]
 * @returns {Promise<{ status: number, instance: string | null, body: string }>}
 */
export function probe (url, { timeoutMs = 2000, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent, headers: { connection: agent ? 'keep-alive' : 'close' } }, (res) => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => {
        clearTimeout(timer)
        const instance = res.headers[INSTANCE]
        resolve({ status: res.statusCode ?? 0, instance: Array.isArray(instance) ? instance[0] : instance ?? null, body: Buffer.concat(chunks).toString() })
      })
      res.on('error', fail)
    })
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs)
    function fail (err) {
      clearTimeout(timer)
      reject(err)
    }
    req.on('error', fail)
    req.end()
  })
}

/** A user's server is ready when its health path answers with any 2xx. */
export const is2xx = (status) => status >= 200 && status < 300

/**
 * Probes `url` until `distinct` different instances answered 200 (each answer names its instance in the instance
 * header). `check` runs before every probe: it throws to give up early (the process that should answer has exited,
 * say). `ok` says which statuses count as ready (a user's server: any 2xx); `onAnswer` sees every answer and may throw
 * to give up (a 404 on the health path will not change).
 * @param {string} url
 * @param {{ distinct?: number, timeoutMs?: number, signal?: AbortSignal, check?: () => void, probeTimeoutMs?: number,
 *   ok?: (status: number) => boolean, onAnswer?: (answer: { status: number, instance: string | null }) => void }}
 *   [opts]
 * @returns {Promise<string[]>} the instances seen
 * @throws {Error} after timeoutMs (code ETIMEDOUT, with `seen` and `last`: the instances seen and the last failure)
 */
export async function waitForInstances (url, {
  distinct = 1, timeoutMs = 30000, signal, check = () => {}, probeTimeoutMs = 2000,
  ok = (status) => status === 200, onAnswer = () => {}
} = {}) {
  const seen = new Set()
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  let again = 0
  while (seen.size < distinct) {
    signal?.throwIfAborted()
    check()
    if (Date.now() > deadline) {
      throw Object.assign(
        new Error(`after ${timeoutMs} ms ${seen.size} of ${distinct} instances answered ${url} (last: ${last})`),
        { code: 'ETIMEDOUT', seen: [...seen], last }
      )
    }
    let r
    try {
      r = await probe(url, { timeoutMs: probeTimeoutMs })
    } catch (err) {
      last = err.code ?? err.message
    }
    if (r) {
      onAnswer(r)
      if (ok(r.status) && r.instance) seen.add(r.instance)
      else last = `HTTP ${r.status}${r.instance ? '' : ` without ${INSTANCE_HEADER}`}`
      // an answer from an instance seen already: ask again at once (a new connection may reach another one), a few
      // times
      if (ok(r.status) && ++again < distinct * 4) continue
      again = 0
    }
    await sleep(50)
  }
  return [...seen]
}

/** A port that was free a moment ago on host. */
export function freePort (host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen(0, host, () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address())
      srv.close(() => resolve(port))
    })
  })
}

/**
 * The port a server reads from its PORT variable (the fallback when it is unset or empty); anything else but a port is
 * NS_ERR_BAD_ENV naming the variable.
 * @param {string | undefined} text
 * @param {number} fallback
 */
export function portFromEnv (text, fallback) {
  const port = text === undefined || text === '' ? fallback : /^\d+$/.test(text.trim()) ? Number(text) : NaN
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw badEnv('PORT', `"${text}" is not a port (0..65535)`)
  return port
}
