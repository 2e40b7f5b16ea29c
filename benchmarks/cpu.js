// Benchmark "cpu": trial-division primality of one integer per request, a tight loop that keeps a core busy.
import { defineBenchmark, int } from './params.js'

/**
 * The smallest divisor of n above 1, or 0 when n is prime. Plain trial division on purpose: the work is the point.
 * @param {number} n integer > 1
 */
export function smallestDivisor (n) {
  for (let i = 2; i * i <= n; i++) {
    if (n % i === 0) return i
  }
  return 0
}

export default defineBenchmark({
  name: 'cpu',
  description: 'trial-division primality test of n per request (default 10971096049 = 104743², the worst case)',
  params: { n: ['10971096049', int({ min: 2 })] },
  create: (opts) => (req, res) => {
    const divisor = smallestDivisor(opts.n)
    res.setHeader('Content-Type', 'application/json')
    res.end(JSON.stringify({ n: opts.n, prime: divisor === 0, divisor: divisor || null }))
  }
})
