// The benchmark registry: built-in benchmark apps by name, and custom apps (--app PATH or --app "cmd:...").
import { badApp, badFlag } from '../lib/errors.js'
import { loadCustomApp } from './custom-app.js'
import { createConsoleBenchmark } from './console-wrapper.js'
import { basename, extname } from 'node:path'
import { serverName, wholeServer } from './whole-server.js'

/** Names of the built-in benchmarks, each a module benchmarks/<name>.js. */
export const BUILTIN_BENCHMARKS = Object.freeze(['baseline', 'page', 'cpu', 'net-out', 'net-in', 'disk', 'mem'])

/**
 * Resolves a benchmark by name or from a custom app, checking everything before anything starts.
 * @param {{ benchmark?: string, app?: string, cwd?: string }} spec `app` is a module path or "cmd:<command line>"
 * @returns {Promise<any>} a Benchmark object (see benchmarks/CONTRACT.md)
 * @throws {NsError} NS_ERR_BAD_FLAG for an unknown built-in, NS_ERR_BAD_APP for a custom app that cannot be used
 */
export async function loadBenchmark ({ benchmark, app, cwd } = {}) {
  if (app === undefined || app === null || app === '') {
    if (!BUILTIN_BENCHMARKS.includes(benchmark)) {
      throw badFlag('--benchmark',
        `${benchmark === undefined ? 'missing' : `unknown "${benchmark}"`}; one of ${BUILTIN_BENCHMARKS.join(', ')} (or a custom app with --app)`,
        { key: 'benchmark' })
    }
    return (await import(`./${benchmark}.js`)).default
  }
  const bench = app.startsWith('cmd:')
    ? createConsoleBenchmark({ commandLine: app.slice(4), name: benchmark, cwd })
    : await loadCustomApp({ app, benchmark, cwd })
  if (BUILTIN_BENCHMARKS.includes(bench.name)) {
    throw badApp(app, `its name "${bench.name}" is a built-in benchmark; give the custom app its own name with --benchmark <name> (or the module's name field)`)
  }
  return bench
}

/**
 * What a run measures: a whole server (--server, --image), or a benchmark app mounted at /<name> in ours.
 * @param {{ benchmark?: string, app?: string, server?: string, image?: string, [more: string]: any }} config
 * @returns {Promise<any>} a Benchmark object with `mount`, the path prefix its request goes under
 */
export async function loadTarget (config) {
  if (config.server !== undefined || config.image !== undefined) return wholeServer(config)
  const bench = await loadBenchmark({ benchmark: config.benchmark, app: config.app })
  return Object.assign(Object.create(bench), { mount: `/${bench.name}` })
}

/**
 * What a run measures, by name, before anything is loaded: a whole server's name, the benchmark's, or a custom app's
 * file name (the app may name itself once loaded).
 * @param {{ benchmark?: string, app?: string, server?: string, image?: string }} c
 */
export const targetName = (c) => (c.server !== undefined || c.image !== undefined
  ? serverName(c)
  : c.benchmark ?? basename(c.app ?? 'app', extname(c.app ?? '')))
