// Parses a benchmark's --param values (strings) against a small spec, with errors that name the flag.
import { badFlag } from '../lib/errors.js'

/** An error for one bad --param value. */
export function badParam (key, message) {
  return badFlag(`--param ${key}`, message, { key: 'params', param: key })
}

/**
 * An integer parser for a spec.
 * @param {{ min?: number, max?: number }} [range]
 * @returns {(value: string, key: string) => number}
 */
export function int ({ min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = {}) {
  return (value, key) => {
    const n = /^-?\d+$/.test(value.trim()) ? Number(value) : NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) throw badParam(key, `must be an integer from ${min} to ${max} (got "${value}")`)
    return n
  }
}

/**
 * A parser that accepts one of a few values.
 * @param {ReadonlyArray<string|number>} allowed
 */
export function oneOf (allowed) {
  return (value, key) => {
    const hit = allowed.find(a => String(a) === value.trim())
    if (hit === undefined) throw badParam(key, `must be one of ${allowed.join(', ')} (got "${value}")`)
    return hit
  }
}

/** A yes/no parser. */
export function bool () {
  return (value, key) => {
    const v = value.trim().toLowerCase()
    if (['true', 'yes', '1', 'on'].includes(v)) return true
    if (['false', 'no', '0', 'off'].includes(v)) return false
    throw badParam(key, `must be true or false (got "${value}")`)
  }
}

/**
 * Builds `options(params)` for a benchmark: defaults merged with params, every key parsed, unknown keys rejected.
 * @param {string} name benchmark name, for messages
 * @param {Record<string, string>} defaults
 * @param {Record<string, (value: string, key: string) => any>} spec a parser per key
 * @returns {(params?: Record<string, string>) => Record<string, any>}
 */
export function optionsParser (name, defaults, spec) {
  const keys = Object.keys(spec)
  return (params = {}) => {
    const merged = { ...defaults }
    for (const [key, value] of Object.entries(params ?? {})) {
      if (!keys.includes(key)) {
        throw badParam(key, `unknown for benchmark ${name}; ` + (keys.length ? `allowed: ${keys.join(', ')}` : 'it takes no parameters'))
      }
      if (typeof value !== 'string') throw badParam(key, `must be a string (got ${typeof value})`)
      merged[key] = value
    }
    const out = {}
    for (const key of keys) out[key] = merged[key] === undefined ? undefined : spec[key](String(merged[key]), key)
    return Object.freeze(out)
  }
}

/**
 * A built-in benchmark from what it says about itself: each param's default and parser side by side, a check across
 * params, and GET / as its request unless it says otherwise. The result is a Benchmark (benchmarks/CONTRACT.md).
 * @param {{ name: string, description: string, params?: Record<string, [string, (value: string, key: string) => any]>,
 *   check?: (opts: Record<string, any>) => void, request?: (opts: any) => any, create: Function,
 *   teardown?: Function }} def
 */
export function defineBenchmark ({ name, description, params = {}, check, request = () => ({ method: 'GET', path: '/' }), create, teardown }) {
  const defaults = Object.fromEntries(Object.entries(params).map(([key, [value]]) => [key, value]))
  const parse = optionsParser(name, defaults, Object.fromEntries(Object.entries(params).map(([key, [, parser]]) => [key, parser])))
  const options = (given) => {
    const opts = parse(given)
    check?.(opts)
    return opts
  }
  return { name, description, defaults, options, request, create, ...(teardown ? { teardown } : {}) }
}
