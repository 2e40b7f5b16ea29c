// Child-process entry of the autocannon driver: runs the load off the executor's event loop, reports over IPC.
import { runLocalLoad } from './local-load.js'

const controller = new AbortController()
const abort = () => controller.abort()
// Ctrl-C reaches the whole process group: stop the load and finish the JTL instead of dying with a torn file
process.on('SIGINT', abort)
process.on('SIGTERM', abort)
// the executor is gone: nobody reads the result, but the JTL is still finished and nothing is left running
process.on('disconnect', abort)

process.once('message', async (/** @type {any} */ msg) => {
  if (msg?.type !== 'start') return
  process.on('message', (/** @type {any} */ m) => { if (m?.type === 'abort') abort() })
  const o = { ...msg.opts, body: msg.opts.body ? Buffer.from(msg.opts.body) : undefined, signal: controller.signal }
  if (msg.progress) o.onProgress = (p) => send({ type: 'progress', progress: p })
  try {
    const result = await runLocalLoad(o, msg.jtlPath)
    send({ type: 'done', result })
  } catch (err) {
    send({ type: 'error', error: { message: err.message, code: err.code, stack: err.stack } })
  }
  if (process.connected) process.disconnect()
  // nothing should be left on the loop; if a library left a handle, do not linger as a stray process
  setTimeout(() => process.exit(0), 2000).unref()
})

function send (m) {
  if (process.connected) process.send(m)
}
