// A capacity search (executor capacity, or a sweep's capacity entry) as the analyzer reads it: one run whose
// throughput is the capacity found (the offered rate met with probability 0.5; older records: the highest rate met and
// confirmed), valid when found. Its probes are the search's own runs at rates it chose, not points of their own.

/** A probe of a capacity search: a run whose config.capacity names its search and phase. */
export const isCapacityProbe = (run) => Boolean(run?.config?.capacity?.phase)

/**
 * A capacity.json record as a run.json-like object: status, config (with capacity: { objective }, and the sweep entry
 * it is), a summary whose
 * throughput is the capacity (the rate met with probability 0.5, its interval beside it as capacityInterval: an
 * independent search's estimate, so a cell's repeats are independent observations), latency and errors as measured
 * near it, the CPU of its last probe there, and a validity that is not ok when the search found no capacity (its
 * throughput then the highest rate met, if any).
 * @param {any} c a capacity record
 */
export function capacityAsRun (c) {
  const at = c.atCapacity
  const throughput = c.capacity ?? c.bounds?.lo ?? null
  const why = c.notes?.length ? c.notes.join('; ') : `no capacity found between ${c.bounds?.lo ?? '-'} and ${c.bounds?.hi ?? '-'} req/s`
  return {
    id: c.id,
    status: c.status ?? 'done',
    startedAt: c.createdAt ?? null,
    config: { ...c.config, capacity: { objective: c.objective }, ...(c.sweep ? { sweep: c.sweep } : {}) },
    summary: throughput === null ? null : { throughput, errorRate: at?.errorRate ?? null, latency: at?.latency ?? {} },
    capacityInterval: c.interval ?? null,
    cpu: at?.cpu ?? null,
    // what limited the server: read beyond the capacity, where the search missed
    diagnosis: c.limit ?? null,
    environment: c.environment ?? null,
    validity: c.confirmed ? { ok: true, flags: [] } : { ok: false, flags: [{ name: 'capacity-not-found', message: why }] }
  }
}

/**
 * Every run of the folders as the analyzer counts them: run.json files that are not capacity probes, and each
 * capacity search as one run; how many probes were set aside.
 * @param {Awaited<ReturnType<typeof import('../lib/run-files.js').readRunFiles>>} read
 * @returns {{ runs: { file: string, dir: string, run: any }[], probes: number }}
 */
export function runsAndSearches (read) {
  const runs = read.runs.filter(r => !isCapacityProbe(r.run))
  for (const { file, dir, capacity } of read.capacities) runs.push({ file, dir, run: capacityAsRun(capacity) })
  return { runs, probes: read.runs.length - runs.length + read.capacities.length }
}
