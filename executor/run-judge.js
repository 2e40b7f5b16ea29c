// The run's last step before run.json is written: from what was measured (the load's files, the CPU timeline, the
// instances' telemetry, any losses) to what the run says of itself: its summary, what --duration auto came to, how it
// was degraded, its validity and its diagnosis. One entry, judgeRunRecord; run() calls it once the load has ended,
// whatever happened (executor/run.js).
import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import { RUN_FILES } from '../lib/run-files.js'
import { AUTO_DURATION } from '../lib/run-options.js'
import { summarize } from '../analyzer/samples/summary.js'
import { diagnoseRun, diagnosisFigures } from '../analyzer/diagnosis/bottleneck.js'
import { describeLoss } from './degraded.js'
import { judgeRun } from './validity.js'

/** Why a run of a user's image as it is has no per-instance figures. */
export const HEALTH_ONLY = 'your image ran as it is (--image with up or hs), without nodescale\'s hook: ' +
  'its processes sent no instance header or telemetry, so the instance count and the event-loop figures cannot be had'

/**
 * Sets runJson's files, summary, autoDuration, degraded, validity and diagnosis from what the run measured. A run with
 * no load (it failed before the load began) is left as it is; a summary that cannot be read is null, said in the log.
 * @param {Record<string, any>} runJson the run's record, its load set
 * @param {{ config: import('./backends/index.js').RunConfig, dir: string, timeline: any, telemetry:
 *   import('../lib/telemetry.js').TelemetryRecord[], losses: import('./docker/node-watch.js').LossEpisode[],
 *   placementAfter: any, readiness?: string, log: (line: string) => void }} measured
 */
export async function judgeRunRecord (runJson, { config, dir, timeline, telemetry, losses, placementAfter, readiness, log }) {
  if (!runJson.load) return
  // the histograms hold every figure of the samples (built from the same rows by the same scanner): the summary
  // reads them rather than the samples again, and the samples file when a killed writer left no histograms
  const jtl = runJson.load.jtlPath && existsSync(runJson.load.jtlPath) ? runJson.load.jtlPath : null
  const histogram = join(dir, RUN_FILES.latency)
  const hasHistogram = existsSync(histogram)
  runJson.files = { ...runJson.files, samples: jtl && basename(jtl), latency: hasHistogram ? RUN_FILES.latency : null }
  const steady = { from: runJson.load.steadyStart, to: runJson.load.steadyEnd }
  const source = hasHistogram ? histogram : jtl
  const s = source ? await summarize(source, { steady }).catch(err => { log(`summary: ${err.message}`); return null }) : null
  runJson.summary = s ? s.total : null
  if (s?.malformed?.count) runJson.summary.malformedRows = s.malformed.count
  if (config.duration === 'auto' && runJson.summary) runJson.autoDuration = autoDurationOf(config, runJson.load, runJson.summary)
  if (losses.length) {
    runJson.degraded = await describeLoss(losses, {
      jtl,
      histogram: hasHistogram ? histogram : undefined,
      load: runJson.load,
      before: runJson.placement,
      after: placementAfter
    })
  }
  if (!runJson.summary) return
  const generator = runJson.load.generator
  const figures = timeline ? diagnosisFigures({ config, timeline, telemetry, window: steady, generator }) : null
  runJson.validity = judgeRun({
    summary: runJson.summary,
    cpu: runJson.cpu,
    generator,
    generators: runJson.load.generators,
    warmupMs: runJson.load.startAt === undefined ? undefined : runJson.load.steadyStart - runJson.load.startAt,
    schedule: runJson.load.schedule,
    roles: figures?.roles,
    slo: config.slo
  })
  if (figures) runJson.diagnosis = diagnoseRun({ config, figures, cpu: runJson.cpu, generator, validity: runJson.validity, summary: runJson.summary })
  // an image run as it is: nodescale did not start its processes, so none of them told it anything
  if (runJson.diagnosis && readiness === 'health-only') runJson.diagnosis.instancesUnseen = HEALTH_ONLY
}

/**
 * What --duration auto came to: the steady seconds measured, the mean throughput's 95% half-width reached (relative,
 * from the JTL as the summary counts it), the target, and whether the run ended because it was reached or at its
 * maximum.
 */
function autoDurationOf (config, load, summary) {
  return {
    seconds: Math.round((load.steadyEnd - load.steadyStart) / 100) / 10,
    relHalfWidth: summary.stability?.relHalfWidth ?? null,
    target: AUTO_DURATION.relHalfWidth,
    reached: load.until?.reached === true,
    min: config.minDuration,
    max: config.maxDuration
  }
}
