// The docs: the generated reference (docs/reference/) is what scripts/docs-reference.js makes from the code today, and
// every relative link in README.md and docs/**/*.md reaches a file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REFERENCE_DIR, referencePages } from '../scripts/docs-reference.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

test('docs/reference/ is what npm run docs:reference makes from the code (else: npm run docs:reference)', async () => {
  const pages = await referencePages()
  assert.deepEqual(Object.keys(pages).sort(), ['cli.md', 'errors.md', 'experiment-keys.md'])
  for (const [name, text] of Object.entries(pages)) {
    const file = join(REFERENCE_DIR, name)
    assert.ok(existsSync(file), `docs/reference/${name} is missing: npm run docs:reference`)
    assert.equal(readFileSync(file, 'utf8'), text, `docs/reference/${name} is stale: npm run docs:reference`)
  }
})

test('the reference holds every command\'s help, every experiment key and every error code', async () => {
  const { 'cli.md': cli, 'experiment-keys.md': keys, 'errors.md': errors } = await referencePages()
  const { COMMANDS: executor } = await import('../executor/cli.js')
  const { COMMANDS: analyzer } = await import('../analyzer/cli.js')
  for (const name of Object.keys(executor)) assert.match(cli, new RegExp(`\n## executor ${name}\n\n\`\`\`text\nUsage: executor ${name}`))
  for (const name of Object.keys(analyzer)) assert.match(cli, new RegExp(`\n## analyzer ${name}\n\n\`\`\`text\nUsage: analyzer ${name}`))
  assert.match(cli, /\n## nodescale\n\n```text\nUsage: nodescale <command>/)
  const { EXPERIMENT_KEYS } = await import('../executor/sweep/experiment.js')
  for (const key of Object.keys(EXPERIMENT_KEYS)) assert.match(keys, new RegExp(`\n\\| \`${key}\` \\|`))
  const { CODES } = await import('../lib/errors.js')
  for (const code of Object.keys(CODES)) assert.match(errors, new RegExp(`\n\\| \`${code}\` \\|`))
})

/** Every Markdown file of the docs: README.md and docs/**. */
function markdownFiles () {
  const files = [join(ROOT, 'README.md')]
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name))
      else if (e.name.endsWith('.md')) files.push(join(dir, e.name))
    }
  }
  walk(join(ROOT, 'docs'))
  return files
}

/** The relative link targets of a Markdown text, code blocks and spans left out. */
export function relativeLinks (text) {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
  const links = []
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
    links.push(decodeURIComponent(target.split('#')[0]))
  }
  return links
}

test('relativeLinks finds links and images, not URLs, anchors or code', () => {
  assert.deepEqual(relativeLinks('[a](docs/x.md#y) ![i](p.png) [u](https://e.org) [h](#top) `[c](no.md)`\n```\n[d](no.md)\n```\n'),
    ['docs/x.md', 'p.png'])
})

test('every relative link in README.md and docs/**/*.md reaches a file', () => {
  const broken = []
  const files = markdownFiles()
  assert.ok(files.length > 10, `only ${files.length} Markdown files found`)
  for (const file of files) {
    for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
      if (!existsSync(join(dirname(file), target))) broken.push(`${relative(ROOT, file)}: ${target}`)
    }
  }
  assert.deepEqual(broken, [])
})

test('npm run docs:examples finds the README\'s main job as written and its example between the markers', async () => {
  const { README, START, END, mainJobCommand, withExample } = await import('../scripts/docs-examples.js')
  const readme = readFileSync(README, 'utf8')
  assert.equal(mainJobCommand(readme), 'npx executor run --strategy cm --instances 4 --cpus-per-instance 0.25 --warmup 10')
  assert.equal(readme.split(START).length, 2, `one ${START} in README.md`)
  assert.ok(readme.indexOf(END) > readme.indexOf(START), `${END} after ${START}`)
  const when = new Date('2026-11-26T14:00:00Z')
  const made = withExample(readme, { command: 'npx executor run -x', output: 'run r1: done\n  validity: ok\n', when, machine: 'a 2-core machine' })
  assert.equal(made.slice(0, made.indexOf(START)), readme.slice(0, readme.indexOf(START)), 'the text before the markers kept')
  assert.equal(made.slice(made.indexOf(END)), readme.slice(readme.indexOf(END)), 'the text after the markers kept')
  assert.match(made, new RegExp(/Printed on 2026-11-26 14:00 UTC on a 2-core machine, written here by `npm run docs:examples` \(stdout only\):\n\n/.source +
    /```console\n\$ npx executor run -x\nrun r1: done\n {2}validity: ok\n```\n<!-- end example -->/.source))
  assert.equal(withExample(made, { command: 'npx executor run -x', output: 'run r1: done\n  validity: ok\n', when, machine: 'a 2-core machine' }), made,
    'run twice, the same README')
  assert.throws(() => mainJobCommand('# x\n```sh\nnpm test\n```\n'), /no `npx executor run` line/)
})

test('README stays a front door: under 150 lines, the three commands on its first screen, a map of docs/', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lines = readme.split('\n')
  assert.ok(lines.length <= 150, `README.md has ${lines.length} lines: move the detail into docs/`)
  const firstScreen = lines.slice(0, 25).join('\n')
  for (const command of [/^npm run setup /m, /^npx executor run --strategy cm --instances 4 --cpus-per-instance 0\.25 /m, /^npm test /m]) {
    assert.match(firstScreen, command)
  }
  for (const page of ['docs/guide.md', 'docs/reference/cli.md', 'docs/STATISTICS.md', 'docs/ARCHITECTURE.md', 'docs/SECURITY.md']) {
    assert.ok(relativeLinks(readme).includes(page), `README links ${page}`)
  }
})
