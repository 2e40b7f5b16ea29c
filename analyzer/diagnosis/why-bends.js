// Why a group's curve bends: the bottleneck of its runs at each N, the CPU by role against N, and one sentence that
// ties the limit the runs name to the coefficient the fit shows it as.
import { ROLES } from './diagnosis-figures.js'

const round3 = (x) => Math.round(x * 1000) / 1000
const fix = (x, d = 2) => Number(x).toFixed(d)

/** What each kind of bottleneck means for the curve, in the words of the sentence ("from N = 3 ..."). */
export const KIND_STORY = Object.freeze({
  'event-loop': 'the event loop is saturated: CPU given beyond its one thread goes unused',
  'cpu-quota': 'the instances are held at their CPU quota: throughput follows the quota',
  'host-cpu': 'the host\'s cores are all busy: the machine, shared with the load generator, is the ceiling',
  'load-balancer': 'the load balancer is the contention',
  'load-generator': 'the load generator is the limit: these points measure it, not the server',
  gc: 'garbage collection takes a large share of the instances\' time',
  io: 'the instances wait on I/O, not on CPU',
  none: 'nothing reached its limit in the measured runs'
})

/**
 * What a saturated event loop means depends on how N is spent: one process given more cores (up) cannot use them; N
 * processes (cm, pm2, hs) each full while the host has cores idle would use more of them with more workers.
 * @param {string} kind
 * @param {string | null} strategy
 * @param {number | null} idleCores the idle cores at the last N (null: not measured)
 * @param {string} [place] whose cores those are: the host's, or those the server was given (--server-cpus)
 */
export function storyOf (kind, strategy, idleCores, place = 'the host\'s cores') {
  if (kind !== 'event-loop' || !strategy) return KIND_STORY[kind] ?? kind
  if (strategy === 'up') return 'its one thread uses one core\'s worth: more vCPUs go unused'
  if (idleCores === null) return 'each worker\'s event loop is full: more workers would use more cores, where the host has them idle'
  if (idleCores < 0.5) return `each worker's event loop is full and none of ${place} is idle: more workers would share the same cores`
  return `each worker's event loop is full with ${fix(idleCores, 1)} of ${place} idle: more workers would use them`
}

/**
 * @typedef {{ n: number, runs: number, kind: string | null, kinds: Record<string, number>, line: string | null, roles:
 *   Record<string, number> | null, idleCores?: number | null }} BendStep kind: the most frequent bottleneck at this N
 *   (null when no run said); idleCores: the host's idle cores, the mean over its runs that measured it
 * @typedef {{ group: string, unit: string, steps: BendStep[], from: number | null, kind: string | null, sentence:
 *   string }} Bend
 */

/**
 * The bottleneck kinds some runs name, counted, and the one most of them name (ties: the first named); null when none.
 * @param {{ bottleneck: { kind: string } }[]} diagnoses
 */
export function kindsNamed (diagnoses) {
  /** @type {Record<string, number>} */
  const kinds = {}
  for (const d of diagnoses) kinds[d.bottleneck.kind] = (kinds[d.bottleneck.kind] ?? 0) + 1
  const kind = Object.entries(kinds).reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0])[0] || null
  return { kind, kinds }
}

/**
 * A step's bottleneck for a person: its kind, and how many runs named each kind when they did not agree.
 * @param {{ kind: string | null, kinds: Record<string, number> }} step
 */
export const kindText = (step) => (step.kind ?? '-') +
  (Object.keys(step.kinds).length > 1 ? ` (${Object.entries(step.kinds).map(([k, c]) => `${c} ${k}`).join(', ')})` : '')

/**
 * Per group: each N's bottleneck (the kind most of its runs name, with the line of the last such run), the mean CPU by
 * role, and the sentence: from which N on the same limit holds to the largest N, what it is, and the USL coefficient it
 * shows as (σ when contention dominates the fit, λ when coherency does).
 * @param {{ name: string, unit: string, observations: { n: number, run: string | null }[], fits?: Record<string, any>,
 *   key?: Record<string, any> }[]} groups key: what the group is (its strategy names how N is spent)
 * @param {{ dir: string, diagnosis: any, config?: any }[]} runs
 * @returns {Bend[]}
 */
export function whyCurvesBend (groups, runs) {
  // an observation names its run by folder (analyzer/points.js)
  const byRun = new Map(runs.map(r => [r.dir, r]))
  return groups.map(g => {
    /** @type {Map<number, any[]>} */
    const atN = new Map()
    for (const o of g.observations) {
      const d = o.run === null ? null : byRun.get(o.run)?.diagnosis
      if (!atN.has(o.n)) atN.set(o.n, [])
      if (d?.bottleneck) atN.get(o.n).push(d)
    }
    /** @type {BendStep[]} */
    const steps = [...atN].sort((a, b) => a[0] - b[0]).map(([n, ds]) => {
      const { kind, kinds } = kindsNamed(ds)
      return {
        n,
        runs: ds.length,
        kind,
        kinds,
        line: ds.filter(d => d.bottleneck.kind === kind).at(-1)?.bottleneck.line ?? null,
        roles: meanRoles(ds),
        idleCores: meanIdleCores(ds)
      }
    })
    const strategy = g.key?.strategy ?? g.observations.map(o => (o.run === null ? null : byRun.get(o.run)?.config?.strategy)).find(Boolean) ?? null
    return { group: g.name, unit: g.unit, steps, ...sentenceOf(g, steps, strategy) }
  })
}

/** The mean cores by role over diagnoses (a role a run lacks counts 0 there), in the roles' order. */
function meanRoles (ds) {
  const withRoles = ds.filter(d => d.roles)
  if (!withRoles.length) return null
  const names = [...new Set(withRoles.flatMap(d => Object.keys(d.roles)))]
  names.sort((a, b) => (ROLES.indexOf(a) + 1 || 99) - (ROLES.indexOf(b) + 1 || 99))
  return Object.fromEntries(names.map(r => [r, round3(withRoles.reduce((s, d) => s + (d.roles[r] ?? 0), 0) / withRoles.length)]))
}

/**
 * The host's idle cores in a run, from its diagnosis: the host-idle share its evidence gives, against the busy cores
 * its roles sum to; the mean over the runs that have both, null when none does.
 */
function meanIdleCores (ds) {
  const idle = ds.map(d => {
    const pct = d.bottleneck?.evidence?.find(e => e.figure === 'host-idle')?.value
    const busy = d.roles ? Object.values(d.roles).reduce((a, b) => a + b, 0) : null
    return Number.isFinite(pct) && pct < 100 && busy !== null ? busy * pct / (100 - pct) : null
  }).filter(v => v !== null)
  return idle.length ? round3(idle.reduce((a, b) => a + b, 0) / idle.length) : null
}

function sentenceOf (g, steps, strategy) {
  const said = steps.filter(s => s.kind)
  if (!said.length) return { from: null, kind: null, sentence: `${g.name}: no run of this group has a diagnosis (runs made before nodescale diagnosed them)` }
  const last = said.at(-1)
  let from = last.n
  for (let i = said.length - 2; i >= 0 && said[i].kind === last.kind; i--) from = said[i].n
  const fit = g.fits?.usl && !g.fits.usl.error ? g.fits.usl : null
  const coefficient = !fit || last.kind === 'none' || last.kind === 'load-generator' ? '' : coefficientOf(fit)
  const where = from === said[0].n && said.length > 1 ? `at every N (${said[0].n}..${last.n})` : `from N = ${from}`
  const story = storyOf(last.kind, strategy, last.idleCores ?? null)
  return { from, kind: last.kind, sentence: `${g.name}: ${where} ${story}; at N = ${last.n}: ${last.line}${coefficient}` }
}

/**
 * How the fit shows the limit the runs name: a ceiling when linear-up-to-a-ceiling fits best (AICc), else the USL term
 * that dominates, only where the fit identifies it (an interval printed); nothing when it does not.
 * @param {{ sigma: number, lambda: number, limitedBy?: string, ci95?: { sigma?: any, lambda?: any } }} fit
 */
function coefficientOf (fit) {
  if (fit.limitedBy === 'ceiling') return ' — the fit shows it as a ceiling (linear up to a ceiling fits best by AICc)'
  const term = fit.sigma >= fit.lambda ? 'sigma' : 'lambda'
  // a fit without intervals (older results) keeps the coefficient; a fit that cannot identify the term says nothing
  if (fit.ci95 && !fit.ci95[term]) return ''
  return term === 'sigma'
    ? ` — the ceiling the USL fit shows as contention σ = ${fix(fit.sigma, 3)}`
    : ` — the ceiling the USL fit shows as coherency λ = ${fix(fit.lambda, 3)}`
}

/**
 * Why a row of the per-core table (analyzer/report/report-runs.js cpuTable) looks as it does: what limited its runs,
 * and for a saturated loop with cores left idle, that the idle cores have nothing of it to run (the multi-core study's
 * raw Node); otherwise the strategy's story (storyOf: for cm, pm2 and hs what more workers would do with the idle cores
 * of those the server may use).
 * @param {{ strategy: string | null, instances: number | null, load: string, highest: number | null, lowest: number |
 *   null, spread: number | null, bottleneck: string | null, elu: number | null, idleCores?: number | null, given?:
 *   boolean }} row
 * @returns {string | null}
 */
export function perCoreWhy (row) {
  if (!row.bottleneck) return null
  const label = `${row.strategy} x${row.instances} at ${row.load}${/^\d+$/.test(row.load) ? ' connections' : ''}`
  const cores = Number.isFinite(row.highest) && Number.isFinite(row.lowest)
    ? `busiest core ${Math.round(row.highest)}%, idlest ${Math.round(row.lowest)}%`
    : null
  if (row.bottleneck === 'event-loop' && cores && row.spread >= 25) {
    return `${label}: ${cores}: ${row.instances === 1 || row.strategy === 'up' ? 'its one event loop is' : 'its event loops are'} ` +
      `saturated (ELU ${fix(row.elu)}), so the idle core has nothing of it to run`
  }
  return `${label}: ${row.bottleneck}${cores ? ` (${cores}${Number.isFinite(row.elu) ? `, busiest loop ELU ${fix(row.elu)}` : ''})` : ''}: ` +
    storyOf(row.bottleneck, row.strategy, row.idleCores ?? null, row.given ? 'the cores it was given' : 'the host\'s cores')
}
