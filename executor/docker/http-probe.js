// One bounded GET with node:http: docker-proxy accepts connections before the container listens, and a probe must time out on its own (fetch's AbortSignal.timeout does not keep the process alive).
import { request } from 'node:http'

/**
 * GETs url once; resolves with the status, the X-Nodescale-Instance header and the body, rejects on error or after timeoutMs.
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
        const instance = res.headers['x-nodescale-instance']
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
