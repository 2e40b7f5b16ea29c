// Benchmark "disk": writes the current time to a new file per request and closes it (files live in the run's temp
// folder).
import { constants } from 'node:fs'
import { mkdir, writeFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { defineBenchmark, bool } from './params.js'

/** Each instance writes into its own folder, so instances sharing a temp folder never collide. */
export const diskDir = (ctx) => join(ctx.tmpDir, `disk-${String(ctx.instanceId).replace(/[^\w.-]/g, '_')}`)

export default defineBenchmark({
  name: 'disk',
  description: 'writes the current time to a new file per request and closes it (--param sync=true also fsyncs)',
  params: { sync: ['false', bool()] },
  create: async (opts, ctx) => {
    const dir = diskDir(ctx)
    await mkdir(dir, { recursive: true })
    let seq = 0
    // O_SYNC: each write reaches the disk before writeFile resolves (Node has no letter flag for a synchronous write)
    const flag = opts.sync ? constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_SYNC : 'w'
    return async (req, res) => {
      const now = String(Date.now())
      const name = `${++seq}.txt`
      await writeFile(join(dir, name), now, { flag })
      res.setHeader('Content-Type', 'text/plain')
      res.end(`wrote ${name} ${now}\n`)
    }
  },
  teardown: (ctx) => rm(diskDir(ctx), { recursive: true, force: true })
})
