// Watches the swarm nodes a run's tasks are on while the load runs: a node whose RC stops answering, or that the
// manager marks down, is lost; the run is then degraded. Each loss is an episode with when it was last seen, lost,
// marked down, back.
import { setTimeout as sleep } from 'node:timers/promises'
import { probe } from '../../lib/net.js'
import { withTimeout } from '../../lib/with-timeout.js'
import { daemonUnreachable } from './engine.js'

/**
 * @typedef {{ id: string, hostname: string, label: string | null, rcUrl: string | null }} WatchedNode
 * @typedef {{ nodeId: string, node: string, label: string | null, lastSeenAt: number | null, lostAt: number,
 *   swarmDownAt: number | null, recoveredAt: number | null, why: string, generator?: string }} LossEpisode generator:
 *   the episode is a load generator's that stopped answering (executor/generators/), not a server node's
 */

/**
 * The watch state of nodes, fed one observation per node per tick; pure, so the rules are testable without a swarm.
 * A node is lost after `confirm` failed observations in a row, or at once when the manager says it is not ready; it is
 * back when the manager says ready and its RC answers again.
 * @param {WatchedNode[]} nodes
 * @param {{ confirm?: number, log?: (line: string) => void }} [opts]
 */
export function createLossTracker (nodes, { confirm = 2, log = () => {} } = {}) {
  const state = new Map(nodes.map(n => [n.id, {
    node: n,
    lastOk: /** @type {number|null} */ (null),
    firstFail: /** @type {number|null} */ (null),
    fails: 0,
    open: /** @type {LossEpisode|null} */ (null)
  }]))
  /** @type {LossEpisode[]} */
  const episodes = []
  const name = (n) => n.label ?? n.hostname ?? n.id
  return {
    /**
     * @param {string} id
     * @param {{ at: number, swarmState: string | null, rcOk: boolean, rcError?: string }} seen swarmState null: the
     *   manager did not answer
     */
    observe (id, { at, swarmState, rcOk, rcError }) {
      const s = state.get(id)
      if (!s) return
      const down = swarmState !== null && swarmState !== 'ready'
      if (!down && rcOk) {
        if (s.open) {
          s.open.recoveredAt = at
          log(`swarm: node ${name(s.node)} is back (ready, its RC answers) after ${((at - s.open.lostAt) / 1000).toFixed(1)} s`)
          s.open = null
        }
        s.lastOk = at
        s.fails = 0
        s.firstFail = null
        return
      }
      s.fails++
      s.firstFail ??= at
      if (s.open) {
        if (down && s.open.swarmDownAt === null) {
          s.open.swarmDownAt = at
          log(`swarm: the manager marks node ${name(s.node)} ${swarmState}; Swarm reschedules its tasks`)
        }
        return
      }
      if (!down && s.fails < confirm) return
      const why = down ? `the manager marks it ${swarmState}` : `its RC does not answer (${rcError ?? 'no answer'})`
      s.open = {
        nodeId: id,
        node: s.node.hostname,
        label: s.node.label,
        lastSeenAt: s.lastOk,
        lostAt: s.firstFail,
        swarmDownAt: down ? at : null,
        recoveredAt: null,
        why
      }
      episodes.push(s.open)
      log(`swarm: warning: node ${name(s.node)} lost (${why}); the run goes on and will be marked degraded`)
    },
    /** Ids of nodes lost now (not back). */
    lostNow: () => [...state.values()].filter(s => s.open).map(s => s.node.id),
    episodes: () => episodes.map(e => ({ ...e }))
  }
}

/**
 * @typedef {{ from: number, to: number | null, why: string }} DaemonOutage the manager's Docker daemon did not answer
 *   from `from` (the first failed tick) to `to` (the first answer again; null: still down when the watch stopped)
 */

/**
 * The manager's daemon, fed one observation per tick: out after `confirm` failed calls in a row (a restart, a crash),
 * back at its first answer. Pure, like the loss tracker.
 * @param {{ confirm?: number, log?: (line: string) => void }} [opts]
 */
export function createOutageTracker ({ confirm = 2, log = () => {} } = {}) {
  /** @type {DaemonOutage[]} */
  const outages = []
  let fails = 0
  let firstFail = 0
  /** @type {DaemonOutage | null} */
  let open = null
  return {
    /** @param {{ at: number, ok: boolean, why?: string }} seen */
    observe ({ at, ok, why }) {
      if (ok) {
        if (open) {
          open.to = at
          log(`swarm: the Docker daemon answers again after ${((at - open.from) / 1000).toFixed(1)} s; this run is no measurement`)
          open = null
        }
        fails = 0
        return
      }
      if (fails++ === 0) firstFail = at
      if (open || fails < confirm) return
      open = { from: firstFail, to: null, why: why ?? 'no answer' }
      outages.push(open)
      log(`swarm: warning: the Docker daemon does not answer (${open.why}); the run will be marked failed`)
    },
    outages: () => outages.map(o => ({ ...o }))
  }
}

/**
 * Polls the manager's node list and each watched node's RC /healthz every intervalMs until stopped. A manager that
 * does not answer at all is a daemon outage (a restart), kept apart from the nodes' losses.
 * @param {{ docker: import('dockerode'), nodes: WatchedNode[], intervalMs?: number, probeTimeoutMs?: number, confirm?:
 *   number, log?: (line: string) => void, now?: () => number }} opts
 */
export function createNodeWatch ({ docker, nodes, intervalMs = 1000, probeTimeoutMs = 1000, confirm = 2, log = () => {}, now = Date.now }) {
  const tracker = createLossTracker(nodes, { confirm, log })
  const daemon = createOutageTracker({ confirm, log })
  /** @type {AbortController | null} */
  let stopper = null
  /** @type {Promise<void> | null} */
  let loop = null

  async function tick () {
    const at = now()
    /** @type {Map<string, string> | null} */
    let states = null
    try {
      // bounded: a manager that does not answer must not stall a tick (no verdict on the nodes then)
      const list = await withTimeout(docker.listNodes(), probeTimeoutMs * 2)
      states = new Map(list.map(n => [n.ID, n.Status?.State ?? 'unknown']))
      daemon.observe({ at, ok: true })
    } catch (err) {
      // refused or reset: the daemon is not there (a slow answer under load is no outage)
      if (daemonUnreachable(err) && err.code !== 'ETIMEDOUT') daemon.observe({ at, ok: false, why: err.code })
    }
    await Promise.all(nodes.map(async n => {
      let rcOk = true
      let rcError
      if (n.rcUrl) {
        try {
          const r = await probe(`${n.rcUrl}/healthz`, { timeoutMs: probeTimeoutMs })
          rcOk = r.status === 200
          if (!rcOk) rcError = `HTTP ${r.status}`
        } catch (err) {
          rcOk = false
          rcError = err.code ?? err.message
        }
      }
      tracker.observe(n.id, { at, swarmState: states ? (states.get(n.id) ?? 'unknown') : null, rcOk, rcError })
    }))
  }

  return {
    tracker,
    /** Starts watching (the first tick runs at once). */
    start () {
      if (stopper || !nodes.length) return
      const { signal } = stopper = new AbortController()
      loop = (async () => {
        while (!signal.aborted) {
          const started = now()
          await tick()
          const wait = intervalMs - (now() - started)
          if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => {})
        }
      })()
    },
    /** Every outage of the manager's daemon seen so far. */
    outages: () => daemon.outages(),
    /** Stops after the current tick; resolves with every loss episode seen. */
    async stop () {
      stopper?.abort()
      await loop
      return tracker.episodes()
    }
  }
}
