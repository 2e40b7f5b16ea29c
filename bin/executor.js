#!/usr/bin/env node
// `executor`: deploys a server under test, drives load, samples CPU, writes run.json (bin/dispatch.js runs it).
import { runExecutor } from './dispatch.js'

await runExecutor(process.argv.slice(2))
