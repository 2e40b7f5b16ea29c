// Coded errors shared by every nodescale command, and the exit code each code maps to.

/** Exit codes: 0 done, 1 the run failed (or a bug), 2 bad input, 3 a needed part is missing. */
export const EXIT = Object.freeze({ OK: 0, FAILED: 1, BAD_INPUT: 2, MISSING_PART: 3 })

/**
 * What each code means, grouped by its exit code. docs/reference/errors.md is made from them (npm run docs:reference).
 */
const MEANINGS = {
  [EXIT.BAD_INPUT]: {
    NS_ERR_BAD_FLAG: 'a flag is unknown or its value is not allowed',
    NS_ERR_BAD_APP: 'a custom app (--app) cannot be loaded or has the wrong export',
    NS_ERR_BAD_FILE: 'an input file is missing, empty or not in the expected format',
    NS_ERR_BAD_DATA: 'the data cannot answer the question (too few points, flat or non-positive throughput)',
    NS_ERR_BAD_ENV: 'an environment variable the server under test or the RC reads has a value that is not allowed'
  },
  [EXIT.MISSING_PART]: {
    NS_ERR_MISSING_JAVA: 'java is needed for the JMeter driver',
    NS_ERR_MISSING_JMETER: 'JMeter is not installed and could not be installed',
    NS_ERR_MISSING_HAPROXY: 'haproxy is needed for the hs strategy',
    NS_ERR_MISSING_REGISTRY: 'docker-registry is needed for the control plane\'s image registry (offline)',
    NS_ERR_MISSING_DOCKER: 'no Docker daemon answers',
    NS_ERR_MISSING_HOST: 'the local swarm needs root and host tools (ip, nsenter, unshare, dockerd)'
  },
  [EXIT.FAILED]: {
    NS_ERR_DEPLOY: 'the server under test did not start or did not answer',
    NS_ERR_RUN: 'the run failed while load was running',
    NS_ERR_INTERRUPTED: 'the run was interrupted (Ctrl-C or a signal)',
    NS_ERR_NO_SPACE: 'the results folder\'s disk is full: the sweep stopped with nothing torn; free space, then --resume',
    NS_ERR_INTERNAL: 'an internal check failed: a bug in nodescale (please report it with the message)'
  }
}

/**
 * Every error code nodescale raises, with its exit code and what it means.
 * @type {Readonly<Record<string, { exit: number, what: string }>>}
 */
export const CODES = Object.freeze(Object.fromEntries(Object.entries(MEANINGS).flatMap(([exit, codes]) =>
  Object.entries(codes).map(([code, what]) => [code, Object.freeze({ exit: Number(exit), what })]))))

/**
 * @typedef {'NS_ERR_BAD_FLAG'|'NS_ERR_BAD_APP'|'NS_ERR_BAD_FILE'|'NS_ERR_BAD_DATA'|'NS_ERR_BAD_ENV'|
 *   'NS_ERR_MISSING_JAVA'|'NS_ERR_MISSING_JMETER'|'NS_ERR_MISSING_HAPROXY'|'NS_ERR_MISSING_REGISTRY'|
 *   'NS_ERR_MISSING_DOCKER'|'NS_ERR_MISSING_HOST'|'NS_ERR_DEPLOY'|'NS_ERR_RUN'|'NS_ERR_INTERRUPTED'|
 *   'NS_ERR_NO_SPACE'|'NS_ERR_INTERNAL'
 * } ErrorCode
 */

/** An error with a nodescale code, an exit code, and an optional hint that says how to fix it. */
export class NsError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {{ hint?: string, cause?: unknown, details?: Record<string, any> }} [opts]
   */
  constructor (code, message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'NsError'
    this.code = code
    this.exitCode = CODES[code]?.exit ?? EXIT.FAILED
    this.hint = opts.hint
    /** @type {Record<string, any> | undefined} */
    this.details = opts.details
  }
}

/**
 * A value the user gave is not allowed. The flag and the reason travel as data (`details.flag`, `details.reason`, and
 * `details.key`, the run config's field, where there is one), so a caller can say where the value came from (an
 * experiment file's line) without reading the message.
 * @param {string} flag as the user wrote it: `--instances`, `--param n`
 * @param {string} reason what is wrong and what is allowed
 * @param {{ key?: string, param?: string, hint?: string, cause?: unknown }} [where]
 */
export function badFlag (flag, reason, { key, param, hint, cause } = {}) {
  return new NsError('NS_ERR_BAD_FLAG', `${flag}: ${reason}`, { hint, cause, details: { flag, reason, key, param } })
}

/**
 * A custom app (--app) that cannot be used, with the flag and the reason as data (as badFlag).
 * @param {string} where what the user gave, e.g. the file ('' when the flag's value is not worth repeating)
 * @param {string} reason
 * @param {{ cause?: unknown }} [opts]
 */
export function badApp (where, reason, { cause } = {}) {
  const said = `${where ? `${where}: ` : ''}${reason}`
  return new NsError('NS_ERR_BAD_APP', `--app${where ? ' ' : ': '}${said}`, { cause, details: { flag: '--app', key: 'app', reason: said } })
}

/**
 * An environment variable that the server under test or the RC reads has a value that is not allowed.
 * @param {string} name
 * @param {string} reason
 */
export function badEnv (name, reason) {
  return new NsError('NS_ERR_BAD_ENV', `${name}: ${reason}`, { details: { env: name, reason } })
}

/**
 * An internal check failed: not the user's input but a bug in the caller (exit 1, and the message says so).
 * @param {string} message what was expected
 */
export function internalError (message) {
  return new NsError('NS_ERR_INTERNAL', `internal error (a bug in nodescale): ${message}`)
}

/**
 * The exit code for any thrown value: coded errors map by code, anything else is a failed run.
 * @param {unknown} err
 */
export function exitCodeOf (err) {
  return err instanceof NsError ? err.exitCode : EXIT.FAILED
}

/**
 * One line (plus a hint line) for a human, for any thrown value.
 * @param {unknown} err
 */
export function formatError (err) {
  if (err instanceof NsError) {
    return `error ${err.code}: ${err.message}` + (err.hint ? `\n  fix: ${err.hint}` : '')
  }
  return `error: ${err instanceof Error ? err.stack || err.message : String(err)}`
}
