#!/usr/bin/env node
// `analyzer`: summaries of JTL files, USL/Amdahl fits and comparisons of sweeps (bin/dispatch.js runs it).
import { runAnalyzer } from './dispatch.js'

await runAnalyzer(process.argv.slice(2))
