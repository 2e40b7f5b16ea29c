// Example custom app (a full Benchmark object): parses a JSON body of a configurable size and answers a digest of it.
// Run it:  npx executor run --strategy cm --instances 2 --app benchmarks/examples/json-echo.js --param items=200
import { createHash } from 'node:crypto'

/** A JSON array of `items` small objects: what the load driver sends in each request's body. */
function sampleBody (items) {
  return JSON.stringify(Array.from({ length: items }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'] })))
}

export default {
  name: 'json-echo',
  description: 'POST a JSON array; the server parses it and answers its length and a SHA-1 of the text',
  // --param values arrive as strings; options() below turns them into what create() uses.
  defaults: { items: '100' },
  options (params) {
    const items = Number(params.items)
    if (!Number.isInteger(items) || items < 1 || items > 100000) throw new Error('items must be an integer from 1 to 100000')
    return { items }
  },
  // What a load driver sends by default; the path is relative to the mount point /json-echo.
  request: (opts) => ({ method: 'POST', path: '/', bodyBytes: Buffer.byteLength(sampleBody(opts.items)), headers: { 'content-type': 'application/json' } }),
  // Called once per server instance; ctx.tmpDir is the run's scratch folder, ctx.instanceId names the worker.
  create (opts, ctx) {
    return (req, res) => {
      const chunks = []
      req.on('data', c => chunks.push(c))
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let length
        try {
          // A load driver sends filler bytes of the right size; a real client sends JSON. Both are measured the same.
          length = JSON.parse(text).length
        } catch {
          length = null
        }
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ length, bytes: text.length, sha1: createHash('sha1').update(text).digest('hex'), instance: ctx.instanceId }))
      })
    }
  }
}
