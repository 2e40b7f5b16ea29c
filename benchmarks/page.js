// Benchmark "page": the HTML page of the multi-core study's test code (200 OK Random=[n]).
import { defineBenchmark } from './params.js'

export default defineBenchmark({
  name: 'page',
  description: 'the multi-core study\'s small HTML page with a random number',
  create: () => (req, res) => {
    // Same work as the study's handler: one random number spliced into a fixed page.
    res.statusCode = 200
    res.setHeader('Content-Type', 'text/html')
    res.end('<!DOCTYPE html><html><head><title>OK</title></head><body><h1>200 OK Random=[' +
      (Math.random() * 1000 | 0) + ']</h1></body></html>')
  }
})
