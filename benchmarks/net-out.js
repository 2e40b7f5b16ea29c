// Benchmark "net-out": fixed-size text responses (1, 4, 10, 30 or 52 KiB) to stress outgoing network traffic.
import express from 'express'
import { defineBenchmark, oneOf } from './params.js'

export const NET_OUT_SIZES_KB = Object.freeze([1, 4, 10, 30, 52])

/** A printable text body of exactly kb KiB, built once. */
function textOf (kb) {
  const line = 'nodescale net-out: fixed-size text to stress outgoing network traffic. 0123456789\n'
  return Buffer.from(line.repeat(Math.ceil(kb * 1024 / line.length)).slice(0, kb * 1024))
}

export default defineBenchmark({
  name: 'net-out',
  description: 'fixed-size text responses of 1, 4, 10, 30 or 52 KiB (?kb=, default from --param kb)',
  params: { kb: ['10', oneOf(NET_OUT_SIZES_KB)] },
  create: (opts) => {
    const bodies = new Map(NET_OUT_SIZES_KB.map(kb => [String(kb), textOf(kb)]))
    const fallback = bodies.get(String(opts.kb))
    const router = express.Router()
    router.get('/', (req, res) => {
      const kb = req.query.kb
      const body = kb === undefined ? fallback : bodies.get(String(kb))
      res.setHeader('Content-Type', 'text/plain')
      if (!body) {
        res.statusCode = 400
        res.end(`kb must be one of ${NET_OUT_SIZES_KB.join(', ')}\n`)
        return
      }
      res.end(body)
    })
    return router
  }
})
