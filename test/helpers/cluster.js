// The local multi-node swarm from tests: executor cluster as a user runs it, and a worker engine's pid (to stop it).
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { runCli } from './cli.js'

/**
 * Runs `executor cluster ...`; while someone else's stack runs (the swarm cannot be re-initialised), waits and retries.
 */
export async function cluster (args, { waitMs = 180_000 } = {}) {
  const started = Date.now()
  for (;;) {
    const r = await runCli('executor', ['cluster', ...args], { timeoutMs: 180_000 })
    if (r.code === 0 || !/would remove running stacks/.test(r.stderr) || Date.now() - started > waitMs) return { ...r, ms: Date.now() - started }
    await sleep(5000)
  }
}

/** The pid of a local worker's engine (executor/local-swarm/worker-engine.js writes it). */
export const enginePidOf = (name) => Number(readFileSync(`/var/run/nodescale-cluster/${name}.pid`, 'utf8'))
