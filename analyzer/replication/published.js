// The published figures of the two studies nodescale reproduces, as data typed in by hand from the studies' texts
// (never read off a chart): the multi-core thesis's Table 4.3.1 with its stated set-up, the Ibenchjs paper's findings
// 1, 2 and 5 and its Table 5 (USL vs Amdahl over workloads at fixed hardware, section 5.4), and its Table 4 (MIMN).
//
// Every record names where it is printed (`source`: the reference's file name and its table or section) and carries
// `excerpt`: the lines it was typed from, verbatim up to whitespace (a run of blanks is one space, and a line break
// after a hyphen is dropped: "CPU-\ncores" reads "CPU-cores"), so that a reader, and
// test/replication-published.test.js, can check every number without the reference at hand.
//
// A published number is a Figure: its value and the text printed for it. `value` is the number as printed (percent
// points where the unit is '%', so R² 98.76% is 98.76); it is null where the reference prints words instead
// ('Intense differences', 'N/A'), and `printed` then says which. Fields that are nodescale's, not the study's (the
// strategy an approach maps to, the calibration level a load maps to, the benchmark an app maps to), are named as such.

/**
 * @typedef {{ file: string, where: string }} Source where a record is printed: the reference's file name and its place
 * @typedef {{ value: number|null, printed: string, unit: string }} Figure a published number and its printed text
 * @typedef {{ source: Source, excerpt: string }} Quoted what every record carries
 * @typedef {Quoted & { label: string, value: string, figures?: Record<string, Figure> }} SetupItem one stated fact of a
 *   study's set-up, in the study's words (value) and its numbers (figures)
 * @typedef {'raw'|'cluster'|'pm2'} Approach the thesis's three approaches
 * @typedef {'relaxed'|'average'|'exhausting'} Load the three loads of Table 4.3.1
 * @typedef {Quoted & { approach: Approach, approachPrinted: string, strategy: 'up'|'cm'|'pm2', load: Load,
 *   loadPrinted: string, utilisation: { exists: boolean, printed: 'Yes'|'No', words: string }, highest: { usage:
 *   Figure, core: Figure|null }, lowest: { usage: Figure, core: Figure|null }, difference: Figure, overall: Figure }}
 *   MulticoreRow one row of Table 4.3.1; strategy is nodescale's for the approach; core is null where the thesis names
 *   none (raw Node at exhausting load)
 * @typedef {Quoted & { metric: string, relation: string, of?: string, than?: string, over?: string, text: string,
 *   benchmark?: string }} Direction what a finding says moves which way (of/than: the two sides compared; over: what
 *   varies; benchmark, nodescale's: the app it was shown on, where the study shows it on one)
 * @typedef {Quoted & { id: string, number: number, claim: string, apps: string[], benchmarks: string[], conditions:
 *   Quoted & { text: string, figures: Record<string, Figure> }, direction: Direction[], abstract?: Quoted & { number:
 *   number, text: string } }} Finding a qualitative finding: excerpt is its wording in the paper's conclusion;
 *   conditions and direction are quoted from the section that shows it; abstract is the same finding as the abstract
 *   numbers it, where it does
 * @typedef {Quoted & { app: 'cpu'|'network', appPrinted: string, benchmark: string, model: 'usl'|'amdahl',
 *   modelPrinted: string, sigma: Figure, lambda: Figure, r2: Figure }} Table5Fit one model fitted to one app (Table 5)
 * @typedef {Quoted & { nodes: Figure, throughput: Figure, sd: Figure, instances: Figure }} Table4Row one cluster size:
 *   the maximum throughput (mean ± what the paper prints after it) and the instances at that maximum
 */

const THESIS = '000_f21ea12892a9869b.txt'
const IBENCH = '002_205ca361927d42b2.txt'

/**
 * @param {number|null} value
 * @param {string} printed
 * @param {string} unit
 * @returns {Figure}
 */
const fig = (value, printed, unit) => ({ value, printed, unit })

/** @returns {Source} */
const thesis = where => ({ file: THESIS, where })
/** @returns {Source} */
const ibench = where => ({ file: IBENCH, where })

const pct = (value, printed = `${value}%`) => fig(value, printed, '%')
const core = n => fig(n, `core ${n}`, 'core')
const YES_BOTH = { exists: true, printed: 'Yes', words: 'considerable and steady usage of both cores' }

/**
 * One row of Table 4.3.1 (the excerpt of the first row of each load carries the load's name, as the table prints it).
 * @returns {MulticoreRow}
 */
function row (approach, load, loadPrinted, utilisation, highest, lowest, difference, overall, excerpt) {
  const approachPrinted = { raw: 'Raw Node.js', cluster: '‘cluster’ module', pm2: '‘PM2’ approach' }[approach]
  const strategy = /** @type {'up'|'cm'|'pm2'} */ ({ raw: 'up', cluster: 'cm', pm2: 'pm2' }[approach])
  return {
    approach,
    approachPrinted,
    strategy,
    load,
    loadPrinted,
    utilisation,
    highest,
    lowest,
    difference,
    overall,
    source: thesis(`Table 4.3.1, ${loadPrinted}, ${approachPrinted}`),
    excerpt
  }
}

/** The multi-core thesis: raw Node.js vs the cluster module vs PM2 on a dual-core server. */
export const multicore = {
  id: 'multicore',
  title: 'Thesis: utilisation of multi-core power by raw Node.js, the cluster module and PM2 (dual-core server, JMeter, htop)',
  file: THESIS,
  table: {
    id: 'Table 4.3.1',
    columns: [
      'Approach', 'Multi-core Utilization Exists', 'Higest Used CPU-core Usage (avg.)',
      'Lowest Used CPU-core Usage (avg.)', 'Higest to Lowest Difference (avg.)', 'Overall CPU usage (avg.)'
    ],
    // the percentages are truncated, not rounded: a measured 40.15% prints 40.1%
    rounding: 'truncated',
    source: thesis('Table 4.3.1, header'),
    excerpt: 'Approach Multi-core Utilization Exists Higest Used CPU-core Usage (avg.) Lowest Used CPU-core Usage ' +
      '(avg.) Higest to Lowest Difference (avg.) Overall CPU usage (avg.)',
    caption: {
      text: 'Utilization of the multi-core power (percent truncated to max one decimal places).',
      source: thesis('Table 4.3.1, caption'),
      excerpt: 'Table 4.3.1: Utilization of the multi-core power (percent truncated to max one decimal places).'
    }
  },
  // The table's load names, what the text of section 4.3 calls them, and the calibration level each approach ran at
  // (nodescale's level names). At exhausting load section 4.3 says the cluster and PM2 ran at relaxed x cores, while
  // sections 2.3.3 and 4.2 and the captions of Figures 3.3.4-3.3.9 say exhausted x 2: `conflict` quotes the latter,
  // and runLevel follows it (three places against one, and relaxed x cores would repeat the average load).
  loads: [
    {
      id: 'relaxed',
      tablePrinted: 'Relaxed Load',
      textPrinted: 'At relaxed load',
      runLevel: { raw: 'relaxed', cluster: 'relaxed', pm2: 'relaxed' },
      source: thesis('section 4.3'),
      excerpt: 'At relaxed load: Here, our intention was to apply an amount of load that could be, in a relaxed ' +
        'manner, handled by a single CPU-core and check the utilization of the multi-core power for all approaches. ' +
        'All the approaches were exposed to the ‘relaxed run-level’ in this case.'
    },
    {
      id: 'average',
      tablePrinted: 'Average Load',
      textPrinted: 'At average load (relaxed load multiplied by the number of CPU-cores)',
      runLevel: { raw: 'relaxed*cores', cluster: 'relaxed*cores', pm2: 'relaxed*cores' },
      source: thesis('section 4.3'),
      excerpt: 'At average load (relaxed load multiplied by the number of CPU-cores): For this amount of load, our ' +
        'intention was to push a single core out of its comfort zone by applying an amount of load that a single ' +
        'CPU-core could not, in a relaxed manner, handle alone and induce a level of multi-core power utilization. ' +
        'All the approaches were exposed to the ‘relaxed run-level’ multiplied by the number of CPU-cores in this ' +
        'case.'
    },
    {
      id: 'exhausting',
      tablePrinted: 'Exhausting Load',
      textPrinted: 'At exhausting load',
      runLevel: { raw: 'exhausted', cluster: 'exhausted*cores', pm2: 'exhausted*cores' },
      source: thesis('section 4.3'),
      excerpt: 'At exhausting load: Here, the intention was to apply a maximal load (without any sign of failure to ' +
        'respond) on all approaches. In this case, the ‘raw Node.js’ approach was exposed to the ‘exhausted ' +
        'run-level’, while the other two approaches were exposed to the ‘relaxed run-level’ multiplied by the number ' +
        'of CPU-cores.',
      conflict: [
        {
          source: thesis('section 2.3.3'),
          excerpt: 'The raw Node.js approach would be tested according to the ‘exhausted run-level’ and the other ' +
            'two approaches would be tested according to the multiplication of the ‘exhausted run-level’ with the ' +
            'number of CPU-cores;'
        },
        {
          source: thesis('section 4.2'),
          excerpt: 'doubling the exhaustion level of the raw Node.js approach seemed as a decent level to measure ' +
            'the ‘cluster’ and ‘PM2’ approaches against.'
        },
        {
          source: thesis('Figure 3.3.4, caption'),
          excerpt: 'Figure 3.3.4: Five CPU usage percentage readings (with 10 second interval) for third phase with ' +
            '‘cluster’ approach. Running at ‘exhausted run-level’ multiplied by 2.'
        }
      ]
    }
  ],
  /** @type {MulticoreRow[]} */
  rows: [
    row('raw', 'relaxed', 'Relaxed Load', { exists: false, printed: 'No', words: 'practically, only the first core used' },
      { usage: pct(77.7), core: core(1) }, { usage: pct(1.9), core: core(2) }, pct(75.8), pct(39.8),
      'Relaxed Load Raw Node.js No (practically, only the first core used) 77.7% (core 1) 1.9% (core 2) 75.8% 39.8%'),
    row('cluster', 'relaxed', 'Relaxed Load', YES_BOTH,
      { usage: pct(68.6), core: core(1) }, { usage: pct(11.7), core: core(2) }, pct(56.9), pct(40.1),
      '‘cluster’ module Yes (considerable and steady usage of both cores) 68.6% (core 1) 11.7% (core 2) 56.9% 40.1%'),
    row('pm2', 'relaxed', 'Relaxed Load', YES_BOTH,
      { usage: pct(73.9), core: core(1) }, { usage: pct(18.9), core: core(2) }, pct(55), pct(46.4),
      '‘PM2’ approach Yes (considerable and steady usage of both cores) 73.9% (core 1) 18.9% (core 2) 55% 46.4%'),
    row('raw', 'average', 'Average Load', { exists: false, printed: 'No', words: 'practically, only the first core used with half total CPU usage' },
      { usage: pct(98.7), core: core(1) }, { usage: pct(2.4), core: core(2) }, pct(96.3), pct(50.5),
      'Average Load Raw Node.js No (practically, only the first core used with half total CPU usage) 98.7% (core 1) 2.4% (core 2) 96.3% 50.5%'),
    row('cluster', 'average', 'Average Load', YES_BOTH,
      { usage: pct(89.9), core: core(1) }, { usage: pct(56.2), core: core(2) }, pct(33.7), pct(73),
      '‘cluster’ module Yes (considerable and steady usage of both cores) 89.9% (core 1) 56.2% (core 2) 33.7% 73%'),
    row('pm2', 'average', 'Average Load', YES_BOTH,
      { usage: pct(88.7), core: core(1) }, { usage: pct(59.2), core: core(2) }, pct(29.5), pct(73.9),
      '‘PM2’ approach Yes (considerable and steady usage of both cores) 88.7% (core 1) 59.2% (core 2) 29.5% 73.9%'),
    row('raw', 'exhausting', 'Exhausting Load',
      { exists: false, printed: 'No', words: 'CPU usage only alternated between the CPU-cores with always half the total CPU usage' },
      { usage: fig(null, 'Intense differences', '%'), core: null }, { usage: fig(null, 'Intense differences', '%'), core: null },
      fig(null, 'N/A', '%'), pct(54.4),
      'Exhausting Load Raw Node.js No (CPU usage only alternated between the CPU-cores with always half the total ' +
        'CPU usage) Intense differences Intense differences N/A 54.4%'),
    row('cluster', 'exhausting', 'Exhausting Load', YES_BOTH,
      { usage: pct(97.5), core: core(2) }, { usage: pct(97.1), core: core(1) }, pct(0.4), pct(97.3),
      '‘cluster’ module Yes (considerable and steady usage of both cores) 97.5% (core 2) 97.1% (core 1) 0.4% 97.3%'),
    row('pm2', 'exhausting', 'Exhausting Load', YES_BOTH,
      { usage: pct(91.2), core: core(2) }, { usage: pct(89.9), core: core(1) }, pct(1.3), pct(90.5),
      '‘PM2’ approach Yes (considerable and steady usage of both cores) 91.2% (core 2) 89.9% (core 1) 1.3% 90.5%')
  ],
  // What the text says beside the table: raw Node's alternation at exhausting load, and the response counts and times
  // of sections 4.1 and 4.2 (JMeter's averages; the thesis gives no spread).
  observations: [
    {
      id: 'raw-exhausting-alternates',
      text: 'raw Node at the exhausted run-level: each core alternates between about 2% and 98%, the total staying about half',
      figures: { low: pct(2, 'around 2%'), high: pct(98, '98%'), overall: pct(54, 'around 54%') },
      source: thesis('section 3.3'),
      excerpt: 'the CPU-core usage for every core had alternated between around 2% and 98% between the cores (with always half the total CPU usage around 54%).'
    },
    {
      id: 'relaxed-throughput',
      text: 'at the relaxed run-level raw Node answers slightly more than the cluster and PM2, at the same response time',
      figures: {
        rawResponseTime: fig(1.3, '1.3 milliseconds and 1875', 'ms'),
        rawThroughput: fig(1875, '1875 resp/sec', 'req/s'),
        othersThroughputLow: fig(1660, '1660-1700 resp/sec', 'req/s'),
        othersThroughputHigh: fig(1700, '1700 resp/sec', 'req/s')
      },
      source: thesis('section 4.1'),
      excerpt: 'the raw Node.js approach showed a slight advantage response-count-wise; averaging at 1.3 ' +
        'milliseconds and 1875 resp/sec (while the other two approaches averaged at 1.3 milliseconds and 1660-1700 ' +
        'resp/sec).'
    },
    {
      id: 'average-throughput',
      text: 'at relaxed x cores raw Node answers fewer and slower than the cluster and PM2, which are alike',
      figures: {
        rawResponseTime: fig(2.2, '2.2 milliseconds', 'ms'),
        othersResponseTime: fig(1.6, '1.6 milliseconds', 'ms'),
        rawThroughput: fig(2540, '2540 resp/second', 'req/s'),
        clusterThroughput: fig(3075, '3075 resp/sec', 'req/s'),
        pm2Throughput: fig(3025, '3025 resp/sec', 'req/s')
      },
      source: thesis('section 4.1'),
      excerpt: 'the response time for the raw Node.js approach had suffered a drop in the response time resulting in ' +
        'an average of 2.2 milliseconds compared to the average of both ‘cluster’ and ‘PM2’ approaches which ' +
        'averaged around 1.6 milliseconds for both. This was shown also in the average response count, where it was ' +
        '2540 resp/second for raw Node.js, while it was 3075 resp/sec for ‘cluster’ and 3025 resp/sec for ‘PM2’.'
    },
    {
      id: 'exhausting-cluster-beats-pm2',
      text: 'at exhausted x 2 the cluster answers more and faster than PM2, using 5-8% more CPU on every core',
      figures: {
        extraCpuLow: pct(5, '5% to 8%'),
        extraCpuHigh: pct(8, '8% more CPU'),
        clusterThroughput: fig(1050, '1050 resp/sec', 'req/s'),
        pm2Throughput: fig(910, '910 resp/sec', 'req/s'),
        clusterResponseTime: fig(2790, '2790 milliseconds', 'ms'),
        pm2ResponseTime: fig(3190, '3190 milliseconds', 'ms')
      },
      source: thesis('section 4.2'),
      excerpt: 'The ‘cluster’ module approach had an advantage over the ‘PM2’ (although, it used 5% to 8% more CPU ' +
        'power on every core) achieving an average of 1050 resp/sec compared to 910 resp/sec for ‘PM2’ (around 140 ' +
        'more responses in average). The response time for the ‘cluster’ approach was also better; averaging 2790 ' +
        'milliseconds while it was 3190 milliseconds for ‘PM2’ approach (around 400 milliseconds difference in ' +
        'average).'
    }
  ],
  /** @type {Record<string, SetupItem>} */
  setup: {
    scheduling: {
      label: 'raw Node.js CPU scheduling',
      value: 'the normal CPU scheduling',
      source: thesis('Abstract'),
      excerpt: 'to what extent those approaches utilize the multi-core power compared to the raw Node.js environment with the normal CPU scheduling.'
    },
    server: {
      label: 'server under test',
      value: 'Intel Atom D2700 Dual Core 2.13GHz; 1 GB DDR3 RAM; Synology DSM 6.1 Linux Distribution; 2 x 1 Gigabit ' +
        'Ethernet; Node.js v9.3.0 with npm v5.5.1; PM2 v2.9.1',
      figures: { frequency: fig(2.13, '2.13GHz', 'GHz'), ram: fig(1, '1 GB', 'GB') },
      source: thesis('Table 2.2.1'),
      excerpt: 'Processor Intel Atom D2700 Dual Core 2.13GHz. Figure 1.7.1 RAM 1 GB DDR3 RAM Operating System ' +
        'Synology DSM 6.1 Linux Distribution Drive RAID 6 Array LAN 2 x 1 Gigabit Ethernet Node.js Installed Node.js ' +
        'v9.3.0 with ‘npm’ v5.5.1 PM2 Installed PM2 v2.9.1 Table 2.2.1: Experiment’s server hardware/software ' +
        'specifications.'
    },
    cores: {
      label: 'CPU cores',
      value: '2',
      figures: { cores: fig(2, '2 in our case', 'cores') },
      source: thesis('section 4.1'),
      excerpt: 'As for when ‘relaxed run-level’ multiplied by the number of cores (2 in our case) was applied'
    },
    hyperThreading: {
      label: 'hyper-threading',
      value: 'disabled (the hyper-threaded CPU-core virtual devices taken offline)',
      source: thesis('section 1.6'),
      excerpt: 'disabling the hyper-threading feature for the CPU. The following command was used to disable the ' +
        'hyper-threaded CPU-core virtual devices in Linux: echo 1 > /sys/devices/system/cpu/cpu#/online where ‘#’ ' +
        'would be the index of the hyper-threaded CPU-core.'
    },
    isolation: {
      label: 'what else ran on the server',
      value: 'a stripped Linux distribution running nothing but the server, no scheduled tasks; Node.js settings used to prevent garbage collection',
      source: thesis('section 2.4'),
      excerpt: 'by running the tested subjects on a stripped Linux distribution that runs nothing but the tested ' +
        'subject and without any scheduled tasks (Node.js settings were also used to prevent the garbage collection ' +
        'from running).'
    },
    client: {
      label: 'load client',
      value: 'Intel Core i5-3337U Dual Core 1.8GHz; 6 GB DDR3 RAM; Windows 10; 1 Gigabit Ethernet; Apache JMeter v4.0 r1823414',
      figures: { frequency: fig(1.8, '1.8GHz', 'GHz'), ram: fig(6, '6 GB', 'GB') },
      source: thesis('Table 2.2.2'),
      excerpt: 'Processor Intel Core i5-3337U Dual Core 1.8GHz RAM 6 GB DDR3 RAM Operating System Windows 10 LAN 1 ' +
        'Gigabit Ethernet JMeter Apache JMeter v4.0 r1823414 Table 2.2.2: Experiment’s testing client ' +
        'hardware/software specifications.'
    },
    generatorPlacement: {
      label: 'where the load generator ran',
      value: 'on a separate client computer',
      source: thesis('section 2.2'),
      excerpt: 'where we deployed the Node.js runtime on the server hardware to be tested, while the JMeter testing tool was deployed on a client computer.'
    },
    loadModel: {
      label: 'load model',
      value: 'JMeter simulated users (threads), each requesting continuously with a one-millisecond interval',
      figures: { interval: fig(1, 'one millisecond', 'ms') },
      source: thesis('section 2.3'),
      excerpt: 'every user makes requests to the test subject continuously with a specified interval (for this ' +
        'controlled experiment, the interval was set to one millisecond).'
    },
    cpuMonitor: {
      label: 'per-core CPU measured with',
      value: 'htop',
      source: thesis('section 2'),
      excerpt: 'This variable was provided by the ‘htop’ command line utility for Linux.'
    },
    relaxedRunLevel: {
      label: 'relaxed run-level (definition)',
      value: 'users on raw Node.js with the busiest core at 75% to 85%',
      figures: { busiestLow: pct(75, '75% to 85%'), busiestHigh: pct(85, '85%') },
      source: thesis('section 2.3'),
      excerpt: 'Relaxed run-level: represents the number of users firing requests to the raw Node.js test subject ' +
        'while the CPU-core usage percentage for the highest used core is optimally between 75% to 85%.'
    },
    relaxedUsers: {
      label: 'relaxed run-level (found)',
      value: '4 users',
      figures: { users: fig(4, '‘4’', 'users') },
      source: thesis('section 3.1'),
      excerpt: 'the needed number of simulated users in JMeter was ‘4’ with one millisecond interval between every request a simulated user fired'
    },
    exhaustedRunLevel: {
      label: 'exhausted run-level (definition)',
      value: 'the most users on raw Node.js without a single failed request, found in steps of 50 users',
      figures: { step: fig(50, '50 user increments', 'users') },
      source: thesis('section 2.3.1'),
      excerpt: 'we kept increasing the number of users with 50 user increments and ran the test on the raw Node.js ' +
        'approach for 60 seconds (the actual JMeter test was at least 70 seconds to give the simulated users an ' +
        'initial 5 seconds to start firing in the beginning and 5 seconds to die at the end) until we reached a ' +
        'level where we got at least a single error/no-response from the tested subject.'
    },
    exhaustedUsers: {
      label: 'exhausted run-level (found)',
      value: '1450 users',
      figures: { users: fig(1450, '‘1450’', 'users') },
      source: thesis('section 3.1'),
      excerpt: 'the needed number of simulated users in JMeter according to its condition was ‘1450’'
    },
    relaxedPhase: {
      label: 'relaxed phase run',
      value: '25 s: 10 s start-up, 10 s measured, 5 s finish',
      figures: {
        total: fig(25, '25 seconds', 's'),
        warmup: fig(10, '10 seconds for the simulated users', 's'),
        measured: fig(10, '10 second for collecting', 's'),
        tail: fig(5, '5 seconds', 's')
      },
      source: thesis('section 2.3.2'),
      excerpt: 'Each test in this phase would run for 25 seconds (10 seconds for the simulated users start and ' +
        'stabilize + 10 second for collecting data + 5 seconds for the test to finalize).'
    },
    exhaustedPhase: {
      label: 'exhausted phase run',
      value: '80 s: 15 s start-up, 60 s measured, 5 s finish',
      figures: { total: fig(80, '80 seconds', 's'), warmup: fig(15, '15 seconds', 's'), measured: fig(60, '60 second', 's'), tail: fig(5, '5 seconds', 's') },
      source: thesis('section 2.3.3'),
      excerpt: 'Each test in this phase would run for 80 seconds (15 seconds for the simulated users start and ' +
        'stabilize + 60 second for collecting data + 5 seconds for the test to finalize).'
    },
    relaxedReadings: {
      label: 'CPU readings behind a relaxed-phase row',
      value: 'four htop readings, 4 s apart',
      figures: { readings: fig(4, 'Four', 'readings'), interval: fig(4, '4 second interval', 's') },
      source: thesis('Figure 3.2.1, caption'),
      excerpt: 'Figure 3.2.1: Four CPU usage percentage readings (with 4 second interval) for second phase raw Node.js. Running at ‘relaxed run-level’.'
    },
    exhaustedReadings: {
      label: 'CPU readings behind an exhausted-phase row',
      value: 'five htop readings, 10 s apart',
      figures: { readings: fig(5, 'Five', 'readings'), interval: fig(10, '10 second interval', 's') },
      source: thesis('Figure 3.3.1, caption'),
      excerpt: 'Figure 3.3.1: Five CPU usage percentage readings (with 10 second interval) for third phase with raw ' +
        'Node.js. Running at ‘exhausted run-level’.'
    }
  },
  // Stated nowhere in the thesis, so not comparable from its side.
  notStated: [
    'how many times each phase-2 and phase-3 test was repeated (only the run-level calibration was repeated five times)',
    'a spread (sd or interval) of any figure',
    'which Node.js settings prevented garbage collection'
  ]
}

// ---- Ibenchjs (CASCON'18) -------------------------------------------------------------------------------------------

const IBENCH_TITLE = 'Node.js Scalability Investigation in the Cloud (Zhu, Patros, Kent, Dawson; CASCON\'18)'

/** The set-up both Ibenchjs patterns share. @type {Record<string, SetupItem>} */
const IBENCH_SETUP = {
  cloud: {
    label: 'cloud',
    value: 'six physical servers, one Oracle VirtualBox VM each (Vagrant), Ubuntu 16.04.3 LTS, each VM given its ' +
      'host\'s cores and memory; Docker Swarm over a manager and five workers',
    figures: { hosts: fig(6, 'six physical servers', 'hosts'), workers: fig(5, 'five worker nodes', 'nodes') },
    source: ibench('section 5.1'),
    excerpt: 'we installed one Oracle VirtualBox VM, managed by Vagrant, on each of the six physical servers. All ' +
      'installed VMs ran Ubuntu 16.04.3 LTS OS, and allocated the same number of CPU cores and amount of memory as ' +
      'their host machines. Static IP addresses were assigned on each VM. Docker engine was installed on each VM and ' +
      'Docker Swarm was then enabled on the manager and each of the five worker nodes.'
  },
  placement: {
    label: 'what runs where',
    value: 'JMeter on a client host outside the cluster; the RC on the manager; the benchmark stack only on worker nodes',
    source: ibench('section 5.1'),
    excerpt: 'in a client host isolated from the server cluster to ensure JMeter is not a bottleneck impacting the ' +
      'validity of experimental results. Within the server cluster, the RC runs in the manager node; and the ' +
      'benchmark service stack is only deployed and run in worker nodes.'
  },
  run: {
    label: 'load test, repeats',
    value: 'JMeter, 100 s per test, zero think time; every condition repeated 15 times, graphs show means with sd error bars',
    figures: { duration: fig(100, '100 seconds', 's'), repeats: fig(15, '15 times', 'repeats') },
    source: ibench('section 5.1'),
    excerpt: 'When the executor performs the load testing, it lasts 100 seconds and the thinking time is set to zero ' +
      'to significantly stress the system. Each experimental condition (Table 3) was repeated 15 times; the ' +
      'following graphs display averages with standard deviations as error bars.'
  },
  hsInstance: {
    label: 'an HS instance',
    value: 'one container per Node.js instance, limited to one vCPU',
    figures: { vcpus: fig(1, 'one vCPU', 'vCPU') },
    source: ibench('section 5.1'),
    excerpt: 'Each Docker container is constrained to run only one Node.js instance; its resource is limited to one ' +
      'vCPU and sufficient memory, which enables one instance to run in one process, taking only one CPU core and ' +
      'partial memory from the underlying VM level.'
  },
  loadBalancer: {
    label: 'load balancer',
    value: 'Docker Swarm\'s, on the manager node',
    source: ibench('section 5.3'),
    excerpt: 'We use the load balancer that is integrated in the manager node.'
  }
}

const IBENCH_NOT_STATED = [
  'the hosts\' CPU model and frequency',
  'Node.js, Docker and JMeter versions',
  'the network between the hosts (only that switches, NICs and links were suspected)'
]

/** Ibenchjs, S/MISN (one node): findings 1, 2 and 5 of its conclusion, and Table 5. */
export const ibenchSmisn = {
  id: 'ibench-smisn',
  title: IBENCH_TITLE,
  file: IBENCH,
  // Numbered as the conclusion numbers them (only it has a fifth); the abstract lists three findings in another order,
  // kept in each finding's `abstract`.
  /** @type {Finding[]} */
  findings: [
    {
      id: 'finding-1',
      number: 1,
      claim: 'Scaling up Node.js by increasing the number of CPUs is ineffective.',
      apps: ['CPU-intensive', 'network-intensive'],
      benchmarks: ['cpu', 'net-out'],
      source: ibench('section 6 (conclusion), finding 1'),
      excerpt: 'We find: 1) Scaling up Node.js by increasing the number of CPUs is ineffective.',
      conditions: {
        text: 'UP: one worker node with 8 CPUs and 8GB of RAM, exactly one Node.js instance given 1 to 8 vCPUs',
        figures: {
          hostCpus: fig(8, '8 CPUs', 'CPUs'),
          instances: fig(1, 'exactly one Node.js instance', 'instances'),
          vcpusFrom: fig(1, 'from 1 to 8 vCPUs', 'vCPU'),
          vcpusTo: fig(8, '8 vCPUs', 'vCPU')
        },
        source: ibench('section 5.2.2'),
        excerpt: 'A single worker node was utilized for these experiments with 8 CPUs and 8GB of RAM; exactly one ' +
          'Node.js instance was started and was progressively given from 1 to 8 vCPUs.'
      },
      direction: [
        {
          metric: 'throughput',
          relation: 'not-greater',
          of: 'up at more vCPUs',
          than: 'up at 1 vCPU',
          over: 'vcpus',
          text: 'throughput and response time stay the same or get worse as vCPUs are added; CPU stays at one core',
          source: ibench('section 5.2.2'),
          excerpt: 'As expected, throughput and response time of both applications remained the same—or even ' +
            'deteriorated due to increased OS and CPU contention—as more vCPUs were added. The single-threaded ' +
            'nature of Node.js was not able to utilize the presence of extra cores; the CPU utilization floated ' +
            'around 100%, i.e. exactly one core fully utilized, for all cases.'
        }
      ],
      abstract: {
        number: 2,
        text: 'no improvements were measured when more CPUs were added without modifying the number of Node.js instances',
        source: ibench('Abstract'),
        excerpt: '2) no improvements were measured when more CPUs were added without modifying the number of Node.js instances;'
      }
    },
    {
      id: 'finding-2',
      number: 2,
      claim: 'For CPU-intensive and baseline test applications, the CPU resource is critical; adding more ' +
        'application server instances does not necessarily improve the performance, because these additional ' +
        'instances saturate the CPU.',
      apps: ['CPU-intensive', 'baseline'],
      benchmarks: ['cpu', 'baseline'],
      source: ibench('section 6 (conclusion), finding 2'),
      excerpt: '2) For CPU-intensive and baseline test applications, the CPU resource is critical; adding more ' +
        'application server instances does not necessarily improve the performance, because these additional ' +
        'instances saturate the CPU. When we scaled the cluster by adding more nodes, we observed sub-linear ' +
        'effects; therefore, the benefit of adding a greater number of nodes becomes smaller due to a heavy network ' +
        'communication overhead between nodes.',
      conditions: {
        text: 'S/MISN with HS: one worker node with 4 vCPUs and 4GB of RAM (8 vCPUs for the network app), workloads of 5, 15, 25 and 35 parallel clients',
        figures: { vcpus: fig(4, '4 vCPUs', 'vCPU'), networkVcpus: fig(8, '8 vCPUs', 'vCPU') },
        source: ibench('section 5.2'),
        excerpt: 'A single worker node was utilized for these experiments with 4 vCPUs and 4GB of RAM; the ' +
          'network-intensive application was tested with 8 vCPUs to further exclude CPU being the bottleneck.'
      },
      direction: [
        {
          metric: 'throughput',
          relation: 'peaks-at',
          over: 'instances',
          of: 'instances = vCPUs',
          benchmark: 'baseline',
          text: 'baseline: throughput is best at four instances, the number of CPUs; fewer leave the CPU idle, more compete',
          source: ibench('section 5.2, baseline'),
          excerpt: 'In terms of varying the number of instances, the best performance was attained by four ' +
            'instances, which exactly matches the number of available CPUs. With fewer instances, the system remains ' +
            'underutilized; whereas with more, the Node.js processes compete against each other'
        },
        {
          metric: 'throughput',
          relation: 'peaks-at',
          over: 'instances',
          of: 'instances = vCPUs',
          benchmark: 'cpu',
          text: 'CPU-intensive: throughput is highest and response time lowest at four instances, the number of processors',
          source: ibench('section 5.2, CPU-intensive'),
          excerpt: 'Throughput reaches the maximum and response time the minimum when four Node.js instances are ' +
            'spawned, which is equal to the number of available hardware processors.'
        },
        {
          metric: 'throughput',
          relation: 'sub-linear',
          over: 'nodes',
          text: 'MIMN, CPU-intensive: four nodes give about three times one node\'s throughput, not four',
          source: ibench('section 5.3, CPU-intensive'),
          excerpt: 'Throughput within four nodes under linear scaling would be four-time that of one node, and the ' +
            'expected value should had been 9100 requests/second. However, the measured value is 7527 ' +
            'requests/second, which is approximately only three times greater than that of one node.'
        }
      ],
      abstract: {
        number: 1,
        text: 'the scaling performance of the tested Node.js test applications was sub-linear',
        source: ibench('Abstract'),
        excerpt: 'Our findings include: 1) the scaling performance of the tested Node.js test applications was sub-linear;'
      }
    },
    {
      id: 'finding-5',
      number: 5,
      claim: 'when the underlying CPU resource has been fully utilized by multiple Node.js processes, HS significantly outperformed CM.',
      apps: ['baseline'],
      benchmarks: ['baseline'],
      source: ibench('section 6 (conclusion), finding 5'),
      excerpt: 'Finally, 5) we compared two scalability strategies applied to Node.js, native cloud horizontal ' +
        'scaling (HS) and Node.js Cluster module forking (CM) on the S/MISN pattern: when the underlying CPU ' +
        'resource has been fully utilized by multiple Node.js processes, HS significantly outperformed CM. ' +
        'Cluster\'s master process performs load balancing and worker-process maintenance, tasks that fine-tuned ' +
        'PaaS-based solutions of HS are explicitly designed to perform.',
      conditions: {
        text: 'HS vs CM on one VM with 4 vCPUs and 4GB of RAM, baseline app, scaled out to four instances/worker processes, over workloads',
        figures: { vcpus: fig(4, '4 vCPUs', 'vCPU'), instances: fig(4, 'four instances/worker processes', 'instances') },
        source: ibench('section 5.2.1'),
        excerpt: 'Next, we performed a comparison between the HS and CM scalability strategies on a VM with 4 vCPUs ' +
          'and 4GB of RAM, utilizing the baseline test application. We collected performance and resource usage ' +
          'metrics within different workloads while scaling out to four instances/worker processes—equal to the ' +
          'number of vCPUs, which resulted in the best performance as discussed earlier.'
      },
      direction: [
        {
          metric: 'throughput',
          relation: 'greater',
          of: 'hs',
          than: 'cm',
          text: 'HS: significantly higher throughput and shorter response time than CM',
          source: ibench('section 5.2.1'),
          excerpt: 'Our results indicate that when the underlying CPU resource has been fully utilized by multiple ' +
            'Node.js processes, the HS strategy registers significantly higher throughput and shorter response time, ' +
            'outperforming CM.'
        },
        {
          metric: 'cpu',
          relation: 'greater',
          of: 'cm',
          than: 'hs',
          text: 'CM uses more CPU than HS: its master balances the load and keeps the workers',
          source: ibench('section 5.2.1'),
          excerpt: 'Moreover, the CM strategy utilizes more CPU resources to support its performance than the HS ' +
            'strategy. CM uses Node.js\' Cluster module, which uses a master process for managing a set of worker ' +
            'Node.js processes as well as load balancing requests to the round-robin. These tasks are intensive, ' +
            'which apparently caused the additional CPU utilization for CM.'
        },
        {
          metric: 'throughput',
          relation: 'greater',
          of: 'cm',
          than: 'one instance',
          text: 'CM still improves on one instance, less than HS',
          source: ibench('section 5.2.1'),
          excerpt: 'Nevertheless, CM does improve the system\'s performance, albeit not as well as HS.'
        }
      ],
      abstract: {
        number: 3,
        text: 'leveraging cloud scaling solutions significantly outperformed Node.js-module-based scaling',
        source: ibench('Abstract'),
        excerpt: 'and 3) leveraging cloud scaling solutions significantly outperformed Node.js-module-based scaling.'
      }
    }
  ],
  table5: {
    id: 'Table 5',
    caption: 'Coefficient Values of Scalability Models',
    source: ibench('Table 5'),
    excerpt: 'Table 5: Coefficient Values of Scalability Models Coefficients CPU-intensive Network-intensive σ_c λ_c ' +
      'R_c^2 σ_n λ_n R_n^2 USL 0.017 0.0012 98.76% 0.0282 0.002 99.24% Amdahl\'s Law 0.0614 N/A 93.15% 0.1023 N/A ' +
      '93.43%',
    // what was fitted: the maximum throughput against the workload (parallel clients) at fixed hardware, relative
    // capacity C(p) with p the workload; the paper does not say which hardware, which workloads, or the scale X(1)
    method: {
      x: 'workload',
      fixed: 'hardware',
      y: 'maximum throughput',
      source: ibench('section 5.4'),
      excerpt: 'Figure 24 and Figure 25 respectively illustrate fitting the USL and Amdahl\'s Law model on the ' +
        'maximum throughput of the CPU- and network-intensive applications against workloads under a fixed hardware ' +
        'configuration.'
    },
    models: {
      source: ibench('section 3 (equations 2 and 3)'),
      excerpt: '$$C_A(p) = \\frac{p}{1 + \\sigma(p-1)} \\quad (2)$$ Extending Amdahl\'s Law, Gunther\'s Universal ' +
        'Scalability Law (USL) [9] not only considers the serialization that is referred to as contention, but also ' +
        'the interprocessor communication overhead that is referred to as coherency cost. USL is defined as follows: ' +
        '$$C_U(p) = \\frac{p}{1 + \\sigma(p-1) + \\lambda p(p-1)} \\quad (3)$$',
      amdahl: 'C_A(p) = p / (1 + σ(p-1))',
      usl: 'C_U(p) = p / (1 + σ(p-1) + λp(p-1))'
    },
    /** @type {Table5Fit[]} */
    fits: [
      {
        app: 'cpu',
        appPrinted: 'CPU-intensive',
        benchmark: 'cpu',
        model: 'usl',
        modelPrinted: 'USL',
        sigma: fig(0.017, '0.017', ''),
        lambda: fig(0.0012, '0.0012', ''),
        r2: pct(98.76),
        source: ibench('Table 5, USL, CPU-intensive'),
        excerpt: 'USL 0.017 0.0012 98.76% 0.0282 0.002 99.24%'
      },
      {
        app: 'network',
        appPrinted: 'Network-intensive',
        benchmark: 'net-out',
        model: 'usl',
        modelPrinted: 'USL',
        sigma: fig(0.0282, '0.0282', ''),
        lambda: fig(0.002, '0.002', ''),
        r2: pct(99.24),
        source: ibench('Table 5, USL, Network-intensive'),
        excerpt: 'USL 0.017 0.0012 98.76% 0.0282 0.002 99.24%'
      },
      {
        app: 'cpu',
        appPrinted: 'CPU-intensive',
        benchmark: 'cpu',
        model: 'amdahl',
        modelPrinted: 'Amdahl\'s Law',
        sigma: fig(0.0614, '0.0614', ''),
        lambda: fig(null, 'N/A', ''),
        r2: pct(93.15),
        source: ibench('Table 5, Amdahl\'s Law, CPU-intensive'),
        excerpt: 'Amdahl\'s Law 0.0614 N/A 93.15% 0.1023 N/A 93.43%'
      },
      {
        app: 'network',
        appPrinted: 'Network-intensive',
        benchmark: 'net-out',
        model: 'amdahl',
        modelPrinted: 'Amdahl\'s Law',
        sigma: fig(0.1023, '0.1023', ''),
        lambda: fig(null, 'N/A', ''),
        r2: pct(93.43),
        source: ibench('Table 5, Amdahl\'s Law, Network-intensive'),
        excerpt: 'Amdahl\'s Law 0.0614 N/A 93.15% 0.1023 N/A 93.43%'
      }
    ],
    // the paper's own reading of the table: what a replication compares when the hardware differs
    claims: [
      {
        id: 'sub-linear',
        text: 'both apps scale sub-linearly with the workload: the coefficients are non-zero',
        source: ibench('section 5.4'),
        excerpt: 'Figures 24 and 25 denote that performance scales not linearly but sub-linearly, when higher ' +
          'workloads are launched. This is determined by the non-zero coefficient values; in other words the ' +
          'contention (referred to as σ) and the coherency (referred to as λ) affect the scalability of the system.'
      },
      {
        id: 'usl-fits-better',
        text: 'USL fits both apps better than Amdahl (higher R²)',
        source: ibench('section 5.4'),
        excerpt: 'Moreover, USL provides a good fit for both types of test applications due to a high value of ' +
          'R-square, whereas the Amdahl\'s Law model has a worse fit.'
      },
      {
        id: 'network-coefficients-larger',
        text: 'every coefficient of both models is larger for the network app than for the CPU app',
        source: ibench('section 5.4'),
        excerpt: 'Furthermore, all coefficient values of both models for the network-intensive test application are ' +
          'greater than those of the CPU-intensive test application. Thus, the network-intensive test application ' +
          'has had a higher contention and coherency than the CPU-intensive application.'
      }
    ]
  },
  /** @type {Record<string, SetupItem>} */
  setup: {
    ...IBENCH_SETUP,
    node: {
      label: 'S/MISN node',
      value: 'one worker node with 4 vCPUs and 4GB of RAM; 8 vCPUs for the network-intensive app',
      figures: { vcpus: fig(4, '4 vCPUs', 'vCPU'), ram: fig(4, '4GB', 'GB'), networkVcpus: fig(8, '8 vCPUs', 'vCPU') },
      source: ibench('section 5.2'),
      excerpt: 'A single worker node was utilized for these experiments with 4 vCPUs and 4GB of RAM; the ' +
        'network-intensive application was tested with 8 vCPUs to further exclude CPU being the bottleneck.'
    },
    workloads: {
      label: 'workloads (S/MISN)',
      value: '5, 15, 25 and 35 parallel clients',
      figures: {
        w1: fig(5, '5, 15', 'clients'),
        w2: fig(15, '15, 25', 'clients'),
        w3: fig(25, '25, and 35', 'clients'),
        w4: fig(35, '35 parallel clients', 'clients')
      },
      source: ibench('section 5.2, baseline'),
      excerpt: 'Figure 2 illustrates the baseline benchmark’s throughput as a function of the number of isolated ' +
        'Node.js instances when workloads of 5, 15, 25, and 35 parallel clients were launched'
    },
    cmContainer: {
      label: 'the CM container',
      value: 'one container with the VM\'s cores and memory, forking the workers',
      source: ibench('section 5.1'),
      excerpt: 'In this group, a larger Docker container with an equal number of CPU cores and memory size equal to ' +
        'the underlying VM is created, in which single or multiple worker processes are forked.'
    },
    up: {
      label: 'UP',
      value: 'one instance in a VM given more of the host\'s CPUs, one vCPU per CPU',
      source: ibench('section 5.1'),
      excerpt: '**UP** allows the VM to utilize more of the CPUs of the bare-metal host, mapping one virtual CPU (vCPU) to one CPU.'
    }
  },
  notStated: [...IBENCH_NOT_STATED, 'Table 5: which hardware was held fixed (nodes, instances, vCPUs), which ' +
    'workloads were fitted, the throughput scale X(1) or γ, and how R² was computed']
}

/** Ibenchjs, MIMN (HS over several nodes): Table 4. */
export const ibenchMimn = {
  id: 'ibench-mimn',
  title: IBENCH_TITLE,
  file: IBENCH,
  table4: {
    id: 'Table 4',
    caption: 'Maximum throughput of CPU-intensive test application achieved for various cluster sizes',
    app: 'CPU-intensive',
    benchmark: 'cpu',
    strategy: 'hs',
    source: ibench('Table 4'),
    excerpt: 'Table 4: Maximum throughput of CPU-intensive test application achieved for various cluster sizes ' +
      '#Nodes Max Thr. (reqs/s) #Inst. at Max Thr. 1 2274.73±1.64 4 2 4522.90±5.53 8 3 6615.73±1.36 12 4 ' +
      '7527.21±157.26 14',
    // ± is not defined by the table; section 5.1 says the graphs show means with standard deviations over 15 repeats
    /** @type {Table4Row[]} */
    rows: [
      {
        nodes: fig(1, '1', 'nodes'),
        throughput: fig(2274.73, '2274.73', 'req/s'),
        sd: fig(1.64, '1.64', 'req/s'),
        instances: fig(4, '4', 'instances'),
        source: ibench('Table 4, 1 node'),
        excerpt: '1 2274.73±1.64 4'
      },
      {
        nodes: fig(2, '2', 'nodes'),
        throughput: fig(4522.90, '4522.90', 'req/s'),
        sd: fig(5.53, '5.53', 'req/s'),
        instances: fig(8, '8', 'instances'),
        source: ibench('Table 4, 2 nodes'),
        excerpt: '2 4522.90±5.53 8'
      },
      {
        nodes: fig(3, '3', 'nodes'),
        throughput: fig(6615.73, '6615.73', 'req/s'),
        sd: fig(1.36, '1.36', 'req/s'),
        instances: fig(12, '12', 'instances'),
        source: ibench('Table 4, 3 nodes'),
        excerpt: '3 6615.73±1.36 12'
      },
      {
        nodes: fig(4, '4', 'nodes'),
        throughput: fig(7527.21, '7527.21', 'req/s'),
        sd: fig(157.26, '157.26', 'req/s'),
        instances: fig(14, '14', 'instances'),
        source: ibench('Table 4, 4 nodes'),
        excerpt: '4 7527.21±157.26 14'
      }
    ],
    claims: [
      {
        id: 'sub-linear-over-nodes',
        text: 'four nodes give about three times one node\'s throughput (7527 against a linear 9100 req/s)',
        figures: {
          one: fig(2275, '2275 requests per second', 'req/s'),
          four: fig(7527, '7527 requests/second', 'req/s'),
          linear: fig(9100, '9100 requests/second', 'req/s'),
          ratio: fig(3, 'approximately only three times', 'x')
        },
        source: ibench('section 5.3, CPU-intensive'),
        excerpt: 'For example, considering when running within one-node cluster, 2275 requests per second were ' +
          'satisfied, but within four nodes, 7527 requests/second. Throughput within four nodes under linear scaling ' +
          'would be four-time that of one node, and the expected value should had been 9100 requests/second. ' +
          'However, the measured value is 7527 requests/second, which is approximately only three times greater than ' +
          'that of one node.'
      },
      {
        id: 'instances-saturate-vcpus',
        text: 'the three-node cluster has 12 vCPUs, and its 12 instances saturate them at the maximum',
        figures: { vcpus: fig(12, '12 vCPUs', 'vCPU'), instances: fig(12, '12 instances', 'instances'), nodes: fig(3, 'three-node cluster', 'nodes') },
        source: ibench('section 5.3, CPU-intensive'),
        excerpt: 'The three-node cluster was equipped with 12 vCPUs; therefore, all these 12 instances saturate the ' +
          'CPU and the utilization reaches the maximum capacity of computation.'
      }
    ]
  },
  /** @type {Record<string, SetupItem>} */
  setup: {
    ...IBENCH_SETUP,
    pattern: {
      label: 'MIMN',
      value: 'HS only, instances spread over up to five swarm nodes',
      figures: { maxNodes: fig(5, 'up to five', 'nodes') },
      source: ibench('section 5.1'),
      excerpt: 'is referred to as multiple instances of Node.js application deployed in multiple swarm nodes ' +
        'participating in the Docker swarm. This pattern extends the single node to multiple nodes, up to five, in ' +
        'swarm. In this scalability pattern, we evaluate only the HS strategy—CM cannot leverage multiple nodes and ' +
        'UP proved (as the reader will see shortly) to be ineffective in producing any speedups on a single node.'
    },
    nodes: {
      label: 'cluster sizes (CPU-intensive)',
      value: 'one to four nodes',
      figures: { from: fig(1, 'one to four', 'nodes'), to: fig(4, 'to four', 'nodes') },
      source: ibench('section 5.3, CPU-intensive'),
      excerpt: 'Figure 16 illustrates throughput of the CPU-intensive test application for different workloads when ' +
        'experiments ran on various numbers of nodes (one to four).'
    },
    maximum: {
      label: 'what a Table 4 row is',
      value: 'the maximum throughput over workloads at one cluster size, and the instances that reached it',
      source: ibench('section 5.3, CPU-intensive'),
      excerpt: 'Table 4 lists the maximum throughput for different cluster sizes from one to four nodes under a ' +
        'maximum supported workload, and accordingly, the number of instances created.'
    }
  },
  notStated: [...IBENCH_NOT_STATED, 'Table 4: the workload at each maximum, what ± is (sd over the 15 repeats is ' +
    'likely), the vCPUs per node for 1, 2 and 4 nodes (12 vCPUs are stated for three)']
}

/**
 * The studies by the id `analyzer replicate --study` takes: title, the reference's file name, its tables and findings,
 * the experiment that reproduces it, and its data.
 */
/**
 * Each study's set-up in the fields this machine's fingerprint is set beside (analyzer/fingerprint.js StudySetup),
 * shortened from the quoted set-up records above; null where the study does not say.
 */
const STATED = {
  multicore: {
    name: 'the thesis',
    machine: 'Intel Atom D2700',
    cores: 2,
    smt: false,
    os: 'Linux',
    node: 'v9.3.0',
    docker: null,
    load: 'separate machine',
    quota: 'none'
  },
  ibench: {
    name: 'Ibenchjs',
    machine: 'VirtualBox VM',
    cores: 4,
    smt: null,
    os: 'Ubuntu 16.04.3',
    node: null,
    docker: null,
    load: 'separate machine',
    quota: 1
  }
}

export const studies = Object.freeze({
  multicore: {
    id: 'multicore',
    title: multicore.title,
    file: THESIS,
    tables: ['Table 4.3.1'],
    findings: [],
    experiment: 'experiments/multicore.yml',
    data: multicore,
    stated: STATED.multicore,
    experiments: ['multicore']
  },
  'ibench-smisn': {
    id: 'ibench-smisn',
    title: `${IBENCH_TITLE}, S/MISN`,
    file: IBENCH,
    tables: ['Table 5'],
    findings: ibenchSmisn.findings.map(f => f.id),
    experiment: 'experiments/ibench-smisn.yml',
    data: ibenchSmisn,
    stated: STATED.ibench,
    experiments: ['ibench-smisn', 'ibench-table5', 'ibench-finding5']
  },
  'ibench-mimn': {
    id: 'ibench-mimn',
    title: `${IBENCH_TITLE}, MIMN`,
    file: IBENCH,
    tables: ['Table 4'],
    findings: [],
    experiment: 'experiments/ibench-mimn.yml',
    data: ibenchMimn,
    stated: { ...STATED.ibench, cores: null },
    experiments: ['ibench-mimn']
  }
})

/** The ids `--study` accepts. */
export const STUDY_IDS = Object.freeze(Object.keys(studies))

function deepFreeze (o) {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o)
    for (const v of Object.values(o)) deepFreeze(v)
  }
  return o
}
for (const s of Object.values(studies)) deepFreeze(s)
