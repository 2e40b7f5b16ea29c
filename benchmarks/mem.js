// Benchmark "mem": builds a fresh array of objects per request, then sleeps briefly, so it stresses memory rather than
// CPU.
import { setTimeout as sleep } from 'node:timers/promises'
import { defineBenchmark, int } from './params.js'

export default defineBenchmark({
  name: 'mem',
  description: 'builds a per-request array of `objects` objects, holds it for `sleepMs` ms, then answers',
  params: {
    objects: ['20000', int({ min: 1, max: 10_000_000 })],
    sleepMs: ['10', int({ min: 0, max: 60_000 })]
  },
  create: (opts) => async (req, res) => {
    // A new array per request: never shared, so no cache contention between requests.
    const items = []
    for (let i = 0; i < opts.objects; i++) items.push({ i, at: i * 2, tag: 'nodescale' })
    await sleep(opts.sleepMs)
    res.setHeader('Content-Type', 'text/plain')
    res.end(`built ${items.length} objects\n`)
  }
})
