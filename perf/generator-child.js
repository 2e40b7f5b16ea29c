// One generator process of perf/generator-cost.js, as a run's is: executor/drivers/load-child.js's one import
// (runLocalLoad) and nothing else, its options normalized by the caller as the executor normalizes them before it
// starts a generator. Prints the requests it made, warm-up included.
import { runLocalLoad } from '../executor/drivers/local-load.js'

const o = JSON.parse(process.argv[2] ?? '{}')
const result = await runLocalLoad(o, o.jtlPath)
console.log(result.requests + result.warmupRequests)
