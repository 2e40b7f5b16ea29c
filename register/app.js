// The server under test: an express app that mounts one benchmark at /<name>, plus /healthz, an instance header, 404
// and 500 pages.
import express from 'express'
import { INSTANCE_HEADER } from '../lib/wire.js'

// The same small pages as the multi-core study's test code.
const PAGE_404 = '<!DOCTYPE html><html><head><title>404</title></head><body><h1>404 Not Found</h1></body></html>'
const PAGE_500 = '<!DOCTYPE html><html><head><title>500</title></head><body><h1>500 Internal Server Error</h1></body></html>'
const MAX_LOGGED_ERRORS = 5

/**
 * Builds the express app for one instance of the server under test.
 * @param {{ benchmark: any, options: any, instanceId: string, tmpDir: string, log?: (line: string) => void }} spec
 *   benchmark: a Benchmark object (benchmarks/index.js loadBenchmark); options: benchmark.options(params)
 * @returns {Promise<import('express').Express>}
 */
export async function createApp ({ benchmark, options, instanceId, tmpDir, log = (line) => console.error(line) }) {
  const app = express()
  // Nothing per request that the study's code did not do: no X-Powered-By, no ETag hashing of bodies.
  app.disable('x-powered-by')
  app.disable('etag')
  const id = String(instanceId)
  app.use((req, res, next) => {
    res.setHeader(INSTANCE_HEADER, id)
    next()
  })
  const health = JSON.stringify({ status: 'ok', instance: id, pid: process.pid, benchmark: benchmark.name })
  app.get('/healthz', (req, res) => {
    res.setHeader('Content-Type', 'application/json')
    res.end(health)
  })
  const handler = await benchmark.create(options, { tmpDir, instanceId: id })
  if (typeof handler !== 'function') {
    throw new TypeError(`benchmark ${benchmark.name}: create() returned ${handler === null ? 'null' : typeof handler}, not an express handler or Router`)
  }
  app.use(`/${benchmark.name}`, handler)
  app.use((req, res) => {
    res.status(404).type('html').end(PAGE_404)
  })
  let logged = 0
  app.use((err, req, res, next) => {
    if (logged < MAX_LOGGED_ERRORS) {
      logged++
      log(`${id}: error on ${req.method} ${req.originalUrl}: ${err?.stack ?? err}${logged === MAX_LOGGED_ERRORS ? ' (further errors are not logged)' : ''}`)
    }
    if (res.headersSent) return next(err)
    res.status(500).type('html').end(PAGE_500)
  })
  return app
}
