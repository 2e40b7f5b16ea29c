// Runs the autocannon driver's load (closed or open model) in this process and writes the JTL.
import { createJtlWriter, samplesPathOf } from '../jtl-writer.js'
import { runClosed } from './closed-model.js'
import { runOpen } from './open-model.js'

/**
 * @param {import('./load-common.js').LoadOptions} o normalized options (see index.js)
 * @param {string} jtlPath the run's samples.jtl (samples.jtl.gz or no file by o.samples)
 * @returns {Promise<import('./load-common.js').LoadResult>}
 */
export async function runLocalLoad (o, jtlPath) {
  const writer = createJtlWriter(samplesPathOf(jtlPath, o.samples), { format: o.samples, histogramPath: o.histogramPath })
  let result
  try {
    result = o.rate ? await runOpen(o, writer) : await runClosed(o, writer)
  } catch (err) {
    writer.abort()
    throw err
  }
  await writer.close()
  return { ...result, jtlPath: writer.path }
}
