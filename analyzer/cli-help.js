// Help texts of the `analyzer` command: each one teaches its command with examples. A command's text is what comes
// before its options and after them; the options' lines are made from its option rows (cli.js), which carry their help.
import { EXPORT_COLUMNS, FIT_COLUMNS } from './export.js'
import { optionsHelp } from '../lib/options.js'

/**
 * A command's --help: its text around the lines of its options, aligned on the longest flag.
 * @param {{ about: string, after: string }} text
 * @param {readonly import('../lib/options.js').Option[]} options
 */
export function commandHelp (text, options) {
  const width = Math.max(...options.filter(o => o.help).map(o => `--${o.flag}${o.arg ? ` ${o.arg}` : ''}`.length)) + 2
  return `${text.about.trimEnd()}\n\nOptions:\n${optionsHelp(options, { width })}\n\n${text.after}`
}

export const MAIN_HELP = `Usage: analyzer <command> [options]

Commands:
  summary   requests, errors, throughput and latency percentiles of a JTL (analyzer summary --help)
  fit       fit USL / Amdahl to the throughput of a sweep or a CSV  (analyzer fit --help)
  compare   sigma, lambda, N* side by side, and tests between them  (analyzer compare --help)
  report    one HTML page (or Markdown) with charts, fits, per-core CPU and runs (analyzer report --help)
  correlate how nodes and instances go with throughput and its spread (analyzer correlate --help)
  replicate a study's sweep row by row beside its published tables, with verdicts (analyzer replicate --help)
  export    one tidy row per run (config, summary, validity, diagnosis, capacity) as CSV or NDJSON (analyzer export --help)

Every command but report takes --json: the same data as the table, for scripts.
Exit codes: 0 done · 1 failed · 2 bad input (the message names the flag or file)`

export const SUMMARY_HELP = Object.freeze({
  about: `Usage: analyzer summary <file.jtl | file.jtl.gz | run-folder> [--label L] [--json]

Streams a JMeter CSV JTL, plain or gzip (any size, constant memory) and prints per label and in total:
requests, errors, error rate, throughput (JMeter's: samples / (last end - first start)),
and latency of 'elapsed' in ms: mean, p50, p90, p95, p99, max.
Percentiles follow JMeter's dashboard (commons-math3 LEGACY estimation, pos = p(n+1)/100),
computed exactly over every sample. Where the run's latency.json holds the autocannon driver's
µs histograms for exactly these samples, the table shows those instead (µs below 10 ms; within
0.1%, HdrHistogram's percentiles) and says so; --json keeps both (latency in ms, latencyUs).
Malformed rows are counted and shown, never fatal; a gzip file cut short (a killed run) gives
its rows up to the cut, with a note.
A run folder means its samples.jtl, else its samples.jtl.gz, else (a run with --samples none)
its latency.json: the same figures, per label and in total, from the histograms the run kept.
`,
  after: `Examples:
  analyzer summary results/20261122-101500-cm2-ab12            # a run folder: its samples
  analyzer summary results/sweep-x/20261122-101500-up1-ab12/samples.jtl.gz
  analyzer summary out.jtl --label "GET /search"
  analyzer summary out.jtl --json | jq .total.latency.p95`
})

export const FIT_HELP = Object.freeze({
  about: `Usage: analyzer fit <sweep-folder | points.csv> [options]

Fits Gunther's Universal Scalability Law X(N) = gamma N / (1 + sigma (N-1) + lambda N (N-1))
(and/or Amdahl: lambda = 0) and says what limits scaling: contention (sigma: serialised work,
queueing) or coherency (lambda: crosstalk, shared state), where throughput peaks (N* =
sqrt((1-sigma)/lambda)) or the Amdahl ceiling gamma/sigma. The noise of a run is a share of its
throughput, so by default the fit is least squares on log throughput (--weights relative) with
95% profile-likelihood intervals; a term the N measured cannot tell from 0 is said to be not
identifiable, with its bound and the N that would identify it, instead of an interval. Beside
USL and Amdahl a third model, linear up to a ceiling min(gamma N, C), is fitted with its change
point; the one with the least AICc is read. "Retrograde" is said only when a measured point lies
significantly below an earlier one (Bonferroni over the pairs of N). docs/statistics/fits.md
says what each figure means and how it was calibrated.

A folder is searched for run.json files (status "done" only). Every run is an observation:
the fit uses each repeat, and the table shows the mean per N with its spread (sd, count).
When several configurations share an N (e.g. concurrency levels at 4 instances) the one with
the highest mean throughput is the point, as in the Ibenchjs study. A run whose validity says
it did not measure the server (validity.ok false: the load generator or the host saturated,
throttled, unstable, errors) is left out and listed per group. A CSV needs a header with an
N column (n, instances, concurrency, load or processors) and a throughput column; optional
sd, count, and strategy/benchmark/group; each row is fitted.
`,
  after: `Examples:
  analyzer fit results/                            # every strategy/benchmark in a sweep
  analyzer fit results/ --model both --bootstrap 2000
  analyzer fit points.csv --json                   # n,throughput rows
  analyzer fit results/ --x concurrency --group-by strategy,instances`
})

export const COMPARE_HELP = Object.freeze({
  about: `Usage: analyzer compare <folder|csv>... [options]

Fits each strategy/benchmark group on every run (USL; Amdahl when too few points for USL) and
prints one table of sigma, lambda, gamma, N*, X(N*) with 95% intervals, sorted by benchmark and
then by the throughput each can reach, and a plain-language line per row ("cm/page: contention-
limited, peak 5,200/s at 3.1 workers").

Then it tests every pair of groups of a benchmark on what the runs identify: the throughput at
each N, the speedup X(N)/X(N0) from the smallest common N to the largest, the ceiling (each
group's highest throughput over N) and the mean ratio over all N. The unit is the deployment:
runs that measured one deployment (a sweep's repeats of a shape with order: shapes) are
averaged into one, as they share what that deployment got; the ratio over N takes each N as a
unit, so it can be tested with one deployment per N. Welch's t on logs; Holm's correction over
every pair and quantity of the benchmark at alpha = 0.05. Each test says one of:
  different      "cm/page is higher (cm/page / up/page = 1.24 [1.12, 1.37]; p = 0.004, Holm
                 over 21 tests)"
  equivalent     the ratio shown within +-margin (two one-sided tests, Holm as well)
  inconclusive   neither: not different, not shown equivalent
  cannot be tested  fewer than 2 deployments a side ("up/page has 1 deployment at N = 4 (its 2
                 runs share one deployment); a test needs 2 or more a side")
and, where it found no difference, its power: "a 10% difference in throughput at N = 4 is
detected at least 35% of the time with 3 deployments each; 7 deployments each would give 80%"
(at alpha over the family, from the spread of a deployment's mean pooled over the benchmark's
cells: a floor). sigma and lambda are not tested between groups: at 4 to 8 values of N they
trade off, so the design cannot tell which differs. Invalid runs (validity.ok false) are left
out and named per group. A CSV's rows are each a deployment unless a deployment column says
which rows share one.
`,
  after: `Examples:
  analyzer compare results/cm-sweep results/hs-sweep
  analyzer compare results/ --margin 10 --effect 20
  analyzer compare results/ --json`
})

export const REPORT_HELP = Object.freeze({
  about: `Usage: analyzer report <sweep-folder|csv>... [-o FILE] [options]

Writes one self-contained HTML page (inline SVG charts and CSS, nothing fetched when it is opened):
  - throughput vs N per group, mean ± standard deviation over repeats, and p95 latency vs N
  - the USL and Amdahl curves fitted to each group's points, N* marked where throughput peaks
  - the sigma/lambda table of analyzer compare with 95% intervals and a plain-language verdict per row,
    and its tests between groups: different, equivalent or inconclusive, p after Holm, and the power
  - the runs left out as invalid (validity.ok false), per group, and why
  - the per-core CPU table (highest core, lowest core, difference, overall per strategy and load level)
    and a chart of every core's usage
  - when the runs vary in nodes or instances: the correlation table of analyzer correlate
  - the run environment, and every run with its status (why a failed, interrupted or degraded run
    is no point)
A group with too few points for a fit gets a note instead of a curve.
`,
  after: `Progress goes to stderr. Examples:
  analyzer report results/sweep-20261123                   # writes results/sweep-20261123/report.html
  analyzer report results/cm results/hs -o cm-vs-hs.html
  analyzer report results/sweep --format md >> "$GITHUB_STEP_SUMMARY"`
})

export const CORRELATE_HELP = Object.freeze({
  about: `Usage: analyzer correlate <sweep-folder>... [--json]

Ibenchjs Figure 21: per benchmark, the Pearson correlation r of each factor (nodes, instances) with
  - the mean throughput of a cell,
  - its standard deviation over the cell's repeats (sd), and
  - its relative standard deviation (sd / mean: the spread, whatever the level).
A cell is one configuration (strategy x nodes x instances x concurrency or rate, and any other run
config field); its repeats are aggregated. r near 1: the factor goes with more; near 0: no linear
relation; near -1: with less. Only finished runs count (failed, interrupted and degraded runs are
skipped and counted).

"n/a" instead of r, with the reason, where it cannot be said: the factor does not vary (runs
without --nodes have no node count), fewer than 3 cells (two points always make r = ±1),
a metric equal in every cell, or no sd (one run per cell: give the sweep repeats: 2 or more).
`,
  after: `Examples:
  analyzer correlate results/20261123-120000-ibench-mimn-1a2b
  analyzer correlate results/mimn-a results/mimn-b --json | jq '.rows[] | select(.factor == "nodes")'`
})

export const REPLICATE_HELP = Object.freeze({
  about: `Usage: analyzer replicate <sweep-folder>... --study S [--include-invalid] [--json]

Sets finished sweeps of a study nodescale reproduces beside the study's published figures, row by row.
Several sweep folders make one table: each row is judged on the runs of all of them, pooled, so the
order of the folders changes no verdict; a note names the rows on which the sweeps alone disagree.
Each row names its source (table and reference file), the published value, ours with its 95% interval,
the effect the study printed beside the one measured, the rule it was compared by, and a verdict:
  reproduced       positive evidence: the direction significant the way the study claims it (Welch's
                   one-sided t-test, α = 0.05), a "no rise" shown to be under its margin (a rise of 10% or
                   more ruled out at 0.05: TOST's upper test), or a yes/no answered the same way
  not-reproduced   evidence against: significant the other way, a significant rise where none was
                   published, or a yes/no answered the other way
  inconclusive     the runs can be compared but do not decide (neither way significant, or tied runs with
                   no spread to test); more repeats may decide
  not-comparable   the runs cannot be compared at all (none for it, fewer than two a side, a set-up that
                   forces the answer), with the reason
What survives a change of machine is compared (yes/no, directions, "no rise", model tests); the
percentages are shown beside them, since each load is a level calibrated on its own machine. How often
each verdict is wrong on runs with a known truth: npm run stats:calibrate -- --only replicate.

Studies:
  multicore      the thesis's Table 4.3.1: raw Node, the cluster module and PM2 at three loads (executor
                 sweep experiments/multicore.yml)
  ibench-smisn   Ibenchjs findings 1, 2 and 5 and Table 5 (experiments/ibench-smisn.yml over instances,
                 ibench-table5.yml over workloads at fixed hardware, ibench-finding5.yml: hs vs cm at full CPU)
  ibench-mimn    Ibenchjs Table 4: throughput over 1-4 nodes, its sub-linearity, the instances at the maximum
                 (experiments/ibench-mimn.yml; on a local swarm the capacity rows are not comparable: its
                 nodes share one machine's cores)
`,
  after: `Examples:
  analyzer replicate results/20261124-182604-multicore-c315 --study multicore
  analyzer replicate results/*-ibench-smisn-* results/*-ibench-table5-* results/*-ibench-finding5-* --study ibench-smisn
  analyzer replicate results/20261124-183444-ibench-finding5-f61a --study ibench-smisn --json | jq '.rows[] | .verdict'`
})

export const EXPORT_HELP = Object.freeze({
  about: `Usage: analyzer export <folder>... [--format csv|ndjson] [--table runs|fits] [-o FILE]

Every run under the folders (run folders, sweep folders, or folders of them: every run.json and
capacity.json below, at most 8 folders deep) as one row, for R, pandas or a spreadsheet: the same
columns in every row, in this order, empty in CSV (null in NDJSON) where a run has no value. Rows
are ordered by sweep, start time and id. Failed, interrupted and invalid runs are rows too: filter
on status and valid (the analyzer's fits use the runs with status done and valid true).

Columns:
${EXPORT_COLUMNS.map(c => `  ${c.name.padEnd(21)}${c.what}`).join('\n')}

With --table fits: one row per group and model instead, each group's valid runs fitted as analyzer fit
--model both fits them (relative-error weighting; the intervals it prints, empty where a term is not
identifiable):
${FIT_COLUMNS.map(c => `  ${c.name.padEnd(21)}${c.what}`).join('\n')}
`,
  after: `The files' own formats: schemas/*.schema.json (JSON Schema 2020-12, one per file and version).

Examples:
  analyzer export results/sw > runs.csv
  analyzer export results/sw --format ndjson | jq 'select(.valid and .status == "done") | .throughput'
  Rscript -e 'r <- read.csv("runs.csv"); r <- subset(r, status == "done" & valid); aggregate(throughput ~ strategy + instances, r, mean)'`
})
