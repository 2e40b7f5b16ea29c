// Benchmark "net-in": a POST sink that drains the request body (bounded; larger bodies get 413) to stress incoming
// traffic.
import express from 'express'
import { defineBenchmark, int, badParam } from './params.js'

/** Ends a request whose body is too large; the connection closes so the rest of the body is not read. */
function tooLarge (res, max) {
  res.statusCode = 413
  res.setHeader('Content-Type', 'text/plain')
  res.setHeader('Connection', 'close')
  res.end(`body larger than ${max} bytes\n`)
}

export default defineBenchmark({
  name: 'net-in',
  description: 'POST sink that drains the body (a load driver sends bodyKb KiB; bodies over maxKb KiB get 413)',
  params: {
    bodyKb: ['10', int({ min: 0, max: 1024 * 1024 })],
    maxKb: ['1024', int({ min: 1, max: 1024 * 1024 })]
  },
  check: (opts) => {
    if (opts.bodyKb > opts.maxKb) throw badParam('bodyKb', `${opts.bodyKb} is larger than maxKb ${opts.maxKb}`)
  },
  request: (opts) => ({ method: 'POST', path: '/', bodyBytes: opts.bodyKb * 1024, headers: { 'content-type': 'text/plain' } }),
  create: (opts) => {
    const max = opts.maxKb * 1024
    const router = express.Router()
    router.post('/', (req, res) => {
      const declared = Number(req.headers['content-length'])
      if (declared > max) return tooLarge(res, max)
      let bytes = 0
      req.on('data', chunk => {
        bytes += chunk.length
        if (bytes > max && !res.headersSent) {
          req.pause()
          tooLarge(res, max)
        }
      })
      req.on('end', () => {
        if (res.headersSent) return
        res.setHeader('Content-Type', 'text/plain')
        res.end(`received ${bytes} bytes\n`)
      })
    })
    return router
  }
})
