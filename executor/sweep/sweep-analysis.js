// The analysis a finished sweep's experiment asked for: the USL/Amdahl comparison, the per-core table, the
// correlations.
import { NsError } from '../../lib/errors.js'
import { compare } from '../../analyzer/compare.js'
import { readRunList, cpuTable } from '../../analyzer/report/report-runs.js'
import { correlate } from '../../analyzer/correlate.js'

/**
 * The per-core table of the analyzer's report (analyzer/report/report-runs.js) for the sweep's finished runs, each
 * load named
 * by the calibration level it came from ("relaxed = 2") when it came from one.
 * @param {any} sweep
 */
export async function perCoreRows (sweep) {
  const { runs } = await readRunList([sweep.dir])
  const levels = new Map(sweep.cells.filter(c => c.level).map(c => [levelKey(c.values.strategy, c.values.instances, c.values.concurrency), c.level]))
  return cpuTable(runs.filter(r => r.config.sweep?.id === sweep.id)).map(row => {
    const level = levels.get(levelKey(row.strategy, row.instances, row.loadValue))
    return { ...row, load: level ? `${level} = ${row.loadValue}` : String(row.loadValue) }
  })
}

const levelKey = (strategy, instances, concurrency) => `${strategy} ${Number(instances)} ${Number(concurrency)}`

/**
 * The analysis the experiment asked for, on the sweep folder: USL (Amdahl when too few points) per strategy and
 * benchmark, and the per-core table. A fit that the data cannot support says why instead of failing the sweep.
 * @param {any} sweep
 */
export async function analyseSweep (sweep) {
  const analysis = sweep.experiment.analysis ?? { fit: 'usl', x: 'instances', cpuTable: false }
  const out = { fit: null, fitError: null, cpuTable: null, correlations: null, correlationsError: null }
  if (analysis.cpuTable) out.cpuTable = await perCoreRows(sweep)
  if (analysis.correlations) {
    try {
      out.correlations = await correlate([sweep.dir])
    } catch (err) {
      if (!(err instanceof NsError)) throw err
      out.correlationsError = err.message
    }
  }
  if (analysis.fit !== 'none') {
    try {
      out.fit = await compare([sweep.dir], { model: analysis.fit === 'amdahl' ? 'amdahl' : 'usl', x: analysis.x })
    } catch (err) {
      if (!(err instanceof NsError)) throw err
      out.fitError = err.message
    }
  }
  return out
}
