// The published figures shipped as data (analyzer/replication/published.js), checked three ways: every number is in
// the excerpt it was typed from, exactly as printed, and agrees with its value; every excerpt is a verbatim passage of
// its reference text (when the reference texts are at hand); and each table has the shape the study printed (the 3 x 3
// grid of the thesis's Table 4.3.1, both apps and models of Ibenchjs Table 5, the four rising rows of its Table 4),
// with the columns in the order printed and the arithmetic the tables imply. A mistyped number fails: the checker is
// run on deliberately broken copies too.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { multicore, ibenchSmisn, ibenchMimn, studies, STUDY_IDS } from '../analyzer/replication/published.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
/** The reference texts: beside the checkout here; elsewhere NODESCALE_REFERENCES names their folder. */
const REFERENCES = process.env.NODESCALE_REFERENCES ?? join(ROOT, '..', 'shared', 'references')
const DATA = { multicore, ibenchSmisn, ibenchMimn }

/** Whitespace as the data's header says: runs of blanks are one space, a line break after a hyphen is dropped. */
const norm = s => s.replace(/\s+/g, ' ').replace(/(\p{L})- /gu, '$1-').trim()

const WORDS = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 }

/** The number a printed text states: its first numeral (thousands separators allowed), else its first number word. */
function numberOf (printed) {
  const digits = printed.match(/\d[\d,]*(?:\.\d+)?/)
  if (digits) return Number(digits[0].replace(/,/g, ''))
  const word = printed.toLowerCase().match(new RegExp(`\\b(${Object.keys(WORDS).join('|')})\\b`))
  return word ? WORDS[word[1]] : null
}

const isFigure = v => v && typeof v === 'object' && 'printed' in v && 'value' in v && 'unit' in v

/**
 * Everything wrong with a study's data, as messages (none when it is right): records without a source, figures not
 * printed in their record's excerpt or disagreeing with their printed text, numbers that are not figures.
 */
function problemsOf (data, path = '', owner = null, out = []) {
  if (Array.isArray(data)) {
    data.forEach((v, i) => problemsOf(v, `${path}[${i}]`, owner, out))
    return out
  }
  if (typeof data === 'number' && !/\.(number)$/.test(path)) out.push(`${path}: a bare number (${data}), not a figure with its printed text`)
  if (!data || typeof data !== 'object') return out
  if ('excerpt' in data) {
    if (typeof data.excerpt !== 'string' || !data.excerpt.trim()) out.push(`${path}: empty excerpt`)
    if (!data.source?.file || !data.source?.where) out.push(`${path}: a record without source { file, where }`)
    owner = { path, excerpt: norm(String(data.excerpt)) }
  }
  if (isFigure(data)) {
    if (!owner) out.push(`${path}: a figure outside any quoted record`)
    else if (!owner.excerpt.includes(norm(data.printed))) out.push(`${path}: '${data.printed}' is not in the excerpt of ${owner.path}`)
    if (numberOf(data.printed) !== data.value) out.push(`${path}: value ${data.value} but printed '${data.printed}'`)
    return out
  }
  for (const [k, v] of Object.entries(data)) problemsOf(v, `${path}.${k}`, owner, out)
  return out
}

/** Every quoted record of a study's data, with where it sits. */
function quotedOf (data, path = '', out = []) {
  if (Array.isArray(data)) data.forEach((v, i) => quotedOf(v, `${path}[${i}]`, out))
  else if (data && typeof data === 'object') {
    if (typeof data.excerpt === 'string') out.push({ path, record: data })
    for (const [k, v] of Object.entries(data)) quotedOf(v, `${path}.${k}`, out)
  }
  return out
}

const clone = o => JSON.parse(JSON.stringify(o))

test('every published number is printed in its record\'s excerpt, as typed, and every record names its source', () => {
  for (const [name, data] of Object.entries(DATA)) assert.deepEqual(problemsOf(data, name), [], name)
  const files = new Set(Object.values(studies).map(s => s.file))
  for (const [name, data] of Object.entries(DATA)) {
    for (const { path, record } of quotedOf(data, name)) assert.ok(files.has(record.source.file), `${path}: unknown reference ${record.source.file}`)
  }
})

test('the checker fails a mistyped number, a mistyped printed text and a figure whose excerpt lost it', () => {
  const value = clone(multicore)
  value.rows[0].highest.usage.value = 77.1
  assert.match(problemsOf(value, 'multicore').join('\n'), /value 77\.1 but printed '77\.7%'/)
  const printed = clone(ibenchMimn)
  printed.table4.rows[0].throughput = { value: 2275, printed: '2,275', unit: 'req/s' }
  assert.match(problemsOf(printed, 'ibenchMimn').join('\n'), /'2,275' is not in the excerpt/)
  const excerpt = clone(ibenchSmisn)
  excerpt.table5.fits[0].excerpt = 'USL 0.017 0.0012 98.67% 0.0282 0.002 99.24%'
  assert.match(problemsOf(excerpt, 'ibenchSmisn').join('\n'), /'98\.76%' is not in the excerpt/)
  const bare = clone(ibenchMimn)
  bare.table4.rows[1].instances = 8
  assert.match(problemsOf(bare, 'ibenchMimn').join('\n'), /a bare number \(8\)/)
})

test('every excerpt is a verbatim passage of its reference text', t => {
  if (!existsSync(REFERENCES)) {
    t.skip(`the reference texts are not beside this checkout (${REFERENCES}); set NODESCALE_REFERENCES to their folder to check the excerpts against them`)
    return
  }
  const texts = new Map()
  const textOf = file => {
    if (!texts.has(file)) texts.set(file, norm(readFileSync(join(REFERENCES, file), 'utf8')))
    return texts.get(file)
  }
  let checked = 0
  for (const [name, data] of Object.entries(DATA)) {
    for (const { path, record } of quotedOf(data, name)) {
      assert.ok(existsSync(join(REFERENCES, record.source.file)), `${path}: ${record.source.file} is not in ${REFERENCES}`)
      assert.ok(textOf(record.source.file).includes(norm(record.excerpt)), `${path}: its excerpt is not in ${record.source.file}: ${record.excerpt}`)
      checked++
    }
  }
  assert.ok(checked > 60, `only ${checked} excerpts checked`)

  // Table 4.3.1's rows in the order printed, each under the load heading printed before it
  const text = textOf(multicore.file)
  const start = text.indexOf(norm(multicore.rows[0].excerpt))
  let at = start
  for (const r of multicore.rows) {
    const here = text.indexOf(norm(r.excerpt), r === multicore.rows[0] ? at : at + 1)
    assert.ok(here >= at, `${r.approach} at ${r.load}: not after the row before it`)
    const headings = multicore.loads.map(l => ({ l, i: text.lastIndexOf(l.tablePrinted, here + l.tablePrinted.length) })).filter(h => h.i >= start)
    const last = headings.sort((a, b) => b.i - a.i)[0]
    assert.equal(last.l.id, r.load, `${r.approach}: printed under ${last.l.tablePrinted}, recorded as ${r.load}`)
    at = here
  }
})

test('Table 4.3.1: nine rows over approach x load, columns as printed, differences and overalls as the table implies', () => {
  const { rows, loads } = multicore
  assert.equal(rows.length, 9)
  const grid = rows.map(r => `${r.approach}/${r.load}`)
  for (const a of ['raw', 'cluster', 'pm2']) for (const l of ['relaxed', 'average', 'exhausting']) assert.ok(grid.includes(`${a}/${l}`), `${a} at ${l}`)
  assert.equal(new Set(grid).size, 9)
  assert.deepEqual(loads.map(l => [l.id, l.tablePrinted]), [['relaxed', 'Relaxed Load'], ['average', 'Average Load'], ['exhausting', 'Exhausting Load']])
  for (const l of loads) assert.deepEqual(Object.keys(l.runLevel).sort(), ['cluster', 'pm2', 'raw'])
  assert.deepEqual(Object.fromEntries(rows.filter(r => r.load === 'relaxed').map(r => [r.approach, r.strategy])), { raw: 'up', cluster: 'cm', pm2: 'pm2' })

  for (const r of rows) {
    const x = norm(r.excerpt)
    const name = `${r.approach} at ${r.load}`
    assert.ok(x.includes(r.approachPrinted), name)
    assert.ok(x.includes(`${r.utilisation.printed} (${norm(r.utilisation.words)})`), `${name}: utilisation words`)
    assert.equal(r.utilisation.exists, r.utilisation.printed === 'Yes', name)
    assert.equal(r.utilisation.exists, r.approach !== 'raw', `${name}: only raw Node shows no multi-core utilisation`)
    if (r.highest.core === null) {
      assert.ok(x.endsWith(`${r.highest.usage.printed} ${r.lowest.usage.printed} ${r.difference.printed} ${r.overall.printed}`), name)
      continue
    }
    const cells = `${r.highest.usage.printed} (${r.highest.core.printed}) ${r.lowest.usage.printed} (${r.lowest.core.printed}) ` +
      `${r.difference.printed} ${r.overall.printed}`
    assert.ok(x.endsWith(cells), `${name}: the cells in the order printed: ${cells}`)
    assert.notEqual(r.highest.core.value, r.lowest.core.value, name)
    assert.ok(r.highest.usage.value >= r.lowest.usage.value, name)
    // truncated to one decimal: the printed difference and the mean of two cores can be off by 0.1 at most
    assert.ok(Math.abs(r.difference.value - (r.highest.usage.value - r.lowest.usage.value)) <= 0.1 + 1e-9, `${name}: difference`)
    assert.ok(Math.abs(r.overall.value - (r.highest.usage.value + r.lowest.usage.value) / 2) <= 0.1 + 1e-9, `${name}: overall`)
  }

  // the figures the issue quotes, and raw Node at exhausting load as published: words, not numbers
  const raw = load => rows.find(r => r.approach === 'raw' && r.load === load)
  assert.equal(raw('relaxed').highest.usage.printed, '77.7%')
  assert.equal(raw('relaxed').lowest.usage.printed, '1.9%')
  const ex = raw('exhausting')
  assert.deepEqual([ex.highest.usage.value, ex.highest.usage.printed, ex.lowest.usage.printed, ex.difference.printed, ex.overall.printed],
    [null, 'Intense differences', 'Intense differences', 'N/A', '54.4%'])
  assert.match(ex.utilisation.words, /alternated between the CPU-cores with always half the total CPU usage/)
})

test('Table 4.3.1\'s study set-up is quoted: machine, cores, scheduling, load tool, run-levels, durations', () => {
  const s = multicore.setup
  for (const key of ['scheduling', 'server', 'cores', 'hyperThreading', 'client', 'generatorPlacement', 'cpuMonitor', 'relaxedUsers', 'exhaustedUsers',
    'relaxedPhase', 'exhaustedPhase']) {
    assert.ok(s[key]?.label && s[key].value && s[key].excerpt, key)
  }
  assert.equal(s.cores.figures.cores.value, 2)
  assert.match(s.scheduling.excerpt, /normal CPU scheduling/)
  assert.match(s.server.excerpt, /Intel Atom D2700/)
  assert.equal(s.relaxedPhase.figures.total.value,
    s.relaxedPhase.figures.warmup.value + s.relaxedPhase.figures.measured.value + s.relaxedPhase.figures.tail.value)
  assert.equal(s.exhaustedPhase.figures.total.value,
    s.exhaustedPhase.figures.warmup.value + s.exhaustedPhase.figures.measured.value + s.exhaustedPhase.figures.tail.value)
})

test('Ibenchjs Table 5: both apps and both models, R² and every coefficient, in the columns printed, and the paper\'s readings hold', () => {
  const { fits, method, claims } = ibenchSmisn.table5
  assert.equal(fits.length, 4)
  const fit = (app, model) => fits.find(f => f.app === app && f.model === model)
  for (const app of ['cpu', 'network']) for (const model of ['usl', 'amdahl']) assert.ok(fit(app, model), `${app} ${model}`)
  for (const model of ['usl', 'amdahl']) {
    const c = fit('cpu', model)
    const n = fit('network', model)
    assert.equal(c.excerpt, n.excerpt, `${model}: one printed row`)
    assert.equal(norm(c.excerpt), `${c.modelPrinted} ${[c, n].flatMap(f => [f.sigma.printed, f.lambda.printed, f.r2.printed]).join(' ')}`,
      `${model}: the columns in the order printed`)
    assert.ok(norm(ibenchSmisn.table5.excerpt).includes(norm(c.excerpt)), `${model}: the row is in the table's excerpt`)
  }
  for (const f of fits) {
    assert.ok(f.r2.value > 0 && f.r2.value <= 100 && f.r2.unit === '%', `${f.app} ${f.model} R²`)
    assert.ok(f.sigma.value > 0 && f.sigma.value < 1, `${f.app} ${f.model} sigma`)
    if (f.model === 'usl') assert.ok(f.lambda.value > 0, `${f.app} usl lambda`)
    else assert.deepEqual([f.lambda.value, f.lambda.printed], [null, 'N/A'], `${f.app} amdahl has no lambda`)
  }
  assert.deepEqual(['cpu', 'network'].flatMap(a => ['usl', 'amdahl'].map(m => fit(a, m).r2.printed)), ['98.76%', '93.15%', '99.24%', '93.43%'])
  // usl-fits-better and network-coefficients-larger, as the paper reads its table
  for (const app of ['cpu', 'network']) assert.ok(fit(app, 'usl').r2.value > fit(app, 'amdahl').r2.value, `${app}: USL R² > Amdahl R²`)
  for (const model of ['usl', 'amdahl']) {
    for (const k of ['sigma', 'lambda']) {
      const [c, n] = [fit('cpu', model)[k].value, fit('network', model)[k].value]
      if (c !== null) assert.ok(n > c, `${model} ${k}: network ${n} > cpu ${c}`)
    }
  }
  assert.deepEqual(claims.map(c => c.id), ['sub-linear', 'usl-fits-better', 'network-coefficients-larger'])
  assert.deepEqual([method.x, method.fixed], ['workload', 'hardware'])
  assert.match(method.excerpt, /against workloads under a fixed hardware configuration/)
})

test('Ibenchjs findings 1, 2 and 5: the conclusion\'s words, their conditions and which way they point', () => {
  const { findings } = ibenchSmisn
  assert.deepEqual(findings.map(f => [f.id, f.number]), [['finding-1', 1], ['finding-2', 2], ['finding-5', 5]])
  for (const f of findings) {
    assert.ok(norm(f.excerpt).includes(norm(f.claim)), `${f.id}: the claim is the paper's words`)
    assert.ok(norm(f.excerpt).includes(`${f.number})`), `${f.id}: numbered ${f.number} in the excerpt`)
    assert.ok(f.conditions.text && Object.keys(f.conditions.figures).length > 0, `${f.id}: conditions`)
    assert.ok(f.direction.length > 0 && f.direction.every(d => d.metric && d.relation && d.text), `${f.id}: direction`)
    assert.ok(f.benchmarks.length > 0, f.id)
    assert.ok(norm(f.abstract.excerpt).includes(`${f.abstract.number})`), `${f.id}: the abstract's number`)
  }
  const f5 = findings.find(f => f.id === 'finding-5')
  assert.deepEqual(f5.benchmarks, ['baseline'])
  assert.deepEqual([f5.conditions.figures.vcpus.value, f5.conditions.figures.instances.value], [4, 4])
  assert.deepEqual(f5.direction.map(d => [d.metric, d.of, d.than]), [['throughput', 'hs', 'cm'], ['cpu', 'cm', 'hs'], ['throughput', 'cm', 'one instance']])
  assert.match(f5.direction[1].excerpt, /master process/)
})

test('Ibenchjs Table 4: four cluster sizes, throughput rising, the instances at each maximum, as printed', () => {
  const { rows, excerpt, claims } = ibenchMimn.table4
  assert.deepEqual(rows.map(r => r.nodes.value), [1, 2, 3, 4])
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i].throughput.value > rows[i - 1].throughput.value, `${i + 1} nodes above ${i}`)
  assert.deepEqual(rows.map(r => r.instances.value), [4, 8, 12, 14])
  assert.deepEqual(rows.map(r => r.throughput.printed), ['2274.73', '4522.90', '6615.73', '7527.21'])
  let at = -1
  for (const r of rows) {
    assert.equal(norm(r.excerpt), `${r.nodes.printed} ${r.throughput.printed}±${r.sd.printed} ${r.instances.printed}`,
      `${r.nodes.value} nodes: the columns in the order printed`)
    const here = norm(excerpt).indexOf(norm(r.excerpt), at + 1)
    assert.ok(here > at, `${r.nodes.value} nodes: in the table, after the row before it`)
    at = here
  }
  // sub-linear as the paper reads it, and its text's rounded figures are the table's
  assert.ok(rows[3].throughput.value < 4 * rows[0].throughput.value)
  const sub = claims.find(c => c.id === 'sub-linear-over-nodes').figures
  assert.equal(sub.one.value, Math.round(rows[0].throughput.value))
  assert.equal(sub.four.value, Math.round(rows[3].throughput.value))
  assert.equal(sub.linear.value, 4 * sub.one.value)
})

test('the studies index: one entry per --study id, with its reference file, tables and data', () => {
  assert.deepEqual([...STUDY_IDS], ['multicore', 'ibench-smisn', 'ibench-mimn'])
  const tableIds = data => [data.table?.id, data.table5?.id, data.table4?.id].filter(Boolean)
  for (const id of STUDY_IDS) {
    const s = studies[id]
    assert.equal(s.id, id)
    assert.equal(s.data.id, id)
    assert.equal(s.file, s.data.file)
    assert.ok(s.title && s.tables.length > 0, id)
    assert.deepEqual(s.tables, tableIds(s.data), `${id}: its tables are in its data`)
    assert.ok(existsSync(join(ROOT, s.experiment)), `${id}: ${s.experiment}`)
    for (const f of s.findings) assert.ok(s.data.findings.some(x => x.id === f), `${id}: ${f}`)
  }
  assert.deepEqual(studies['ibench-smisn'].findings, ['finding-1', 'finding-2', 'finding-5'])
  assert.ok(Object.isFrozen(studies.multicore.data.rows[0].highest.usage), 'the published data cannot be changed by its readers')
})
