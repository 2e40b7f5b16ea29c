// A fastify service, nothing of nodescale in it (install first: npm install --prefix examples/fastify-server), then
//   npx executor run --server examples/fastify-server/server.js --path /prime --strategy pm2 --instances 2
// GET / answers hello, GET /prime?n=N tests N for primality by trial division (CPU-bound), GET /health answers ok.
import Fastify from 'fastify'

const app = Fastify({ logger: false })

function smallestDivisor (n) {
  if (n % 2 === 0) return 2
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return d
  return n
}

app.get('/', async () => 'hello\n')
app.get('/health', async () => ({ ok: true }))
app.get('/prime', async (req) => {
  const n = Number(req.query.n ?? 1000003)
  const divisor = smallestDivisor(n)
  return { n, prime: divisor === n, divisor }
})

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '0.0.0.0'
app.listen({ port, host }).then(() => console.log(`fastify listening on ${host}:${port}`), (err) => {
  console.error(err)
  process.exit(1)
})
