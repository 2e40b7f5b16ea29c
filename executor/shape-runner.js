// Runs many configs of the same shapes while keeping one deployment alive per shape (sweeps, calibration).
import { run } from './run.js'
import { RUN_OPTIONS } from '../lib/run-options.js'
import { keyOf } from '../lib/options.js'

/**
 * Run config fields that do not shape the deployment: the run options whose row says `side: load` or `output`, and the
 * marks a sweep, a calibration or a capacity search puts on a config.
 */
const NOT_SHAPE = new Set([...RUN_OPTIONS.filter(o => o.side !== 'shape').map(keyOf), 'sweep', 'calibration', 'capacity'])

/**
 * The fields of a run config that decide what is deployed (strategy, instances, benchmark, quota, backend, and any
 * flag added later); runs that differ only in load share a deployment.
 * @param {any} config a validated run config
 */
export function shapeKeyOf (config) {
  return JSON.stringify(Object.keys(config).filter(k => !NOT_SHAPE.has(k) && config[k] !== undefined).sort().map(k => [k, config[k]]))
}

/**
 * Holds at most one live deployment. `runOn` runs a config on the live deployment when it has the config's shape;
 * otherwise it tears the live one down and lets the run deploy (in the run's own folder, so a deployment that fails
 * leaves a run.json that says why) and keeps what it deployed. A failed or interrupted run tears its deployment down,
 * so the next run of that shape starts from a fresh one.
 * @param {{ log?: (line: string) => void, signal?: AbortSignal }} [opts]
 */
export function createShapeRunner ({ log = () => {}, signal } = {}) {
  /** @type {{ key: string, deployment: any } | null} */
  let live = null
  let deploys = 0

  async function close () {
    if (!live) return
    const { deployment } = live
    live = null
    try {
      await deployment.teardown()
    } catch (err) {
      log(`teardown: ${err.message}`)
    }
  }

  return {
    get deploys () { return deploys },
    get live () { return live?.key ?? null },
    close,
    /**
     * @param {any} config a validated run config (its `out` decides where the run folder goes)
     * @param {{ prepared: any, onProgress?: (p: any) => void }} opts prepared: prepareRun's result for this shape
     * @returns {Promise<any>} the run.json object (throws when the deployment or the run fails; a failed deployment
     *   is marked `phase: 'deploy'`, as the other runs of its shape would fail the same way)
     */
    async runOn (config, { prepared, onProgress }) {
      const key = shapeKeyOf(config)
      if (live?.key !== key) await close()
      // a daemon restart since the last run replaced the containers: the deployment kept is no longer the one sampled
      if (live && live.deployment.intact && !(await live.deployment.intact())) {
        log('the deployment kept from the last run lost its containers (a daemon restart?); deploying it again')
        await close()
      }
      const onDeployed = deployment => { live = { key, deployment }; deploys++ }
      let result
      try {
        result = await run(config, { log, signal, prepared, onProgress, deployment: live?.deployment, keepDeployment: true, onDeployed })
      } catch (err) {
        if (!live) throw Object.assign(err, { phase: 'deploy' })
        await close()
        throw err
      }
      if (result.status !== 'done') await close()
      return result
    }
  }
}
