// Every run of a sweep for the report, whatever its status: the run list, the per-core CPU table and the environment.
import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { mean } from 'simple-statistics'
import { readRunFiles, sweepFolders } from '../../lib/run-files.js'
import { invalidReason, validityOf } from '../run-validity.js'
import { runsAndSearches } from '../capacity-runs.js'
import { kindsNamed } from '../diagnosis/why-bends.js'
import { machinePart } from '../fingerprint.js'

/**
 * @typedef {{ id: string, dir: string, file: string, status: string, config: Record<string, any>, startedAt:
 *   string|null, throughput: number|null, p95: number|null, errorRate: number|null, reason: string|null, valid:
 *   boolean, invalidFlags: string[], cpu: Record<string, any>|null, diagnosis: Record<string, any>|null,
 *   environment: Record<string, any>|null }} RunEntry valid: false when its validity says it did not measure the
 *   server, invalidFlags: the names of the flags that made it so; diagnosis: what limited it (a capacity search's:
 *   beyond its capacity)
 */

const finite = v => (Number.isFinite(v) ? v : null)

/** Why a run did not finish, or why a finished one did not measure the server, in one line. */
function reasonOf (run) {
  if (run.status === 'done') return invalidReason(run)
  if (run.status === 'degraded') return degradedReason(run)
  const message = run.error?.message ? String(run.error.message).split('\n')[0] : null
  if (message) return run.error.code ? `${run.error.code}: ${message}` : message
  if (run.status === 'running') return 'no final status: still running, or its executor was killed'
  if (run.status === 'interrupted') return 'interrupted (Ctrl-C or a signal)'
  return `${run.status}, no reason recorded`
}

/**
 * Why a run is degraded, from run.json's `degraded` as the executor writes it (executor/degraded.js): each lost node
 * (label, else hostname), its clock time (UTC), how far into the steady window and why, and the errors meanwhile.
 * @param {any} run
 */
export function degradedReason (run) {
  const d = run.degraded ?? {}
  const lost = (d.nodes ?? []).map(n => `node ${n.label ?? n.node} lost at ${String(n.lostAt).slice(11, 19)} ` +
    `(${(n.lostAfterMs / 1000).toFixed(1)} s into the steady window; ${n.why})`)
  const errors = Number.isFinite(d.errorsDuringLoss) ? `; ${d.errorsDuringLoss} errors during the loss` : ''
  return `${lost.join(', ') || 'a node was lost during the run'}${errors}`
}

/**
 * Reads every run.json under the sweep folders (CSV files among the sources are skipped): finished or not. A capacity
 * search is one run (its capacity the throughput); its probes are counted, not listed.
 * @param {string[]} sources
 * @returns {Promise<{ runs: RunEntry[], unreadable: string[], probes: number, searches: SearchEntry[] }>}
 */
export async function readRunList (sources) {
  const dirs = []
  for (const src of sources) if ((await stat(src).catch(() => null))?.isDirectory()) dirs.push(src)
  const read = await readRunFiles(await sweepFolders(dirs))
  /** @type {RunEntry[]} */
  const runs = []
  const all = runsAndSearches(read)
  for (const { file, dir, run } of all.runs) {
    runs.push({
      id: String(run.id ?? basename(dir)),
      dir,
      file,
      status: String(run.status ?? 'unknown'),
      config: run.config,
      startedAt: run.startedAt ?? null,
      throughput: finite(run.summary?.throughput),
      p95: finite(run.summary?.latency?.p95),
      errorRate: finite(run.summary?.errorRate),
      reason: reasonOf(run),
      valid: validityOf(run).ok,
      invalidFlags: validityOf(run).invalid,
      cpu: run.status === 'done' && Array.isArray(run.cpu?.cores) && run.cpu.cores.length ? run.cpu : null,
      diagnosis: run.diagnosis?.bottleneck ? run.diagnosis : null,
      environment: run.environment && typeof run.environment === 'object' ? run.environment : null
    })
  }
  runs.sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)) || a.id.localeCompare(b.id))
  const searches = read.capacities.map(({ capacity: c }) => searchOf(c))
  searches.sort((a, b) => a.id.localeCompare(b.id))
  return { runs, unreadable: read.unreadable, probes: all.probes, searches }
}

/**
 * @typedef {{ id: string, config: any, objective: string, capacity: number|null,
 *   bounds: { lo: number|null, hi: number|null }, precision: number|null, probes: number, confirmed: boolean,
 *   p99: number|null, errorRate: number|null, notes: string[] }} SearchEntry
 */

/** One capacity search as the report lists it: what it found, how sure, and its latency at the capacity. */
function searchOf (/** @type {any} */ c) {
  return {
    id: String(c.id ?? basename(c.dir ?? '')),
    config: c.config ?? {},
    objective: String(c.objective ?? '-'),
    capacity: finite(c.capacity),
    bounds: { lo: finite(c.bounds?.lo), hi: finite(c.bounds?.hi) },
    precision: finite(c.precision),
    probes: Array.isArray(c.probes) ? c.probes.length : 0,
    confirmed: c.confirmed === true,
    p99: finite(c.atCapacity?.latency?.p99),
    errorRate: finite(c.atCapacity?.errorRate),
    notes: Array.isArray(c.notes) ? c.notes.map(String) : []
  }
}

/** The load level of a run as the multi-core study names it: closed-model connections or an open-model rate. */
export function loadLevelOf (config) {
  if (config.capacity?.objective) return `capacity at ${config.capacity.objective}`
  if (Number.isFinite(config.rate) && config.rate > 0) return `${config.rate} req/s`
  if (Number.isFinite(config.concurrency)) return `${config.concurrency} connections`
  return '-'
}

const avg = list => (list.length ? mean(list) : null)

/**
 * The multi-core study's per-core table (highest core, lowest core, difference, overall) per strategy and load
 * level, averaged over the repeats of each configuration; `cores` holds the mean usage of every core.
 * @param {RunEntry[]} runs
 */
export function cpuTable (runs) {
  const rows = new Map()
  for (const r of runs) {
    if (!r.cpu) continue
    const c = r.config
    // on several nodes the cores are those of every node: a node count is a configuration of its own
    const key = JSON.stringify([c.benchmark, c.strategy, c.instances, c.nodes ?? null, c.cpusPerInstance ?? null, loadLevelOf(c)])
    if (!rows.has(key)) {
      rows.set(key, {
        benchmark: c.benchmark ?? null,
        strategy: c.strategy ?? null,
        instances: c.instances ?? null,
        nodes: c.nodes ?? null,
        cpusPerInstance: c.cpusPerInstance ?? null,
        load: loadLevelOf(c),
        loadValue: c.rate ?? c.concurrency ?? 0,
        list: [],
        diagnoses: []
      })
    }
    rows.get(key).list.push(r.cpu)
    if (r.diagnosis) rows.get(key).diagnoses.push(r.diagnosis)
  }
  return [...rows.values()].map(({ list, diagnoses, ...row }) => {
    const coreIds = [...new Set(list.flatMap(cpu => cpu.cores.map(x => x.core)))].sort((a, b) => a - b)
    const pick = f => avg(list.map(f).filter(Number.isFinite))
    return {
      ...row,
      runs: list.length,
      source: [...new Set(list.map(cpu => cpu.source).filter(Boolean))].join(', ') || null,
      highest: pick(cpu => cpu.highest),
      lowest: pick(cpu => cpu.lowest),
      spread: pick(cpu => cpu.spread),
      overall: pick(cpu => cpu.overall),
      hostOverall: pick(cpu => cpu.host?.overall),
      idleCores: pick(idleOfGiven),
      given: list.some(cpu => Array.isArray(cpu.serverCores)),
      cores: coreIds.map(core => ({ core, usage: pick(cpu => cpu.cores.find(x => x.core === core)?.usage) })),
      ...bottleneckOf(diagnoses)
    }
  }).sort((a, b) => String(a.benchmark).localeCompare(String(b.benchmark)) || String(a.strategy).localeCompare(String(b.strategy)) ||
    (a.instances ?? 0) - (b.instances ?? 0) || (a.nodes ?? 0) - (b.nodes ?? 0) || a.loadValue - b.loadValue)
}

/**
 * A run's idle cores (the host's, as htop counts them) among those the server may use: every core, or its
 * `serverCores`; null without the host's per-core figures.
 * @param {any} cpu run.json's `cpu`
 */
function idleOfGiven (cpu) {
  const host = cpu.host?.cores
  if (!Array.isArray(host) || !host.length) return null
  const given = new Set(cpu.serverCores ?? host.map(c => c.core))
  return host.filter(c => given.has(c.core)).reduce((a, c) => a + Math.max(0, 100 - c.usage) / 100, 0)
}

/**
 * What limited a configuration's runs: the kind most of them name, and the mean ELU of each run's busiest instance.
 * @param {any[]} diagnoses
 */
function bottleneckOf (diagnoses) {
  if (!diagnoses.length) return { bottleneck: null, elu: null }
  const bottleneck = kindsNamed(diagnoses).kind
  const busiest = diagnoses.map(d => Math.max(...(d.instances ?? []).filter(i => i.role === 'worker').map(i => i.elu))).filter(Number.isFinite)
  return { bottleneck, elu: avg(busiest) }
}

/**
 * The distinct environments the runs ran in, each with how many runs it covers (one entry when the sweep ran on one
 * machine with one software stack).
 * @param {RunEntry[]} runs
 */
export function environmentsOf (runs) {
  const seen = new Map()
  for (const r of runs) {
    if (!r.environment) continue
    // one machine's runs are one environment though their fingerprints' per-run parts (quota, load, clock) differ
    const id = JSON.stringify({ ...r.environment, fingerprint: machinePart(r.environment.fingerprint) })
    if (!seen.has(id)) seen.set(id, { environment: r.environment, runs: 0 })
    seen.get(id).runs++
  }
  return [...seen.values()].sort((a, b) => b.runs - a.runs)
}
