// Benchmark "baseline": answers "OK" at once, so only the server itself is measured.
import { defineBenchmark } from './params.js'

const OK = Buffer.from('OK')

export default defineBenchmark({
  name: 'baseline',
  description: 'answers "OK" at once: the cost of the HTTP server alone',
  create: () => (req, res) => {
    res.setHeader('Content-Type', 'text/plain')
    res.end(OK)
  }
})
