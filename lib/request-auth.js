// How a request to an RC or a load agent proves it knows the deployment's token without sending it, and to which
// receiver it was meant. Each receiver makes a random id when it starts (`newReceiverId`) and says it, unsigned, on its
// /healthz; a request to it is signed with a key of that receiver only, HMAC(token, 'nodescale receiver ' + id), over
// the method, path and query, body, time and a one-time nonce. So what crosses the network, which may be plain HTTP,
// lets nobody who reads it make a request of their own, replay this one to the same receiver (its nonce is
// remembered), to another receiver (another key), or to the same one after a restart (a new id: the nonces it forgot
// went with the old one). An answer can be signed with the same key for the request's nonce (`signAnswer`).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** The header that carries `<receiver id>.<ms since epoch>.<nonce>.<hmac hex>`. */
export const AUTH_HEADER = 'x-nodescale-auth'
/** The header of a signed answer: `<hmac hex>` over the request's nonce and the body's length and SHA-256. */
export const ANSWER_HEADER = 'x-nodescale-answer'
/** How far a request's time may be from the receiver's clock (either way): node clocks in sync within this. */
export const AUTH_WINDOW_MS = 5 * 60_000

const ID = /^[0-9a-f]{32}$/
const HEADER = /^([0-9a-f]{32})\.(\d{1,16})\.([0-9a-f]{32})\.([0-9a-f]{64})$/

/** A receiver's id for this start of it: 16 random bytes, hex. */
export const newReceiverId = () => randomBytes(16).toString('hex')

/**
 * The key of one receiver: the token never signs a request itself, so a signature for one receiver is nothing to
 * another.
 * @param {string} token
 * @param {string} receiver its id
 */
export function receiverKey (token, receiver) {
  if (!ID.test(String(receiver))) throw new Error(`a receiver id is 32 hex digits (got ${JSON.stringify(receiver)})`)
  return createHmac('sha256', token).update(`nodescale receiver ${receiver}`).digest()
}

/** What the HMAC covers. */
function message (method, path, ms, nonce, body) {
  const bodyHash = createHash('sha256').update(body ?? '').digest('hex')
  return `${String(method).toUpperCase()}\n${path}\n${ms}\n${nonce}\n${bodyHash}`
}

const mac = (key, text) => createHmac('sha256', key).update(text).digest('hex')
const same = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/**
 * The header value for one request to one receiver.
 * @param {string} token
 * @param {{ receiver: string, method: string, path: string, body?: string | Buffer, now?: number }} req receiver: its
 *   id (its /healthz says it); path with its query, as sent
 * @returns {string}
 */
export function signRequest (token, { receiver, method, path, body, now = Date.now() }) {
  const nonce = randomBytes(16).toString('hex')
  return `${receiver}.${now}.${nonce}.${mac(receiverKey(token, receiver), message(method, path, now, nonce, body))}`
}

/**
 * The parts of a request's header, or null when it is not one.
 * @param {string | undefined} header
 * @returns {{ receiver: string, ms: number, nonce: string, mac: string } | null}
 */
export function parseAuthHeader (header) {
  const m = HEADER.exec(String(header ?? ''))
  return m && { receiver: m[1], ms: Number(m[2]), nonce: m[3], mac: m[4] }
}

/**
 * A checker of signed requests for one token at one receiver: a request passes once, when it was signed for this
 * receiver, its HMAC is right and its time within the window; its nonce is then remembered until its time leaves the
 * window, so the same header never passes twice.
 * @param {string} token
 * @param {{ receiver: string, windowMs?: number, now?: () => number }} opts receiver: this receiver's id
 * @returns {(req: { method: string, path: string, header: string | undefined, body?: string | Buffer }) => string |
 *   null} null when it passes, else why not
 */
export function createRequestCheck (token, { receiver, windowMs = AUTH_WINDOW_MS, now = Date.now }) {
  const key = receiverKey(token, receiver)
  /** @type {Map<string, number>} nonce -> its request's time */
  const seen = new Map()
  return ({ method, path, header, body }) => {
    const h = parseAuthHeader(header)
    if (!h) return `no ${AUTH_HEADER} header of the form <receiver>.<ms>.<nonce>.<hmac>`
    const t = now()
    for (const [n, at] of seen) if (Math.abs(t - at) > windowMs) seen.delete(n)
    if (h.receiver !== receiver) {
      return `signed for another receiver (${h.receiver.slice(0, 8)}…; this one is ${receiver.slice(0, 8)}…, ` +
        'since it started: its /healthz says so)'
    }
    if (!same(h.mac, mac(key, message(method, path, h.ms, h.nonce, body)))) return 'a wrong signature (another deployment\'s token, or a changed request)'
    if (Math.abs(t - h.ms) > windowMs) {
      return `signed ${Math.round((t - h.ms) / 1000)} s away from this node's clock ` +
        `(more than ${windowMs / 1000} s: keep the nodes' clocks in sync)`
    }
    if (seen.has(h.nonce)) return 'a request seen before (a replay)'
    seen.set(h.nonce, h.ms)
    return null
  }
}

const answerText = (nonce, bytes, sha256) => `answer\n${nonce}\n${bytes}\n${sha256}`

/**
 * The ANSWER_HEADER value of an answer to the request whose header was `requestHeader`, by its receiver.
 * @param {string} token
 * @param {string} requestHeader the request's AUTH_HEADER (it passed the receiver's check)
 * @param {{ bytes: number, sha256: string }} body the answer's body: its length and SHA-256 (hex)
 */
export function signAnswer (token, requestHeader, { bytes, sha256 }) {
  const h = parseAuthHeader(requestHeader)
  if (!h) throw new Error('signAnswer: not a signed request\'s header')
  return mac(receiverKey(token, h.receiver), answerText(h.nonce, bytes, sha256))
}

/**
 * Whether an answer's ANSWER_HEADER is the receiver's for the request the caller signed (its nonce: an answer to
 * another request, or from another receiver, does not pass) and this body.
 * @param {string} token
 * @param {string} requestHeader the header the caller sent
 * @param {string | null | undefined} answerHeader
 * @param {{ bytes: number, sha256: string }} body
 */
export function answerSigned (token, requestHeader, answerHeader, body) {
  return typeof answerHeader === 'string' && same(answerHeader, signAnswer(token, requestHeader, body))
}

/**
 * A receiver's id, from its unsigned /healthz (`id`).
 * @param {string} base http://host:port
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<string>}
 */
export async function fetchReceiverId (base, { timeoutMs = 2000 } = {}) {
  const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(timeoutMs) })
  const body = await res.json().catch(() => null)
  if (!ID.test(String(body?.id))) throw new Error(`${base}/healthz says no receiver id (${res.status}): is it a nodescale RC or load agent of this version?`)
  return body.id
}

/**
 * Sends a signed request to a receiver: its id read from its /healthz the first time (kept in `ids` by address), and
 * read again, and the request signed anew for it, once, when it answers 401 and has another id now (it restarted).
 * @template {{ status: number }} R
 * @param {{ base: string, token: string, ids: Map<string, string> }} to
 * @param {(sign: (req: { method: string, path: string, body?: string | Buffer }) => string) => Promise<R>} send
 *   sends the request with the header `sign` gives
 * @returns {Promise<R>}
 */
export async function callReceiver ({ base, token, ids }, send) {
  const receiver = ids.get(base) ?? await fetchReceiverId(base)
  ids.set(base, receiver)
  const res = await send(req => signRequest(token, { ...req, receiver }))
  if (res.status !== 401) return res
  const now = await fetchReceiverId(base).catch(() => receiver)
  if (now === receiver) return res
  ids.set(base, now)
  return send(req => signRequest(token, { ...req, receiver: now }))
}
