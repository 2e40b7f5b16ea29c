// How a request to an RC or a load agent proves it knows the deployment's token without sending it: the token keys an
// HMAC over the request (method, path and query, body, time, a one-time nonce), so what crosses the network, which may
// be plain HTTP, lets nobody who reads it make a request of their own, or replay this one.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** The header that carries `<ms since epoch>.<nonce>.<hmac hex>`. */
export const AUTH_HEADER = 'x-nodescale-auth'
/** How far a request's time may be from the receiver's clock (either way): node clocks in sync within this. */
export const AUTH_WINDOW_MS = 5 * 60_000

const NONCE = /^[0-9a-f]{32}$/
const HEADER = /^(\d{1,16})\.([0-9a-f]{32})\.([0-9a-f]{64})$/

/** What the HMAC covers. */
function message (method, path, ms, nonce, body) {
  const bodyHash = createHash('sha256').update(body ?? '').digest('hex')
  return `${String(method).toUpperCase()}\n${path}\n${ms}\n${nonce}\n${bodyHash}`
}

const mac = (token, text) => createHmac('sha256', token).update(text).digest('hex')

/**
 * The header value for one request.
 * @param {string} token
 * @param {{ method: string, path: string, body?: string | Buffer, now?: number }} req path with its query, as sent
 * @returns {string}
 */
export function signRequest (token, { method, path, body, now = Date.now() }) {
  const nonce = randomBytes(16).toString('hex')
  return `${now}.${nonce}.${mac(token, message(method, path, now, nonce, body))}`
}

/**
 * A checker of signed requests for one token: a request passes once, when its HMAC is right and its time within the
 * window; its nonce is then remembered until its time leaves the window, so the same header never passes twice.
 * @param {string} token
 * @param {{ windowMs?: number, now?: () => number }} [opts]
 * @returns {(req: { method: string, path: string, header: string | undefined, body?: string | Buffer }) => string |
 *   null} null when it passes, else why not
 */
export function createRequestCheck (token, { windowMs = AUTH_WINDOW_MS, now = Date.now } = {}) {
  /** @type {Map<string, number>} nonce -> its request's time */
  const seen = new Map()
  return ({ method, path, header, body }) => {
    const m = HEADER.exec(String(header ?? ''))
    if (!m || !NONCE.test(m[2])) return `no ${AUTH_HEADER} header of the form <ms>.<nonce>.<hmac>`
    const [, msText, nonce, got] = m
    const ms = Number(msText)
    const t = now()
    for (const [n, at] of seen) if (Math.abs(t - at) > windowMs) seen.delete(n)
    const want = mac(token, message(method, path, ms, nonce, body))
    if (!timingSafeEqual(Buffer.from(got), Buffer.from(want))) return 'a wrong signature (another deployment\'s token, or a changed request)'
    if (Math.abs(t - ms) > windowMs) return `signed ${Math.round((t - ms) / 1000)} s away from this node's clock (more than ${windowMs / 1000} s: keep the nodes' clocks in sync)`
    if (seen.has(nonce)) return 'a request seen before (a replay)'
    seen.set(nonce, ms)
    return null
  }
}
