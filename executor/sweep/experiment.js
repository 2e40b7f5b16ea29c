// Experiment files: a study's grid in YAML, validated (every key, every value, with its line) before anything runs.
import { readFile, stat } from 'node:fs/promises'
import { basename, dirname, extname, resolve } from 'node:path'
import { loadYamlWithLines } from './yaml-lines.js'
import { NsError } from '../../lib/errors.js'
import { fail } from '../../lib/messages.js'
import { checkOption, keyOf, readOption, typeProblem } from '../../lib/options.js'
import { EXPERIMENT_OPTIONS } from '../../lib/run-options.js'
import { STRATEGIES, strategyOf } from '../../lib/strategies.js'
import { X_FIELDS } from '../../analyzer/points.js'
import { SPENDINGS, cellsNeeded, checkQuestion } from '../../analyzer/stats/adaptive.js'
import { sideOf } from '../../analyzer/stats/adaptive-text.js'
import { CAPACITY_SEARCH_OPTIONS } from '../capacity/capacity.js'
import { LEVEL_RE, isMap, checkKeys, stringList, byStrategy, wholeNumbers, concurrencyValues, rateValues } from './experiment-values.js'

/**
 * An experiment file's bounds (docs/SECURITY.md, "Bounded parsers"): its text, and its values with every YAML alias
 * expanded (what a message that quotes a value, or a run's config, would hold: a "billion laughs" file is refused here,
 * before anything expands it), and how deep they nest. Past any, NS_ERR_BAD_FILE naming the file and the line.
 */
export const MAX_EXPERIMENT_BYTES = 1 << 20
export const MAX_EXPERIMENT_VALUES = 100_000
export const MAX_EXPERIMENT_DEPTH = 64

/**
 * How many values `v` holds with its aliases expanded (a shared object counted each time it is used), memoised by
 * object, so the count costs one visit per object however large the expansion: Infinity past the bound or the depth
 * (a cycle, which an alias to an enclosing anchor makes, is past the depth).
 * @param {unknown} v
 * @param {Map<object, number>} seen
 */
function expandedValues (v, seen, depth = 0) {
  if (typeof v !== 'object' || v === null) return 1
  if (depth > MAX_EXPERIMENT_DEPTH) return Infinity
  const known = seen.get(v)
  if (known !== undefined) return known
  let n = 1
  for (const x of Object.values(v)) {
    n += expandedValues(x, seen, depth + 1)
    if (n > MAX_EXPERIMENT_VALUES) break
  }
  seen.set(v, n)
  return n
}

/** A run option's own help line, as an experiment key's description. */
const described = (key) => [].concat(EXPERIMENT_OPTIONS[key].help)[0].replaceAll('{default}', String(EXPERIMENT_OPTIONS[key].default))

/** The grid's axes and forms: keys whose values are lists, ranges or per-strategy maps of run values (read below). */
const GRID_KEYS = Object.freeze({
  benchmark: 'one benchmark name',
  benchmarks: 'a list of benchmark names',
  app: 'a custom app module, relative to this file',
  params: 'benchmark options: { key: value } for every benchmark, or { benchmark: { key: value } }',
  strategies: 'a list of up | cm | pm2 | hs',
  instances: 'a whole number, a list, a range "1..4", or a map from strategy to one of those',
  'instances-per-node': 'instead of instances: instances per worker node, the total being this x nodes (a number, a list, a range, or a map from strategy)',
  nodes: 'Swarm worker nodes, each value a run with --nodes K: a whole number, a list, a range "1..4", or a map from strategy (only hs spreads over nodes)',
  concurrency: 'connections: a number, a list, relaxed | relaxed*cores | exhausted | exhausted*cores (with calibration), or a map from strategy',
  rate: 'requests/s (open model): a number, a list, or a map from strategy',
  load: 'instead of concurrency or rate: capacity (each run a capacity search at the objective, slo), ' +
    `or { capacity: { ${CAPACITY_SEARCH_OPTIONS.map(o => o.flag).join(', ')} } } (executor capacity --help)`
})

/**
 * The run options an experiment sets once for every run (the option table's experiment column, but the grid's axes):
 * one value each, its form checked when the file is read and its range with each run's config.
 */
export const SETTING_KEYS = Object.freeze(Object.keys(EXPERIMENT_OPTIONS).filter(k => !(k in GRID_KEYS)))

/** Top-level keys and what each one takes (the help text for a bad key), in the order a file usually has them. */
export const EXPERIMENT_KEYS = Object.freeze({
  name: 'a name for the sweep folder (letters, digits, - and _)',
  description: 'free text',
  backend: described('backend'),
  ...GRID_KEYS,
  ...Object.fromEntries(SETTING_KEYS.filter(k => k !== 'backend').map(k => [k, described(k)])),
  repeats: 'how many times the grid runs (a whole number >= 1)',
  order: 'shapes (one deployment per shape, its runs shuffled per repeat) | blocks (every repeat a full block in its own random order)',
  calibration: 'a calibration file (executor calibrate --out FILE), relative to this file; made first when missing',
  calibrate: 'how to make a missing calibration file: { strategy, instances, duration, warmup, confirm, max-concurrency, max-probes }',
  analysis: '{ fit: usl | amdahl | both | none, x: instances | concurrency | nodes, cpu-table: true | false, correlations: true | false }',
  question: 'what executor sweep --until answered decides: { compare: [a, b] (two strategies; in a throughput question cm@2 is a ' +
    'side at an N of its own), quantity: throughput | speedup, at: N, from: N (speedup\'s base, default 1), ' +
    'margin: 5% (the ratio within it is "equivalent"), precision: 10% (instead of margin: the ratio measured to ±10%, no test), ' +
    'or estimate: cm@4 with precision: 5% (one cell\'s throughput measured to ±5%), ' +
    'or knee: cm with between: [1, 16] and precision: 20% (where cm\'s throughput peaks, the USL\'s N*, measured at any N within the bounds), ' +
    'spending: obrien-fleming | pocock (how alpha is spent over the looks: little early, or evenly; default obrien-fleming) }',
  profiles: 'named overrides of these keys: { smoke: {...}, default: {...}, full: {...} }'
})
const NOT_IN_PROFILES = ['name', 'description', 'question', 'profiles']
export const PROFILE_NAMES = Object.freeze(['smoke', 'default', 'full', 'thesis-machine', 'verdict', 'adaptive', 'adaptive-thesis-machine'])
export const ORDERS = Object.freeze(['shapes', 'blocks'])
const FITS = ['usl', 'amdahl', 'both', 'none']
const CALIBRATE_KEYS = ['strategy', 'instances', 'duration', 'warmup', 'confirm', 'max-concurrency', 'max-probes']
const ANALYSIS_KEYS = ['fit', 'x', 'cpu-table', 'correlations']
const QUESTION_KEYS = ['compare', 'estimate', 'knee', 'between', 'quantity', 'at', 'from', 'margin', 'precision', 'spending']
/** Keys that say the same thing two ways: a profile that sets one replaces the other of the file. */
const ALTERNATIVES = [['benchmark', 'benchmarks'], ['concurrency', 'rate', 'load'], ['instances', 'instances-per-node']]

/**
 * A checked experiment: its grid's axes per strategy (each value with its YAML path), its settings (run values by
 * config key, also as fields of their own: duration, warmup, cpusPerInstance, driver, backend, lb, readyTimeout), and
 * lineOf.
 * @typedef {Record<string, any> & { file: string, settings: Record<string, any>, lineOf: (key: string, sub?:
 *   (string|number)[]) => number }} Experiment
 */

/**
 * Reads and validates an experiment file with a profile applied. Static checks only: nothing is deployed.
 * @param {string} file
 * @param {{ profile?: string, cwd?: string }} [opts]
 * @returns {Promise<Experiment>}
 */
export async function loadExperiment (file, { profile, cwd = process.cwd() } = {}) {
  const path = resolve(cwd, file)
  let text
  try {
    const { size } = await stat(path)
    if (size > MAX_EXPERIMENT_BYTES) {
      throw fail('EXPERIMENT_TOO_LARGE', { file, size, maxKiB: MAX_EXPERIMENT_BYTES >> 10 })
    }
    text = await readFile(path, 'utf8')
  } catch (err) {
    if (err instanceof NsError) throw err
    throw fail('EXPERIMENT_UNREADABLE', { file, why: err.code ?? err.message })
  }
  return parseExperiment(text, { file, path, profile })
}

/**
 * Validates experiment YAML text. Errors are NS_ERR_BAD_FILE (exit 2): "<file>:<line>: <key>: <what is wrong>; allowed:
 * ...".
 * @param {string} text
 * @param {{ file: string, path?: string, profile?: string }} opts
 * @returns {Experiment}
 */
export function parseExperiment (text, { file, path = resolve(file), profile }) {
  if (text.length > MAX_EXPERIMENT_BYTES) throw fail('EXPERIMENT_TOO_LARGE', { file, maxKiB: MAX_EXPERIMENT_BYTES >> 10 })
  const loaded = loadYamlWithLines(text, file)
  const lineOf = loaded.lineOf
  const data = /** @type {any} */ (loaded.data)
  /** @type {Invalid} */
  const invalid = (where, message) => fail('LINE_INVALID', { file, line: lineOf(where), reason: message })
  checkExpansion(data, invalid)
  if (!isMap(data)) throw invalid([], 'an experiment file is a YAML mapping of keys (strategies, instances, concurrency, ...)')
  checkKeys(data, [], Object.keys(EXPERIMENT_KEYS), invalid)
  const profiles = data.profiles ?? {}
  checkProfiles(profiles, invalid)
  const chosen = chosenProfile(profile, profiles, file)
  const { merged, from } = withProfile(data, profiles, chosen)
  /** @type {Bad} */
  const bad = (key, sub, msg) => invalid([...from(key), ...(sub ?? [])], `${key}: ${msg}`)

  const name = merged.name === undefined ? basename(path, extname(path)) : String(merged.name)
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(name)) throw bad('name', [], `"${name}" is not a name (letters, digits, - and _)`)
  const strategies = parseStrategies(merged, bad)
  const { benchmarks, app } = parseBenchmarks(merged, path, bad)
  const { instances, instancesKey, perNode, nodes } = parseInstances(merged, strategies, bad, () => lineOf(from('backend')))
  const { capacity, loadKey, loads, usesLevels } = parseLoads(merged, strategies, bad)
  const calibrate = parseCalibration(merged, bad, invalid, from('calibrate'))
  const { repeats, order } = parseRepeats(merged, bad)
  const analysis = parseAnalysis(merged.analysis, bad, Boolean(nodes))
  const question = parseQuestion(data.question, invalid)
  const params = parseParams(merged.params, benchmarks, bad)
  const settings = parseSettings(merged, path, bad)
  return {
    file,
    path,
    text,
    name,
    description: merged.description === undefined ? undefined : String(merged.description),
    profile: chosen,
    strategies,
    benchmarks,
    app,
    params,
    instances,
    instancesKey,
    perNode,
    nodes,
    loadKey,
    loads,
    /** each run a capacity search with these settings (boundary, maxProbes), or null */
    capacity,
    repeats,
    order,
    /**
     * The settings' run values by config key (duration, warmup, cpusPerInstance, driver, backend, lb, readyTimeout).
     */
    settings,
    ...settings,
    calibration: merged.calibration === undefined ? undefined : resolve(dirname(path), merged.calibration),
    calibrate: { ...calibrate },
    analysis,
    /** what --until answered decides (checked against this profile's grid by questionCells), or null */
    question,
    /** The line of a key as it applies under the chosen profile, for later messages (cells, backend checks). */
    lineOf: (key, sub = []) => lineOf([...from(key), ...sub]),
    usesLevels
  }
}

/**
 * @typedef {(where: (string|number)[], message: string) => Error} Invalid a refusal at a YAML path's line
 * @typedef {(key: string, sub?: (string|number)[], msg?: string) => Error} Bad a refusal of a key's value (at the
 *   chosen profile's line when the profile sets the key), its message led by the key
 */

/**
 * Refuses a file whose values, its aliases expanded, are more than MAX_EXPERIMENT_VALUES or nest deeper than
 * MAX_EXPERIMENT_DEPTH, at the line of the top-level key that passes the bound.
 * @param {any} data @param {Invalid} invalid
 */
function checkExpansion (data, invalid) {
  const seen = new Map()
  let values = 0
  for (const key of isMap(data) ? Object.keys(data) : []) {
    values += expandedValues(data[key], seen)
    if (values > MAX_EXPERIMENT_VALUES) {
      throw invalid([key], `${key}: more than ${MAX_EXPERIMENT_VALUES} values once its aliases are expanded, or nested over ${MAX_EXPERIMENT_DEPTH} deep`)
    }
  }
}

/**
 * The `profiles` key: a mapping of profile names to mappings of the keys they override (any but NOT_IN_PROFILES).
 * @param {any} profiles @param {Invalid} invalid
 */
function checkProfiles (profiles, invalid) {
  if (!isMap(profiles)) throw invalid(['profiles'], `profiles: ${EXPERIMENT_KEYS.profiles}`)
  for (const [name, over] of Object.entries(profiles)) {
    if (!PROFILE_NAMES.includes(name)) throw invalid(['profiles', name], `profiles: "${name}" is not a profile; allowed: ${PROFILE_NAMES.join(', ')}`)
    if (!isMap(over)) throw invalid(['profiles', name], `profiles.${name}: a mapping of keys to override`)
    checkKeys(over, ['profiles', name], Object.keys(EXPERIMENT_KEYS).filter(k => !NOT_IN_PROFILES.includes(k)), invalid)
  }
}

/**
 * The profile that applies (--profile, default when none): a known name, and one of the file's unless it is default.
 * @param {string|undefined} profile @param {Record<string, any>} profiles @param {string} file
 */
function chosenProfile (profile, profiles, file) {
  const chosen = profile ?? 'default'
  if (!PROFILE_NAMES.includes(chosen)) throw fail('VALUE_NOT_ALLOWED', { flag: '--profile', value: chosen, allowed: PROFILE_NAMES })
  if (profile && profile !== 'default' && !profiles[profile]) {
    throw fail('PROFILE_NOT_IN_FILE', { file, profile, profiles: ['default', ...Object.keys(profiles).filter(p => p !== 'default')] })
  }
  return chosen
}

/**
 * The file's keys with the chosen profile's over them (a profile that sets one of ALTERNATIVES replaces the others),
 * and `from(key)`: the YAML path a key's value came from (the profile's when the profile overrides it).
 * @param {Record<string, any>} data @param {Record<string, any>} profiles @param {string} chosen
 */
function withProfile (data, profiles, chosen) {
  const over = profiles[chosen] ?? {}
  const merged = { ...data }
  for (const pair of ALTERNATIVES) if (pair.some(k => k in over)) for (const k of pair) delete merged[k]
  Object.assign(merged, over)
  /** @param {string} key */
  const from = key => (profiles[chosen] && key in profiles[chosen] ? ['profiles', chosen, key] : [key])
  return { merged, from }
}

/** The `strategies` key (every strategy when absent): known ones, each once. @param {any} merged @param {Bad} bad */
function parseStrategies (merged, bad) {
  const strategies = stringList(merged.strategies ?? STRATEGIES, 'strategies', bad)
  for (const [i, s] of strategies.entries()) {
    if (!STRATEGIES.includes(s)) {
      throw bad('strategies', Array.isArray(merged.strategies) ? [i] : [], `"${s}" is not a strategy; allowed: ${STRATEGIES.join(', ')}`)
    }
  }
  if (new Set(strategies).size !== strategies.length) throw bad('strategies', [], 'a strategy is listed twice')
  return strategies
}

/**
 * What the server runs: `benchmark` or `benchmarks` (one undefined benchmark when neither), and `app`, a module
 * relative to the file (never a cmd: program).
 * @param {any} merged @param {string} path @param {Bad} bad
 */
function parseBenchmarks (merged, path, bad) {
  if (merged.benchmark !== undefined && merged.benchmarks !== undefined) throw bad('benchmarks', [], 'give benchmark (one) or benchmarks (a list), not both')
  const benchKey = merged.benchmarks !== undefined ? 'benchmarks' : 'benchmark'
  const benchmarks = merged[benchKey] === undefined ? [undefined] : stringList(merged[benchKey], benchKey, bad)
  const app = merged.app === undefined ? undefined : resolve(dirname(path), String(merged.app))
  if (merged.app !== undefined && String(merged.app).startsWith('cmd:')) {
    throw bad('app', [], 'cmd: programs are not supported in experiment files; write a small app module instead')
  }
  return { benchmarks, app }
}

/**
 * The instances axis per strategy (`instances`, or `instances-per-node` with nodes) and the nodes axis (null without
 * one), checked by checkNodes.
 * @param {any} merged @param {string[]} strategies @param {Bad} bad
 * @param {() => number} backendLine the line of the backend key, for checkNodes's message
 */
function parseInstances (merged, strategies, bad, backendLine) {
  if (merged.instances !== undefined && merged['instances-per-node'] !== undefined) {
    throw bad('instances-per-node', [], 'give instances (the total) or instances-per-node (times nodes), not both')
  }
  const perNode = merged['instances-per-node'] !== undefined
  if (perNode && merged.nodes === undefined) throw bad('instances-per-node', [], 'needs nodes (e.g. nodes: 1..4): the total is instances-per-node x nodes')
  const instancesKey = perNode ? 'instances-per-node' : 'instances'
  const instances = byStrategy(instancesKey, merged[instancesKey] ?? 1, strategies, bad, wholeNumbers(EXPERIMENT_KEYS[instancesKey]))
  const nodes = merged.nodes === undefined ? null : byStrategy('nodes', merged.nodes, strategies, bad, wholeNumbers(EXPERIMENT_KEYS.nodes))
  if (nodes) checkNodes(nodes, merged, { strategies, bad, backendLine: backendLine() })
  return { instances, instancesKey, perNode, nodes }
}

/**
 * The load axis per strategy: `concurrency` (closed model), `rate` (open model) or `load` (a capacity search, whose
 * settings are `capacity`; one undefined value per strategy when none is given); usesLevels when a concurrency is a
 * calibration level, which needs a calibration file.
 * @param {any} merged @param {string[]} strategies @param {Bad} bad
 */
function parseLoads (merged, strategies, bad) {
  if (merged.concurrency !== undefined && merged.rate !== undefined) {
    throw bad('rate', [], 'cannot be combined with concurrency: choose the closed model (concurrency) or the open model (rate)')
  }
  for (const k of ['concurrency', 'rate']) {
    if (merged.load !== undefined && merged[k] !== undefined) throw bad('load', [], `cannot be combined with ${k}: a capacity search chooses its rates`)
  }
  const capacity = merged.load === undefined ? null : parseCapacity(merged.load, bad)
  const loadKey = capacity ? 'capacity' : merged.rate !== undefined ? 'rate' : 'concurrency'
  const loads = capacity || merged[loadKey] === undefined
    ? Object.fromEntries(strategies.map(s => [s, [{ value: undefined, path: [] }]]))
    : byStrategy(loadKey, merged[loadKey], strategies, bad, loadKey === 'rate' ? rateValues : concurrencyValues(EXPERIMENT_KEYS.concurrency))
  const usesLevels = Object.values(loads).flat().some(l => typeof l.value === 'string')
  if (usesLevels && merged.calibration === undefined) {
    throw bad('concurrency', [], 'relaxed and exhausted levels need a calibration file: add "calibration: FILE" (executor calibrate --out FILE makes one)')
  }
  return { capacity, loadKey, loads, usesLevels }
}

/**
 * The `calibration` file's name and `calibrate`, how to make it when it is missing (a mapping of CALIBRATE_KEYS).
 * @param {any} merged @param {Bad} bad @param {Invalid} invalid @param {(string|number)[]} at calibrate's YAML path
 */
function parseCalibration (merged, bad, invalid, at) {
  if (merged.calibration !== undefined && typeof merged.calibration !== 'string') throw bad('calibration', [], `${EXPERIMENT_KEYS.calibration}`)
  const calibrate = merged.calibrate ?? {}
  if (!isMap(calibrate)) throw bad('calibrate', [], EXPERIMENT_KEYS.calibrate)
  checkKeys(calibrate, at, CALIBRATE_KEYS, invalid, 'calibrate.')
  return calibrate
}

/** How many times the grid runs (`repeats`, 1 to 1000) and in which `order`. @param {any} merged @param {Bad} bad */
function parseRepeats (merged, bad) {
  const repeats = merged.repeats ?? 1
  if (!Number.isInteger(repeats) || repeats < 1 || repeats > 1000) {
    throw bad('repeats', [], `${JSON.stringify(repeats)} is not allowed; allowed: a whole number >= 1 and <= 1000`)
  }
  const order = merged.order ?? 'shapes'
  if (!ORDERS.includes(order)) throw bad('order', [], `"${order}" is not allowed; one of: ${ORDERS.join(', ')}`)
  return { repeats, order }
}

/**
 * Each run's value of a setting (SETTING_KEYS) by config key: its form here, its range when each run's config is
 * checked (naming the strategy); a server's entry file and a body file relative to the experiment file.
 * @param {any} merged @param {string} path @param {Bad} bad
 */
function parseSettings (merged, path, bad) {
  /** @type {Record<string, any>} */
  const settings = {}
  for (const key of SETTING_KEYS.filter(k => merged[k] !== undefined)) {
    const row = EXPERIMENT_OPTIONS[key]
    let value = merged[key]
    // a setting with a text form of its own (slo: p99=50ms,errors=0.1%) is read as its flag is
    if (row.fromText && typeof value === 'string') {
      try { value = readOption(row, value) } catch (err) { throw bad(key, [], err.details?.reason ?? err.message) }
    }
    const problem = typeProblem(row, value)
    if (problem) throw bad(key, [], problem)
    settings[keyOf(row)] = value
  }
  // a server's entry file and a body file are relative to this file, as an app is (an entry inside an image is not)
  if (settings.server !== undefined && settings.image === undefined) settings.server = resolve(dirname(path), String(settings.server))
  if (settings.body !== undefined) settings.body = resolve(dirname(path), String(settings.body))
  return settings
}

/**
 * Nodes need a swarm, and only hs spreads its instances over them: up, cm and pm2 run one replica, on one node.
 * @param {Record<string, { value: number, path: (string|number)[] }[]>} nodes per strategy
 */
function checkNodes (nodes, merged, { strategies, bad, backendLine }) {
  if (merged.backend === 'local') {
    throw bad('nodes', [], `needs a swarm (its worker nodes), and this file says backend: local (line ${backendLine}); ` +
      'write backend: swarm (or auto), or drop nodes')
  }
  // only a strategy of several replicas (hs) spreads them over nodes: the others run one replica, on one node
  const spreading = STRATEGIES.filter(s => strategyOf(s).replicated)
  for (const s of strategies.filter(x => !strategyOf(x).replicated)) {
    const many = nodes[s].find(n => n.value > 1)
    if (many) {
      throw bad('nodes', many.path, `${many.value} nodes for ${s}: ${s} runs in one replica, on one node, ` +
        `so only ${spreading.join(', ')} spreads over nodes; give ${s} one node (e.g. nodes: { ${spreading[0]}: 1..4, ${s}: 1 })`)
    }
  }
}

function parseAnalysis (value, bad, hasNodes) {
  if (value === undefined) return { fit: 'usl', x: 'instances', cpuTable: false, correlations: false }
  if (!isMap(value)) throw bad('analysis', [], EXPERIMENT_KEYS.analysis)
  checkKeys(value, [], ANALYSIS_KEYS, (at, message) => bad('analysis', at, message))
  const fit = value.fit ?? 'usl'
  if (!FITS.includes(fit)) throw bad('analysis', ['fit'], `fit "${fit}" is not allowed; one of: ${FITS.join(', ')}`)
  const x = value.x ?? 'instances'
  if (!X_FIELDS.includes(x)) throw bad('analysis', ['x'], `x "${x}" is not allowed; one of: ${X_FIELDS.join(', ')}`)
  if (x === 'nodes' && !hasNodes) throw bad('analysis', ['x'], 'x nodes needs a nodes axis in the grid (e.g. nodes: 1..4)')
  const flag = key => {
    const v = value[key] ?? false
    if (typeof v !== 'boolean') throw bad('analysis', [key], `${key}: true or false`)
    return v
  }
  return { fit, x, cpuTable: flag('cpu-table'), correlations: flag('correlations') }
}

/**
 * The `question` key: its keys and values typed here ("5%" a fraction), its rules checked by the analyzer's one
 * checkQuestion (each refusal at the line of the key at fault); the grid cells it needs are checked by
 * questionInGrid, under the profile that runs.
 * @returns {Question|null}
 */
function parseQuestion (value, invalid) {
  if (value === undefined) return null
  if (!isMap(value)) throw invalid(['question'], `question: ${EXPERIMENT_KEYS.question}`)
  checkKeys(value, ['question'], QUESTION_KEYS, invalid, 'question.')
  /** @type {import('../../analyzer/stats/adaptive-question.js').BadQuestion} */
  const bad = (key, reason, at = [key]) => invalid(['question', ...at], `question: ${key}: ${reason}`)
  const fraction = (key) => {
    const f = value[key] === undefined ? undefined : marginOf(value[key])
    if (f === null) throw bad(key, `${JSON.stringify(value[key])} is not allowed; a percent above 0% and below 100% (5%), or a fraction (0.05)`)
    return f
  }
  const spending = value.spending ?? 'obrien-fleming'
  if (!SPENDINGS.includes(spending)) throw bad('spending', `${JSON.stringify(spending)} is not allowed; one of: ${SPENDINGS.join(', ')}`)
  const typed = { ...value, margin: fraction('margin'), precision: fraction('precision') }
  const q = checkQuestion(typed, { bad })
  const { estimate, compare, at } = value
  /** @type {Question} */
  const question = q.knee
    ? { knee: q.a, between: /** @type {[number, number]} */ (q.between), spending }
    : q.estimate
      ? { estimate, ...(sideOf(estimate).own ? {} : { at }), spending }
      : { compare: [compare[0], compare[1]], quantity: q.quantity, ...(at === undefined ? {} : { at }), ...(q.from ? { from: q.from } : {}), spending }
  // a test keeps the margin the analyzer's rule uses when the file names none
  return Object.freeze(q.precision !== null ? { ...question, precision: q.precision } : { ...question, margin: q.margin })
}

/** "5%", "2.5 %" or 0.05 as a fraction in (0, 1); null when it is none of these. */
function marginOf (v) {
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v) : null
  const f = m ? Number(m[1]) / 100 : typeof v === 'number' ? v : NaN
  return f > 0 && f < 1 ? f : null
}

/**
 * @typedef {{ compare?: [string, string], quantity?: 'throughput'|'speedup', at?: number, from?: number,
 *   margin?: number, precision?: number, estimate?: string, knee?: string, between?: [number, number],
 *   spending?: 'obrien-fleming'|'pocock' }} Question
 *   compare: strategies, or `strategy@N` (throughput: a side's own N); estimate: one cell (strategy@N, or a strategy at
 *   `at`) measured to ±precision; compare with precision: their ratio measured to ±precision (no test); else a test
 *   within ±margin
 */

/**
 * The grid cells a question needs (the analyzer's cellsNeeded: the two strategies at N = at, and for a speedup also at
 * N = from), each `strategy@N` key with its strategy and N.
 * @param {Question} q
 * @returns {{ key: string, strategy: string, instances: number }[]}
 */
export function questionCells (q) {
  return cellsNeeded(q).map(key => {
    const [strategy, n] = key.split('@')
    return { key, strategy, instances: Number(n) }
  })
}

/**
 * Refuses (NS_ERR_BAD_FILE, the question's line) a question this profile's grid cannot answer: its strategies among
 * the experiment's, its N among each one's instances, and one cell per strategy and N (one benchmark, one load, no
 * nodes axis), which is one value per deployment.
 * @param {Experiment} exp
 * @returns {Question}
 */
export function questionInGrid (exp) {
  const q = exp.question
  const invalid = (sub, msg) => fail('QUESTION_INVALID', { file: exp.file, line: exp.lineOf('question', sub), reason: msg, profile: exp.profile })
  if (!q) throw fail('QUESTION_MISSING', { file: exp.file })
  if (q.knee) return kneeInGrid(exp, invalid)
  // the question's cells as written: its sides (compare: [cm@2, up]) or the one it estimates (estimate: cm@4), each
  // with the line that names it
  const sides = (q.estimate ? [q.estimate] : q.compare).map((e, i) => ({ ...sideOf(e, q.at), key: q.estimate ? ['estimate'] : ['compare', i] }))
  for (const { strategy, key } of sides) {
    if (!exp.strategies.includes(strategy)) {
      throw invalid(key, `${key[0]}: ${strategy} is not one of this experiment's strategies (${exp.strategies.join(', ')})`)
    }
  }
  if (exp.perNode) throw invalid([], 'needs instances (the total N), not instances-per-node')
  // the line of the question that gave a cell its N: a side's own (compare: [cm@2, ...]), else at or from
  const keyOf = (strategy, n) => sides.find(side => side.own && side.strategy === strategy && side.at === n)?.key ?? [n === q.at ? 'at' : 'from']
  for (const { strategy, instances } of questionCells(q)) {
    const ns = exp.instances[strategy].map(i => i.value)
    const key = keyOf(strategy, instances)
    if (!ns.includes(instances)) throw invalid(key, `${key[0]}: ${instances} is not among ${strategy}'s instances (${ns.join(', ')})`)
  }
  const one = (what, n) => { if (n > 1) throw invalid([], `needs one cell per strategy and N, and the grid has ${n} ${what}; keep one`) }
  one('benchmarks', exp.benchmarks.length)
  for (const { strategy } of sides) one(`loads for ${strategy}`, exp.loads[strategy].length)
  for (const { strategy } of sides) one(`node counts for ${strategy}`, exp.nodes?.[strategy].length ?? 1)
  return q
}

/**
 * A knee question in this profile: its strategy among the experiment's, one cell per N (one benchmark, load and node
 * count); its N are any within its bounds, the grid's instances or not (withQuestionCells adds them).
 * @param {Experiment} exp @param {(sub: (string|number)[], msg: string) => Error} invalid
 */
function kneeInGrid (exp, invalid) {
  const q = /** @type {Question} */ (exp.question)
  const s = /** @type {string} */ (q.knee)
  if (!exp.strategies.includes(s)) throw invalid(['knee'], `knee: ${s} is not one of this experiment's strategies (${exp.strategies.join(', ')})`)
  if (exp.perNode) throw invalid([], 'needs instances (the total N), not instances-per-node')
  const one = (what, n) => { if (n > 1) throw invalid([], `needs one cell per N, and the grid has ${n} ${what}; keep one`) }
  one('benchmarks', exp.benchmarks.length)
  one(`loads for ${s}`, exp.loads[s].length)
  one(`node counts for ${s}`, exp.nodes?.[s].length ?? 1)
  return q
}

/**
 * The experiment an adaptive sweep plans: a knee question's strategy given every N within its bounds (the grid's
 * instances and the others, each at the question's line); any other question's grid as it is.
 * @param {Experiment} exp
 * @returns {Experiment}
 */
export function withQuestionCells (exp) {
  const q = exp.question
  if (!q?.knee) return exp
  const [lo, hi] = /** @type {[number, number]} */ (q.between)
  const grid = exp.instances[q.knee]
  const added = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i).filter(n => !grid.some(g => g.value === n))
  const all = [...grid, ...added.map(value => ({ value, path: ['question', 'between'] }))].sort((x, y) => x.value - y.value)
  return { ...exp, instances: { ...exp.instances, [q.knee]: all } }
}

/**
 * Params for every benchmark ({ key: value }) or per benchmark ({ name: { key: value } }); values become strings like
 * --param.
 */
function parseParams (value, benchmarks, bad) {
  const out = Object.fromEntries(benchmarks.map(b => [b ?? '', {}]))
  if (value === undefined) return out
  if (!isMap(value)) throw bad('params', [], EXPERIMENT_KEYS.params)
  const scalar = v => ['string', 'number', 'boolean'].includes(typeof v)
  const perBenchmark = Object.values(value).some(isMap)
  for (const [k, v] of Object.entries(value)) {
    if (perBenchmark) {
      if (!benchmarks.includes(k)) {
        throw bad('params', [k], `"${k}" is not one of this experiment's benchmarks (${benchmarks.join(', ')}); ` +
          'per-benchmark params are { benchmark: { key: value } }')
      }
      if (!isMap(v)) throw bad('params', [k], `params.${k}: a mapping of key: value`)
      for (const [pk, pv] of Object.entries(v)) {
        if (!scalar(pv)) throw bad('params', [k, pk], `${k}.${pk}: ${JSON.stringify(pv)} is not a value (a string or a number)`)
        out[k][pk] = String(pv)
      }
    } else {
      if (!scalar(v)) throw bad('params', [k], `${k}: ${JSON.stringify(v)} is not a value (a string or a number)`)
      for (const b of Object.keys(out)) out[b][k] = String(v)
    }
  }
  return out
}

/**
 * A calibration level ("relaxed", "relaxed*cores", "exhausted*2") as a number of connections.
 * @param {string} level
 * @param {any} cal a calibration file's content (relaxed, exhausted, cores)
 */
export function resolveLevel (level, cal) {
  const m = LEVEL_RE.exec(level)
  if (!m) throw fail('CALIBRATION_LEVEL_UNKNOWN', { level })
  const base = cal[m[1]]?.concurrency
  if (!Number.isInteger(base)) {
    throw fail('CALIBRATION_LEVEL_NOT_FOUND', { name: m[1], notes: cal.notes, level })
  }
  const factor = m[2] === undefined ? 1 : m[2] === 'cores' ? cal.cores : Number(m[2])
  return Math.max(1, Math.round(base * factor))
}

/** The `load` key: capacity (the search's defaults) or { capacity: { its settings } }, each checked as its flag is. */
function parseCapacity (value, bad) {
  if (value === 'capacity') return {}
  const settings = isMap(value) && Object.keys(value).length === 1 ? value.capacity : undefined
  if (settings !== null && !isMap(settings)) throw bad('load', [], `${JSON.stringify(value)} is not allowed; ${EXPERIMENT_KEYS.load}`)
  const out = {}
  for (const [k, v] of Object.entries(settings ?? {})) {
    const row = CAPACITY_SEARCH_OPTIONS.find(o => o.flag === k)
    if (!row) throw bad('load', ['capacity', k], `"${k}" is not a setting of the search; allowed: ${CAPACITY_SEARCH_OPTIONS.map(o => o.flag).join(', ')}`)
    try {
      out[keyOf(row)] = checkOption(row, v)
    } catch (err) {
      throw bad('load', ['capacity', k], `capacity.${k}: ${err.details?.reason ?? err.message}`)
    }
  }
  return out
}
