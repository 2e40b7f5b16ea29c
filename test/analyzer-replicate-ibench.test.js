// analyzer replicate --study ibench-smisn on synthetic sweeps: findings 1, 2 and 5 and Table 5, each built once to
// reproduce and once to contradict (the verdict flips), and not comparable where the sweep lacks what a row needs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { replicate } from '../analyzer/replicate.js'
import { writeSweepRuns } from './helpers/sweep-runs.js'
import { runCli } from './helpers/cli.js'

function tmp (t) {
  const dir = mkdtempSync(join(tmpdir(), 'ns-replicate-ib-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const twice = (config, tput, extra = {}) => [-1, 1].map(s => ({ config, throughput: tput + s, ...extra }))
const verdictOf = (r, id) => r.rows.find(row => row.id === id)?.verdict

/** up and hs of the cpu app over instances at 0.5 CPU each on 2 cores: `up` and `hs` give each N's throughput. */
function overInstances (out, { up, hs }) {
  return writeSweepRuns(out, 'ibench-smisn', [
    ...up.flatMap((x, i) => twice({ strategy: 'up', instances: i + 1, cpusPerInstance: 0.5 }, x)),
    ...hs.flatMap((x, i) => twice({ strategy: 'hs', instances: i + 1, cpusPerInstance: 0.5 }, x))
  ])
}

test('findings 1 and 2: up stops rising at a whole core, hs once its quotas fill the machine; flipped when they rise', async (t) => {
  const as = await replicate(overInstances(tmp(t), { up: [50, 100, 101, 99], hs: [50, 100, 150, 190, 191, 190] }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(as, 'finding 1 (cpu): up gains nothing from more vCPUs'), 'reproduced')
  assert.equal(verdictOf(as, 'finding 2 (cpu): hs stops rising once the CPU is used up'), 'reproduced')
  assert.match(as.rows.find(r => r.id.startsWith('finding 1')).why,
    /up at N=4 vs N=2: a rise of 10% or more is ruled out \(p = 0\.0089; 99 vs 100 req\/s, -1\.0% \[-5\.0%, \+3\.2%\] \(90%\)\)/)
  const not = await replicate(overInstances(tmp(t), { up: [50, 100, 150, 200], hs: [50, 100, 150, 200, 250, 300] }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(not, 'finding 1 (cpu): up gains nothing from more vCPUs'), 'not-reproduced')
  assert.equal(verdictOf(not, 'finding 2 (cpu): hs stops rising once the CPU is used up'), 'not-reproduced')
  assert.match(not.rows.find(r => r.id.startsWith('finding 2')).why, /it still rises here/)
  for (const r of as.rows.filter(x => x.id.startsWith('finding 5') || x.id.startsWith('Table 5'))) assert.equal(r.verdict, 'not-comparable', r.id)
})

/**
 * The baseline app: hs and cm at 4 instances (by default x 0.5 CPU: the machine's 2 cores), cm at 1; the server's
 * CPU in each run (workers, and the primary's in cm's).
 */
function finding5 (out, { hs, cm, primary, quota = 0.5, workers = 1.9 }) {
  const diagnosis = (p) => ({ bottleneck: { kind: 'cpu-quota' }, roles: { workers, primary: p } })
  return writeSweepRuns(out, 'ibench-finding5', [
    ...twice({ strategy: 'hs', instances: 4, cpusPerInstance: quota, benchmark: 'baseline' }, hs, { diagnosis: diagnosis(0) }),
    ...[primary - 0.002, primary + 0.002].map((p, i) => ({
      config: { strategy: 'cm', instances: 4, cpusPerInstance: quota, benchmark: 'baseline' }, throughput: cm + (i ? 1 : -1), diagnosis: diagnosis(p)
    })),
    ...twice({ strategy: 'cm', instances: 1, cpusPerInstance: quota, benchmark: 'baseline' }, 100)
  ])
}

test('finding 5: hs serves more than cm at full CPU, cm\'s primary spends CPU, cm beats one instance; and flipped', async (t) => {
  const as = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary: 0.05 }), { study: 'ibench-smisn' })
  for (const id of ['finding 5: hs serves more than cm at full CPU', 'finding 5: cm\'s primary spends CPU',
    'finding 5: cm still improves on one instance']) assert.equal(verdictOf(as, id), 'reproduced', id)
  // the synthetic runs name no connection: keep-alive, said with what --connection close would measure instead
  assert.match(as.rows.find(r => r.id === 'finding 5: cm\'s primary spends CPU').why, /kept their connections alive, so the primary handed each over once/)
  const not = await replicate(finding5(tmp(t), { hs: 350, cm: 400, primary: 0.001 }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(not, 'finding 5: hs serves more than cm at full CPU'), 'not-reproduced')
  assert.equal(verdictOf(not, 'finding 5: cm\'s primary spends CPU'), 'not-reproduced')
})

test('finding 5 at quotas that leave the generator a core: full CPU is the server using its quota up, not the machine', async (t) => {
  const used = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary: 0.05, quota: 0.25, workers: 0.93 }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(used, 'finding 5: hs serves more than cm at full CPU'), 'reproduced')
  const idle = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary: 0.05, quota: 0.25, workers: 0.6 }), { study: 'ibench-smisn' })
  const row = idle.rows.find(r => r.id === 'finding 5: hs serves more than cm at full CPU')
  assert.equal(row.verdict, 'not-comparable')
  assert.match(row.why,
    /at N=4 \(the largest N both ran\) the CPU was not used up: the quotas \(1 CPU\) fill 1 of 2 cores, and the server used hs 0\.6, cm 0\.65 cores/)
})

test('finding 5 with every run left out as unstable: the rows say so, and --include-invalid judges them', async (t) => {
  const unstable = { ok: false, flags: [{ name: 'unstable', severity: 'invalid', message: 'known to ±7% only' }] }
  const dir = writeSweepRuns(tmp(t), 'ibench-finding5', [
    ...twice({ strategy: 'hs', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 400, { validity: unstable }),
    ...twice({ strategy: 'cm', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 350,
      { validity: unstable, diagnosis: { roles: { workers: 1.9, primary: 0.05 } } }),
    ...twice({ strategy: 'cm', instances: 1, cpusPerInstance: 0.5, benchmark: 'baseline' }, 100, { validity: unstable })
  ])
  const r = await replicate(dir, { study: 'ibench-smisn' })
  const row = r.rows.find(x => x.id === 'finding 5: hs serves more than cm at full CPU')
  assert.equal(row.verdict, 'not-comparable')
  assert.equal(row.why, 'no valid hs and cm runs of the baseline app: 6 finished and left out, unstable 6 (hs 2, cm 4) (--include-invalid takes them)')
  assert.equal(verdictOf(await replicate(dir, { study: 'ibench-smisn', includeInvalid: true }), 'finding 5: hs serves more than cm at full CPU'), 'reproduced')
})

test('several sweeps of a study make one table, each row judged by the sweep that can; the report shows it once', async (t) => {
  const out = tmp(t)
  const over = overInstances(out, { up: [50, 100, 101, 99], hs: [50, 100, 150, 190, 191, 190] })
  const f5 = finding5(out, { hs: 400, cm: 350, primary: 0.05 })
  const r = await replicate([over, f5], { study: 'ibench-smisn' })
  assert.deepEqual(r.sweeps.map(s => s.experiment), ['ibench-smisn', 'ibench-finding5'])
  const row = (id) => r.rows.find(x => x.id === id)
  assert.equal(row('finding 1 (cpu): up gains nothing from more vCPUs').verdict, 'reproduced')
  assert.equal(row('finding 1 (cpu): up gains nothing from more vCPUs').sweep, r.sweeps[0].id)
  assert.equal(row('finding 5: hs serves more than cm at full CPU').verdict, 'reproduced')
  assert.equal(row('finding 5: hs serves more than cm at full CPU').sweep, r.sweeps[1].id)
  assert.equal(row('Table 5 (CPU-intensive): USL fits better than Amdahl').verdict, 'not-comparable')
  assert.equal(r.counts.reproduced, 5)
  assert.match(r.order.says, new RegExp(`sweep ${r.sweeps[1].id}: runs in order shapes`))
  const text = await runCli('analyzer', ['replicate', over, f5, '--study', 'ibench-smisn'])
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /verdict\s+sweep/)
  // a qualitative finding's published column says what the study says moves which way, in its words
  assert.equal(row('finding 5: cm\'s primary spends CPU').published.says, 'CM uses more CPU than HS: its master balances the load and keeps the workers')
  assert.equal(row('finding 1 (cpu): up gains nothing from more vCPUs').published.says,
    'throughput and response time stay the same or get worse as vCPUs are added; CPU stays at one core')
  assert.match(text.stdout, /finding 5: hs serves more than cm at full CPU +section 6 \(conclusion\), finding 5 +HS: significantly higher throughput/)
  const md = await runCli('analyzer', ['report', over, f5, '--format', 'md', '-o', join(out, 'r.md')])
  assert.equal(md.code, 0, md.stderr)
  assert.equal(readFileSync(join(out, 'r.md'), 'utf8').match(/## Replication: /g)?.length, 1)
})

/** hs x4 over workloads for both apps, by USL with the given contention and coherency, and a little noise. */
function table5 (out, { cpu, net }) {
  const usl = (n, { sigma, lambda }) => 100 * n / (1 + sigma * (n - 1) + lambda * n * (n - 1))
  const runs = []
  for (const [benchmark, c] of [['cpu', cpu], ['net-out', net]]) {
    for (const n of [1, 2, 4, 8, 16, 32]) {
      runs.push(...[-0.2, 0.2].map(e => ({
        config: { strategy: 'hs', instances: 4, cpusPerInstance: 0.5, benchmark, concurrency: n }, throughput: usl(n, c) + e
      })))
    }
  }
  return writeSweepRuns(out, 'ibench-smisn', runs)
}

test('Table 5: USL fits better than Amdahl for each app, and the network app\'s coefficients are larger; flipped', async (t) => {
  const as = await replicate(table5(tmp(t), { cpu: { sigma: 0.02, lambda: 0.001 }, net: { sigma: 0.05, lambda: 0.004 } }), { study: 'ibench-smisn' })
  const t5 = as.rows.filter(r => r.id.startsWith('Table 5'))
  assert.equal(t5.length, 5)
  for (const r of t5) assert.equal(r.verdict, 'reproduced', `${r.id}: ${r.why}`)
  assert.deepEqual(as.rows.find(r => r.id === 'Table 5 (CPU-intensive): USL fits better than Amdahl').published, { usl: '98.76%', amdahl: '93.15%' })
  const not = await replicate(table5(tmp(t), { cpu: { sigma: 0.05, lambda: 0.004 }, net: { sigma: 0.02, lambda: 0.001 } }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(not, 'Table 5: USL σ of the network app above the CPU app\'s'), 'not-reproduced')
  assert.match(not.rows.find(r => r.id === 'Table 5: USL σ of the network app above the CPU app\'s').why, /the other way here/)
  const flat = await replicate(table5(tmp(t), { cpu: { sigma: 0.02, lambda: 0 }, net: { sigma: 0.05, lambda: 0 } }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(flat, 'Table 5 (CPU-intensive): USL fits better than Amdahl'), 'inconclusive',
    'no coherency to find: the F test cannot tell the models apart, no evidence against')
})

/** hs of the cpu app on 1..4 nodes at 2 or 4 replicas per node; `best(k)` the throughput at 4 a node on k nodes. */
function mimn (out, best, opts) {
  const runs = []
  for (let k = 1; k <= 4; k++) {
    runs.push(...twice({ strategy: 'hs', nodes: k, instances: 2 * k, backend: 'swarm' }, best(k) * 0.6))
    runs.push(...twice({ strategy: 'hs', nodes: k, instances: 4 * k, backend: 'swarm' }, best(k)))
  }
  return writeSweepRuns(out, 'ibench-mimn', runs, opts)
}
const TABLE4 = [2275, 4523, 6616, 7527]
const machines = [{ role: 'manager', addr: '10.0.0.1' }, ...[2, 3, 4, 5].map(i => ({ role: 'worker', addr: `10.0.0.${i}` }))]

test('Table 4 on separate machines: throughput rises sub-linearly with the nodes, the instances at the maximum grow; flipped', async (t) => {
  const as = await replicate(mimn(tmp(t), k => TABLE4[k - 1], { nodes: machines }), { study: 'ibench-mimn' })
  assert.deepEqual(as.counts, { reproduced: 5, 'not-reproduced': 0, inconclusive: 0, 'not-comparable': 0 }, as.rows.map(r => `${r.id}: ${r.why}`).join('\n'))
  assert.match(as.rows.find(r => r.id.startsWith('Table 4: 4 nodes give less')).why, /= 0\.83 \(published 0\.83\)/)
  assert.deepEqual(as.rows.find(r => r.id.includes('instances')).ours, { '1 nodes': 4, '2 nodes': 8, '3 nodes': 12, '4 nodes': 16 })
  const not = await replicate(mimn(tmp(t), k => [2275, 4700, 7100, 6000][k - 1], { nodes: machines }), { study: 'ibench-mimn' })
  assert.equal(verdictOf(not, 'Table 4: throughput rises from 3 to 4 nodes'), 'not-reproduced')
  const linear = await replicate(mimn(tmp(t), k => 2275 * k * 1.1 ** (k - 1), { nodes: machines }), { study: 'ibench-mimn' })
  assert.equal(verdictOf(linear, 'Table 4: 4 nodes give less than 4 times 1 node'), 'not-reproduced')
})

test('Table 4 on the local swarm: not comparable (its nodes share one machine), the figures still shown', async (t) => {
  const local = [{ role: 'manager', addr: '10.99.0.1' }, { role: 'worker', addr: '10.99.0.2' }, { role: 'worker', addr: '10.99.0.3' }]
  const r = await replicate(mimn(tmp(t), k => TABLE4[k - 1], { nodes: local }), { study: 'ibench-mimn' })
  for (const row of r.rows) {
    assert.equal(row.verdict, 'not-comparable', row.id)
    assert.match(row.why, /local swarm: its nodes share this machine's cores/)
  }
  const inst = r.rows.find(x => x.id === 'Table 4: the instances at the maximum grow with the nodes')
  assert.match(inst.why, /the best point among them is chance; instances at the maximum: 4, 8, 12, 16 on 1, 2, 3, 4 nodes/)
})

test('Table 4 with every run left out as not valid: the rows say which runs and why', async (t) => {
  const disturbed = { ok: false, flags: [{ name: 'disturbed', severity: 'invalid', message: 'other processes used 1.5 cores' }] }
  const runs = [1, 2].flatMap(k => twice({ strategy: 'hs', nodes: k, instances: 2 * k, backend: 'swarm' }, 100 * k, { validity: disturbed }))
  const r = await replicate(writeSweepRuns(tmp(t), 'ibench-mimn', runs, { nodes: machines }), { study: 'ibench-mimn' })
  for (const row of r.rows) {
    assert.equal(row.verdict, 'not-comparable')
    assert.match(row.why, /no valid hs runs of the cpu app: 4 finished and left out, disturbed 4 \(hs 4\) \(--include-invalid takes them\)/)
  }
})

test('several sweeps, a row none can judge: the reason comes from the sweep that had runs for it', async (t) => {
  const out = tmp(t)
  const over = overInstances(out, { up: [50, 100, 101, 99], hs: [50, 100, 150, 190, 191, 190] })
  const unstable = { ok: false, flags: [{ name: 'unstable', severity: 'invalid', message: 'known to ±7% only' }] }
  const f5 = writeSweepRuns(out, 'ibench-finding5', [
    ...twice({ strategy: 'hs', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 400),
    ...twice({ strategy: 'cm', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 350, { diagnosis: { roles: { workers: 1.9, primary: 0.05 } } }),
    ...twice({ strategy: 'cm', instances: 1, cpusPerInstance: 0.5, benchmark: 'baseline' }, 100, { validity: unstable })
  ])
  const r = await replicate([over, f5], { study: 'ibench-smisn' })
  const row = r.rows.find(x => x.id === 'finding 5: cm still improves on one instance')
  assert.equal(row.verdict, 'not-comparable')
  assert.equal(row.sweep, r.sweeps[1].id)
  assert.match(row.why, /no valid cm x1 runs of the baseline app: 2 finished and left out, unstable 2 \(cm 2\)/)
})

test('finding 1 on two noisy runs a side: inconclusive (no rise over the margin ruled out), not reproduced', async (t) => {
  const runs = [[2, 90], [2, 110], [4, 95], [4, 125]]
    .map(([instances, throughput]) => ({ config: { strategy: 'up', instances, cpusPerInstance: 0.5 }, throughput }))
  const r = await replicate(writeSweepRuns(tmp(t), 'ibench-smisn', runs), { study: 'ibench-smisn' })
  const row = r.rows.find(x => x.id === 'finding 1 (cpu): up gains nothing from more vCPUs')
  assert.equal(row.verdict, 'inconclusive')
  assert.match(row.why, /the runs show neither a significant rise nor one under 10% \(p = 0\.49 against a rise of 10% or more; 110 vs 100 req\/s/)
  assert.deepEqual(row.effect, { published: 'no rise (the same or worse)', here: '+9.5% [-35.5%, +85.9%] (90%)' })
  assert.equal(r.counts.inconclusive, 1)
})

test('finding 5\'s primary: decided by a test against a 1% share, not by rounding its cores to 3 decimals', async (t) => {
  // keep-alive levels: runs of 0.0004 and 0.0044 cores, or 0.0006 and 0.0046; the old rule's 95% interval, rounded to
  // 3 decimals, decided whether it excluded 0. Against a stated margin both are shown negligible, for the same reason
  for (const primary of [0.0024, 0.0026]) {
    const r = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary }), { study: 'ibench-smisn' })
    const row = r.rows.find(x => x.id === 'finding 5: cm\'s primary spends CPU')
    assert.equal(row.verdict, 'not-reproduced', `${primary}: ${row.why}`)
    assert.match(row.why, /over 2 runs against a margin of 1\.0%, below it \(one-sided p = 0\.0\d+\): negligible/)
  }
  // about 1% of the server's CPU: neither shown above the margin nor below it
  const near = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary: 0.02 }), { study: 'ibench-smisn' })
  assert.equal(verdictOf(near, 'finding 5: cm\'s primary spends CPU'), 'inconclusive')
  const spent = await replicate(finding5(tmp(t), { hs: 400, cm: 350, primary: 0.05 }), { study: 'ibench-smisn' })
  const row = spent.rows.find(x => x.id === 'finding 5: cm\'s primary spends CPU')
  assert.equal(row.verdict, 'reproduced')
  assert.match(row.effect.here, /^2\.6% \[1\.3%, 3\.8%\]$/, '0.05 of 1.95 cores')
})

test('several sweeps: pooled, the same verdicts in every order of the folders; where the sweeps alone disagree, a note', async (t) => {
  const out = tmp(t)
  const over = overInstances(join(out, 'a'), { up: [50, 100, 101, 99], hs: [50, 100, 150, 190, 191, 190] })
  // two sweeps of finding 5 that disagree alone: hs above cm in one, below in the other; pooled they cannot tell
  const f5 = finding5(join(out, 'b'), { hs: 400, cm: 350, primary: 0.05 })
  const again = writeSweepRuns(join(out, 'c'), 'ibench-finding5', [
    ...twice({ strategy: 'hs', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 350,
      { diagnosis: { bottleneck: { kind: 'cpu-quota' }, roles: { workers: 1.9, primary: 0 } } }),
    ...twice({ strategy: 'cm', instances: 4, cpusPerInstance: 0.5, benchmark: 'baseline' }, 400,
      { diagnosis: { bottleneck: { kind: 'cpu-quota' }, roles: { workers: 1.9, primary: 0.05 } } })
  ], { id: '20261125-090000-ibench-finding5-ef01', cpus: 4 })
  const folders = [over, f5, again]
  const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]].map(o => o.map(i => folders[i]))
  const seen = new Set()
  for (const order of orders) {
    const r = await replicate(order, { study: 'ibench-smisn' })
    seen.add(JSON.stringify({ rows: r.rows.map(({ id, verdict, why, sweep, effect }) => ({ id, verdict, why, sweep, effect })), counts: r.counts }))
    const row = r.rows.find(x => x.id === 'finding 5: hs serves more than cm at full CPU')
    assert.equal(row.verdict, 'inconclusive', 'hs 399, 401, 349, 351 against cm 349, 351, 399, 401: neither way')
    assert.equal(row.sweep, '20261124-120000-ibench-finding5-abcd, 20261125-090000-ibench-finding5-ef01')
    assert.ok(r.notes.includes('finding 5: hs serves more than cm at full CPU: the sweeps alone disagree (20261124-120000-ibench-finding5-abcd ' +
      'reproduced, 20261125-090000-ibench-finding5-ef01 not-reproduced); the row pools their runs: inconclusive'), r.notes.join('\n'))
    assert.deepEqual(r.sweeps.map(s => s.id), order.map(dir => dir.split('/').at(-1)), 'the sweeps listed as given')
    assert.match(r.notes.join('\n'), /the repeats of each shape ran on one deployment \(order shapes\): the tests count them as independent/)
    assert.ok(r.notes.includes('the sweeps ran on different machines (test cpu, 2 cores; test cpu, 4 cores): their runs are pooled as if on one'),
      r.notes.join('\n'))
  }
  assert.equal(seen.size, 1, 'one set of rows and verdicts whatever the order')
})
