// The Ibenchjs paper's S/MISN findings (1, 2 and 5) and its Table 5 against a sweep of experiments/ibench-smisn.yml:
// what survives a change of hardware is compared (a curve that stops rising, which strategy serves more, which model
// fits better, which app's coefficients are larger), with the published values beside ours.
import { median } from 'simple-statistics'
import { loadPoints } from '../points.js'
import { fitSources } from '../compare.js'
import { ibenchSmisn as published } from './published.js'
import { meanCi, directionVerdict, noRiseVerdict, aboveMarginVerdict, leftOutWhy, NO_RISE_MARGIN } from './rules.js'
import { ALPHA } from '../stats/inference.js'

const finding = (id) => published.findings.find(f => f.id === id)
const sourceOf = (f) => f.source
const round4 = (x) => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : null)
/** A difference in percentage points, signed: 5.61 -> "+5.61 pp". */
const signedPp = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(2)} pp` : '-')

/**
 * A published "does not rise" judged by noRiseVerdict (rules.js): the verdict, why, and the measured change beside the
 * study's (which prints no number: the same or worse).
 */
function notGreater (hi, lo, what) {
  const { verdict, why, effect } = noRiseVerdict({ hi, lo, what })
  return { verdict, why, effect: { published: 'no rise (the same or worse)', here: effect ?? '-' } }
}

/** The rule of a "no rise" row, with its stated margin. */
const noRiseRule = (what) => `${what}: a rise of ${NO_RISE_MARGIN * 100}% or more ruled out, one-sided at α = 0.05 on the ratio of ` +
  'means (TOST\'s upper test; a fall agrees); a significant rise is evidence against'

/** The published effect of a claim that prints no number. */
const UNPRINTED = 'a direction (no figure printed)'

/** The runs' throughputs of a group at one N. */
const at = (group, n) => group.observations.filter(o => o.n === n).map(o => o.throughput)

/**
 * The findings and Table 5 of the S/MISN study on a sweep.
 * @param {{ dir: string | string[], runs: { detail: { run: any } }[], leftOut?: import('./rules.js').LeftOut[],
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
    ...finding5Rows({
      hs: groupOf('hs', 'baseline'),
      cm: groupOf('cm', 'baseline'),
      quota: quotaOf('cm', 'baseline'),
      cores,
      runs,
      left: leftOut.filter(r => r.benchmark === 'baseline')
    }),
    ...await table5Rows(dir, includeInvalid)
  ]
}

/** Finding 1: one process given more vCPUs serves no more once it has a whole core. */
function upRow (group, benchmark, quota) {
  const f = finding('finding-1')
  const base = {
    id: `finding 1 (${benchmark}): up gains nothing from more vCPUs`,
    source: sourceOf(f),
    published: { says: f.direction[0].text, claim: f.claim, conditions: f.conditions.text }
  }
  const rule = noRiseRule('up\'s throughput at its largest N against the first N with a whole core (N x quota >= 1)')
  if (!group) {
    return {
      ...base,
      ours: null,
      rule,
      verdict: 'not-comparable',
      absent: true,
      why: `no up runs of ${benchmark} in the sweep (experiments/ibench-smisn.yml runs them)`
    }
  }
  const whole = quota ? Math.ceil(1 / quota - 1e-9) : 1
  const ns = (group?.points ?? []).map(p => p.n).filter(n => n >= whole).sort((a, b) => a - b)
  if (ns.length < 2) {
    return {
      ...base,
      ours: null,
      rule,
      verdict: 'not-comparable',
      why: `the sweep's up runs never had more than one whole core (N >= ${whole} at ${quota ?? 1} CPU each: ${ns.join(', ') || 'none'})`
    }
  }
  const hi = at(group, ns.at(-1))
  const lo = at(group, whole)
  return { ...base, ours: { [`N=${whole}`]: meanCi(lo), [`N=${ns.at(-1)}`]: meanCi(hi) }, rule, ...notGreater(hi, lo, `up at N=${ns.at(-1)} vs N=${whole}`) }
}

/** Finding 2: for the CPU-bound apps, instances beyond the machine's cores add nothing. */
function saturationRow (group, benchmark, quota, cores) {
  const f = finding('finding-2')
  const base = {
    id: `finding 2 (${benchmark}): hs stops rising once the CPU is used up`,
    source: sourceOf(f),
    published: { says: f.direction.find(d => d.benchmark === benchmark)?.text ?? f.claim, claim: f.claim }
  }
  const rule = noRiseRule('hs\'s throughput at its largest N against the first N whose quotas fill the machine (N x quota >= cores)')
  if (!group || !cores) {
    return {
      ...base,
      ours: null,
      rule,
      verdict: 'not-comparable',
      absent: !group,
      why: `no hs runs of ${benchmark} in the sweep (experiments/ibench-smisn.yml runs them)`
    }
  }
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

/** The cluster primary spends CPU when its share of the server's CPU is shown to be above this (one-sided t test). */
export const PRIMARY_MARGIN = 0.01

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
    : '; the clients kept their connections alive, so the primary handed each over once (--connection close makes it ' +
      'balance every request, the paper\'s account)'
  return `the primary used ${spent.mean} cores${interval} beside the workers${share}${how}`
}

/** Finding 5's rows, one per direction of the finding (published.js), in its order. */
const FINDING5_ROWS = ['hs serves more than cm at full CPU', 'cm\'s primary spends CPU', 'cm still improves on one instance']

/** Finding 5: with the CPU used up, HS serves more than CM, whose primary spends CPU; CM still beats one instance. */
function finding5Rows ({ hs, cm, quota, cores, runs, left }) {
  const f = finding('finding-5')
  // the three rows, in the order of the finding's directions: hs > cm, cm's CPU > hs's, cm x N > cm x 1
  const base = (i) => ({
    id: `finding 5: ${FINDING5_ROWS[i]}`,
    source: sourceOf(f),
    published: { says: f.direction[i].text, claim: f.claim, conditions: f.conditions.text }
  })
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
  // per run, the primary's share of the server's own CPU (workers, primary, PM2 daemon: diagnosis.roles)
  const shares = cmRuns.map(r => r.diagnosis?.roles).filter(roles => Number.isFinite(roles?.primary) && Number.isFinite(roles?.workers))
    .map(roles => roles.primary / (roles.workers + roles.primary + (roles['pm2-daemon'] ?? 0))).filter(Number.isFinite)
  const perRequest = cmRuns.some(r => r.config.connection === 'close')
  const spent = meanCi(primary, { digits: 3 })
  const primaryJudged = aboveMarginVerdict({ shares, margin: PRIMARY_MARGIN, what: 'the primary\'s share of the server\'s CPU' })
  const tput = directionVerdict({ a: at(hs, n), b: at(cm, n), aName: 'hs', bName: 'cm', what: `baseline app at N=${n}` })
  const one = at(cm, 1)
  const leftOne = left.filter(r => r.strategy === 'cm' && r.instances === 1)
  const gain = one.length
    ? directionVerdict({ a: at(cm, n), b: one, aName: `cm x${n}`, bName: 'cm x1', what: 'cm against one instance' })
    : {
        verdict: 'not-comparable',
        why: leftOne.length ? `no valid cm x1 runs of the baseline app: ${leftOutWhy(leftOne)}` : 'no cm x1 runs of the baseline app to compare with'
      }
  const effect = (judged) => ({ published: UNPRINTED, here: judged.effect ?? '-' })
  return [
    {
      ...base(0),
      ours: { hs: meanCi(at(hs, n)), cm: meanCi(at(cm, n)) },
      rule: `hs's throughput above cm's at an N with the CPU used up (the server at ${FULL_SHARE * 100}% of its ` +
        'quota or more, or the quotas filling the machine), by Welch\'s one-sided t-test at α = 0.05',
      verdict: tput.verdict,
      why: tput.why,
      effect: effect(tput)
    },
    {
      ...base(1),
      ours: { primaryCores: spent },
      rule: `the cluster primary's own CPU (diagnosis.roles.primary) as a share of the server's, per run, above a margin of ${PRIMARY_MARGIN * 100}%: ` +
        'a one-sided one-sample t test at α = 0.05 (significantly below the margin: negligible, evidence against)',
      verdict: spent ? primaryJudged.verdict : 'not-comparable',
      why: spent ? `${primaryJudged.why}; ${primaryWhy(spent, used.cm, n, perRequest)}` : primaryWhy(spent, used.cm, n, perRequest),
      effect: { published: 'the master\'s load balancing is "intensive" (no figure printed)', here: primaryJudged.effect ?? '-' }
    },
    {
      ...base(2),
      ours: { [`N=${n}`]: meanCi(at(cm, n)), 'N=1': meanCi(one) },
      rule: 'cm at full CPU above cm x1, Welch\'s one-sided t-test at α = 0.05',
      verdict: gain.verdict,
      why: gain.why,
      effect: effect(gain)
    }
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
    const row = {
      id: `Table 5 (${pu.appPrinted}): USL fits better than Amdahl`,
      source: t5.source,
      published: { usl: pu.r2.printed, amdahl: pa.r2.printed },
      rule: 'USL\'s R² above Amdahl\'s and its coherency term significant (extra-sum-of-squares F test, α = ' +
        '0.05): nested models, so a higher R² alone proves nothing; not significant: inconclusive'
    }
    if (!g) { rows.push({ ...row, ours: null, verdict: 'not-comparable', absent: true, why: missing }); continue }
    const usl = g.fits.usl
    const am = g.fits.amdahl
    // nested models: only a significant coherency term is evidence that USL fits better; without it the data do not
    // tell (Amdahl suffices for them), which is no evidence against the study's larger model
    const better = Number.isFinite(g.test?.p) && g.test.p < ALPHA && usl.r2 > am.r2
    const shown = `${g.name} over ${g.points.length} workloads: R² ${(usl.r2 * 100).toFixed(2)}% vs ` +
      `${(am.r2 * 100).toFixed(2)}%, F test p = ${g.test?.p?.toPrecision(2) ?? '-'}`
    rows.push({
      ...row,
      ours: { usl: `${(usl.r2 * 100).toFixed(2)}%`, amdahl: `${(am.r2 * 100).toFixed(2)}%`, p: g.test?.p ?? null, group: g.name },
      verdict: better ? 'reproduced' : 'inconclusive',
      why: better ? shown : `${shown}: the coherency term is not significant here, so the data do not tell the models apart (Amdahl suffices for them)`,
      effect: { published: `R² ${signedPp(pu.r2.value - pa.r2.value)}`, here: `R² ${signedPp(100 * (usl.r2 - am.r2))}` }
    })
  }
  for (const [model, coef] of [['usl', 'sigma'], ['usl', 'lambda'], ['amdahl', 'sigma']]) {
    const pc = pub('cpu', model)
    const pn = pub('net-out', model)
    const name = `${model === 'usl' ? 'USL' : 'Amdahl'} ${coef === 'sigma' ? 'σ' : 'λ'}`
    const row = {
      id: `Table 5: ${name} of the network app above the CPU app's`,
      source: t5.source,
      published: { cpu: pc[coef].printed, network: pn[coef].printed },
      rule: 'the network app\'s coefficient above the CPU app\'s, their 95% intervals apart (apart the other way: not reproduced; overlapping: inconclusive)'
    }
    const c = byApp.cpu?.fits[model]
    const nw = byApp['net-out']?.fits[model]
    if (!c || !nw) { rows.push({ ...row, ours: null, verdict: 'not-comparable', absent: true, why: missing }); continue }
    const [ci, ni] = [c.ci95[coef], nw.ci95[coef]]
    const above = Boolean(ci && ni && ni[0] > ci[1])
    const below = Boolean(ci && ni && ni[1] < ci[0])
    const verdict = above ? 'reproduced' : below ? 'not-reproduced' : 'inconclusive'
    const shown = `${round4(nw[coef])} vs ${round4(c[coef])}`
    const overlap = `${nw[coef] > c[coef] ? 'the same way' : 'the other way'} (${shown}), but their intervals overlap: the data cannot tell them apart`
    const why = above ? `${shown}, intervals apart` : below ? `the other way here: ${shown}, intervals apart` : overlap
    const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : '-')
    rows.push({
      ...row,
      ours: { cpu: round4(c[coef]), network: round4(nw[coef]), cpuCi: ci, networkCi: ni },
      verdict,
      why,
      effect: { published: ratio(pn[coef].value, pc[coef].value), here: ratio(nw[coef], c[coef]) }
    })
  }
  return rows
}
