// JMeter evaluates `${...}` in every string of the test plan it runs: variables, and functions such as ${__groovy(...)}
// that run code on the load host. Text that a user, a file or a request supplies must never carry it into a plan
// (executor/drivers/jmeter-plan.js writes the plan; docs/SECURITY.md, finding 1).

/** What starts an expression JMeter evaluates; `__` alone is inert (a function is only called from inside `${`). */
export const JMETER_EXPRESSION = '${'

/** Whether JMeter would evaluate part of this text. */
export const evaluatedByJmeter = (/** @type {unknown} */ text) => String(text).includes(JMETER_EXPRESSION)

/** Why such text is refused, for the messages of every place that checks it. */
// eslint-disable-next-line no-template-curly-in-string
export const JMETER_REFUSAL = 'contains "${", which JMeter evaluates (its variables and functions such as ${__groovy(...)} run ' +
  'code on the load host); nodescale does not give it to JMeter'

/**
 * A URL's path and query with `{` and `}` percent-encoded (%7B, %7D): the same request to an HTTP server, no `${` for
 * JMeter to evaluate, and a URL its HTTP client takes (java.net.URI refuses a raw brace in a query, which the WHATWG
 * URL parser leaves as it is).
 * @param {string} pathAndQuery
 */
export const literalForJmeter = (pathAndQuery) => pathAndQuery.replaceAll('{', '%7B').replaceAll('}', '%7D')
