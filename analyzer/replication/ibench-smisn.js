// The Ibenchjs paper's S/MISN findings (1, 2 and 5) and its Table 5 against a sweep of experiments/ibench-smisn.yml:
// what survives a change of hardware is compared (a curve that stops rising, which strategy serves more, which model
// fits better, which app's coefficients are larger), with the published values beside ours.
import { median } from 'simple-statistics'
import { loadPoints } from '../points.js'
import { fitSources } from '../compare.js'
import { ibenchSmisn as published } from './published.js'
import { meanCi, welch, directionVerdict, leftOutWhy } from './rules.js'
import { ALPHA } from '../group-tests.js'

const finding = (id) => published.findings.find(f => f.id === id)
const sourceOf = (f) => f.source
const round4 = (x) => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : null)

/**
 * A published "does not rise": reproduced unless the runs at the larger N serve significantly more than at the
 * smaller (Welch, α 0.05); not-comparable with fewer than two runs a side.
 */
function notGreater (hi, lo, what) {
  if (hi.length < 2 || lo.length < 2) return { verdict: 'not-comparable', why: `${what}: ${hi.length} and ${lo.length} runs; a test needs two or more a side (more repeats)` }
  const { diff, p } = welch(hi, lo)
  const shown = `${meanCi(hi).mean} vs ${meanCi(lo).mean} req/s, p = ${p === null ? '-' : p.toPrecision(2)}`
  if (diff > 0 && p !== null && p < ALPHA) return { verdict: 'not-reproduced', why: `${what}: it still rises here (${shown})` }
  return { verdict: 'reproduced', why: `${what}: no significant rise (${shown})` }
}

/** The runs' throughputs of a group at one N. */
const at = (group, n) => group.observations.filter(o => o.n === n).map(o => o.throughput)

/**
 * The findings and Table 5 of the S/MISN study on a sweep.
 * @param {{ dir: string, runs: { detail: { run: any } }[], leftOut?: import('./rules.js').LeftOut[],
 *   includeInvalid: boolean }} input finished runs, and those left out as not valid
 */
export async function ibenchSmisnRows ({ dir, runs, leftOut = [], includeInvalid }) {
  const configs = runs.map(r => r.detail.run.config)
  const cores = runs[0]?.detail.run.environment?.cpus ?? null
  const quotaOf = (strategy, benchmark) => configs.find(c => c.strategy === strategy && c.benchmark === benchmark)?.cpusPerInstance ?? null
  const points = runs.length ? await loadPoints(dir, { x: 'instances', groupBy: ['strategy', 'benchmark'], includeInvalid }) : { groups: [] }
  const groupOf = (strategy, benchmark) => points.groups.find(g => g.key.strategy === strategy && g.key.benchmark === benchmark)
  const benchmarks = [...new Set(configs.map(c => c.benchmark))]
  return [
    ...benchmarks.map(b => upRow(groupOf('up', b), b, quotaOf('up', b))),
    ...benchmarks.filter(b => finding('finding-2').benchmarks.includes(b)).map(b => saturationRow(groupOf('hs', b), b, quotaOf('hs', b), cores)),
    ...finding5Rows({ hs: groupOf('hs', 'baseline'), cm: groupOf('cm', 'baseline'), quota: quotaOf('cm', 'baseline'), cores, runs, left: leftOut.filter(r => r.benchmark === 'baseline') }),
    ...await table5Rows(dir, includeInvalid)
  ]
}

/** Finding 1: one process given more vCPUs serves no more once it has a whole core. */
function upRow (group, benchmark, quota) {
  const f = finding('finding-1')
  const base = { id: `finding 1 (${benchmark}): up gains nothing from more vCPUs`, source: sourceOf(f), published: { says: f.direction[0].text, claim: f.claim, conditions: f.conditions.text } }
  const rule = 'up\'s throughput at its largest N against the first N with a whole core (N x quota >= 1): not significantly greater (Welch, α = 0.05)'
  if (!group) return { ...base, ours: null, rule, verdict: 'not-comparable', absent: true, why: `no up runs of ${benchmark} in the sweep (experiments/ibench-smisn.yml runs them)` }
  const whole = quota ? Math.ceil(1 / quota - 1e-9) : 1
  const ns = (group?.points ?? []).map(p => p.n).filter(n => n >= whole).sort((a, b) => a - b)
  if (ns.length < 2) return { ...base, ours: null, rule, verdict: 'not-comparable', why: `the sweep's up runs never had more than one whole core (N >= ${whole} at ${quota ?? 1} CPU each: ${ns.join(', ') || 'none'})` }
  const hi = at(group, ns.at(-1))
  const lo = at(group, whole)
  return { ...base, ours: { [`N=${whole}`]: meanCi(lo), [`N=${ns.at(-1)}`]: meanCi(hi) }, rule, ...notGreater(hi, lo, `up at N=${ns.at(-1)} vs N=${whole}`) }
}

/** Finding 2: for the CPU-bound apps, instances beyond the machine's cores add nothing. */
function saturationRow (group, benchmark, quota, cores) {
  const f = finding('finding-2')
  const base = { id: `finding 2 (${benchmark}): hs stops rising once the CPU is used up`, source: sourceOf(f), published: { says: f.direction.find(d => d.benchmark === benchmark)?.text ?? f.claim, claim: f.claim } }
  const rule = 'hs\'s throughput at its largest N against the first N whose quotas fill the machine (N x quota >= cores): not significantly greater'
  if (!group || !cores) return { ...base, ours: null, rule, verdict: 'not-comparable', absent: !group, why: `no hs runs of ${benchmark} in the sweep (experiments/ibench-smisn.yml runs them)` }
  const full = Math.ceil(cores / (quota ?? 1) - 1e-9)
  const ns = group.points.map(p => p.n).filter(n => n >= full).sort((a, b) => a - b)
  if (ns.length < 2 || !at(group, full).length) {
    const why = `the sweep does not go past N=${full}, where hs's quotas (${quota ?? 1} CPU each) fill the ${cores} cores ` +
      '(on Swarm each replica reserves its quota, so no more fit on this machine: --backend local, or more cores)'
    return { ...base, ours: null, rule, verdict: 'not-comparable', why }
  }
  const hi = at(group, ns.at(-1))
  const lo = at(group, full)
  return { ...base, ours: { [`N=${full}`]: meanCi(lo), [`N=${ns.at(-1)}`]: meanCi(hi) }, rule, ...notGreater(hi, lo, `hs at N=${ns.at(-1)} vs N=${full}`) }
}

/** The CPU is used up when the server used this share of its quota (N x quota), or the quotas fill the machine. */
const FULL_SHARE = 0.9

/**
 * The server's own CPU (its workers, cluster primary and PM2 daemon, in cores; diagnosis.roles) in the baseline runs
 * of a strategy at N instances, their median; null when none measured it.
 */
function serverCoresAt (runs, strategy, n) {
  const cores = runs.map(r => r.detail.run).filter(r => r.config.strategy === strategy && r.config.benchmark === 'baseline' && r.config.instances === n)
    .map(r => r.diagnosis?.roles).filter(roles => Number.isFinite(roles?.workers))
    .map(roles => roles.workers + (roles.primary ?? 0) + (roles['pm2-daemon'] ?? 0))
  return cores.length ? Math.round(median(cores) * 1000) / 1000 : null
}

/**
 * What the primary's CPU shows: its cores with their interval, its share of the server's, and how the clients used
 * their connections (the primary hands a worker each connection: once per client with keep-alive, else per request).
 */
function primaryWhy (spent, serverCores, n, perRequest) {
  if (!spent) return `no cm run at N=${n} measured its primary's CPU`
  const interval = spent.lo === null ? ' (one run: no interval)' : ` [${spent.lo}, ${spent.hi}]`
  const share = serverCores ? ` (${(100 * spent.mean / serverCores).toPrecision(2)}% of the server's ${serverCores} cores)` : ''
  const how = perRequest
    ? '; the clients opened a connection per request (--connection close), which the primary hands over one by one'
    : '; the clients kept their connections alive, so the primary handed each over once (--connection close makes it balance every request, the paper\'s account)'
  return `the primary used ${spent.mean} cores${interval} beside the workers${share}${how}`
}

/** Finding 5's rows, one per direction of the finding (published.js), in its order. */
const FINDING5_ROWS = ['hs serves more than cm at full CPU', 'cm\'s primary spends CPU', 'cm still improves on one instance']

/** Finding 5: with the CPU used up, HS serves more than CM, whose primary spends CPU; CM still beats one instance. */
function finding5Rows ({ hs, cm, quota, cores, runs, left }) {
  const f = finding('finding-5')
  // the three rows, in the order of the finding's directions: hs > cm, cm's CPU > hs's, cm x N > cm x 1
  const base = (i) => ({ id: `finding 5: ${FINDING5_ROWS[i]}`, source: sourceOf(f), published: { says: f.direction[i].text, claim: f.claim, conditions: f.conditions.text } })
  if (!hs || !cm || !cores) {
    const why = left.length
      ? `no valid hs and cm runs of the baseline app: ${leftOutWhy(left)}`
      : 'no hs and cm runs of the baseline app in the sweep (experiments/ibench-finding5.yml runs them)'
    return FINDING5_ROWS.map((_, i) => ({ ...base(i), ours: null, rule: '-', verdict: 'not-comparable', absent: !left.length, why }))
  }
  const n = Math.max(...hs.points.map(p => p.n).filter(x => cm.points.some(p => p.n === x)))
  const used = { hs: serverCoresAt(runs, 'hs', n), cm: serverCoresAt(runs, 'cm', n) }
  const given = n * (quota ?? 1)
  const fillsMachine = given >= cores
  const quotaUsed = used.hs !== null && used.cm !== null && Math.min(used.hs, used.cm) >= FULL_SHARE * given
  if (!fillsMachine && !quotaUsed) {
    const why = `at N=${n} (the largest N both ran) the CPU was not used up: the quotas (${given} CPU) fill ${given} of ${cores} cores, ` +
      `and the server used hs ${used.hs ?? '-'}, cm ${used.cm ?? '-'} cores of them (full: ${FULL_SHARE * 100}% of the quota, diagnosis.roles)`
    return FINDING5_ROWS.map((_, i) => ({ ...base(i), ours: null, rule: '-', verdict: 'not-comparable', why }))
  }
  const cmRuns = runs.map(r => r.detail.run).filter(r => r.config.strategy === 'cm' && r.config.benchmark === 'baseline' && r.config.instances === n)
  const primary = cmRuns.map(r => r.diagnosis?.roles?.primary).filter(Number.isFinite)
  const perRequest = cmRuns.some(r => r.config.connection === 'close')
  const spent = meanCi(primary, { digits: 3 })
  const tput = directionVerdict({ a: at(hs, n), b: at(cm, n), aName: 'hs', bName: 'cm', what: `baseline app at N=${n}` })
  const one = at(cm, 1)
  const leftOne = left.filter(r => r.strategy === 'cm' && r.instances === 1)
  const gain = one.length
    ? directionVerdict({ a: at(cm, n), b: one, aName: `cm x${n}`, bName: 'cm x1', what: 'cm against one instance' })
    : { verdict: 'not-comparable', why: leftOne.length ? `no valid cm x1 runs of the baseline app: ${leftOutWhy(leftOne)}` : 'no cm x1 runs of the baseline app to compare with' }
  return [
    { ...base(0), ours: { hs: meanCi(at(hs, n)), cm: meanCi(at(cm, n)) }, rule: `hs's throughput above cm's at an N with the CPU used up (the server at ${FULL_SHARE * 100}% of its quota or more, or the quotas filling the machine), by Welch's t-test at α = 0.05`, verdict: tput.verdict, why: tput.why },
    {
      ...base(1),
      ours: { primaryCores: spent },
      rule: 'the cluster primary\'s own CPU (diagnosis.roles.primary, cores) is above zero: its 95% interval excludes 0',
      verdict: !spent ? 'not-comparable' : spent.lo !== null && spent.lo > 0 ? 'reproduced' : 'not-reproduced',
      why: primaryWhy(spent, used.cm, n, perRequest)
    },
    { ...base(2), ours: { [`N=${n}`]: meanCi(at(cm, n)), 'N=1': meanCi(one) }, rule: 'cm at full CPU above cm x1, Welch at α = 0.05', verdict: gain.verdict, why: gain.why }
  ]
}

/** Table 5: USL and Amdahl over workloads at fixed hardware, per app: USL the better, the network app's larger. */
async function table5Rows (dir, includeInvalid) {
  const t5 = published.table5
  let fitted = []
  try {
    const r = await fitSources(dir, { model: 'both', x: 'concurrency', groupBy: ['strategy', 'benchmark', 'instances'], includeInvalid })
    fitted = r.groups.filter(g => g.points.length >= 4 && g.fits.usl && !g.fits.usl.error && !g.fits.amdahl.error)
  } catch {}
  const byApp = Object.fromEntries(['cpu', 'net-out'].map(b => [b, fitted.find(g => g.key.benchmark === b) ?? null]))
  const pub = (benchmark, model) => t5.fits.find(x => x.benchmark === benchmark && x.model === model)
  const missing = 'no fit over workloads at fixed hardware: the sweep has no concurrency axis of 4 or more values per strategy and instance count ' +
    '(experiments/ibench-table5.yml runs one; a fit over instances is not Table 5\'s set-up)'
  const rows = []
  for (const [benchmark, g] of Object.entries(byApp)) {
    const pu = pub(benchmark, 'usl')
    const pa = pub(benchmark, 'amdahl')
    const row = { id: `Table 5 (${pu.appPrinted}): USL fits better than Amdahl`, source: t5.source, published: { usl: pu.r2.printed, amdahl: pa.r2.printed }, rule: 'USL\'s R² above Amdahl\'s and its coherency term significant (extra-sum-of-squares F test, α = 0.05): nested models, so a higher R² alone proves nothing' }
    if (!g) { rows.push({ ...row, ours: null, verdict: 'not-comparable', absent: true, why: missing }); continue }
    const usl = g.fits.usl
    const am = g.fits.amdahl
    const better = g.test?.better === 'usl' && usl.r2 > am.r2
    rows.push({ ...row, ours: { usl: `${(usl.r2 * 100).toFixed(2)}%`, amdahl: `${(am.r2 * 100).toFixed(2)}%`, p: g.test?.p ?? null, group: g.name }, verdict: better ? 'reproduced' : 'not-reproduced', why: `${g.name} over ${g.points.length} workloads: R² ${(usl.r2 * 100).toFixed(2)}% vs ${(am.r2 * 100).toFixed(2)}%, F test p = ${g.test?.p?.toPrecision(2) ?? '-'}` })
  }
  for (const [model, coef] of [['usl', 'sigma'], ['usl', 'lambda'], ['amdahl', 'sigma']]) {
    const pc = pub('cpu', model)
    const pn = pub('net-out', model)
    const name = `${model === 'usl' ? 'USL' : 'Amdahl'} ${coef === 'sigma' ? 'σ' : 'λ'}`
    const row = { id: `Table 5: ${name} of the network app above the CPU app's`, source: t5.source, published: { cpu: pc[coef].printed, network: pn[coef].printed }, rule: 'the network app\'s coefficient above the CPU app\'s, their 95% intervals apart' }
    const c = byApp.cpu?.fits[model]
    const nw = byApp['net-out']?.fits[model]
    if (!c || !nw) { rows.push({ ...row, ours: null, verdict: 'not-comparable', absent: true, why: missing }); continue }
    const [ci, ni] = [c.ci95[coef], nw.ci95[coef]]
    const apart = ci && ni && ni[0] > ci[1]
    const verdict = nw[coef] > c[coef] && apart ? 'reproduced' : 'not-reproduced'
    const why = nw[coef] <= c[coef] ? `the other way here: ${round4(nw[coef])} vs ${round4(c[coef])}` : `${round4(nw[coef])} vs ${round4(c[coef])}${apart ? ', intervals apart' : ', but their intervals overlap: the data cannot tell them apart'}`
    rows.push({ ...row, ours: { cpu: round4(c[coef]), network: round4(nw[coef]), cpuCi: ci, networkCi: ni }, verdict, why })
  }
  return rows
}
