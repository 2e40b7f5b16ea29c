// The structure docs/ARCHITECTURE.md describes, held against the code: the layers' imports, the images' contents, and
// the tables that --help, validation, experiment files and the stack templates are made from.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs'
import { join, relative, dirname, resolve } from 'node:path'
import { ROOT } from './helpers/cli.js'
import { importsOf, registerTree } from '../executor/docker/image-context.js'
import { RUN_OPTIONS, EXPERIMENT_OPTIONS } from '../lib/run-options.js'
import { flagOf, keyOf } from '../lib/options.js'
import { STRATEGY_TABLE } from '../lib/strategies.js'
import { EXPERIMENT_KEYS } from '../executor/sweep/experiment.js'
import { RUN_HELP } from '../executor/cli-run.js'
import { CAPACITY_OPTIONS } from '../executor/capacity/cli-capacity.js'
import { CALIBRATE_OPTIONS } from '../executor/calibrate/cli-calibrate.js'
import { shapeKeyOf } from '../executor/shape-runner.js'
import { LOAD_FIELDS } from '../executor/load-agent/agent.js'

/** The product's folders, bottom layer first. */
const FOLDERS = ['lib', 'benchmarks', 'rc', 'register', 'analyzer', 'executor', 'bin', 'perf', 'calibration']

function sources (dir) {
  return readdirSync(join(ROOT, dir), { recursive: true }).map(String).filter(f => f.endsWith('.js')).map(f => join(ROOT, dir, f))
}

/**
 * Top-level folder -> the top-level folders its files import (relative imports only: packages are not the project's).
 */
function folderImports () {
  const out = new Map(FOLDERS.map(f => [f, new Set()]))
  for (const folder of FOLDERS) {
    for (const file of sources(folder)) {
      for (const spec of importsOf(readFileSync(file, 'utf8')).filter(s => s.startsWith('.'))) {
        const target = relative(ROOT, resolve(dirname(file), spec)).split('/')[0]
        if (target !== folder) out.get(folder).add(target)
      }
    }
  }
  return out
}

test('lib/ imports nothing of the project; analyzer, rc, register and benchmarks never import executor/', () => {
  const imports = folderImports()
  assert.deepEqual([...imports.get('lib')], [], 'lib/ is the bottom layer')
  for (const folder of ['analyzer', 'rc', 'register', 'benchmarks']) {
    assert.ok(!imports.get(folder).has('executor'), `${folder}/ imports executor/`)
  }
})

test('no folder imports one that imports it back (the folders form layers)', () => {
  const imports = folderImports()
  const reaches = (from, to, seen = new Set()) => [...imports.get(from) ?? []].some(f => f === to || (!seen.has(f) && seen.add(f) && reaches(f, to, seen)))
  for (const folder of FOLDERS) assert.ok(!reaches(folder, folder), `${folder}/ reaches itself through its imports`)
})

test('executor/ and analyzer/ keep their work in rooms: at most 20 modules at each root, every room named in ARCHITECTURE.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8')
  for (const folder of ['executor', 'analyzer']) {
    const entries = readdirSync(join(ROOT, folder), { withFileTypes: true })
    const modules = entries.filter(e => e.isFile() && e.name.endsWith('.js')).map(e => e.name)
    assert.ok(modules.length <= 20, `${folder}/ has ${modules.length} modules at its root: a new one goes in a room (${modules.join(', ')})`)
    for (const room of entries.filter(e => e.isDirectory()).map(e => e.name)) {
      assert.ok(doc.includes(`\`${room}/\``), `${folder}/${room}/ is not named in docs/ARCHITECTURE.md's map of ${folder}/`)
    }
  }
})

test('the register and RC images carry no executor or analyzer code', () => {
  const trees = { register: registerTree(ROOT), rc: registerTree(ROOT, { dirs: ['rc'], required: 'rc', extraPackages: [] }) }
  for (const [name, tree] of Object.entries(trees)) {
    const own = tree.entries.map(e => e.name).filter(n => !n.startsWith('node_modules/'))
    assert.deepEqual(own.filter(n => /^(executor|analyzer|bin|perf)\//.test(n)), [], `${name} image`)
    assert.ok(own.some(n => n.startsWith('lib/')), `${name} image has the bottom layer it imports`)
  }
})

test('every run option is in --help, and every experiment key of the option table is an experiment file key', () => {
  for (const o of RUN_OPTIONS) assert.ok(RUN_HELP.includes(flagOf(o)), `${flagOf(o)} in executor run --help`)
  for (const key of Object.keys(EXPERIMENT_OPTIONS)) assert.ok(key in EXPERIMENT_KEYS, `${key} is an experiment key`)
})

test('every run option says what it decides (side), and capacity and calibrate take exactly the rows that say so (also)', () => {
  for (const o of RUN_OPTIONS) {
    assert.ok(['shape', 'load', 'output'].includes(o.side), `${flagOf(o)}: side ${o.side}`)
    for (const c of o.also ?? []) assert.ok(['capacity', 'calibrate'].includes(c), `${flagOf(o)}: also ${c}`)
    // a value the drivers take as it is: a load row, which a load agent accepts and every run passes
    if (o.toDriver) {
      assert.equal(o.side, 'load', `${flagOf(o)}: toDriver on a ${o.side} row`)
      assert.ok(LOAD_FIELDS.includes(keyOf(o)), `the load agent accepts ${keyOf(o)}`)
    }
  }
  for (const [command, table] of /** @type {const} */ ([['capacity', CAPACITY_OPTIONS], ['calibrate', CALIBRATE_OPTIONS]])) {
    const takes = new Set(table.map(flagOf))
    for (const o of RUN_OPTIONS.filter(x => x.also?.includes(command))) assert.ok(takes.has(flagOf(o)), `executor ${command} takes ${flagOf(o)}`)
  }
  // runs that differ only in how the load is driven or what is written share a deployment; a shape option does not
  const config = { strategy: 'cm', instances: 2, benchmark: 'page', backend: 'local' }
  for (const o of RUN_OPTIONS.filter(x => x.flag !== 'help')) {
    const other = shapeKeyOf({ ...config, [keyOf(o)]: 'changed' })
    assert.equal(other === shapeKeyOf(config), o.side !== 'shape', `${flagOf(o)} (${o.side}) and the deployment`)
  }
})

test('every strategy of the table has its stack template, and --help names it', () => {
  for (const s of Object.values(STRATEGY_TABLE)) {
    assert.ok(existsSync(join(ROOT, 'stacks', s.template)) && statSync(join(ROOT, 'stacks', s.template)).isFile(), s.template)
    assert.match(RUN_HELP, new RegExp(`^ {2}${s.name} +${s.summary.replace(/[()]/g, '\\$&')}$`, 'm'))
  }
})

test('no code comment cites a document the repository does not have', () => {
  for (const folder of FOLDERS) {
    for (const file of sources(folder)) {
      for (const [, doc] of readFileSync(file, 'utf8').matchAll(/\b([\w./-]+\.md)\b/g)) {
        const found = [join(ROOT, doc), join(dirname(file), doc)].some(p => existsSync(p))
        assert.ok(found, `${relative(ROOT, file)} cites ${doc}`)
      }
    }
  }
})
