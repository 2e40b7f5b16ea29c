#!/usr/bin/env node
// Entry script of the pm2 shape: PM2's cluster mode without its daemon (pm2-runtime) running NODESCALE_WORKERS copies
// of our server, or of the user's own entry file (NODESCALE_SERVER) with its arguments and the hook preloaded. The app
// is described in an ecosystem file so that the server's arguments reach it as given.
import cluster from 'node:cluster'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serverFromEnv, workersOrExit } from './server-entry.js'

const require = createRequire(import.meta.url)
const env = process.env
const workers = workersOrExit(env, 'pm2')
const server = serverFromEnv(env, dirname(fileURLToPath(import.meta.url)))
// PM2 forks its workers with this process's arguments ahead of the app's: none here, so the server's argv is its own.
cluster.setupPrimary({ args: [] })
const home = env.PM2_HOME || join(tmpdir(), '.pm2')
mkdirSync(home, { recursive: true })
const ecosystem = join(home, 'nodescale.json')
writeFileSync(ecosystem, JSON.stringify({
  apps: [{
    // Always N instances: PM2's "max" counts the host's cores, not the CPU quota the run gives it.
    name: `nodescale-${env.PORT ?? 'app'}`,
    script: server.script,
    args: server.args,
    node_args: server.execArgv,
    instances: workers,
    exec_mode: 'cluster',
    cwd: process.cwd()
  }]
}))
const runtime = join(dirname(require.resolve('pm2/package.json')), 'bin', 'pm2-runtime')
process.argv = [process.execPath, runtime, 'start', ecosystem]
require(runtime)
