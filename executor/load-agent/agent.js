// The load generator agent: one per load node of a --load-nodes run, a Swarm task on the node's own network. It runs
// one generator's share of the load with the run's driver (runLoad, as on the executor's machine), measures its CPU,
// and hands its samples over; the executor drives it over HTTP behind a per-run token.
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { createReadStream, mkdirSync, rmSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DRIVERS, runLoad } from '../drivers/index.js'
import { clock } from '../drivers/load-common.js'
import { createGeneratorMeter, summarizeGenerator } from '../../rc/generator-cpu.js'
import { AGENT_TOKEN_FILE, LOAD_AGENT_PORT } from '../../lib/wire.js'
import { AUTH_HEADER, ANSWER_HEADER, createRequestCheck, newReceiverId, signAnswer } from '../../lib/request-auth.js'
import { portFromEnv } from '../../lib/net.js'
import { formatError, exitCodeOf, badEnv } from '../../lib/errors.js'
import { secretFromEnv } from '../../lib/secret-env.js'
import { machineId } from '../../lib/machine-id.js'
import { DRIVER_KEYS } from '../../lib/run-options.js'
import { JMETER_REFUSAL, evaluatedByJmeter } from '../../lib/jmeter-text.js'

/**
 * What a start request carries of the load (the body as base64 besides): the run's values the drivers take as they
 * are (DRIVER_KEYS, from the option table) and what the executor works out for them; the rest (files, signals, the
 * start time on the agent's clock) is the agent's own.
 */
export const LOAD_FIELDS = Object.freeze(['url', 'method', 'headers', 'duration', 'label', 'timeoutSec', 'maxSockets', ...DRIVER_KEYS])

/**
 * What is wrong with a start request's load, or null: its headers a map of text, and no text JMeter would evaluate
 * (a signed request is trusted to run a load, never to run code: docs/SECURITY.md, finding 1).
 * @param {any} load
 * @returns {string | null}
 */
export function loadProblem (load) {
  if (!load || typeof load !== 'object' || Array.isArray(load)) return 'load: expected an object'
  const { headers } = load
  if (headers !== undefined && (!headers || typeof headers !== 'object' || Array.isArray(headers) || Object.values(headers).some(v => typeof v !== 'string'))) {
    return 'load.headers: expected { name: text }'
  }
  const texts = [...LOAD_FIELDS.filter(k => typeof load[k] === 'string').map(k => [`load.${k}`, load[k]]),
    ...Object.entries(headers ?? {}).flatMap(([k, v]) => [[`load.headers[${JSON.stringify(k)}]`, k], [`load.headers[${JSON.stringify(k)}]`, v]])]
  const found = texts.find(([, text]) => evaluatedByJmeter(text))
  return found ? `${found[0]} ${JMETER_REFUSAL}` : null
}

/**
 * How long a running load goes on without a signed request from its executor (which asks for /status twice a second,
 * executor/generators/agent-client.js): an executor killed with -9 leaves no load running past this.
 * NODESCALE_AGENT_LEASE_MS sets it for the service.
 */
export const AGENT_LEASE_MS = 30_000

/**
 * @typedef {{ state: 'running'|'done'|'failed', progress: any, result: any, error: any, cpu: any, controller:
 *   AbortController }} AgentJob
 */

/** @param {import('node:http').ServerResponse} res @param {number} status @param {any} data */
function send (res, status, data) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(data))
}

/**
 * A request's body as sent, which its signature covers (a start's load is a few hundred bytes); null once it is over
 * 64 kB, after answering 413 (while the request is still being read).
 * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
 * @returns {Promise<string | null>}
 */
async function readBody (req, res) {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 65_536) { send(res, 413, { error: 'the body is over 64 kB' }); return null }
  }
  return text
}

/**
 * A /start's body, or the error a 400 answers: JSON, with a known driver and a startAt, and a load loadProblem passes.
 * @param {string} text
 * @returns {{ body?: any, error?: string }}
 */
function parseStart (text) {
  let body
  try { body = JSON.parse(text) } catch { return { error: 'the body is not JSON' } }
  if (!DRIVERS.includes(body.driver) || !Number.isFinite(body.startAt)) return { error: 'driver and startAt are required' }
  const problem = loadProblem(body.load)
  return problem ? { error: problem } : { body }
}

/**
 * Aborts a running job's load once no signed request came for leaseMs (lastRequest() says when one last did); it
 * stops watching once the job ended.
 * @param {AgentJob} current @param {() => number} lastRequest @param {number} leaseMs
 * @param {(line: string) => void} log
 */
function watchLease (current, lastRequest, leaseMs, log) {
  const watch = setInterval(() => {
    if (current.state !== 'running') { clearInterval(watch); return }
    if (Date.now() - lastRequest() <= leaseMs) return
    log(`no request from the executor for ${Math.round((Date.now() - lastRequest()) / 1000)} s: aborting the load`)
    clearInterval(watch)
    current.controller.abort(new Error('the executor stopped asking (lease expired)'))
  }, Math.max(50, Math.min(1000, leaseMs / 4)))
  watch.unref()
  return watch
}

/**
 * Runs a start's load with its driver (runLoad, the samples gzipped into jobDir, the generators' CPU metered) and
 * records its end in the job: done with its result and CPU, or failed with its error.
 * @param {AgentJob} current @param {any} body
 * @param {{ jobDir: string, meter: ReturnType<typeof createGeneratorMeter>, log: (line: string) => void }} opts
 */
function runJob (current, body, { jobDir, meter, log }) {
  /** @type {any} */
  const load = Object.fromEntries(LOAD_FIELDS.filter(k => body.load?.[k] !== undefined).map(k => [k, body.load[k]]))
  runLoad({
    ...load,
    driver: body.driver,
    body: body.load?.body ? Buffer.from(body.load.body, 'base64') : undefined,
    startAt: body.startAt,
    group: body.group,
    jtlPath: join(jobDir, 'samples.jtl'),
    samples: 'gz',
    signal: current.controller.signal,
    onProgress: (p) => { current.progress = p },
    onSpawn: (pid, engine) => meter.add(pid, { engine }),
    log
  }).then(result => {
    current.cpu = summarizeGenerator(meter.stop(), { from: result.steadyStart, to: result.steadyEnd })
    current.result = result
    current.state = 'done'
    log(`done: ${result.requests} requests, ${result.errors} errors`)
  }, err => {
    meter.stop()
    current.error = { code: err.code ?? null, message: err.message }
    current.state = 'failed'
    log(`failed: ${err.message}`)
  })
}

/** What /status shows of a job: all but its controller; idle before the first. @param {AgentJob | null} job */
function statusOf (job) {
  if (!job) return { state: 'idle' }
  const { controller, ...shown } = job
  return shown
}

/**
 * GET /samples: the finished job's samples file, its size and sha256 signed for the request's nonce (the executor
 * takes these bytes as this agent's answer to its request only); 404 while no load finished.
 * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
 * @param {string} token @param {AgentJob | null} job
 */
async function sendSamples (req, res, token, job) {
  const file = job?.state === 'done' ? job.result?.jtlPath : null
  if (!file) return send(res, 404, { error: 'no samples: no finished load' })
  const bytes = statSync(file).size
  const sha256 = createHash('sha256')
  for await (const chunk of createReadStream(file)) sha256.update(chunk)
  const answer = signAnswer(token, String(req.headers[AUTH_HEADER]), { bytes, sha256: sha256.digest('hex') })
  res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': bytes, [ANSWER_HEADER]: answer })
  createReadStream(file).pipe(res)
}

/**
 * The agent's HTTP handler and its one job at a time, aborted when no signed request came for leaseMs. Requests are
 * signed for this agent's id (lib/request-auth.js), a new random one at each start unless given; /healthz says it.
 * @param {{ token: string, dir: string, log?: (line: string) => void, leaseMs?: number, receiverId?: string }} opts
 */
export function createAgent ({ token, dir, log = () => {}, leaseMs = AGENT_LEASE_MS, receiverId = newReceiverId() }) {
  const check = createRequestCheck(token, { receiver: receiverId })
  let renewedAt = Date.now()
  /** @type {NodeJS.Timeout | null} */
  let watch = null
  /** @type {AgentJob | null} */
  let job = null

  function start (body) {
    const controller = new AbortController()
    const jobDir = join(dir, 'job')
    rmSync(jobDir, { recursive: true, force: true })
    mkdirSync(jobDir, { recursive: true })
    const meter = createGeneratorMeter()
    meter.start()
    const current = { state: /** @type {'running'|'done'|'failed'} */ ('running'), progress: null, result: null, error: null, cpu: null, controller }
    job = current
    renewedAt = Date.now()
    clearInterval(watch ?? undefined)
    watch = watchLease(current, () => renewedAt, leaseMs, log)
    runJob(current, body, { jobDir, meter, log })
  }

  return async function handle (req, res) {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true, host: hostname(), id: receiverId })
    const text = await readBody(req, res)
    if (text === null) return
    const why = check({ method: req.method ?? 'GET', path: req.url ?? '/', header: req.headers[AUTH_HEADER], body: text })
    if (why) return send(res, 401, { error: `not authorised: ${why}` })
    renewedAt = Date.now()
    // machine: the executor counts the generators that start on one machine together (their JVMs share its cores)
    if (req.method === 'GET' && path === '/clock') return send(res, 200, { now: clock(), machine: machineId() })
    if (req.method === 'GET' && path === '/status') return send(res, 200, statusOf(job))
    if (req.method === 'POST' && path === '/start') {
      if (job?.state === 'running') return send(res, 409, { error: 'a load is running already' })
      const { body, error } = parseStart(text)
      if (error) return send(res, 400, { error })
      start(body)
      return send(res, 202, { started: true })
    }
    if (req.method === 'POST' && path === '/abort') {
      job?.controller.abort()
      return send(res, 202, { aborting: job?.state === 'running' })
    }
    if (req.method === 'GET' && path === '/samples') return sendSamples(req, res, token, job)
    send(res, 404, { error: `no route ${req.method} ${path}` })
  }
}

/**
 * Starts the agent on NODESCALE_AGENT_PORT (default 7393) with the token of its Swarm secret
 * (NODESCALE_AGENT_TOKEN_FILE) or of NODESCALE_AGENT_TOKEN.
 */
export async function main () {
  const token = secretFromEnv('NODESCALE_AGENT_TOKEN', AGENT_TOKEN_FILE)
  if (!token) throw badEnv('NODESCALE_AGENT_TOKEN', `is required (or its file, ${AGENT_TOKEN_FILE}): the token the executor sends`)
  const port = portFromEnv(process.env.NODESCALE_AGENT_PORT, LOAD_AGENT_PORT)
  const dir = process.env.NODESCALE_AGENT_DIR ?? '/tmp/nodescale-load'
  const log = (line) => process.stdout.write(`load-agent: ${line}\n`)
  const lease = process.env.NODESCALE_AGENT_LEASE_MS ? Number(process.env.NODESCALE_AGENT_LEASE_MS) : AGENT_LEASE_MS
  const handle = createAgent({ token, dir, log, leaseMs: lease })
  const server = createServer((req, res) => { handle(req, res).catch(err => { res.statusCode = 500; res.end(err.message) }) })
  await new Promise((resolve, reject) => server.once('error', reject).listen(port, () => resolve(undefined)))
  log(`listening on ${port} (${hostname()})`)
  const stop = () => server.close(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch(err => {
    process.stderr.write(`${formatError(err)}\n`)
    process.exit(exitCodeOf(err))
  })
}
