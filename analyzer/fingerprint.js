// A run's environment fingerprint (run.json's environment.fingerprint, built by executor/environment.js) as the
// analyzer reads it, older run.json files included, and set side by side with a study's stated set-up: what differs
// between this machine and the paper's is marked row by row.
import { table } from './text-table.js'

/** What an older run.json (written before environment.fingerprint) says of a field it never recorded. */
export const NOT_RECORDED = 'not recorded: this run.json predates environment.fingerprint'

/** The fingerprint's parts that change from run to run of one machine (the rest is the machine's and software's). */
export const PER_RUN_KEYS = Object.freeze(['curMHz', 'quota', 'load'])

/**
 * The quotas a run asked for, as its config has them (the config itself stays in run.json's `config`).
 * @param {Record<string, any> | undefined} config
 * @returns {Record<string, any>}
 */
export function quotaOf (config) {
  if (!config) return { cpusPerInstance: null, memoryPerInstance: null, why: { cpusPerInstance: 'no run config', memoryPerInstance: 'no run config' } }
  const why = {}
  if (config.cpusPerInstance === undefined || config.cpusPerInstance === null) {
    why.cpusPerInstance = 'none asked (--cpus-per-instance): instances run on whole cores'
  }
  if (config.memoryPerInstance === undefined || config.memoryPerInstance === null) why.memoryPerInstance = 'none asked (--memory-per-instance): no memory limit'
  return {
    strategy: config.strategy ?? null,
    instances: config.instances ?? null,
    cpusPerInstance: config.cpusPerInstance ?? null,
    memoryPerInstance: config.memoryPerInstance ?? null,
    // --affinity (up: pinned to N cores, or as the OS schedules it) when the config has it
    ...(config.affinity !== undefined && { affinity: config.affinity }),
    see: 'config',
    ...(Object.keys(why).length && { why })
  }
}

/**
 * Where a run's load was generated, summarised from what it recorded (`load.generators`, `load.generator`, a pinned
 * `load.cpus`): how many generators, on which hosts or nodes and cores, whether one shared a machine with the server.
 * Before the load has run (`load` null) it says what the config asks for. The records stay in run.json's `load`.
 * @param {Record<string, any> | undefined} config
 * @param {Record<string, any> | null | undefined} load run.json's `load`
 * @param {Record<string, any>} env the run's environment (backend, host, cpus)
 * @param {any[]} [placement] run.json's `placement` (where the server ran)
 */
export function loadOf (config, load, env, placement) {
  const host = env?.host ?? null
  const serverHosts = [...new Set((placement ?? []).map(p => (typeof p.node === 'string' ? p.node : p.node?.hostname)).filter(Boolean))]
  /** @type {Record<string, string>} */
  const why = {}
  /** @type {Record<string, any>} */
  const out = { generators: null, where: null, hosts: null, cpus: null, sharesServerHost: null, driver: config?.driver ?? null }
  const gens = Array.isArray(load?.generators) ? load.generators : null
  if (gens) {
    const onNodes = gens.some(g => g.kind === 'agent' || g.node !== undefined)
    const cpus = onNodes ? [] : [...new Set(gens.flatMap(g => (Array.isArray(g.cpus) ? g.cpus : [])))].sort((a, b) => a - b)
    Object.assign(out, {
      generators: gens.length,
      where: onNodes ? 'load nodes' : 'this host',
      hosts: [...new Set(gens.map(g => g.node ?? g.host ?? g.name))],
      cpus: cpus.length ? cpus : null
    })
    if (out.cpus === null) why.cpus = onNodes ? 'each generator has a load node of its own (see load.generators)' : 'the generators were not pinned'
    out.see = 'load.generators'
  } else if (config?.loadNodes !== undefined || typeof config?.loadProcs === 'number') {
    // --load-procs auto (the default) settles on its count once the server runs: not a count before
    out.generators = config.loadNodes ?? config.loadProcs
    out.where = config.loadNodes !== undefined ? 'load nodes' : 'this host'
    why.hosts = why.cpus = 'the load has not run (or did not record its generators)'
  } else {
    out.generators = 1
    out.where = 'this host'
    out.hosts = host ? [host] : null
    if (!host) why.hosts = 'the environment has no host'
    out.cpus = Array.isArray(load?.cpus) && load.cpus.length ? load.cpus : null
    if (!out.cpus) why.cpus = `not pinned: any of this host's ${env?.cpus ?? '?'} cores`
  }
  // locally, the server's cores beside the generators' (run.json's load.sharing says the choice in a sentence)
  if (load?.sharing && typeof load.sharing === 'object') {
    Object.assign(out, { serverCpus: load.sharing.server ?? null, sharedCpus: load.sharing.shared ?? null, apart: load.sharing.apart ?? null })
    out.see = out.see ? `${out.see}, load.sharing` : 'load.sharing'
  }
  if (out.where === 'this host' && env?.backend === 'local') out.sharesServerHost = true
  else if (out.hosts && serverHosts.length) out.sharesServerHost = out.hosts.some(h => serverHosts.includes(h))
  else why.sharesServerHost = 'where the server ran is not known (no placement yet)'
  if (out.driver === null) why.driver = 'no run config'
  if (load?.generator) {
    out.generatorCores = load.generator.cores ?? null
    if (out.generatorCores === null) why.generatorCores = 'the generator\'s CPU was not measured (see load.generator)'
  }
  if (Object.keys(why).length) out.why = why
  return out
}

/**
 * A run's fingerprint: run.json's environment.fingerprint, or for an older run.json what its environment, config and
 * load say, every field it never recorded null with why.
 * @param {Record<string, any>} run a run.json object
 * @returns {Record<string, any>}
 */
export function fingerprintOf (run) {
  const env = run?.environment && typeof run.environment === 'object' ? run.environment : {}
  if (env.fingerprint && typeof env.fingerprint === 'object') return env.fingerprint
  const why = {}
  const fp = { version: 0 }
  const take = (key, value, note = NOT_RECORDED) => { fp[key] = value ?? null; if (fp[key] === null) why[key] = note }
  take('cpuModel', env.cpuModel)
  // environment.cpus is os.availableParallelism(): the cores the executor could use, the nearest an old run has
  take('logicalCores', env.cpus)
  for (const k of ['online', 'onlineCores', 'physicalCores', 'sockets', 'threadsPerCore', 'smt', 'governor', 'maxMHz', 'curMHz']) take(k, null)
  take('kernel', env.kernel)
  for (const k of ['virtual', 'hypervisor', 'cgroup']) take(k, null)
  take('node', env.node)
  take('v8', null)
  take('docker', env.docker, env.backend === 'local' ? 'local backend: no Docker engine ran the server' : NOT_RECORDED)
  return {
    ...fp,
    quota: quotaOf(run?.config),
    load: loadOf(run?.config, run?.load, env, run?.placement),
    why,
    notes: { logicalCores: 'environment.cpus: the cores the executor could use (older run.json)' }
  }
}

/**
 * The fingerprint without what changes from run to run (PER_RUN_KEYS): the same for every run of one machine and
 * software, so runs can be grouped by it.
 * @param {Record<string, any> | null | undefined} fp
 */
export function machinePart (fp) {
  if (!fp || typeof fp !== 'object') return fp
  const out = {}
  for (const [k, v] of Object.entries(fp)) if (!PER_RUN_KEYS.includes(k)) out[k] = v
  for (const side of ['why', 'notes']) {
    if (out[side]) out[side] = Object.fromEntries(Object.entries(out[side]).filter(([k]) => !PER_RUN_KEYS.includes(k)))
  }
  return out
}

/**
 * The fingerprint's machine facts as a report's environment rows (label, text; '-' where null): what the
 * environment's own fields (host, kernel, CPUs, CPU model, Node.js, Docker) do not say already.
 * @param {Record<string, any> | null | undefined} fp
 * @returns {[string, string][]}
 */
export function fingerprintFacts (fp) {
  if (!fp || typeof fp !== 'object') return []
  const or = (v) => (known(v) ? String(v) : '-')
  return [
    ['cores (logical, physical)', known(fp.logicalCores) || known(fp.physicalCores) ? coresText(fp) : '-'],
    ['SMT', smtText(fp) === '?' ? '-' : smtText(fp)],
    ['frequency', [known(fp.governor) ? `governor ${fp.governor}` : null, known(fp.maxMHz) ? `max ${fp.maxMHz} MHz` : null].filter(Boolean).join(', ') || '-'],
    ['virtualisation', fp.virtual === true ? `VM${fp.hypervisor ? ` (${fp.hypervisor})` : ''}` : fp.virtual === false ? 'none (bare metal)' : '-'],
    ['OS', or(fp.distro)],
    ['cgroup', or(fp.cgroup)],
    ['V8', or(fp.v8)]
  ]
}

/**
 * A study's set-up as its paper states it, each field typed by the caller (text, a number, a boolean; null or left
 * out when the paper does not say).
 * @typedef {{ name?: string, machine?: any, cores?: any, smt?: any, os?: any, node?: any, docker?: any, load?: any,
 *   quota?: any }} StudySetup
 */

/**
 * The rows of this machine against a study's set-up.
 * `differs`: true (≠), false (=), or null (?: the study does not say, or the two cannot be compared) with `why`.
 * Rules: machine and os: every word of the study's text (versions as prefixes: 18.04 matches 18.04.3) is in ours;
 * cores: our logical count among the study's numbers; smt: on/off; node, docker: major versions; load: whether the
 * generator shared the server's machine (the study's text: "same machine", "separate machine"); quota: CPUs per
 * instance, or none.
 * @param {Record<string, any>} fp a fingerprint (fingerprintOf)
 * @param {StudySetup} setup
 * @returns {{ row: string, label: string, ours: string, theirs: string, differs: boolean | null, why?: string }[]}
 */
export function fingerprintRows (fp, setup) {
  const rows = []
  for (const [row, label, oursOf, compare] of ROWS) {
    const stated = setup?.[row]
    const ours = oursOf(fp ?? {})
    const theirs = stated === undefined || stated === null || stated === '' ? '-' : String(stated)
    if (theirs === '-') { rows.push({ row, label, ours, theirs, differs: null, why: 'the study does not say' }); continue }
    const verdict = compare(fp ?? {}, stated)
    rows.push(typeof verdict === 'boolean' ? { row, label, ours, theirs, differs: verdict } : { row, label, ours, theirs, differs: null, why: verdict })
  }
  return rows
}

/**
 * A short side-by-side text of this machine and a study's set-up: one line a row, ≠ where they differ, = where they
 * agree, ? where the study does not say or the two cannot be compared (the reason in the last column).
 * @param {Record<string, any>} fp
 * @param {StudySetup} setup
 * @returns {string[]}
 */
export function fingerprintLines (fp, setup) {
  const rows = fingerprintRows(fp, setup)
  const mark = (d) => (d === true ? '≠' : d === false ? '=' : '?')
  const body = table(['', '', 'this machine', setup?.name ?? 'study'],
    rows.map(r => [mark(r.differs), r.label, r.ours, r.theirs + (r.why ? ` (${r.why})` : '')]))
  const n = rows.filter(r => r.differs === true).length
  return [...body.split('\n'), `${n} of ${rows.length} rows differ${n ? `: ${rows.filter(r => r.differs === true).map(r => r.label).join(', ')}` : ''}`]
}

// ---- the rows: how ours is said and how it is compared with the study's

const known = (v) => v !== null && v !== undefined
const show = (v, unit = '') => (known(v) ? `${v}${unit}` : '?')

function machineText (fp) {
  const parts = [fp.cpuModel ?? 'CPU model ?']
  if (fp.virtual === true) parts.push(`VM${fp.hypervisor ? ` (${fp.hypervisor})` : ''}`)
  else if (fp.virtual === false) parts.push('bare metal')
  if (known(fp.governor)) parts.push(`governor ${fp.governor}`)
  if (known(fp.maxMHz)) parts.push(`max ${fp.maxMHz} MHz`)
  return parts.join(', ')
}

function coresText (fp) {
  const parts = [`${show(fp.logicalCores)} logical`, `${show(fp.physicalCores)} physical`]
  if (known(fp.onlineCores) && fp.onlineCores !== fp.logicalCores) parts.push(`${fp.onlineCores} online`)
  return parts.join(', ')
}

function smtText (fp) {
  if (fp.smt === true) return `on (${fp.threadsPerCore} threads a core)`
  return fp.smt === false ? 'off' : '?'
}

function osText (fp) {
  return [fp.distro, known(fp.kernel) ? `Linux ${fp.kernel}` : null, known(fp.cgroup) ? `cgroup ${fp.cgroup}` : null].filter(Boolean).join(', ') || '?'
}

function loadText (fp) {
  const l = fp.load
  if (!l) return '?'
  const where = l.where === 'load nodes' ? `on ${l.hosts ? l.hosts.join(', ') : 'load nodes'}` : 'on this host'
  const share = l.sharesServerHost === true ? 'with the server' : l.sharesServerHost === false ? 'apart from the server' : ''
  const cpus = l.cpus ? `cores ${l.cpus.join(',')}${l.apart === true ? ' (off the server\'s)' : ''}` : l.where === 'this host' ? 'unpinned' : ''
  return [`${show(l.generators)} generator${l.generators === 1 ? '' : 's'} ${where}`, share, cpus, l.driver].filter(Boolean).join(', ')
}

function quotaText (fp) {
  const q = fp.quota
  if (!q) return '?'
  const parts = []
  if (known(q.cpusPerInstance)) parts.push(`${q.cpusPerInstance} CPU an instance`)
  if (known(q.memoryPerInstance)) parts.push(`${Math.round(q.memoryPerInstance / 2 ** 20)} MiB an instance`)
  return parts.join(', ') || 'none'
}

const WORD = /[a-z0-9]+(?:[.-][a-z0-9]+)*/g
const FILLER = new Set(['r', 'tm', 'cpu', 'processor', 'with', 'and', 'the', 'a', 'of', 'on', 'ghz', 'mhz', 'x86', '64', 'x86-64', 'x64'])

/** Every word of the study's text is in ours (a version as a prefix of ours); false otherwise. */
function wordsIn (ours, theirs) {
  /** @type {string[]} */
  const have = String(ours).toLowerCase().match(WORD) ?? []
  const want = (String(theirs).toLowerCase().replace(/\((r|tm)\)/g, ' ').match(WORD) ?? []).filter(w => !FILLER.has(w))
  if (!want.length) return 'nothing to compare in the study\'s text'
  return !want.every(w => have.some(h => h === w || (/^\d/.test(w) && h.startsWith(`${w}.`))))
}

const majorOf = (v) => { const m = /(\d+)(?:\.\d+)*/.exec(String(v)); return m ? Number(m[1]) : null }

function compareMajor (ours, theirs, what) {
  if (!known(ours)) return `our ${what} version is not known`
  const a = majorOf(ours)
  const b = majorOf(theirs)
  if (b === null) return `no version in the study's "${theirs}"`
  return a !== b
}

/** A study's yes/no in words: true, false, or null when it says neither. */
function yesNo (v) {
  if (typeof v === 'boolean') return v
  const s = String(v).toLowerCase()
  if (/^(on|yes|true|enabled?|ht|hyper-?threading|smt)\b/.test(s)) return true
  if (/^(off|no|false|disabled?|none)\b/.test(s)) return false
  return null
}

/** @type {[string, string, (fp: any) => string, (fp: any, theirs: any) => boolean | string][]} */
const ROWS = [
  ['machine', 'machine', machineText, (fp, t) => (known(fp.cpuModel) ? wordsIn(machineText(fp), t) : 'our CPU model is not known')],
  ['cores', 'cores', coresText, (fp, t) => {
    if (!known(fp.logicalCores)) return 'our core count is not known'
    const nums = typeof t === 'number' ? [t] : (String(t).match(/\d+/g) ?? []).map(Number)
    return nums.length ? !nums.includes(fp.logicalCores) : `no count in the study's "${t}"`
  }],
  ['smt', 'SMT', smtText, (fp, t) => {
    const theirs = yesNo(t)
    if (theirs === null) return `the study's "${t}" says neither on nor off`
    return known(fp.smt) ? fp.smt !== theirs : 'ours is not known'
  }],
  ['os', 'OS', osText, (fp, t) => (known(fp.kernel) || known(fp.distro) ? wordsIn(osText(fp), t) : 'our OS is not known')],
  ['node', 'Node.js', (fp) => `${show(fp.node)}${known(fp.v8) ? ` (V8 ${fp.v8})` : ''}`, (fp, t) => compareMajor(fp.node, t, 'Node')],
  ['docker', 'Docker', (fp) => (known(fp.docker) ? String(fp.docker) : 'none'), (fp, t) => {
    if (yesNo(t) === false) return known(fp.docker)
    if (!known(fp.docker)) return fp.why?.docker?.startsWith('local backend') ? true : 'our Docker version is not known'
    return compareMajor(fp.docker, t, 'Docker')
  }],
  ['load', 'load generator', loadText, (fp, t) => {
    const s = String(t).toLowerCase()
    const theirs = typeof t === 'boolean'
      ? t
      : /\b(separate|another|other|different|dedicated|remote|apart)\b/.test(s) ? false : /\b(same|shared|local|together)\b/.test(s) ? true : null
    if (theirs === null) return `the study's "${t}" says neither the same machine nor another`
    const ours = fp.load?.sharesServerHost
    return known(ours) ? ours !== theirs : 'where ours ran is not known'
  }],
  ['quota', 'quota', quotaText, (fp, t) => {
    const ours = fp.quota?.cpusPerInstance ?? null
    if (yesNo(t) === false || t === 0) return ours !== null
    const n = typeof t === 'number' ? t : Number((/\d+(?:\.\d+)?/.exec(String(t)) ?? [])[0])
    if (!Number.isFinite(n)) return `no CPUs an instance in the study's "${t}"`
    return ours === null ? true : Math.abs(ours - n) > 1e-9
  }]
]
