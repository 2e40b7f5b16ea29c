// A whole server as the thing under test (--server FILE, or --image REF on Swarm): nothing is mounted, the load
// requests --path with --method and --body as given, readiness is --health. Shaped like a benchmark (name, options,
// request) so that a run, a sweep and the reports treat both alike; `mount` is '' where a benchmark's is /<name>.
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, extname, join, relative, resolve } from 'node:path'
import { badFlag } from '../lib/errors.js'

const NAME = /[^a-z0-9_-]+/gi
const TYPES = Object.freeze({ '.json': 'application/json', '.txt': 'text/plain', '.xml': 'application/xml', '.html': 'text/html', '.csv': 'text/csv' })

/**
 * The folder a server runs from: the nearest one above its entry file that has a package.json (as the path was given,
 * not its real path: node_modules/.bin/<cli> runs from the project), else the entry's own folder.
 * @param {string} entry absolute
 */
export function serverFolder (entry) {
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) return dirname(entry)
  }
}

/**
 * Refuses a server folder that would pack the home folder or more into an image: `/`, $HOME, or a folder above it (a
 * `~/package.json` that `npm i` in the home made, or an entry file right in the home). NS_ERR_BAD_FLAG naming --server.
 * @param {string} folder serverFolder's answer
 * @param {string} entry the entry file, for the message
 */
export function checkServerFolder (folder, entry) {
  const real = (p) => { try { return realpathSync(p) } catch { return resolve(p) } }
  const home = real(homedir())
  const dir = real(folder)
  const rel = relative(dir, home)
  const above = dir === '/' || rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'))
  if (!above) return
  const what = dir === '/' ? 'the root folder /' : rel === '' ? `your home folder ${home}` : `${dir}, which holds your home folder ${home}`
  throw badFlag('--server', `${entry} runs from ${what} ` +
    `(${existsSync(join(folder, 'package.json')) ? 'the nearest folder with a package.json' : 'its own folder'}), and ` +
    'nodescale will not pack that into an image: it holds your keys and credentials. Put the server in a folder of its own with its ' +
    'package.json (npm init -y there) and give the entry file inside it', { key: 'server' })
}

/**
 * The name a whole server's runs carry: --benchmark when given, else its folder's name (an image's name for --image).
 * @param {{ benchmark?: string, server?: string, image?: string }} config
 */
export function serverName ({ benchmark, server, image }) {
  if (benchmark) return benchmark
  const raw = server && !image ? basename(serverFolder(resolve(server))) : basename((image ?? 'server').split('@')[0].split(':')[0])
  return raw.replace(NAME, '-').replace(/^-+|-+$/g, '').slice(0, 64) || 'server'
}

/**
 * Which server was measured, for run.json: its entry file and folder, its package's name and version when it has a
 * package.json (an image: its reference).
 * @param {{ server?: string, image?: string }} config
 */
export function serverAbout ({ server, image }) {
  if (image) return { image, entry: server ?? null }
  const folder = serverFolder(/** @type {string} */ (server))
  let pkg = null
  try {
    const { name, version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
    pkg = { name: name ?? null, version: version ?? null }
  } catch {}
  return { entry: server, folder, package: pkg }
}

/**
 * @param {{ benchmark?: string, server?: string, image?: string, path?: string, method?: string, body?: string,
 *   health?: string }} config a validated run config with --server or --image
 */
export function wholeServer (config) {
  const path = config.path ?? '/'
  const method = config.method ?? 'GET'
  return {
    name: serverName(config),
    description: config.image ? `the image ${config.image}` : `the server ${config.server}`,
    mount: '',
    health: config.health ?? path,
    about: serverAbout(config),
    options: () => ({}),
    request: () => ({
      method,
      path,
      ...(config.body ? { bodyFile: config.body, headers: { 'content-type': TYPES[extname(config.body).toLowerCase()] ?? 'application/octet-stream' } } : {})
    })
  }
}
