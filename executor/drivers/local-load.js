// Runs the autocannon driver's load (closed or open model) in this process and writes the JTL.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJtlWriter, samplesPathOf } from '../jtl-writer.js'
import { clock } from './load-common.js'
import { runClosed } from './closed-model.js'
import { runOpen } from './open-model.js'

/**
 * Waits until the shared start time of a run's generators (an abort ends the wait early: the model then stops at
 * once); resolves with how late this process woke, in ms.
 * @param {number} startAt ms epoch
 * @param {AbortSignal} [signal]
 */
export async function waitForStart (startAt, signal) {
  // a timer wakes within a ms or two: sleep to just before, then spin the rest
  const early = startAt - clock() - 2
  if (early > 0) await sleep(early, undefined, { signal }).catch(() => {})
  while (!signal?.aborted && clock() < startAt) await new Promise(resolve => setImmediate(resolve))
  return clock() - startAt
}

/**
 * @param {import('./load-common.js').LoadOptions} o normalized options (see index.js)
 * @param {string} jtlPath the run's samples.jtl (samples.jtl.gz or no file by o.samples)
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export async function runLocalLoad (o, jtlPath) {
  const writer = createJtlWriter(samplesPathOf(jtlPath, o.samples), { format: o.samples, histogramPath: o.histogramPath, microsPath: o.microsPath })
  let result
  let startSkewMs
  try {
    if (o.startAt !== undefined) startSkewMs = Math.round((await waitForStart(o.startAt, o.signal)) * 10) / 10
    result = o.rate ? await runOpen(o, writer) : await runClosed(o, writer)
  } catch (err) {
    writer.abort()
    throw err
  }
  await writer.close()
  return { ...result, jtlPath: writer.path, ...(startSkewMs !== undefined ? { startSkewMs } : {}) }
}
