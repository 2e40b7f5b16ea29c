#!/usr/bin/env node
// `analyzer`: summaries of JTL files, USL/Amdahl fits and comparisons of sweeps.
import { main } from '../analyzer/cli.js'

process.exitCode = await main(process.argv.slice(2))
