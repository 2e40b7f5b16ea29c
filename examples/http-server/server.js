// A plain node:http server, nothing of nodescale in it: measure it with
//   npx executor run --server examples/http-server/server.js --path /prime --strategy cm --instances 2
// GET / answers hello, GET /prime?n=N tests N for primality by trial division (CPU-bound), GET /health answers ok.
import { createServer } from 'node:http'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '0.0.0.0'

function smallestDivisor (n) {
  if (n % 2 === 0) return 2
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return d
  return n
}

createServer((req, res) => {
  const url = new URL(req.url, 'http://x')
  if (url.pathname === '/health') return res.end('ok')
  if (url.pathname === '/prime') {
    const n = Number(url.searchParams.get('n') ?? 1000003)
    const divisor = smallestDivisor(n)
    res.setHeader('content-type', 'application/json')
    return res.end(JSON.stringify({ n, prime: divisor === n, divisor }))
  }
  if (url.pathname === '/') return res.end('hello\n')
  res.statusCode = 404
  res.end('not found\n')
}).listen(port, host, () => console.log(`http-server listening on ${host}:${port}`))
