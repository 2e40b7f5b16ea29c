// Preloaded (node --import) into each process of a user's own server (--server), which nodescale runs unchanged: it
// names the instance in the instance header of every HTTP response (Node's http.server.request.start channel, no
// patching), writes the process's telemetry lines, says when the process ends before it served anything, and stops it
// when its launcher is gone. A server that answers through something else than node:http gets no instance header.
import { subscribe } from 'node:diagnostics_channel'
import { telemetryOn } from '../lib/telemetry.js'
import { INSTANCE_HEADER } from '../lib/wire.js'
import { instanceIdFromEnv } from './instance-id.js'
import { START_FAILURE, watchLauncher } from './launcher-watch.js'
import { startTelemetry } from './telemetry.js'

const env = process.env
/** PM2's own variables: its container script sets them from pm2_env after this hook ran. */
function pm2Vars () {
  try {
    const vars = JSON.parse(env.pm2_env ?? '{}')
    return vars.pm_id === undefined ? {} : { pm_id: String(vars.pm_id), NODE_APP_INSTANCE: String(vars.NODE_APP_INSTANCE ?? vars.pm_id) }
  } catch {
    return {}
  }
}
const seen = { ...env, ...pm2Vars() }
const instance = instanceIdFromEnv(seen)
let served = false
subscribe('http.server.request.start', (/** @type {any} */ msg) => {
  served = true
  if (!msg.response.headersSent) msg.response.setHeader(INSTANCE_HEADER, instance)
})
if (telemetryOn(env)) startTelemetry({ id: instance, role: 'worker' })
// before it answered anything: its output's last lines (the launcher keeps them) say why
process.on('exit', (code) => {
  if (!served) {
    process.stderr.write(`${START_FAILURE} the server (${env.NODESCALE_SERVER ?? process.argv[1]}) exited with code ${code} before it answered a request\n`)
  }
})
watchLauncher(seen, () => process.kill(process.pid, 'SIGTERM'))
