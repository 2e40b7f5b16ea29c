// Starts one instance of the server under test from environment variables (used by serve.js, cluster workers and PM2).
import { createServer } from 'node:http'
import { mkdtemp, mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadBenchmark } from '../benchmarks/index.js'
import { badEnv } from '../lib/errors.js'
import { portFromEnv } from '../lib/net.js'
import { telemetryOn } from '../lib/telemetry.js'
import { createApp } from './app.js'
import { startTelemetry } from './telemetry.js'
import { instanceIdFromEnv } from './instance-id.js'

export { instanceIdFromEnv, isPm2 } from './instance-id.js'

/**
 * Reads NODESCALE_PARAMS: a JSON object of strings (the --param values).
 * @param {string|undefined} text
 * @returns {Record<string, string>}
 */
export function parseParamsEnv (text) {
  if (!text) return {}
  let value
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw badEnv('NODESCALE_PARAMS', `not JSON (${err.message}); expected an object of strings like {"n":"104729"}`)
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || Object.values(value).some(v => typeof v !== 'string')) {
    throw badEnv('NODESCALE_PARAMS', 'expected a JSON object of strings like {"n":"104729"}')
  }
  return value
}

/**
 * Loads the benchmark, builds the app and listens. Resolves once listening.
 * @param {{ env?: Record<string, string|undefined>, log?: (line: string) => void }} [opts]
 * @returns {Promise<{ port: number, host: string, instance: string, benchmark: string, close: () => Promise<void> }>}
 */
export async function startServer ({ env = process.env, log = (line) => console.log(line) } = {}) {
  const port = portFromEnv(env.PORT, 3000)
  const host = env.HOST || '0.0.0.0'
  const instance = instanceIdFromEnv(env)
  const params = parseParamsEnv(env.NODESCALE_PARAMS)
  const benchmark = await loadBenchmark({ benchmark: env.NODESCALE_BENCHMARK || undefined, app: env.NODESCALE_APP || undefined })
  const options = benchmark.options(params)
  const ownTmp = !env.NODESCALE_TMPDIR
  const tmpDir = ownTmp ? await mkdtemp(join(tmpdir(), 'nodescale-')) : env.NODESCALE_TMPDIR
  if (!ownTmp) await mkdir(tmpDir, { recursive: true })
  const ctx = { tmpDir, instanceId: instance }
  const cleanup = async () => {
    try { await benchmark.teardown?.(ctx) } finally { if (ownTmp) await rm(tmpDir, { recursive: true, force: true }) }
  }
  let server
  try {
    const app = await createApp({ benchmark, options, instanceId: instance, tmpDir, log: (line) => console.error(line) })
    server = createServer(app)
    await new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => { server.off('error', reject); resolve(undefined) })
    })
  } catch (err) {
    await cleanup().catch(() => {})
    throw err
  }
  const actual = /** @type {import('node:net').AddressInfo} */ (server.address()).port
  log(`nodescale: instance ${instance} serving ${benchmark.name} on http://${host}:${actual} (pid ${process.pid})`)
  const telemetry = telemetryOn(env) ? startTelemetry({ id: instance, role: 'worker' }) : null
  let closing = null
  return {
    port: actual,
    host,
    instance,
    benchmark: benchmark.name,
    close: () => {
      closing ??= (async () => {
        telemetry?.stop()
        await new Promise(resolve => {
          server.close(() => resolve(undefined))
          server.closeAllConnections()
        })
        await cleanup()
      })()
      return closing
    }
  }
}
