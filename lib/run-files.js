// The files runs, sweeps and calibrations leave on disk: their schemas and ids, atomic writes, folders made with a
// bound on time, and the one reader of run.json files that every command uses.
import { mkdir, readdir, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { NsError, badFlag } from './errors.js'
import { fail } from './messages.js'
import { withTimeout } from './with-timeout.js'

export const RUN_SCHEMA = 'nodescale.run/v1'
export const SWEEP_SCHEMA = 'nodescale.sweep/v1'
export const CALIBRATION_SCHEMA = 'nodescale.calibration/v1'
export const CAPACITY_SCHEMA = 'nodescale.capacity/v1'
export const LATENCY_SCHEMA = 'nodescale.latency/v1'
export const TIMELINE_SCHEMA = 'nodescale.timeline/v1'

/**
 * The JSON Schema (draft 2020-12) of each file, by its schema field, relative to the project's folder: a new version
 * of a file is a new schema name and a new schema file beside the old one (timeline.json before v1 had no schema field;
 * its schema takes that as v1).
 */
export const SCHEMA_FILES = Object.freeze({
  [RUN_SCHEMA]: 'schemas/run.v1.schema.json',
  [SWEEP_SCHEMA]: 'schemas/sweep.v1.schema.json',
  [LATENCY_SCHEMA]: 'schemas/latency.v1.schema.json',
  [TIMELINE_SCHEMA]: 'schemas/timeline.v1.schema.json'
})

/**
 * The files of a run's folder: run.json (its record), samples.jtl or samples.jtl.gz (every request, by --samples),
 * latency.json (the latency histograms per label, always), timeline.json (1 s CPU samples).
 */
export const RUN_FILES = Object.freeze({
  run: 'run.json',
  samples: 'samples.jtl',
  samplesGz: 'samples.jtl.gz',
  latency: 'latency.json',
  timeline: 'timeline.json'
})

/** The samples file each --samples value keeps (none: no per-request file, only latency.json). */
export const SAMPLES_FILES = Object.freeze({ jtl: RUN_FILES.samples, gz: RUN_FILES.samplesGz, none: null })
/** The file of a sweep's folder: its plan and the status of every run. */
export const SWEEP_FILE = 'sweep.json'

/**
 * The columns of a run's samples.jtl, in order: JMeter 5.6's default CSV JTL (what the drivers write, and what a JTL
 * without a header line is taken to hold).
 */
export const JTL_COLUMNS = Object.freeze(['timeStamp', 'elapsed', 'label', 'responseCode', 'responseMessage', 'threadName',
  'dataType', 'success', 'failureMessage', 'bytes', 'sentBytes', 'grpThreads', 'allThreads', 'URL', 'Latency', 'IdleTime',
  'Connect'])

/** How deep below a given folder run.json files are looked for (a sweep folder holds run folders, maybe in groups). */
const MAX_DEPTH = 8

/**
 * A sortable, readable run id: time, strategy, instances, the worker nodes when --nodes was given, and a random suffix
 * ("20261123-091900-hs4-2n-0466": hs x4 on 2 nodes).
 * @param {{ strategy: string, instances: number, nodes?: number }} config
 * @param {Date} [now]
 */
export function newRunId ({ strategy, instances, nodes }, now = new Date()) {
  return stampedId(`${strategy}${instances}${nodes ? `-${nodes}n` : ''}`, now)
}

/** `<yyyymmdd-hhmmss>-<name>-<4 hex>`: sorts by time, unique enough for folders made by one machine. */
export function stampedId (name, now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${name}-${randomBytes(2).toString('hex')}`
}

/**
 * Makes a folder and its missing parents one at a time. Never mkdir's recursive mode: Node 20's loops for ever on a
 * path under /proc, where a plain mkdir answers ENOENT at once.
 * @param {string} dir
 */
export async function makeDirs (dir) {
  const missing = []
  for (let cur = resolve(dir); ; cur = dirname(cur)) {
    const found = await stat(cur).catch(err => { if (err.code === 'ENOENT') return null; throw err })
    if (found) {
      if (!found.isDirectory()) throw Object.assign(new Error(`${cur} is not a folder`), { code: 'ENOTDIR' })
      break
    }
    missing.unshift(cur)
    if (dirname(cur) === cur) break
  }
  for (const d of missing) await mkdir(d).catch(err => { if (err.code !== 'EEXIST') throw err })
}

/**
 * Makes an output folder (and its parents) and writes a file in it, within a bound on time, before anything is started
 * that would write there later: a folder that cannot be made or written is bad input naming the flag.
 * @param {string} dir
 * @param {{ flag?: string, timeoutMs?: number }} [opts]
 */
export async function makeWritableDir (dir, { flag = '--out', timeoutMs = 5000 } = {}) {
  const probeFile = join(dir, `.nodescale-write-check-${process.pid}`)
  try {
    await withTimeout((async () => {
      await makeDirs(dir)
      await writeFile(probeFile, '')
      await rm(probeFile, { force: true })
    })(), timeoutMs)
  } catch (err) {
    const why = err.code === 'ETIMEDOUT' ? `no answer from the file system within ${timeoutMs} ms` : err.code ?? err.message
    throw badFlag(flag, `${dir} cannot be made or written to (${why}); give a folder you can write to`, { key: 'out', cause: err })
  }
}

/**
 * Writes JSON atomically (temp file + rename): a reader never sees a torn file. A write that fails (a full disk) leaves
 * the file as it was and no temp file behind.
 */
export async function writeJsonAtomic (path, data) {
  const tmp = `${path}.${process.pid}.tmp`
  try {
    await writeFile(tmp, JSON.stringify(data, null, 2) + '\n')
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {})
    throw err
  }
  await rename(tmp, path)
}

/**
 * True when an error, or one it was caused by, says the disk is full (ENOSPC, or EDQUOT: over a quota), also when it
 * came back from a child process as a message.
 * @param {any} err
 */
export function isNoSpace (err) {
  for (let e = err, depth = 0; e && depth < 8; e = e.cause, depth++) {
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'NS_ERR_NO_SPACE' || /\bENOSPC\b|no space left on device/i.test(e.message ?? '')) return true
  }
  return false
}

/**
 * Free bytes for an unprivileged writer on the file system that holds `dir` (statfs).
 * @param {string} dir
 */
export async function freeBytes (dir) {
  const s = await statfs(dir)
  return s.bavail * s.bsize
}

/**
 * A run's record as it starts (status running), every field of run.json present: what the run has not measured yet is
 * null until it has. docs/concepts/results.md describes each field.
 * @param {{ id: string, dir: string, config: object, environment: object, request: object }} start
 */
export function newRunRecord ({ id, dir, config, environment, request }) {
  const samples = SAMPLES_FILES[/** @type {any} */ (config).samples ?? 'jtl'] ?? null
  const head = { schema: RUN_SCHEMA, id, dir, status: 'running', startedAt: new Date().toISOString(), finishedAt: null }
  return {
    ...head,
    config,
    environment,
    request,
    load: null,
    summary: null,
    cpu: null,
    placement: [],
    degraded: null,
    validity: null,
    files: { samples, latency: RUN_FILES.latency, timeline: RUN_FILES.timeline },
    error: null
  }
}

/** A run.json object as nodescale writes it (its schema and a config); anything else is not one. */
export const isRunJson = (run) => run?.schema === RUN_SCHEMA && typeof run.config === 'object' && run.config !== null

/** The record of a capacity search (executor capacity): <search folder>/capacity.json beside its probes' folders. */
export const CAPACITY_FILE = 'capacity.json'
const isCapacityJson = (c) => c?.schema === CAPACITY_SCHEMA && typeof c.config === 'object' && c.config !== null

/**
 * Paths of every run.json (and capacity.json) under dir, in path order: at most 8 folders deep, hidden folders and
 * node_modules skipped.
 * @param {string} dir
 * @param {string[]} [names] the file names to find
 * @returns {Promise<string[]>}
 * @throws {NsError} NS_ERR_BAD_FILE when dir itself cannot be read
 */
export async function findRunFiles (dir, names = [RUN_FILES.run]) {
  const out = []
  const walk = async (at, depth) => {
    let entries
    try {
      entries = await readdir(at, { withFileTypes: true })
    } catch (err) {
      if (depth === 0) throw fail('FOLDER_UNREADABLE', { dir, why: err.code })
      return
    }
    for (const e of entries) {
      if (e.isFile() && names.includes(e.name)) out.push(join(at, e.name))
      else if (e.isDirectory() && depth < MAX_DEPTH && !e.name.startsWith('.') && e.name !== 'node_modules') await walk(join(at, e.name), depth + 1)
    }
  }
  await walk(dir, 0)
  return out.sort()
}

/** The bound of run.json, capacity.json and sweep.json as read here: a file over it is unreadable (docs/SECURITY.md) */
export const MAX_JSON_BYTES = 64 << 20

/**
 * Reads a JSON file of at most maxBytes (its size checked before it is read). Each failure is NS_ERR_BAD_FILE naming
 * the file: missing, too big, or not JSON (with the line of the syntax error where the parser says its position).
 * @param {string} file
 * @param {number} [maxBytes]
 * @returns {Promise<any>}
 */
export async function readJsonBounded (file, maxBytes = MAX_JSON_BYTES) {
  let text
  try {
    const { size } = await stat(file)
    if (size > maxBytes) throw fail('FILE_TOO_LARGE', { file, size, maxMiB: maxBytes >> 20 })
    text = await readFile(file, 'utf8')
  } catch (err) {
    if (err instanceof NsError) throw err
    throw fail('FILE_UNREADABLE', { file, why: err.code ?? err.message })
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    const at = /position (\d+)/.exec(err.message)
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : null
    throw fail('NOT_PARSED', { file, line, format: 'JSON', reason: err.message.split('\n')[0].slice(0, 200) })
  }
}

/**
 * Reads every run.json under the folders, whatever its status, and every capacity search's capacity.json.
 * @param {string[]} dirs
 * @returns {Promise<{ runs: { file: string, dir: string, run: any }[], capacities: { file: string, dir: string,
 *   capacity: any }[], unreadable: string[] }>} unreadable: files that are not JSON or not nodescale's
 */
export async function readRunFiles (dirs) {
  const runs = []
  const capacities = []
  const unreadable = []
  for (const dir of dirs) {
    for (const file of await findRunFiles(dir, [RUN_FILES.run, CAPACITY_FILE])) {
      const data = await readJsonBounded(file).catch(() => null)
      if (basename(file) === CAPACITY_FILE) {
        if (isCapacityJson(data)) capacities.push({ file, dir: dirname(file), capacity: data })
        else unreadable.push(file)
      } else if (isRunJson(data)) runs.push({ file, dir: dirname(file), run: data })
      else unreadable.push(file)
    }
  }
  return { runs, capacities, unreadable }
}

/**
 * The sweeps in a folder: the folder itself when it holds sweep.json, else every sweep.json below it (at most 8 folders
 * deep), each with its id, dates, status and experiment as its sweep.json says (null where it cannot be read).
 * @param {string} dir
 * @returns {Promise<{ dir: string, id: string | null, createdAt: string | null, updatedAt: string | null,
 *   status: string | null, experiment: string | null }[]>} empty when dir cannot be read or holds no sweep
 */
export async function findSweeps (dir) {
  const own = join(dir, SWEEP_FILE)
  const files = await stat(own).then(() => [own], () => findRunFiles(dir, [SWEEP_FILE]).catch(() => []))
  return Promise.all(files.map(async file => {
    const s = await readJsonBounded(file).catch(() => null)
    const text = (v) => (typeof v === 'string' ? v : null)
    return {
      dir: dirname(file),
      id: text(s?.id),
      createdAt: text(s?.createdAt),
      updatedAt: text(s?.updatedAt),
      status: text(s?.status),
      experiment: text(s?.experiment?.name)
    }
  }))
}

/**
 * The sweep folder a user meant by a folder: the folder itself when it holds sweep.json; the one sweep folder below
 * it when it holds one (`executor sweep --out results/sw` writes results/sw/<sweep-id>/); the folder as given when it
 * holds none (a folder of single runs, or not a folder: the caller says what it lacks).
 * @param {string} dir
 * @param {string} [flag] the flag that named the folder, for the message
 * @returns {Promise<string>}
 * @throws {NsError} NS_ERR_BAD_FILE when it holds several sweeps, listing each with its dates and status
 */
export async function sweepFolder (dir, flag) {
  const sweeps = await findSweeps(dir)
  if (sweeps.length <= 1) return sweeps[0]?.dir ?? dir
  const lines = sweeps.map(s => `  ${s.dir}  created ${s.createdAt ?? '?'}  updated ${s.updatedAt ?? '?'}  ${s.status ?? 'unreadable'}` +
    (s.experiment ? `  (${s.experiment})` : ''))
  throw fail('SWEEPS_SEVERAL', { flag, dir, count: sweeps.length, sweeps: lines })
}

/**
 * Each folder resolved by sweepFolder (a file among them is kept as it is).
 * @param {string[]} dirs
 * @param {string} [flag]
 */
export async function sweepFolders (dirs, flag) {
  const out = []
  for (const dir of dirs) out.push(await sweepFolder(dir, flag))
  return out
}
