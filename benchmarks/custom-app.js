// Loads a user's module (--app PATH) and turns whatever it exports into a Benchmark, or says clearly what is wrong.
import { existsSync, statSync } from 'node:fs'
import { basename, extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { NsError, badApp, badFlag } from '../lib/errors.js'
import { optionsParser } from './params.js'

export const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/i
const FORMS = 'export default an express handler (req, res) => ..., an express Router, or a Benchmark object with create() (see benchmarks/CONTRACT.md)'

const describe = (v) => v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`
const isRouter = (v) => typeof v === 'function' && typeof v.use === 'function' && Array.isArray(v.stack)

/** A name made of what the file is called: "my app.mjs" -> "my-app". */
export function nameFromFile (file) {
  return basename(file, extname(file)).replace(/[^a-z0-9_-]+/gi, '-').replace(/^[^a-z0-9]+/i, '').slice(0, 64) || 'app'
}

/**
 * Fills in what a user's Benchmark object leaves out, and checks the fields it has.
 * @param {any} obj the module's default export (an object with create) or a wrapper around a handler
 * @param {string} name the resolved name
 * @param {string} file for messages
 */
export function completeBenchmark (obj, name, file) {
  for (const fn of ['create', 'options', 'request', 'teardown']) {
    if (obj[fn] !== undefined && typeof obj[fn] !== 'function') throw badApp(file, `the Benchmark's ${fn} is ${describe(obj[fn])}, not a function`)
  }
  const defaults = obj.defaults ?? {}
  if (typeof defaults !== 'object' || Array.isArray(defaults) || Object.values(defaults).some(v => typeof v !== 'string')) {
    throw badApp(file, 'the Benchmark\'s defaults must be an object of strings (e.g. { size: \'10\' })')
  }
  const generic = optionsParser(name, defaults, Object.fromEntries(Object.keys(defaults).map(k => [k, (v) => v])))
  const options = obj.options
    ? (params) => {
        try {
          return obj.options({ ...defaults, ...params })
        } catch (err) {
          if (err instanceof NsError) throw err
          throw badFlag('--param', `${err.message} (benchmark ${name})`, { key: 'params', cause: err })
        }
      }
    : generic
  const request = (opts) => {
    const r = obj.request ? obj.request(opts) : { method: 'GET', path: '/' }
    if (!r || !['GET', 'POST'].includes(r.method) || typeof r.path !== 'string' || !r.path.startsWith('/')) {
      throw badApp(file, `request() must return { method: 'GET'|'POST', path: '/...' } (got ${JSON.stringify(r)})`)
    }
    return r
  }
  return {
    ...obj,
    name,
    description: obj.description ?? `custom app ${file}`,
    defaults,
    options,
    request,
    create: obj.create,
    teardown: obj.teardown
  }
}

/**
 * Loads a user module and returns a complete Benchmark.
 * @param {{ app: string, benchmark?: string, cwd?: string }} spec
 * @returns {Promise<any>}
 */
export async function loadCustomApp ({ app, benchmark, cwd = process.cwd() }) {
  const file = resolve(cwd, app)
  if (!existsSync(file)) throw badApp(file, 'no such file')
  if (!statSync(file).isFile()) throw badApp(file, 'is not a file')
  let mod
  try {
    mod = await import(pathToFileURL(file).href)
  } catch (err) {
    throw badApp(file, `cannot be loaded: ${err.name}: ${err.message}`, { cause: err })
  }
  const exp = mod.default
  if (exp === undefined) throw badApp(file, `has no default export; ${FORMS}`)
  let obj
  if (typeof exp === 'function') {
    // A handler, a Router or an express app: all mount the same way.
    obj = { create: () => exp, kind: isRouter(exp) ? 'router' : 'handler' }
  } else if (exp && typeof exp === 'object' && typeof exp.create === 'function') {
    obj = exp
  } else {
    throw badApp(file, `the default export is ${describe(exp)}${exp && typeof exp === 'object' ? ' without create()' : ''}; ${FORMS}`)
  }
  if (obj.name !== undefined && (typeof obj.name !== 'string' || !NAME_RE.test(obj.name))) {
    throw badApp(file, `name ${JSON.stringify(obj.name)} is not a name (letters, digits, - and _)`)
  }
  const name = obj.name ?? benchmark ?? nameFromFile(file)
  if (!NAME_RE.test(name)) throw badApp(file, `"${name}" is not a name (letters, digits, - and _); set one with --benchmark`)
  return completeBenchmark(obj, name, file)
}
