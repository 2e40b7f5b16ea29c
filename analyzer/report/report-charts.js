// The report's charts as SVG text, drawn at build time: vega-lite specs compiled to vega and rendered headless.
import * as vega from 'vega'
import { compile } from 'vega-lite'
import { human } from '../fit/fit-verdict.js'
import { instancesText } from './report-tables.js'
import { ratioName } from '../stats/adaptive-text.js'

const WIDTH = 440
const HEIGHT = 260
const FIT_WIDTH = 320
const FIT_HEIGHT = 200
const MODEL_NAMES = { usl: 'USL', amdahl: 'Amdahl' }
const MODEL_COLOURS = { measured: '#222222', USL: '#1f77b4', Amdahl: '#ff7f0e' }

const ok = v => Number.isFinite(v)

/**
 * A vega-lite spec to SVG text, with no network and no canvas: compile, parse, render with renderer 'none'.
 * Warnings of either library go to log, not to the console.
 * @param {Record<string, any>} spec
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<string>}
 */
export async function toSvg (spec, { log = () => {} } = {}) {
  const logger = vega.logger(vega.Warn, 'warn', (method, level, args) => log(`chart ${level}: ${args.join(' ')}`))
  const compiled = compile(/** @type {any} */ ({ config: CONFIG, ...spec }), { logger }).spec
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

const CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  view: { stroke: '#ccc' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'right' },
  title: { fontSize: 14, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' }
}

/** What N is on the x axis. */
function xTitle (report) {
  if (report.x === 'nodes') return 'worker nodes (the server\'s instances spread over them)'
  return report.x === 'concurrency' ? 'concurrency (connections)' : 'instances N (cores for up, workers for cm and pm2, replicas for hs)'
}

/** One row per measured point: mean, mean ± sd (when repeated), and the words a screen reader says. */
function pointRows (group) {
  return group.points.filter(p => ok(p.n) && ok(p.throughput)).map(p => {
    const sd = ok(p.sd) ? p.sd : null
    return {
      group: group.name,
      n: p.n,
      mean: p.throughput,
      lo: sd === null ? null : p.throughput - sd,
      hi: sd === null ? null : p.throughput + sd,
      p95: ok(p.p95) ? p.p95 : null,
      cpu: ok(p.cpuTotal) ? p.cpuTotal : null,
      label: `${group.name} N=${human(p.n)}: mean ${human(p.throughput)} req/s` +
        (sd === null ? ` (${p.count ?? 1} run${(p.count ?? 1) > 1 ? 's' : ''}, no sd)` : ` ± sd ${human(sd)} over ${p.count} runs`),
      sd
    }
  })
}

const xEnc = (title, extra = {}) => ({ field: 'n', type: 'quantitative', title, axis: { tickMinStep: 1 }, scale: { padding: 10 }, ...extra })

/** Throughput vs N for every group: mean with ± standard deviation error bars over the repeats. */
function throughputSpec (report, colour) {
  const rows = report.groups.flatMap(pointRows)
  if (!rows.length) return null
  const bars = rows.filter(r => r.sd !== null)
  const enc = { x: xEnc(xTitle(report)), color: { field: 'group', type: 'nominal', title: 'group', scale: colour } }
  return {
    title: { text: 'Throughput vs N', subtitle: 'mean over repeats; error bars: ± one standard deviation' },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: rows },
        mark: { type: 'line', strokeWidth: 1.5 },
        encoding: { ...enc, y: { field: 'mean', type: 'quantitative', title: 'throughput (req/s)' } }
      },
      ...(bars.length
        ? [
            {
              data: { values: bars },
              mark: { type: 'errorbar', ticks: true },
              encoding: {
                ...enc,
                y: { field: 'lo', type: 'quantitative', title: 'throughput (req/s)' },
                y2: { field: 'hi' },
                description: { field: 'label' }
              }
            }
          ]
        : []),
      {
        data: { values: rows },
        mark: { type: 'point', filled: true, size: 45 },
        encoding: { ...enc, y: { field: 'mean', type: 'quantitative', title: 'throughput (req/s)' }, description: { field: 'label' } }
      }
    ]
  }
}

/**
 * One figure of every point vs N, a line per group: p95 latency (points from CSV have none), or the server's CPU.
 * @param {{ field: string, name: string, title: string, subtitle: string, axis: string, unit: string }} what field: p95
 *   or cpu
 */
function metricSpec (report, colour, what) {
  const rows = report.groups.flatMap(pointRows).filter(r => r[what.field] !== null)
    .map(r => ({ ...r, label: `${r.group} N=${human(r.n)}: ${what.name} ${human(r[what.field])} ${what.unit}` }))
  if (!rows.length) return null
  const enc = {
    x: xEnc(xTitle(report)),
    y: { field: what.field, type: 'quantitative', title: `${what.axis} (${what.unit})` },
    color: { field: 'group', type: 'nominal', title: 'group', scale: colour }
  }
  return {
    title: { text: what.title, subtitle: what.subtitle },
    width: WIDTH,
    height: HEIGHT,
    data: { values: rows },
    layer: [
      { mark: { type: 'line', strokeWidth: 1.5 }, encoding: enc },
      { mark: { type: 'point', filled: true, size: 45 }, encoding: { ...enc, description: { field: 'label' } } }
    ]
  }
}

const LATENCY = {
  field: 'p95',
  name: 'p95',
  title: 'p95 latency vs N',
  subtitle: 'mean of the repeats\' p95, at the configuration that gave each point',
  axis: 'p95 latency',
  unit: 'ms'
}
const CLUSTER_CPU = {
  field: 'cpu',
  name: 'server CPU',
  title: 'Server CPU vs nodes',
  subtitle: 'the server\'s CPU summed over the nodes, at the configuration that gave each point',
  axis: 'server CPU',
  unit: 'cores'
}

/** One group: the measured points, the fitted USL and Amdahl curves, and N* where the USL curve peaks. */
function fitSpec (report, group) {
  const fitted = Object.entries(group.fits).filter(([, f]) => f && !f.error)
  if (!fitted.length) return null
  const rows = pointRows(group)
  const curves = group.curves.map(c => ({ ...c, series: MODEL_NAMES[c.model] }))
  const peaks = group.peaks.filter(p => p.inChart).map(p => ({
    ...p,
    series: MODEL_NAMES[p.model],
    text: `N* = ${human(p.nStar, 2)}`,
    label: `${MODEL_NAMES[p.model]} peak: N* = ${human(p.nStar, 2)}, X(N*) = ${human(p.xStar)} req/s`
  }))
  const series = ['measured', ...fitted.map(([m]) => MODEL_NAMES[m])]
  const colour = { field: 'series', type: 'nominal', title: null, scale: { domain: series, range: series.map(s => MODEL_COLOURS[s]) } }
  const [lo, hi] = group.domain
  const x = xEnc(`N (${group.unit})`, { scale: { domain: [lo - 0.04 * (hi - lo), hi + 0.04 * (hi - lo)], nice: false } })
  const y = { type: 'quantitative', title: 'throughput (req/s)' }
  const subtitle = fitted.map(([m, f]) => `${MODEL_NAMES[m]} R² ${ok(f.r2) ? f.r2.toFixed(3) : '-'}`).join(' · ') +
    ` · ${group.points.length} points from ${group.runsUsed} runs`
  const measured = rows.map(r => ({ ...r, series: 'measured' }))
  return {
    title: { text: group.name, subtitle },
    width: FIT_WIDTH,
    height: FIT_HEIGHT,
    layer: [
      ...fitted.map(([m]) => ({
        data: { values: curves.filter(c => c.model === m) },
        mark: { type: 'line', strokeWidth: 2, clip: true, strokeDash: m === 'usl' ? [1, 0] : [6, 3] },
        encoding: { x, y: { field: 'throughput', ...y }, color: colour }
      })),
      ...(rows.some(r => r.sd !== null)
        ? [
            {
              data: { values: measured.filter(r => r.sd !== null) },
              mark: { type: 'errorbar', ticks: true },
              encoding: { x, y: { field: 'lo', ...y }, y2: { field: 'hi' }, color: colour, description: { field: 'label' } }
            }
          ]
        : []),
      {
        data: { values: measured },
        mark: { type: 'point', filled: true, size: 50 },
        encoding: { x, y: { field: 'mean', ...y }, color: colour, description: { field: 'label' } }
      },
      ...(peaks.length
        ? [
            {
              data: { values: peaks },
              mark: { type: 'rule', strokeDash: [3, 3] },
              encoding: { x: { field: 'nStar', type: 'quantitative' }, color: colour, description: { field: 'label' } }
            },
            {
              data: { values: peaks },
              mark: { type: 'text', align: 'left', dx: 4, dy: -6, fontSize: 11 },
              encoding: {
                x: { field: 'nStar', type: 'quantitative' },
                y: { field: 'xStar', type: 'quantitative' },
                text: { field: 'text' },
                color: colour
              }
            }
          ]
        : [])
    ]
  }
}

/** Bars per core per strategy and load level: how evenly each approach used the cores (the multi-core study). */
function cpuSpec (report) {
  const several = key => new Set(report.cpu.map(r => r[key])).size > 1
  const [benchmarks, loads] = [several('benchmark'), several('load')]
  const rows = report.cpu.flatMap(r => {
    const config = `${benchmarks ? `${r.benchmark} ` : ''}${r.strategy} ×${instancesText(r)}${loads ? ` · ${r.load.replace(' connections', ' conn')}` : ''}`
    return r.cores.filter(c => ok(c.usage)).map(c => ({
      config,
      core: `core ${c.core}`,
      usage: c.usage,
      label: `${config}: core ${c.core} ${c.usage.toFixed(1)}%`
    }))
  })
  if (!rows.length) return null
  const top = Math.max(100, ...rows.map(r => r.usage))
  return {
    title: { text: 'Per-core CPU of the server', subtitle: 'mean usage of each core over the steady window, averaged over repeats' },
    width: { step: 16 },
    height: HEIGHT,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      x: {
        field: 'config',
        type: 'nominal',
        title: loads ? 'strategy × instances · load' : `strategy × instances (load: ${report.cpu[0].load})`,
        sort: null,
        axis: { labelAngle: -30, labelLimit: 200 }
      },
      xOffset: { field: 'core', type: 'nominal', sort: null },
      y: { field: 'usage', type: 'quantitative', title: 'CPU usage (% of one core)', scale: { domain: [0, top] } },
      color: { field: 'core', type: 'nominal', title: 'core', sort: null },
      description: { field: 'label' }
    }
  }
}

/** Stacked bars of the cores by role against N, one panel per group: where the host's cores went as N grew. */
function rolesSpec (report) {
  const rows = (report.comparison?.bends ?? []).flatMap(b => b.steps.flatMap(s => Object.entries(s.roles ?? {}).map(([role, cores], i) => ({
    group: b.group, n: s.n, role, order: i, cores, label: `${b.group} N=${s.n}: ${role} ${cores.toFixed(2)} cores (${s.kind ?? 'no diagnosis'})`
  }))))
  if (!rows.length) return null
  return {
    title: {
      text: 'Where the cores went, by role',
      subtitle: 'mean cores of each role over the steady window at each N; the bars sum to the host\'s busy cores'
    },
    data: { values: rows },
    facet: { field: 'group', type: 'nominal', title: null },
    columns: 3,
    spec: {
      width: FIT_WIDTH,
      height: FIT_HEIGHT,
      mark: { type: 'bar' },
      encoding: {
        x: { field: 'n', type: 'ordinal', title: xTitle(report).split(' (')[0] },
        y: { field: 'cores', type: 'quantitative', title: 'cores', stack: 'zero' },
        color: { field: 'role', type: 'nominal', title: 'role', sort: ['workers', 'primary', 'pm2-daemon', 'load-balancer', 'rc', 'load-generator', 'other'] },
        order: { field: 'order', type: 'quantitative' },
        description: { field: 'label' }
      }
    }
  }
}

/**
 * An adaptive experiment's interval narrowing look by look: the ratio and its repeated interval at each look (log
 * scale), no difference (1) and the equivalence margin as rules.
 * @param {any} a sweep.json's adaptive
 */
function adaptiveSpec (a) {
  const rows = a.looks.filter(l => l.estimate && ok(l.estimate.ratio)).map(l => ({
    look: l.look,
    ratio: l.estimate.ratio,
    lo: ok(l.estimate.lo) ? l.estimate.lo : null,
    hi: ok(l.estimate.hi) ? l.estimate.hi : null,
    verdict: l.verdict,
    label: `look ${l.look}: ${l.estimate.ratio.toFixed(2)} [${l.estimate.lo.toFixed(2)}, ` +
      `${ok(l.estimate.hi) ? l.estimate.hi.toFixed(2) : '∞'}] → ${l.verdict}`
  }))
  if (!rows.length) return null
  // a test's lines: no difference and its margin; an estimate (a precision asked) has neither
  const margin = a.question.margin ?? 0
  const rules = a.question.precision
    ? []
    : [1, 1 + margin, 1 / (1 + margin)].map((y, i) => ({ y, what: i ? `±${(margin * 100).toFixed(0)}% margin` : 'no difference' }))
  const what = a.question.knee ? ratioName(a.question) : a.question.estimate ? `${ratioName(a.question)} throughput` : `ratio ${ratioName(a.question)}`
  const x = { field: 'look', type: 'quantitative', title: 'look (after each block)', scale: { domain: [0.5, a.maxLooks + 0.5] }, axis: { tickMinStep: 1 } }
  return {
    title: {
      text: `${ratioName(a.question)}: the interval look by look`,
      subtitle: `the ${a.question.estimate || a.question.knee ? 'value' : 'ratio'} and its repeated 95% interval at each look; ` +
        'it stops once the interval answers'
    },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      ...(rules.length
        ? [{
            data: { values: rules },
            mark: { type: 'rule', strokeDash: [4, 3], color: '#999' },
            encoding: { y: { field: 'y', type: 'quantitative' }, description: { field: 'what' } }
          }]
        : []),
      {
        data: { values: rows.filter(r => r.lo !== null && r.hi !== null) },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: { x, y: { field: 'lo', type: 'quantitative', scale: { type: 'log' } }, y2: { field: 'hi' }, description: { field: 'label' } }
      },
      {
        data: { values: rows },
        mark: { type: 'point', filled: true, size: 60 },
        encoding: {
          x,
          y: { field: 'ratio', type: 'quantitative', title: `${what} (log scale)`, scale: { type: 'log' } },
          color: { field: 'verdict', type: 'nominal', title: 'verdict' },
          description: { field: 'label' }
        }
      }
    ]
  }
}

/**
 * Every chart of a report as SVG text (null where there is nothing to draw).
 * @param {import('./report.js').Report} report
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function renderCharts (report, opts = {}) {
  const colour = { domain: report.groups.map(g => g.name), scheme: 'tableau10' }
  let drawn = 0
  // clip-path ids are unique per process in vega; the prefix keeps them unique in one page whatever vega does
  const draw = async spec => (spec ? (await toSvg(spec, opts)).replace(/(id="|url\(#)(clip\d+)/g, `$1c${++drawn}-$2`) : null)
  const throughput = await draw(throughputSpec(report, colour))
  const latency = await draw(metricSpec(report, colour, LATENCY))
  // the cluster's CPU (Ibenchjs Figures 18 and 22) where N is the node count
  const clusterCpu = report.x === 'nodes' ? await draw(metricSpec(report, colour, CLUSTER_CPU)) : null
  /** @type {Map<string, string|null>} */
  const fits = new Map()
  for (const g of report.groups) fits.set(g.name, await draw(fitSpec(report, g)))
  const cpu = await draw(cpuSpec(report))
  const roles = await draw(rolesSpec(report))
  const adaptive = []
  for (const a of report.adaptive ?? []) adaptive.push(await draw(adaptiveSpec(a)))
  const count = [throughput, latency, clusterCpu, cpu, roles, ...fits.values(), ...adaptive].filter(Boolean).length
  return { throughput, latency, clusterCpu, fits, cpu, roles, adaptive, count }
}
