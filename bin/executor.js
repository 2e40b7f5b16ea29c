#!/usr/bin/env node
// `executor`: deploys a server under test, drives load, samples CPU, writes run.json.
import { main } from '../executor/cli.js'

const controller = new AbortController()
let signals = 0
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signals++
    if (signals === 1) {
      process.stderr.write(`\n${sig}: stopping the load and cleaning up (again to force exit)\n`)
      controller.abort(new Error(`interrupted by ${sig}`))
    } else {
      process.stderr.write(`${sig}: exiting now; processes of the run may be left behind\n`)
      process.exit(130)
    }
  })
}

process.exitCode = await main(process.argv.slice(2), { signal: controller.signal })
