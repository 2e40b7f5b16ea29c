// Every message a nodescale error carries, in one table: its code, its text and the hint that says how to fix it, by
// a name that says what went wrong. A module raises one with fail('NAME', { values }); docs/reference/errors.md lists
// them under their codes (npm run docs:reference). badFlag, badApp and badEnv (lib/errors.js) carry a validation
// rule's own words instead.
import { NsError } from './errors.js'

/**
 * @typedef {Record<string, any>} Values what a message is made from; a text reads them and calls no method on them
 *   but a string's (the reference page calls it with `{name}` strings)
 * @typedef {import('./errors.js').ErrorCode} ErrorCode
 * @typedef {{ code: ErrorCode, text: (v: Values) => string, hint?: string | ((v: Values) => string) }} Message
 */

/** A list as `a, b, c` (or joined by `sep`); a string as it is. @param {any} xs @param {string} [sep] */
const list = (xs, sep = ', ') => [xs].flat().join(sep)

const MODEL_NAMES = { usl: 'USL', amdahl: 'Amdahl' }
const DOCKER_UP = 'bash scripts/docker-up.sh'
const JAVA_HINT = 'apt-get install -y openjdk-17-jre-headless'
const WAIT_OR_FORCE = 'wait until they finish, or pass --force'
/** How an engine comes to trust a registry over plain HTTP. @param {string} registry @param {string} daemonJson */
const trustFix = (registry, daemonJson) =>
  `add "${registry}" to "insecure-registries" in ${daemonJson} and reload the engine (kill -HUP $(pidof dockerd))`
/** @param {Values} v */
const onHost = v => `${v.image} needs ${v.name} on this machine`
/** @param {Values} v */
const dockerSaid = v => `${v.what}: ${v.said}`
/** @param {Values} v */
const pushFailed = v => `--registry ${v.registry}: pushing ${v.ref} failed: ${v.said}`
/** @param {Values} v */
const notRendered = v => `${v.tasks}${v.output ? `\n${v.output}` : ''}`

export const MESSAGES = Object.freeze(/** @satisfies {Record<string, Message>} */ ({
  // Commands and their arguments
  UNKNOWN_COMMAND: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `unknown command "${v.command}"; commands: ${list(v.commands)}${v.help ? ` (${v.help})` : ''}`
  },
  UNEXPECTED_ARGUMENT: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `unexpected argument "${v.arg}" (${v.flags ? 'flags start with --; ' : ''}see ${v.command} --help)`
  },
  EXTRA_EXPERIMENT_FILE: { code: 'NS_ERR_BAD_FLAG', text: v => `unexpected argument "${v.arg}": give one experiment file` },
  NO_EXPERIMENT_FILE: {
    code: 'NS_ERR_BAD_FLAG',
    text: () => 'give an experiment file (executor sweep experiments/ibench-smisn.yml) or --resume DIR'
  },
  ANALYZER_INPUT_MISSING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `analyzer ${v.command} needs ${v.what} (see analyzer ${v.command} --help)`
  },
  ANALYZER_INPUTS_TOO_MANY: { code: 'NS_ERR_BAD_FLAG', text: v => `analyzer ${v.command} takes ${v.what}; unexpected "${v.arg}"` },
  OUT_WITHOUT_PATH: { code: 'NS_ERR_BAD_FLAG', text: () => '--out: needs a file path, e.g. -o report.html' },
  STUDY_MISSING: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `--study: is required: which study the sweep reproduces; one of: ${list(v.studies)}`
  },
  VALUE_NOT_ALLOWED: { code: 'NS_ERR_BAD_FLAG', text: v => `${v.flag}: "${v.value}" is not allowed; one of: ${list(v.allowed)}` },
  FORMAT_NOT_ALLOWED: { code: 'NS_ERR_BAD_FLAG', text: v => `--format: "${v.format}" is not allowed; allowed: ${list(v.allowed)}` },
  PROFILE_NOT_IN_FILE: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `--profile: ${v.file} has no "${v.profile}" profile; it has: ${list(v.profiles)}`
  },
  STUDY_NOT_BUILT: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `--study ${v.study}: its comparison rules are not built yet; one of: ${list(v.built)}`
  },
  MODEL_UNKNOWN: { code: 'NS_ERR_BAD_FLAG', text: v => `--model: "${v.model}" is not a model; allowed: usl, amdahl` },
  BOOTSTRAP_NOT_WHOLE: { code: 'NS_ERR_BAD_FLAG', text: v => `--bootstrap: "${v.bootstrap}" must be a whole number from 0 to 100000` },
  CALIBRATION_OUT_NOT_JSON: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `--out: ${v.out}: the calibration file is JSON; give a name ending in .json`
  },
  EXPORT_UNWRITABLE: {
    code: 'NS_ERR_BAD_FLAG',
    text: v => `--out ${v.out}: cannot be written (${v.why}); give a file in a folder you can write to`
  },
  REPORT_UNWRITABLE: { code: 'NS_ERR_BAD_FILE', text: v => `-o ${v.path}: cannot write the report (${v.why})` },
  JTL_PATH_MISSING: { code: 'NS_ERR_BAD_FLAG', text: () => 'jtlPath: the JTL file to write is missing' },
  MEMORY_NOT_A_SIZE: { code: 'NS_ERR_BAD_FLAG', text: v => `memory: "${v.value}" is not a size like 512M or 1G` },

  // Files and folders: experiment files, sweep and run folders, JSON and YAML
  EXPERIMENT_TOO_LARGE: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: ${v.size === undefined ? '' : `${v.size} bytes; `}an experiment file has at most ${v.maxKiB} KiB`
  },
  EXPERIMENT_UNREADABLE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: cannot read the experiment file (${v.why})` },
  LINE_INVALID: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}:${v.line}: ${v.reason}` },
  EXPERIMENT_VALUE_INVALID: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}:${v.line}: ${v.key}${v.flag ? ` (${v.flag})` : ''}${v.strategy ? ` (strategy ${v.strategy})` : ''}: ` +
      `${v.param ? `${v.param}: ` : ''}${v.reason}${v.perNode ? ' (the run\'s instances = instances-per-node x nodes)' : ''}`,
    hint: v => v.hint
  },
  QUESTION_INVALID: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}:${v.line}: question: ${v.reason}${v.profile === 'default' ? '' : ` (profile ${v.profile})`}`
  },
  QUESTION_MISSING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: no question: key; add one, e.g. question: { compare: [cm, up], quantity: throughput, at: 4 }`
  },
  CALIBRATION_LEVEL_UNKNOWN: { code: 'NS_ERR_BAD_FILE', text: v => `"${v.level}" is not a calibration level` },
  CALIBRATION_LEVEL_NOT_FOUND: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `the calibration has no ${v.name} level (${list(v.notes, '; ') || 'not found'}); "${v.level}" cannot be used`
  },
  CALIBRATION_FILE_UNREADABLE: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: not a readable calibration file (${v.why}); make one with executor calibrate --out ${v.file}`
  },
  NOT_A_CALIBRATION_FILE: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: not a calibration file (schema ${v.schema} with relaxed.concurrency and cores)`
  },
  SWEEP_FILE_UNREADABLE: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.flag} ${v.dir}: no readable sweep.json there (${v.why}); give a folder made by executor sweep`
  },
  SWEEP_FILE_WRONG_SCHEMA: { code: 'NS_ERR_BAD_FILE', text: v => `${v.flag} ${v.dir}: sweep.json is not a ${v.schema} file` },
  NOT_A_SWEEP_FOLDER: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.dir}: not a sweep folder (no readable ${v.file}: ${v.why})`,
    hint: v => `executor sweep ${v.experiment} makes one`
  },
  SWEEPS_SEVERAL: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.flag ? `${v.flag} ` : ''}${v.dir}: holds ${v.count} sweeps; give one of them:\n${list(v.sweeps, '\n')}`
  },
  FOLDER_UNREADABLE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.dir}: cannot read this folder (${v.why})` },
  FILE_TOO_LARGE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: ${v.size} bytes, more than the ${v.maxMiB} MiB such a file may have` },
  FILE_UNREADABLE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: cannot read it (${v.why})` },
  NOT_PARSED: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}${v.line ? `:${v.line}` : ''}: not valid ${v.format} (${v.reason})` },
  LOCKFILE_TOO_OLD: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: lockfileVersion ${v.version} has no "packages"; regenerate it with npm >= 7`
  },

  // Rendered stacks (executor's own stack files)
  DURATION_NOT_VALID: { code: 'NS_ERR_BAD_FILE', text: v => `stack: "${v.value}" is not a duration like 5s or 1m30s` },
  STACK_NOT_RENDERED: { code: 'NS_ERR_BAD_FILE', text: () => 'stack: not a rendered nodescale stack (x-nodescale.stack is missing)' },
  STACK_CONFIG_MISSING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `stack ${v.stack}: config ${v.name} names ${v.file}, which the rendered stack does not carry`
  },
  STACK_MOUNT_SHORT: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `stack ${v.stack}: service ${v.service}: only long-form bind and volume mounts are supported (got ${v.got})`
  },
  STACK_SOURCE_NOT_CREATED: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `stack ${v.stack}: service ${v.service} uses ${v.kind} ${v.source}, which was not created`
  },

  // What the analyzer reads: points CSVs, run folders, JTL files, latency histograms
  POINTS_SOURCE_MISSING: { code: 'NS_ERR_BAD_FILE', text: () => 'give a sweep folder (with run.json files) or a points CSV' },
  REPORT_SOURCES_MISSING: { code: 'NS_ERR_BAD_FILE', text: () => 'give one or more sweep folders (with run.json files) or points CSVs' },
  SWEEP_FOLDERS_MISSING: { code: 'NS_ERR_BAD_FILE', text: () => 'give one or more sweep folders (with run.json files)' },
  POINTS_SOURCE_NOT_FOUND: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.source}: no such file or folder; give a sweep folder (run.json files inside) or a CSV with n and throughput columns`
  },
  REPORT_SOURCE_NOT_FOUND: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.source}: no such file or folder; give a sweep folder (run.json files inside) or a points CSV`
  },
  SWEEP_FOLDER_NOT_FOUND: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.dir}: ${v.exists ? 'not a folder' : 'no such folder'}; correlate reads the run.json files of sweep folders`
  },
  SAMPLES_NOT_FOUND: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.path}: no such file or folder; give a .jtl or .jtl.gz file or a run folder`
  },
  RUN_FOLDER_WITHOUT_SAMPLES: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.path}: this folder has no ${v.samples}, ${v.samplesGz} or ${v.latency}; give a .jtl or .jtl.gz file or a run folder (<out>/<run-id>/)`
  },
  HISTOGRAM_HAS_NO_STARTS: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: a latency histogram has no per-request start times to window; give the run's samples file`
  },
  CSV_UNREADABLE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: not a readable CSV (${v.why})` },
  CSV_COLUMNS_MISSING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: needs a header with an N column (${list(v.nColumns)}) and a throughput column; found: ${list(v.found) || 'no rows'}`
  },
  CSV_NOT_A_NUMBER: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: row ${v.row}: ${v.column} "${v.value}" is not a number` },
  JTL_IS_XML: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: this is an XML JTL; the analyzer reads CSV JTL files (run JMeter with -Jjmeter.save.saveservice.output_format=csv)`
  },
  JTL_COLUMNS_MISSING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: the header has no ${list(v.missing)} column; the analyzer needs ${list(v.required)} (JMeter saves them by default)`
  },
  JTL_HEADER_UNKNOWN: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: the first line is neither a JTL header (timeStamp,elapsed,label,...) nor a row of JMeter's ${v.defaults} ` +
      'default columns; save results as CSV with a header (jmeter.save.saveservice.print_field_names=true)'
  },
  JTL_SPAN_TOO_LONG: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `end times from ${v.from} to ${v.to} ms since the epoch span more than ${v.hours} h: the rows of a run span at most that`
  },
  ROW_TOO_LONG: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}:${v.line}: a row longer than ${v.maxMiB} MiB (a quoted field never closed?)`
  },
  HISTOGRAM_SPAN_TOO_LONG: { code: 'NS_ERR_BAD_FILE', text: v => `${v.what}: a run's completions span at most ${v.hours} h` },
  LATENCIES_TOO_MANY: { code: 'NS_ERR_BAD_FILE', text: v => `more than ${v.max} distinct latencies over ${v.denseMs} ms` },
  NOT_A_LATENCY_FILE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: not a nodescale latency histogram (${v.schema})` },
  LATENCY_FILE_INVALID: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.file}: ${v.problem} (not a latency histogram as nodescale writes one, ${v.schema})`
  },
  MICRO_LABEL_INVALID: { code: 'NS_ERR_BAD_FILE', text: v => `${v.file}: micros.labels[${v.label}]: not a histogram (${v.why})` },
  CPUACCT_USAGE_INVALID: { code: 'NS_ERR_BAD_FILE', text: v => `${v.path}: expected ns per CPU separated by spaces, got ${v.got}` },
  CPU_STAT_WITHOUT_USAGE: { code: 'NS_ERR_BAD_FILE', text: v => `${v.path}: no usage_usec line (is this a cgroup v2 cpu.stat?)` },
  CPU_STAT_WITHOUT_THROTTLING: {
    code: 'NS_ERR_BAD_FILE',
    text: v => `${v.path}: no nr_periods, nr_throttled and throttled_time (or throttled_usec) lines`
  },

  // Data that cannot answer the question
  NO_FINISHED_RUNS: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `${list(v.dirs)}: no finished runs (run.json with status "done") found` +
      (v.notDone ? ` (${v.notDone} not done)` : '') +
      (v.invalid ? ` (${v.invalid} finished but invalid: --include-invalid puts them back)` : '') +
      '; run executor run once per instance count into one --out folder (e.g. --instances 1, 2, 4 with the same --out)'
  },
  NO_FINISHED_RUNS_TO_CORRELATE: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `${list(v.dirs)}: no finished runs (run.json with status "done")` +
      (v.notDone + v.degraded ? ` (${v.notDone} not done, ${v.degraded} degraded)` : '') + '; run a sweep into this folder first'
  },
  NOTHING_TO_EXPORT: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `${list(v.dirs)}: no run.json or capacity.json found${v.unreadable ? ` (${v.unreadable} unreadable)` : ''}`
  },
  NOTHING_TO_REPORT: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `${list(v.sources)}: no runs (run.json) and no points found; run a sweep into this folder first`
  },
  NO_POINTS_TO_FIT: { code: 'NS_ERR_BAD_DATA', text: v => `${list(v.sources)}: no points to fit` },
  NO_GROUPS_TO_COMPARE: { code: 'NS_ERR_BAD_DATA', text: v => `${list(v.sources)}: no groups of points to compare` },
  POINTS_NOT_AN_ARRAY: { code: 'NS_ERR_BAD_DATA', text: () => 'points must be an array of { n, throughput }' },
  POINT_N_INVALID: { code: 'NS_ERR_BAD_DATA', text: v => `point ${v.point}: N must be a number > 0 (got ${v.n})` },
  POINT_THROUGHPUT_NOT_POSITIVE: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `point ${v.point} (N = ${v.n}): throughput must be > 0 (got ${v.throughput}); a run that served nothing cannot be fitted`
  },
  TOO_FEW_N: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `${MODEL_NAMES[v.model] ?? v.model} has ${v.k} parameters and needs at least ${v.needs} distinct N; got ${v.got}` +
      (v.ns?.length ? ` (N = ${list(v.ns)})` : '') + '. Measure more values of N (instance or node counts)' +
      (v.model === 'amdahl' ? '' : ' or fit --model amdahl')
  },
  THROUGHPUT_FLAT: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `throughput is the same (${v.throughput}) at every N: a flat line has no scaling to fit; check that load reached every instance`
  },
  SD_WEIGHTS_WITHOUT_REPEATS: {
    code: 'NS_ERR_BAD_DATA',
    text: () => 'weights "sd" need repeated runs (sd and count per point); none of the points has them'
  },
  WEIGHTS_INVALID: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `weights must be "none", "sd" or ${v.count} positive numbers (one per distinct N)`
  },
  NO_CURVE_FITS: {
    code: 'NS_ERR_BAD_DATA',
    text: () => 'no USL/Amdahl curve with sigma, lambda in [0, 1] and gamma > 0 fits these points'
  },
  DEPLOYMENT_VALUE_NOT_POSITIVE: {
    code: 'NS_ERR_BAD_DATA',
    text: v => `cell ${v.cell}: a deployment's value must be a positive number, not ${v.value}`
  },

  // The Docker engine and its swarm
  DOCKER_UNREACHABLE: { code: 'NS_ERR_MISSING_DOCKER', text: v => `no Docker daemon answers at ${v.where}: ${v.why}`, hint: DOCKER_UP },
  DOCKER_GONE: {
    code: 'NS_ERR_MISSING_DOCKER',
    text: v => `${v.what}: no Docker daemon answers (${v.errno}${v.address ? ` at ${v.address}` : ''})`,
    hint: DOCKER_UP
  },
  DOCKER_SILENT: {
    code: 'NS_ERR_MISSING_DOCKER',
    text: v => `the Docker daemon has not answered for ${v.seconds} s (${v.why})`,
    hint: DOCKER_UP
  },
  DOCKER_REFUSED: { code: 'NS_ERR_DEPLOY', text: dockerSaid },
  SWARM_UNREADABLE: { code: 'NS_ERR_MISSING_DOCKER', text: dockerSaid },
  ENGINE_NOT_MANAGER: {
    code: 'NS_ERR_DEPLOY',
    text: v => `this engine is a swarm worker, not a manager (node ${v.node}); point DOCKER_HOST at a manager`
  },
  ENGINE_CANNOT_LIST_NODES: {
    code: 'NS_ERR_MISSING_DOCKER',
    text: v => `this engine is a swarm worker, not a manager (node ${v.node}): its nodes cannot be listed`,
    hint: 'point DOCKER_HOST at a manager of the swarm'
  },
  SWARM_STATE_BROKEN: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the engine's swarm state is "${v.state}"; fix it by hand (docker swarm leave --force, then ${DOCKER_UP})`
  },
  NOT_ENOUGH_NODES: { code: 'NS_ERR_DEPLOY', text: v => `not enough nodes at deploy time: ${v.why}` },
  NO_NODE_FOR_SERVER: {
    code: 'NS_ERR_DEPLOY',
    text: v => `every usable node of the swarm is labelled ${v.label}=${v.role} (${v.loads}): none is left for the server`,
    hint: v => `docker node update --label-rm ${v.label} <node> on one of them, or join a worker for the server`
  },

  // Images and the image registry
  IMAGE_BUILD_FAILED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `building ${v.tag} failed: ${v.said}${v.tail?.length ? `\n${list(v.tail, '\n')}` : ''}`
  },
  BASE_NOT_PULLED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `--base registry: cannot pull ${v.name}: ${v.why}`,
    hint: 'executor image build --base host (builds from this machine\'s own binaries, no registry needed)'
  },
  HAPROXY_NOT_ON_HOST: { code: 'NS_ERR_MISSING_HAPROXY', text: onHost, hint: 'apt-get install -y haproxy' },
  REGISTRY_NOT_ON_HOST: { code: 'NS_ERR_MISSING_REGISTRY', text: onHost, hint: 'apt-get install -y docker-registry' },
  JAVA_NOT_ON_HOST: { code: 'NS_ERR_MISSING_JAVA', text: onHost, hint: JAVA_HINT },
  PACKAGES_NOT_INSTALLED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.needs} needs ${list(v.missing)}, not installed in ${v.dir}`,
    hint: 'npm ci'
  },
  IMAGE_FOLDER_MISSING: { code: 'NS_ERR_DEPLOY', text: v => `the image needs ${v.dir}/, and it is missing` },
  LDD_FAILED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `ldd ${v.binary} failed (${v.why}); the host base needs a dynamically linked binary and ldd (or use --base registry)`
  },
  IMAGE_NOT_CHECKED: { code: 'NS_ERR_DEPLOY', text: v => `node ${v.node}: cannot check for image ${v.tag}: ${v.said}` },
  IMAGES_NOT_LOADED: { code: 'NS_ERR_DEPLOY', text: v => `node ${v.node}: loading ${list(v.images)} failed: ${v.said}` },
  IMAGE_NOT_PUSHED: {
    code: 'NS_ERR_DEPLOY',
    text: pushFailed,
    hint: v => `check that a registry answers at ${v.registry} and that every engine trusts it (dockerd --insecure-registry ${v.registry} for plain HTTP)`
  },
  IMAGE_NOT_PUSHED_TO_BUILTIN: {
    code: 'NS_ERR_DEPLOY',
    text: pushFailed,
    hint: v => `the manager's engine pushes to ${v.registry}: it must trust it ` +
      `(insecure-registries for plain HTTP; the certificate's CA in /etc/docker/certs.d/${v.registry}/ca.crt with --registry-tls)`
  },
  PUSH_WITHOUT_DIGEST: {
    code: 'NS_ERR_DEPLOY',
    text: v => `--registry ${v.registry}: the push of ${v.ref} reported no digest, and images are deployed by digest only`
  },
  REGISTRY_CERTIFICATE_WRONG: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the image registry at ${v.url} presented a certificate that is not --registry-tls's, or not issued for ${v.host}: ${v.why}`,
    hint: v => `the certificate must name the manager's address the nodes pull from (${v.host}) in its subjectAltName; ` +
      `is another server listening on port ${v.port}?`
  },
  REGISTRY_NOT_STARTED: {
    code: 'NS_ERR_DEPLOY',
    text: v => 'the image registry did not start' +
      `${v.tasks === null ? ` within ${v.timeoutMs} ms` : `: ${v.tasks}`}${v.logs ? `\n${v.logs}` : ''}`,
    hint: v => `is port ${v.port} free on the manager?${v.tls ? ' Are --registry-tls\'s certificate and key a pair?' : ''} ` +
      'Or give --registry HOST:PORT (a registry of yours), or --registry none'
  },
  REGISTRY_NOT_TRUSTED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the builtin image registry speaks plain HTTP at ${v.registry}, ` +
      'and this manager\'s engine does not trust that address: it could neither push there nor run its own tasks (the RC) from it',
    hint: v => `${trustFix(v.registry, '/etc/docker/daemon.json')}, as executor cluster up does for the local swarm; or give --registry-tls CERT,KEY`
  },

  // Stacks: deploying, waiting for them, removing them
  TASK_CPUS_TOO_MANY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `service ${v.service} reserves ${v.cpus} CPUs per task, and the largest ready node has ${v.maxCpus}: ` +
      'no node can run it (lower --cpus-per-instance, or --instances for up/cm/pm2)'
  },
  TASK_MEMORY_TOO_LARGE: {
    code: 'NS_ERR_DEPLOY',
    text: v => `service ${v.service} reserves ${v.bytes} bytes of memory per task, and the largest ready node has ${v.maxBytes}: no node can run it`
  },
  DEPLOY_INTERRUPTED: { code: 'NS_ERR_INTERRUPTED', text: v => `deploying stack ${v.stack} was interrupted; the stack was removed` },
  STACK_NOT_GONE: {
    code: 'NS_ERR_DEPLOY',
    text: v => `stack ${v.stack} not gone after ${v.timeoutMs} ms: ${list(v.left)} remain; remove them with: docker stack rm ${v.stack}`
  },
  LEFTOVERS_NOT_REMOVED: { code: 'NS_ERR_DEPLOY', text: v => `cannot remove leftovers of earlier runs: ${list(v.errors, '; ')}` },
  STACK_NOT_READY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the stack did not get ready within ${v.timeoutMs} ms: ${v.running ? 'all tasks run' : 'not all tasks run'} (${v.states || 'no tasks'}); ` +
      (v.healthOnly
        ? `${v.target ?? 'the published port'}${v.health} answered no 2xx`
        : `${v.seen} of ${v.expect} instances answered ${v.target ?? 'the published port'}${v.health}`) +
      ` (last: ${v.last})`
  },
  TASK_FAILED_AT_START: {
    code: 'NS_ERR_DEPLOY',
    text: v => `a task failed while the stack started: ${v.tasks}` +
      `${v.logs?.length ? `\n--- container output ---\n${list(v.logs, '\n---\n')}` : ''}`,
    hint: v => v.imageHint
  },
  TASK_NOT_PLACED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the scheduler cannot place ${v.service}: ${v.why} ` +
      `(pending for ${v.pendingMs} ms; lower --cpus-per-instance or --instances, or add nodes)`
  },
  HEALTH_NOT_2XX: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the server answers its health path ${v.health} with HTTP ${v.status}: give the path it answers with a 2xx (--health PATH)`
  },
  HAPROXY_NOT_ANSWERING: {
    code: 'NS_ERR_DEPLOY',
    text: v => `HAProxy in front of ${v.replicas} instances did not answer: ${v.why}\n${v.output}`
  },
  SERVER_NOT_SERVING: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.shape} x${v.instances} (${v.what}) ${v.why}\n--- output ---\n${v.output || '(none)'}`
  },

  // The control plane (the RC) and the load agents
  SERVICE_NOT_STARTED: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the ${v.service} failed to start: ${notRendered(v)}`,
    hint: v => v.imageHint
  },
  CONTROL_PLANE_NOT_READY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the control plane did not get ready within ${v.timeoutMs} ms (${v.last})`
  },
  LOAD_AGENTS_NOT_READY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the load agents did not get ready within ${v.timeoutMs} ms (${v.last})`,
    hint: 'check the load nodes: docker node ls; a load node must run the nodescale/load image and reach the server'
  },
  INGRESS_PROBE_WITHOUT_IMAGE: {
    code: 'NS_ERR_DEPLOY',
    text: () => 'the ingress probe needs a register image; build one first',
    hint: 'executor image build'
  },
  INGRESS_PROBE_FAILED: { code: 'NS_ERR_DEPLOY', text: v => `the ingress probe task failed: ${v.why}` },
  RC_UNREACHABLE: { code: 'NS_ERR_RUN', text: v => `the RC at ${v.url} did not answer ${v.method} ${v.path}: ${v.why}` },
  RC_REFUSED: { code: 'NS_ERR_RUN', text: v => `the RC at ${v.url} answered ${v.method} ${v.path} with ${v.status}: ${v.said}` },
  RC_NOT_ON_NODE: {
    code: 'NS_ERR_RUN',
    text: v => `no RC runs on node ${v.node}, where container ${v.container} is; is the control plane up? (executor up)`
  },
  CPU_GROUP_NAME_INVALID: {
    code: 'NS_ERR_RUN',
    text: v => `CPU group name ${v.name}: allowed are 1-128 letters, digits, '.', '_', '-', not starting with '.' or '-'`
  },
  CPU_GROUP_NOT_REMOVED: { code: 'NS_ERR_RUN', text: v => `cannot remove the CPU group ${v.dir}: ${v.errno}` },

  // The local swarm (executor cluster)
  CLUSTER_NOT_ROOT: {
    code: 'NS_ERR_MISSING_HOST',
    text: () => 'executor cluster needs root: it creates network namespaces, veths and Docker engines',
    hint: 'run it as root (sudo npx executor cluster up ...), or use a real multi-node Swarm (docs/how-to/swarm.md)'
  },
  CLUSTER_TOOLS_MISSING: {
    code: 'NS_ERR_MISSING_HOST',
    text: v => `executor cluster needs ${list(v.tools)} on PATH`,
    hint: v => `apt-get install -y ${list(v.packages, ' ')}`
  },
  SWARM_ADDRESS_UNREACHABLE: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the swarm advertises ${v.address}, which workers cannot reach, and re-initialising it would remove running stacks: ${list(v.stacks)}`,
    hint: WAIT_OR_FORCE
  },
  STACKS_STILL_RUNNING: {
    code: 'NS_ERR_DEPLOY',
    text: v => `cluster down makes the swarm advertise loopback again (leave + init), which would remove running stacks: ${list(v.stacks)}`,
    hint: WAIT_OR_FORCE
  },
  NODE_NOT_READY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.name} (node ${v.node}) joined but is not Ready after ${v.timeoutMs} ms (state ${v.state ?? 'unknown'})`
  },
  MANAGER_DISTRUSTS_REGISTRY: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the manager's engine does not trust the control plane's registry ${v.registry} over plain HTTP, ` +
      'and cluster up cannot change that here (not this machine\'s engine, or its flags set insecure registries)',
    hint: v => trustFix(v.registry, v.daemonJson)
  },
  PID_NOT_DOCKERD: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.pidFile} names pid ${v.pid}, which is ${v.name ? `"${v.name}"` : 'no process'}, not dockerd: ` +
      'the engine\'s settings were not changed',
    hint: v => trustFix(v.registry, v.daemonJson)
  },
  REGISTRY_NOT_TAKEN: {
    code: 'NS_ERR_DEPLOY',
    text: v => `the manager's engine did not take the registry ${v.registry} from ${v.daemonJson} after a reload`,
    hint: v => `see the engine's log; ${trustFix(v.registry, v.daemonJson)}`
  },
  SUBNET_TAKEN: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.link} already has ${v.address}/${v.prefix}: the local swarm uses ${v.subnet}.0/${v.subnetPrefix}; free it first`
  },
  WORKER_ENGINE_SILENT: {
    code: 'NS_ERR_DEPLOY',
    text: v => `${v.name}'s engine did not answer within ${v.timeoutMs} ms${v.exited !== null ? ` (it exited: ${v.exited})` : ''}; ` +
      `its log ${v.log}:\n${v.tail}`
  },

  // Runs: the load, its drivers and generators, calibration and capacity probes
  DAEMON_LOST_DURING_LOAD: {
    code: 'NS_ERR_RUN',
    text: v => `the Docker daemon did not answer during the load (${v.why}) ` +
      `${v.seconds === null ? 'and had not answered again when the load ended' : `for ${v.seconds} s`}: it restarted or stopped, ` +
      'the server\'s containers with it, so this run is no measurement'
  },
  TEARDOWN_FAILED: { code: 'NS_ERR_RUN', text: v => list(v.errors, '; ') },
  AUTOCANNON_FAILED: { code: 'NS_ERR_RUN', text: v => `autocannon driver: ${v.why}` },
  JTL_COLUMNS_LACKING: {
    code: 'NS_ERR_RUN',
    text: v => `jmeter driver: JMeter's JTL lacks the columns ${list(v.missing)} (header: ${list(v.header, ',')})`
  },
  JAVA_NOT_STARTED: { code: 'NS_ERR_MISSING_JAVA', text: v => `jmeter driver: cannot start ${v.command}: ${v.why}`, hint: JAVA_HINT },
  JMETER_EXITED: {
    code: 'NS_ERR_RUN',
    text: v => `jmeter driver: JMeter exited with code ${v.code}${v.signal ? ` (${v.signal})` : ''}: ${v.why}`
  },
  JMETER_STARTED_LATE: {
    code: 'NS_ERR_RUN',
    text: v => `jmeter driver: JMeter's threads started ${v.late} s after ` +
      `the shared start, when the ${v.warmup} s warm-up and ${v.duration} s window had ended: its JVM started that slowly here; ` +
      `a longer --warmup gives it the time (what it sends before the window is warm-up) (log: ${v.log})`
  },
  JMETER_RECORDED_NOTHING: { code: 'NS_ERR_RUN', text: v => `jmeter driver: JMeter ran ${v.seconds} s but recorded no sample: ${v.why}` },
  AGENT_SAMPLES_TOO_LARGE: {
    code: 'NS_ERR_RUN',
    text: v => `${v.agent}: its samples are over ${v.maxBytes} bytes (the limit for what it reported): stopped reading them`
  },
  AGENT_SAMPLES_UNSIGNED: {
    code: 'NS_ERR_RUN',
    text: v => `${v.agent}: its samples were not signed by it for this request (changed on the way, or sent by another): not used`
  },
  AGENT_REFUSED_LOAD: {
    code: 'NS_ERR_RUN',
    text: v => `generator ${v.name} on ${v.host}: the agent refused the load (${v.status} ${v.said})`
  },
  GENERATOR_FAILED: { code: 'NS_ERR_RUN', text: v => `generator ${v.name} on ${v.host}: ${v.why ?? 'failed'}` },
  GENERATOR_DID_NOT_STOP: {
    code: 'NS_ERR_RUN',
    text: v => `generator ${v.name} on ${v.host}: its load did not stop within ${v.graceS} s of the abort`
  },
  GENERATORS_ALL_LOST: { code: 'NS_ERR_RUN', text: v => `every generator was lost: ${list(v.why, '; ')}` },
  CALIBRATION_PROBE_FAILED: {
    code: 'NS_ERR_RUN',
    text: v => `calibration probe at concurrency ${v.concurrency} ${v.status}: ${v.why ?? ''}`
  },
  NO_RELAXED_LEVEL: { code: 'NS_ERR_RUN', text: v => `calibration found no relaxed level within ${v.probes} probes` },
  CAPACITY_PROBE_FAILED: { code: 'NS_ERR_RUN', text: v => `capacity probe (${v.phase}) ${v.status}: ${v.why ?? ''}` },
  DISK_FULL: {
    code: 'NS_ERR_NO_SPACE',
    text: v => `the disk of ${v.dir} is full${v.run ? ` during run ${v.run} (${v.label})` : ''}: the sweep stopped; every finished run and sweep.json are as ` +
      'they were (nothing is torn)',
    hint: v => `free space on that disk, then: executor sweep --resume ${v.dir}`
  },

  // Parts to install: haproxy, java, JMeter, taskset
  HAPROXY_NOT_ON_PATH: {
    code: 'NS_ERR_MISSING_HAPROXY',
    text: () => '--strategy hs on the local backend needs haproxy, which is not on PATH',
    hint: 'apt-get install -y haproxy'
  },
  JAVA_NOT_ON_PATH: { code: 'NS_ERR_MISSING_JAVA', text: () => 'the jmeter driver needs java (17 or newer) on PATH', hint: JAVA_HINT },
  JMETER_HOME_EMPTY: {
    code: 'NS_ERR_MISSING_JMETER',
    text: v => `NODESCALE_JMETER_HOME=${v.home} holds no JMeter ${v.version} install`,
    hint: 'unset NODESCALE_JMETER_HOME, or run: node executor/jmeter-install.js'
  },
  JMETER_WITHOUT_MAVEN: {
    code: 'NS_ERR_MISSING_JMETER',
    text: v => `JMeter ${v.version} is not installed and Maven is not there to install it`,
    hint: 'apt-get install -y maven && node executor/jmeter-install.js'
  },
  JMETER_NOT_FETCHED: {
    code: 'NS_ERR_MISSING_JMETER',
    text: v => `Maven could not fetch JMeter ${v.version}: ${v.said}`,
    hint: 'check that Maven Central answers (mvn -v; ~/.m2/settings.xml), then run: node executor/jmeter-install.js'
  },
  JMETER_NOT_UNPACKED: {
    code: 'NS_ERR_MISSING_JMETER',
    text: () => 'could not unpack JMeter\'s bin/ folder (needs unzip or jar)',
    hint: 'apt-get install -y unzip'
  },
  TASKSET_MISSING: {
    code: 'NS_ERR_DEPLOY',
    text: () => 'taskset is needed for CPU affinity (--strategy up)',
    hint: 'apt-get install util-linux'
  }
}))

/** @typedef {keyof typeof MESSAGES} MessageId */

/**
 * The error of a message of the table: its code (and so its exit code), its text and hint made from `values`.
 * @param {MessageId} id
 * @param {Values} [values]
 * @param {{ cause?: unknown, details?: Record<string, any> }} [opts]
 */
export function fail (id, values = {}, { cause, details } = {}) {
  /** @type {Message} */
  const m = MESSAGES[id]
  return new NsError(m.code, m.text(values), { hint: typeof m.hint === 'function' ? m.hint(values) : m.hint, cause, details })
}

/**
 * A coded error again, its message led by where it happened (a group's name): the same code, nothing new to say.
 * @param {NsError} err
 * @param {string} where
 */
export function within (err, where) {
  return new NsError(/** @type {ErrorCode} */ (err.code), `${where}: ${err.message}`)
}

/**
 * A message as the reference page shows it: its text and hint with `{name}` where each value goes (a text that
 * chooses between two wordings shows the one a given value takes).
 * @param {MessageId} id
 */
export function template (id) {
  const named = new Proxy({}, { get: (_, k) => typeof k === 'string' ? `{${k}}` : undefined })
  /** @type {Message} */
  const m = MESSAGES[id]
  return { code: m.code, text: m.text(named), hint: typeof m.hint === 'function' ? m.hint(named) : m.hint }
}
