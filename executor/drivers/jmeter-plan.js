// Generates the JMeter 5.6 test plan (.jmx) for one load: a thread group (closed model) or a paced pool (rate), one
// HTTP sampler. JMeter evaluates `${...}` in the plan's strings: none from the user reaches it (lib/jmeter-text.js).
import { badFlag, internalError } from '../../lib/errors.js'
import { JMETER_REFUSAL, evaluatedByJmeter, literalForJmeter } from '../../lib/jmeter-text.js'

/** XML-escapes text for element content and attribute values. */
export function xmlEscape (value) {
  return String(value)
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&apos;')
    // XML 1.0 cannot carry most control characters at all, even escaped
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F]/g, '')
}

const str = (name, value) => `<stringProp name="${xmlEscape(name)}">${xmlEscape(value)}</stringProp>`
const bool = (name, value) => `<boolProp name="${name}">${value ? 'true' : 'false'}</boolProp>`
const int = (name, value) => `<intProp name="${name}">${value}</intProp>`

/**
 * Ramp-up of the closed model: short and inside the warm-up, so the steady window sees every thread running.
 * @param {number} concurrency
 * @param {number} warmup seconds
 */
export function rampUpSeconds (concurrency, warmup) {
  return Math.min(Math.floor(warmup / 2), Math.max(1, Math.ceil(concurrency / 200)))
}

/**
 * The seconds JMeter's scheduler runs: warm-up plus steady window (JMeter takes whole seconds).
 * @param {{ warmup: number, duration: number }} o
 */
export function scheduledSeconds ({ warmup, duration }) {
  return Math.ceil(warmup + duration)
}

/**
 * Threads of the open model's pool: enough for R requests/s at 100 ms each, within [10, 512] unless given.
 * @param {number} rate
 * @param {number} [maxThreads]
 */
export function openModelThreads (rate, maxThreads) {
  return maxThreads ?? Math.min(512, Math.max(10, Math.ceil(rate * 0.1)))
}

/** Where the thread group's duration goes when it is counted to an end time (untilEnd), after the plan is checked. */
const UNTIL_END = 'NODESCALE_UNTIL_END'

/**
 * The thread group's duration as JMeter evaluates it when the group starts: the whole seconds from then to `endAt`
 * (ms epoch), at least 1 (JMeter runs a duration of 0 for ever). A generator told a shared start begins its threads
 * when its JVM is up, which takes 1.5 to 8 s; a duration fixed when the plan was written ran on past the window by as
 * much (5.3 s of a 7 s plan, measured here). nodescale's own expression, of one integer: JMeter's time in seconds
 * against the end's.
 * @param {number} endAt
 */
export function untilEnd (endAt) {
  const end = Math.ceil(endAt / 1000)
  if (!Number.isSafeInteger(end)) throw internalError(`JMeter's end time must be a whole number of ms, not ${endAt}`)
  const left = `${end} - \${__time(/1000,)}`
  return `\${__jexl3(${left} &gt; 0 ? ${left} : 1,)}`
}

function threadGroup (o) {
  const threads = o.rate ? openModelThreads(o.rate, o.maxSockets) : o.concurrency
  const ramp = o.rate ? 0 : rampUpSeconds(o.concurrency, o.warmup)
  const loopController = '<elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" ' +
    'testclass="LoopController" testname="Loop Controller">'
  return `<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="${xmlEscape(o.label)}">
        ${int('ThreadGroup.num_threads', threads)}
        ${int('ThreadGroup.ramp_time', ramp)}
        ${bool('ThreadGroup.same_user_on_next_iteration', true)}
        ${str('ThreadGroup.on_sample_error', 'continue')}
        ${loopController}
          ${int('LoopController.loops', -1)}
          ${bool('LoopController.continue_forever', false)}
        </elementProp>
        ${bool('ThreadGroup.scheduler', true)}
        ${str('ThreadGroup.duration', o.endAt === undefined ? scheduledSeconds(o) : UNTIL_END)}
        ${str('ThreadGroup.delay', 0)}
        ${bool('ThreadGroup.delayedStart', false)}
      </ThreadGroup>`
}

/*
 * Open model (rate): a Precise Throughput Timer over a pool of keep-alive threads. JMeter 5.6's Open Model Thread
 * Group was tried first and does not hold the rate here: it starts a new thread, hence a new TCP connection, per
 * arrival (2000 req/s asked -> ~1000/s achieved with 1100 live threads and errors at the end, on this 2-core machine).
 * The timer held 2000 req/s to within 0.3% per second over 200 keep-alive connections. Its arrivals are Poisson with
 * an exact count per second. A thread that is busy (the server stalls) sends its next request late and JMeter times
 * `elapsed` from the actual send, so a stall longer than the pool can absorb is under-reported: for latency free of
 * coordinated omission use the autocannon driver's open model.
 */
function throughputTimer (o) {
  if (!o.rate) return ''
  return `<PreciseThroughputTimer guiclass="TestBeanGUI" testclass="PreciseThroughputTimer" testname="Precise Throughput Timer">
          <doubleProp><name>allowedThroughputSurplus</name><value>1.0</value><savedValue>0.0</savedValue></doubleProp>
          <intProp name="exactLimit">10000</intProp>
          <doubleProp><name>throughput</name><value>${Number(o.rate)}</value><savedValue>0.0</savedValue></doubleProp>
          <intProp name="throughputPeriod">1</intProp>
          <longProp name="duration">${scheduledSeconds(o)}</longProp>
          <intProp name="batchSize">1</intProp>
          <intProp name="batchThreadDelay">0</intProp>
          <longProp name="randomSeed">0</longProp>
        </PreciseThroughputTimer>
        <hashTree/>`
}

function headerManager (headers) {
  const entries = Object.entries(headers ?? {})
  if (!entries.length) return ''
  const items = entries.map(([k, v]) => `<elementProp name="" elementType="Header">
              ${str('Header.name', k)}
              ${str('Header.value', v)}
            </elementProp>`).join('\n            ')
  return `<HeaderManager guiclass="HeaderPanel" testclass="HeaderManager" testname="HTTP Header Manager">
          <collectionProp name="HeaderManager.headers">
            ${items}
          </collectionProp>
        </HeaderManager>
        <hashTree/>`
}

function bodyFile (bodyPath, headers) {
  if (!bodyPath) return ''
  const type = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? 'application/octet-stream'
  // one file with no parameter name: JMeter sends its bytes as the raw request body
  return `<elementProp name="HTTPsampler.Files" elementType="HTTPFileArgs">
            <collectionProp name="HTTPFileArgs.files">
              <elementProp name="${xmlEscape(bodyPath)}" elementType="HTTPFileArg">
                ${str('File.path', bodyPath)}
                ${str('File.paramname', '')}
                ${str('File.mimetype', type)}
              </elementProp>
            </collectionProp>
          </elementProp>`
}

/**
 * Refuses text JMeter would evaluate where it cannot be rewritten to the same meaning: a label, a method, a header, a
 * file path (NS_ERR_BAD_FLAG naming it).
 */
function checkLiteral (o) {
  const fields = [['label', o.label], ['--method', o.method], ['--body', o.bodyPath],
    ...Object.entries(o.headers ?? {}).flatMap(([k, v]) => [[`header ${JSON.stringify(k)}`, k], [`header ${JSON.stringify(k)}`, v]])]
  for (const [what, value] of fields) if (value !== undefined && evaluatedByJmeter(value)) throw badFlag(what, JMETER_REFUSAL)
}

/**
 * The .jmx text. Everything that comes from the user (URL, label, headers, paths) is XML-escaped; none of it carries
 * `${` (the URL's braces are percent-encoded, the rest is refused), and the plan is checked to have none at all.
 * @param {{ url: string, method: string, headers?: Record<string,string>, bodyPath?: string, concurrency?: number,
 *   rate?: number, connection?: 'keep-alive'|'close', warmup: number, duration: number, label: string, timeoutSec:
 *   number, maxSockets?: number, endAt?: number }} o connection close: the sampler's Use KeepAlive off (a
 *   connection per request); endAt: when the threads stop (ms epoch), counted when they start (untilEnd), rather
 *   than warm-up plus duration from then
 * @returns {string}
 */
export function buildJmx (o) {
  checkLiteral(o)
  const url = new URL(o.url)
  const protocol = url.protocol.replace(':', '')
  const port = url.port || (protocol === 'https' ? '443' : '80')
  const timeoutMs = Math.round(o.timeoutSec * 1000)
  const planVariables = '<elementProp name="TestPlan.user_defined_variables" elementType="Arguments" guiclass="ArgumentsPanel" ' +
    'testclass="Arguments" testname="User Defined Variables">'
  const samplerArguments = '<elementProp name="HTTPsampler.Arguments" elementType="Arguments" guiclass="HTTPArgumentsPanel" ' +
    'testclass="Arguments" testname="User Defined Variables">'
  const plan = `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="nodescale ${xmlEscape(o.label)}">
      ${planVariables}
        <collectionProp name="Arguments.arguments"/>
      </elementProp>
      ${bool('TestPlan.functional_mode', false)}
      ${bool('TestPlan.serialize_threadgroups', false)}
    </TestPlan>
    <hashTree>
      ${threadGroup(o)}
      <hashTree>
        ${headerManager(o.headers)}
        ${throughputTimer(o)}
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="${xmlEscape(o.label)}">
          ${str('HTTPSampler.domain', url.hostname.replace(/^\[|\]$/g, ''))}
          ${str('HTTPSampler.port', port)}
          ${str('HTTPSampler.protocol', protocol)}
          ${str('HTTPSampler.path', literalForJmeter(url.pathname + url.search))}
          ${str('HTTPSampler.method', o.method)}
          ${str('HTTPSampler.contentEncoding', '')}
          ${bool('HTTPSampler.follow_redirects', false)}
          ${bool('HTTPSampler.auto_redirects', false)}
          ${bool('HTTPSampler.use_keepalive', o.connection !== 'close')}
          ${bool('HTTPSampler.DO_MULTIPART_POST', false)}
          ${str('HTTPSampler.implementation', 'HttpClient4')}
          ${str('HTTPSampler.connect_timeout', timeoutMs)}
          ${str('HTTPSampler.response_timeout', timeoutMs)}
          ${samplerArguments}
            <collectionProp name="Arguments.arguments"/>
          </elementProp>
          ${bodyFile(o.bodyPath, o.headers)}
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
  // the plan's own text has no `${`: any here came from a value not checked above (a hostname cannot hold one); the one
  // expression nodescale puts in, of integers only, goes in after that check
  if (evaluatedByJmeter(plan)) throw internalError('the JMeter plan would evaluate "${" from the load\'s options')
  return o.endAt === undefined ? plan : plan.replace(UNTIL_END, untilEnd(o.endAt))
}
