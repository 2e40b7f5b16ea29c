// `executor image build`, `executor up` and `executor down`: the Swarm parts a run needs, prepared or removed by hand.
import { join, resolve } from 'node:path'
import { existsSync } from 'node:fs'
import { EXIT, badApp } from '../lib/errors.js'
import { fail } from '../lib/messages.js'
import { option, optionsHelp, parseCommandLine } from '../lib/options.js'
import { RUN_OPTION, checkRegistryTls } from '../lib/run-options.js'
import { cacheDir } from '../lib/paths.js'
import { connectDocker, ensureSwarm } from './docker/engine.js'
import { buildImage, IMAGE_BASES, IMAGE_KINDS } from './docker/image-build.js'
import { ensureControlPlane, stopControlPlane } from './docker/control-plane.js'
import { removeLeftovers } from './docker/stack-deploy.js'
import { removeRegistry } from './docker/image-registry.js'
import { imagesOnNodes } from './backends/swarm.js'

/** @typedef {import('../lib/options.js').Option} Option */

export const IMAGE_HELP = `Usage: executor image build [--base auto|registry|host] [--kind K] [--app PATH]... [--json]

Builds (or reuses, when nothing changed: tags carry a content hash) the images a Swarm run needs,
through the Docker Engine API. \`executor run\` builds them itself; this is for building ahead.

Options:
      --base B     auto | registry | host (default auto)
                   registry: FROM node:<host major>-slim (haproxy:<version>, registry:2), for machines that can pull
                   host:     an offline base from this machine's own node (haproxy, docker-registry) binary and its libraries
                   auto:     registry when the base image is here or can be pulled, else host; says which
      --kind K     register | haproxy | rc | registry | all (default all)
      --app PATH   a custom app to put in the register image (repeatable)
      --json       print the built images as JSON on stdout
  -h, --help       this help

Example:
  executor image build --base host`

export const UP_HELP = `Usage: executor up [--registry R] [--registry-tls CERT,KEY] [--json]

Starts nodescale's control plane on the swarm (docker-compose.yml): the RC (resource collector) as a global
service, one per node, reading the containers' cgroups (no Docker socket, no capabilities, not root); its token is
a Swarm secret. Initialises a single-node swarm first when the engine is in none. \`executor run\` does this itself
on first use; a running control plane with the same image is reused. The RC image reaches the workers as a run's
images do: loaded into this machine's local-swarm workers, or through the control plane's image registry for any
other worker, deployed by digest. The registry takes pushes and pulls only with credentials made for it (never
printed); this says where it listens.

Options:
${optionsHelp([RUN_OPTION.registry, RUN_OPTION.registryTls])}

Security: docs/SECURITY.md (what each part can reach, and how to run on an untrusted network).`

export const DOWN_HELP = `Usage: executor down [--all] [--json]

Removes the control plane (the RC, and the image registry when a run started it; the images pushed to it stay
in its volume) and every stack an earlier run left behind (a run whose executor is gone).
  --all    also stacks whose executor still runs (stops them)`

/** Writes a result as JSON or as lines. */
function print (stdout, json, data, lines) {
  stdout.write(json ? JSON.stringify(data, null, 2) + '\n' : lines.join('\n') + '\n')
}

const COMMON = [option({ flag: 'json', type: 'boolean' }), option({ flag: 'help', short: 'h', type: 'boolean' })]

/**
 * @param {string[]} argv
 * @param {Option[]} options the command's own flags (--json and --help come with every one)
 * @param {string} help
 */
function parse (argv, options, help) {
  const { values, positionals } = parseCommandLine(argv, [...options, ...COMMON])
  return { values, positionals, help: values.help ? help : null }
}

const logTo = (stderr) => (line) => stderr.write(`${line}\n`)

/** @type {(argv: string[], io: { stdout: any, stderr: any }) => Promise<number>} */
export async function imageCommand (argv, { stdout, stderr }) {
  const [sub, ...rest] = argv
  if (sub === '--help' || sub === '-h' || sub === undefined) { stdout.write(IMAGE_HELP + '\n'); return sub ? EXIT.OK : EXIT.BAD_INPUT }
  if (sub !== 'build') throw fail('UNKNOWN_COMMAND', { command: `image ${sub}`, commands: ['image build'] })
  const { values, positionals, help } = parse(rest, [
    option({ flag: 'base', type: 'choice', choices: IMAGE_BASES }),
    option({ flag: 'kind', type: 'choice', choices: [...IMAGE_KINDS, 'all'] }),
    option({ flag: 'app', type: 'list' })
  ], IMAGE_HELP)
  if (help) { stdout.write(help + '\n'); return EXIT.OK }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor image build' })
  const base = values.base ?? 'auto'
  const kind = values.kind ?? 'all'
  const apps = (values.app ?? []).map(a => resolve(a))
  for (const a of apps) if (!existsSync(a)) throw badApp('', `no file at ${a}`)
  const log = logTo(stderr)
  const docker = await connectDocker()
  const built = []
  for (const k of kind === 'all' ? IMAGE_KINDS : [kind]) {
    const img = await buildImage(docker, { kind: /** @type {any} */ (k), base: /** @type {any} */ (base), apps: k === 'register' ? apps : [], log })
    built.push({ kind: k, ...img })
  }
  print(stdout, values.json, built, built.map(b => `${b.kind.padEnd(9)} ${b.tag}  (${b.base} base${b.reused ? ', unchanged' : ''})`))
  return EXIT.OK
}

/** @type {(argv: string[], io: { stdout: any, stderr: any }) => Promise<number>} */
export async function upCommand (argv, { stdout, stderr }) {
  const { values, positionals, help } = parse(argv, [RUN_OPTION.registry, RUN_OPTION.registryTls], UP_HELP)
  if (help) { stdout.write(help + '\n'); return EXIT.OK }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor up' })
  const config = { registry: values.registry, registryTls: values.registryTls }
  checkRegistryTls(config, process.cwd())
  const log = logTo(stderr)
  const docker = await connectDocker()
  await ensureSwarm(docker, { log })
  const rc = await buildImage(docker, { kind: 'rc', log })
  // the RC runs on every node: this machine's local-swarm workers get its image from the manager first
  const { refs, registry } = await imagesOnNodes(docker, config, [rc.tag], await docker.listNodes(), log)
  const image = refs[rc.tag] ?? rc.tag
  const plane = await ensureControlPlane(docker, { image, log })
  const reg = registry ? { address: registry.pullHost, tls: registry.tls, reused: registry.reused } : null
  const data = { stack: plane.stack, service: plane.service, image, reused: plane.reused, rcs: plane.rcs, registry: reg }
  print(stdout, values.json, data, [
    `control plane ${plane.stack} ${plane.reused ? 'already up' : 'up'}: RC ${image}`,
    ...plane.rcs.map(r => `  node ${r.node.slice(0, 12)}  ${r.url}`),
    reg
      ? `image registry: listening on ${reg.address} (${reg.tls ? 'HTTPS' : 'plain HTTP: see the warning above'}); ` +
        `pushes and pulls need nodescale's credentials, kept owner-only in ${join(cacheDir(), 'registry.json')}`
      : 'image registry: not running (no node pulls: images reach this machine\'s nodes through the API; --registry builtin starts it)'
  ])
  return EXIT.OK
}

/** @type {(argv: string[], io: { stdout: any, stderr: any }) => Promise<number>} */
export async function downCommand (argv, { stdout, stderr }) {
  const { values, positionals, help } = parse(argv, [option({ flag: 'all', type: 'boolean' })], DOWN_HELP)
  if (help) { stdout.write(help + '\n'); return EXIT.OK }
  if (positionals.length) throw fail('UNEXPECTED_ARGUMENT', { arg: positionals[0], command: 'executor down' })
  const log = logTo(stderr)
  const docker = await connectDocker()
  const stacks = await removeLeftovers(docker, { all: Boolean(values.all), log })
  await stopControlPlane(docker, { log })
  await removeRegistry(docker, { log })
  print(stdout, values.json, { removed: stacks, controlPlane: 'removed' }, [
    'removed the control plane (and its image registry; pushed images stay in its volume)' +
    `${stacks.length ? ` and ${stacks.length} leftover stack(s): ${stacks.join(', ')}` : ''}`
  ])
  return EXIT.OK
}
