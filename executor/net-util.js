// Small network helpers for the local backend: a free loopback port, and polling an HTTP endpoint.
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

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
 * Polls `url` until `distinct` different instance ids (response header X-Nodescale-Instance) answered.
 * @param {string} url
 * @param {{ distinct?: number, timeoutMs?: number, signal?: AbortSignal, isAlive?: () => boolean }} opts
 * @returns {Promise<string[]>} the instance ids seen
 */
export async function waitForInstances (url, { distinct = 1, timeoutMs = 30000, signal, isAlive = () => true } = {}) {
  const seen = new Set()
  const deadline = Date.now() + timeoutMs
  let lastError = 'no answer yet'
  while (Date.now() < deadline) {
    signal?.throwIfAborted()
    if (!isAlive()) throw new Error('the process exited before it answered')
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      const id = res.headers.get('x-nodescale-instance')
      if (res.ok && id) seen.add(id)
      else lastError = `HTTP ${res.status}`
      if (seen.size >= distinct) return [...seen]
      continue
    } catch (err) {
      lastError = err.cause?.code ?? err.message
    }
    await sleep(100)
  }
  throw new Error(`after ${timeoutMs} ms ${seen.size} of ${distinct} instances answered ${url} (last: ${lastError})`)
}
