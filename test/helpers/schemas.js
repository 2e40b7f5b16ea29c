// Validates the files nodescale writes against their JSON Schemas (schemas/, chosen by each file's schema field as
// SCHEMA_FILES in lib/run-files.js names them), with ajv: a run folder, a sweep folder, or one file.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { RUN_FILES, SCHEMA_FILES, SWEEP_FILE, TIMELINE_SCHEMA } from '../../lib/run-files.js'

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))

// strict: an unknown keyword or a mistyped schema is an error; a required property need not be described
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true })
/** @type {Map<string, import('ajv').ValidateFunction>} */
const compiled = new Map()

/**
 * The validator of a schema name.
 * @param {string} name e.g. nodescale.run/v1
 */
export function validatorOf (name) {
  const file = SCHEMA_FILES[name]
  assert.ok(file, `no JSON Schema for "${name}" in SCHEMA_FILES (lib/run-files.js)`)
  if (!compiled.has(name)) compiled.set(name, ajv.compile(JSON.parse(readFileSync(join(ROOT, file), 'utf8'))))
  return /** @type {import('ajv').ValidateFunction} */ (compiled.get(name))
}

/**
 * Asserts that data is valid against its schema; the message lists every error with its path.
 * @param {any} data
 * @param {string} name the schema's name
 * @param {string} what the file, for the message
 */
export function assertValid (data, name, what) {
  const validate = validatorOf(name)
  if (!validate(data)) {
    assert.fail(`${what} is not a valid ${name}:\n` +
      `${(validate.errors ?? []).map(e => `  ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('\n')}`)
  }
}

/**
 * Asserts that a JSON file nodescale wrote is valid against the schema its schema field names (timeline.json: its
 * own, since a file from before v1 has none).
 * @param {string} file
 */
export function assertValidFile (file) {
  const data = JSON.parse(readFileSync(file, 'utf8'))
  const name = basename(file) === RUN_FILES.timeline ? TIMELINE_SCHEMA : data?.schema
  assertValid(data, name, file)
  return data
}

/**
 * Asserts that each JSON file of a run folder is valid: run.json, and latency.json and timeline.json where the run
 * wrote them. Returns how many files were checked.
 * @param {string} dir
 */
export function assertValidRunFolder (dir) {
  const files = [RUN_FILES.run, RUN_FILES.latency, RUN_FILES.timeline].map(f => join(dir, f)).filter(f => existsSync(f))
  assert.ok(files.length >= 1, `${dir}: no run.json`)
  for (const f of files) assertValidFile(f)
  return files.length
}

/**
 * Asserts that a sweep folder's sweep.json and every run folder in it are valid. Returns how many files were checked.
 * @param {string} dir
 */
export function assertValidSweepFolder (dir) {
  assertValidFile(join(dir, SWEEP_FILE))
  let n = 1
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && existsSync(join(dir, e.name, RUN_FILES.run))) n += assertValidRunFolder(join(dir, e.name))
  }
  return n
}
