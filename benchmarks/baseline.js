// Benchmark "baseline": answers "OK" at once, so only the server itself is measured.
import { optionsParser } from './params.js'

const OK = Buffer.from('OK')

export default {
  name: 'baseline',
  description: 'answers "OK" at once: the cost of the HTTP server alone',
  defaults: {},
  options: optionsParser('baseline', {}, {}),
  request: () => ({ method: 'GET', path: '/' }),
  create: () => (req, res) => {
    res.setHeader('Content-Type', 'text/plain')
    res.end(OK)
  }
}
