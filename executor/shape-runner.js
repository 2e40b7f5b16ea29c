// Runs many configs of the same shapes while keeping one deployment alive per shape (sweeps, calibration).
import { mkdir, rmdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { run, deployFor } from './run.js'
import { newRunId } from './run-store.js'

/** Run config fields that only say how the load is driven and recorded; every other field shapes the deployment. */
const LOAD_ONLY = Object.freeze(['concurrency', 'rate', 'duration', 'warmup', 'driver', 'out', 'json', 'quiet', 'sweep', 'calibration'])

/**
 * The fields of a run config that decide what is deployed (strategy, instances, benchmark, quota, backend, and any
 * flag added later); runs that differ only in load share a deployment.
 * @param {any} config a validated run config
 */
export function shapeKeyOf (config) {
  return JSON.stringify(Object.keys(config).filter(k => !LOAD_ONLY.includes(k) && config[k] !== undefined).sort().map(k => [k, config[k]]))
}

/**
 * Holds at most one live deployment. `runOn` deploys a shape when it is not the live one (tearing the old one down
 * first), then runs the config on it; a failed or interrupted run tears its deployment down, so the next run of that
 * shape starts from a fresh one.
 * @param {{ dir: string, log?: (line: string) => void, signal?: AbortSignal }} opts dir: where deployment files go
 */
export function createShapeRunner ({ dir, log = () => {}, signal }) {
  /** @type {{ key: string, deployment: any, id: string, dir: string } | null} */
  let live = null
  let deploys = 0

  async function close () {
    if (!live) return
    const { deployment, id, dir: deployDir } = live
    live = null
    try {
      await deployment.teardown()
    } catch (err) {
      log(`teardown of ${id}: ${err.message}`)
    }
    // a deployment that wrote nothing (a local cm, pm2 or up) leaves no empty folders behind
    await rmdir(deployDir).then(() => rmdir(dirname(deployDir))).catch(() => {})
  }

  return {
    get deploys () { return deploys },
    get live () { return live?.key ?? null },
    close,
    /**
     * @param {any} config a validated run config (its `out` decides where the run folder goes)
     * @param {{ prepared: any, onProgress?: (p: any) => void }} opts prepared: prepareRun's result for this shape
     * @returns {Promise<any>} the run.json object (throws when the deployment or the run fails)
     */
    async runOn (config, { prepared, onProgress }) {
      const key = shapeKeyOf(config)
      if (live?.key !== key) {
        await close()
        signal?.throwIfAborted()
        const id = newRunId(config)
        const deployDir = join(dir, 'deployments', id)
        await mkdir(deployDir, { recursive: true })
        let deployment
        try {
          deployment = await deployFor(config, { prepared, id, dir: deployDir, log, signal })
        } catch (err) {
          await rmdir(deployDir).then(() => rmdir(dirname(deployDir))).catch(() => {})
          // told apart from a failed run: the other runs of this shape would fail the same way
          throw Object.assign(err, { phase: 'deploy' })
        }
        deploys++
        live = { key, deployment, id, dir: deployDir }
      }
      let result
      try {
        result = await run(config, { log, signal, prepared, deployment: live.deployment, onProgress })
      } catch (err) {
        await close()
        throw err
      }
      if (result.status !== 'done') await close()
      return result
    }
  }
}
