// The Ibenchjs paper's Table 4 (MIMN: the CPU app's maximum throughput on 1-4 nodes, and the instances at it) against
// a sweep of experiments/ibench-mimn.yml: its shape, which survives a change of hardware (throughput rising with the
// nodes, sub-linearly; the instances at the maximum growing with them), compared on a swarm of separate machines; on
// this machine's local swarm, whose nodes share its cores, the distribution is shown and the capacity not compared.
import { loadPoints } from '../points.js'
import { ibenchMimn as published } from './published.js'
import { meanCi, directionVerdict, leftOutWhy, signedPct } from './rules.js'

/** The local swarm's nodes live on this machine's bridge (executor/local-swarm/network.js). */
const LOCAL_SWARM = /^10\.99\.0\./

/**
 * Table 4's rows on a MIMN sweep.
 * @param {{ dir: string | string[], runs: { detail: { run: any } }[], leftOut?: import('./rules.js').LeftOut[],
 *   includeInvalid: boolean }} input finished runs, and those left out as not valid
 */
export async function ibenchMimnRows ({ dir, runs, leftOut = [], includeInvalid }) {
  const t4 = published.table4
  const points = runs.length ? await loadPoints(dir, { x: 'nodes', groupBy: ['strategy', 'benchmark'], includeInvalid }) : { groups: [] }
  const group = points.groups.find(g => g.key.strategy === 'hs' && g.key.benchmark === t4.benchmark)
  const nodes = runs[0]?.detail.run.environment?.nodes ?? []
  const local = nodes.length > 0 && nodes.filter(n => n.role === 'worker').every(n => LOCAL_SWARM.test(String(n.addr)))
  const base = (id, what) => ({ id, source: t4.source, published: what })
  const ns = (group?.points ?? []).map(p => p.n).sort((a, b) => a - b)
  const at = (n) => group.observations.filter(o => o.n === n).map(o => o.throughput)
  const pub = Object.fromEntries(t4.rows.map(r => [r.nodes.value, r]))
  if (ns.length < 2) {
    const left = leftOut.filter(r => r.strategy === 'hs' && r.benchmark === t4.benchmark)
    const none = left.length ? `no valid hs runs of the cpu app: ${leftOutWhy(left)}` : 'no hs runs of the cpu app'
    const why = `the sweep has ${ns.length ? `one node count (${ns[0]})` : none}: Table 4 needs two or more`
    return ['throughput rises with the nodes', 'sub-linearly', 'the instances at the maximum grow with the nodes'].map(w => ({
      ...base(`Table 4: ${w}`, {}),
      ours: null,
      rule: '-',
      verdict: 'not-comparable',
      absent: !ns.length && !left.length,
      why
    }))
  }
  const sharing = 'local swarm: its nodes share this machine\'s cores, so a node adds no capacity; the distribution is shown, the capacity is not comparable'
  const rows = []
  for (let i = 1; i < ns.length; i++) {
    const [lo, hi] = [ns[i - 1], ns[i]]
    const d = directionVerdict({ a: at(hi), b: at(lo), aName: `${hi} nodes`, bName: `${lo} nodes`, what: `the best throughput on ${hi} nodes against ${lo}` })
    rows.push({
      ...base(`Table 4: throughput rises from ${lo} to ${hi} nodes`, {
        [`${lo} nodes`]: pub[lo]?.throughput.printed ?? '-',
        [`${hi} nodes`]: pub[hi]?.throughput.printed ?? '-'
      }),
      ours: { [`${lo} nodes`]: meanCi(at(lo)), [`${hi} nodes`]: meanCi(at(hi)) },
      rule: 'the best mean throughput over instances and workloads at each node count: more nodes, more throughput (Welch\'s one-sided t-test, α = 0.05)',
      effect: { published: pub[lo] && pub[hi] ? signedPct(pub[hi].throughput.value / pub[lo].throughput.value - 1) : '-', here: d.effect ?? '-' },
      ...(local ? { verdict: 'not-comparable', why: `${sharing} (${d.why})` } : { verdict: d.verdict, why: d.why })
    })
  }
  const top = ns.at(-1)
  const one = meanCi(at(ns[0]))
  const last = meanCi(at(top))
  const ratio = one && last ? last.mean / ((top / ns[0]) * one.mean) : null
  const pubRatio = pub[top] && pub[ns[0]] ? pub[top].throughput.value / ((top / ns[0]) * pub[ns[0]].throughput.value) : null
  const shown = `X(${top}) / (${top / ns[0]} x X(${ns[0]})) = ${ratio?.toFixed(2)}`
  const k = top / ns[0]
  // sub-linear is a direction: K times the first node count's runs above the last's, by the same one-sided test
  const linear = directionVerdict({
    a: at(ns[0]).map(x => k * x),
    b: at(top),
    aName: `${k} x X(${ns[0]})`,
    bName: `X(${top})`,
    what: 'linear against measured'
  })
  const subLinear = () => {
    if (local) return { verdict: 'not-comparable', why: `${sharing}; here ${shown}` }
    if (ratio === null) return { verdict: 'not-comparable', why: 'no throughput at the first or last node count' }
    return { verdict: linear.verdict, why: `${shown} (published ${pubRatio?.toFixed(2) ?? '-'}); ${linear.why}` }
  }
  rows.push({
    ...base(`Table 4: ${top} nodes give less than ${top / ns[0]} times ${ns[0]} node${ns[0] === 1 ? '' : 's'}`,
      { ratio: pubRatio === null ? '-' : pubRatio.toFixed(2) }),
    ours: { ratio: ratio === null ? null : Math.round(ratio * 100) / 100 },
    rule: 'sub-linear: X(K) below K x X(1), by Welch\'s one-sided t-test over the runs at α = 0.05 (the paper: 7527 against a linear 9100 req/s)',
    effect: { published: pubRatio === null ? '-' : `${pubRatio.toFixed(2)} of linear`, here: ratio === null ? '-' : `${ratio.toFixed(2)} of linear` },
    ...subLinear()
  })
  const inst = ns.map(n => group.points.find(p => p.n === n)?.config?.instances ?? null)
  const grows = inst.every((v, i) => i === 0 || (v !== null && inst[i - 1] !== null && v >= inst[i - 1])) && inst.at(-1) > inst[0]
  rows.push({
    ...base('Table 4: the instances at the maximum grow with the nodes', Object.fromEntries(t4.rows.map(r => [`${r.nodes.value} nodes`, r.instances.printed]))),
    ours: Object.fromEntries(ns.map((n, i) => [`${n} nodes`, inst[i]])),
    rule: 'the instance count of each node count\'s best point does not fall as nodes are added, and ends higher',
    effect: {
      published: `${t4.rows[0].instances.printed} to ${t4.rows.at(-1).instances.printed} instances`,
      here: `${inst[0] ?? '-'} to ${inst.at(-1) ?? '-'} instances`
    },
    ...instancesVerdict(inst, ns, grows, local)
  })
  return rows
}

/**
 * The instances at the maximum: compared on separate machines only. On a local swarm more replicas add no cores, so
 * the best of a flat row of points is chance, not where the capacity is.
 */
function instancesVerdict (inst, ns, grows, local) {
  if (inst.includes(null)) return { verdict: 'not-comparable', why: 'the sweep\'s points do not say their instance count (one instance count per node count?)' }
  const shown = `instances at the maximum: ${inst.join(', ')} on ${ns.join(', ')} nodes`
  if (local) {
    return {
      verdict: 'not-comparable',
      why: `local swarm: its nodes share this machine's cores, so more replicas add no capacity and the best point among them is chance; ${shown}`
    }
  }
  return { verdict: grows ? 'reproduced' : 'not-reproduced', why: shown }
}
