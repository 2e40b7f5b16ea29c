// Coded errors shared by every nodescale command, and the exit code each code maps to.

/** Exit codes of DESIGN.md. */
export const EXIT = Object.freeze({ OK: 0, FAILED: 1, BAD_INPUT: 2, MISSING_PART: 3 })

/**
 * Every error code nodescale raises, with its exit code and what it means.
 * The README's "Errors" table lists the same codes (a test checks it).
 */
export const CODES = Object.freeze({
  NS_ERR_BAD_FLAG: { exit: EXIT.BAD_INPUT, what: 'a flag is unknown or its value is not allowed' },
  NS_ERR_BAD_APP: { exit: EXIT.BAD_INPUT, what: 'a custom app (--app) cannot be loaded or has the wrong export' },
  NS_ERR_BAD_FILE: { exit: EXIT.BAD_INPUT, what: 'an input file is missing, empty or not in the expected format' },
  NS_ERR_BAD_DATA: { exit: EXIT.BAD_INPUT, what: 'the data cannot answer the question (too few points, flat or non-positive throughput)' },
  NS_ERR_MISSING_JAVA: { exit: EXIT.MISSING_PART, what: 'java is needed for the JMeter driver' },
  NS_ERR_MISSING_JMETER: { exit: EXIT.MISSING_PART, what: 'JMeter is not installed and could not be installed' },
  NS_ERR_MISSING_HAPROXY: { exit: EXIT.MISSING_PART, what: 'haproxy is needed for the hs strategy' },
  NS_ERR_MISSING_REGISTRY: { exit: EXIT.MISSING_PART, what: 'docker-registry is needed for the control plane\'s image registry (offline)' },
  NS_ERR_MISSING_DOCKER: { exit: EXIT.MISSING_PART, what: 'no Docker daemon answers' },
  NS_ERR_MISSING_HOST: { exit: EXIT.MISSING_PART, what: 'the local cluster needs root and host tools (ip, nsenter, unshare, dockerd)' },
  NS_ERR_DEPLOY: { exit: EXIT.FAILED, what: 'the server under test did not start or did not answer' },
  NS_ERR_RUN: { exit: EXIT.FAILED, what: 'the run failed while load was running' },
  NS_ERR_INTERRUPTED: { exit: EXIT.FAILED, what: 'the run was interrupted (Ctrl-C or a signal)' }
})

/** An error with a nodescale code, an exit code, and an optional hint that says how to fix it. */
export class NsError extends Error {
  /**
   * @param {keyof typeof CODES} code
   * @param {string} message
   * @param {{ hint?: string, cause?: unknown, details?: object }} [opts]
   */
  constructor (code, message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'NsError'
    this.code = code
    this.exitCode = CODES[code]?.exit ?? EXIT.FAILED
    this.hint = opts.hint
    this.details = opts.details
  }
}

/** Shorthand for the most common error: a bad flag value. */
export function badFlag (flag, message) {
  return new NsError('NS_ERR_BAD_FLAG', `${flag}: ${message}`)
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
