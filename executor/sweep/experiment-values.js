// How an experiment file's values are read: names, lists, ranges, per-strategy maps, and unknown keys with "did you
// mean".

export const LEVEL_RE = /^(relaxed|exhausted)(?:\s*\*\s*(cores|\d+(?:\.\d+)?))?$/
const RANGE_RE = /^(\d+)\s*\.\.\s*(\d+)$/

export const isMap = v => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Refuses a key that is not allowed, naming the nearest allowed one when it looks like a typo. */
export function checkKeys (obj, at, allowed, fail, prefix = '') {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      const norm = k => k.toLowerCase().replace(/[-_ ]/g, '')
      const near = allowed.find(k => distance(norm(k), norm(key)) <= Math.min(2, Math.floor(k.length / 3)))
      throw fail([...at, key], `${prefix}${key}: unknown key${near ? ` (did you mean ${near}?)` : ''}; allowed: ${allowed.join(', ')}`)
    }
  }
}

/** Edit distance (insertions, deletions, substitutions) for "did you mean". */
function distance (a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}

export function stringList (value, key, bad) {
  const list = Array.isArray(value) ? value : [value]
  if (!list.length) throw bad(key, [], 'is empty; give at least one')
  list.forEach((v, i) => { if (typeof v !== 'string' || !v) throw bad(key, Array.isArray(value) ? [i] : [], `${JSON.stringify(v)} is not a name`) })
  return list
}

/**
 * A key that is one value, a list, or a map from strategy to either; expanded per strategy with each item's YAML path.
 */
export function byStrategy (key, value, strategies, bad, expand) {
  if (isMap(value)) {
    for (const s of Object.keys(value)) {
      if (!strategies.includes(s)) throw bad(key, [s], `"${s}" is not one of this experiment's strategies (${strategies.join(', ')})`)
    }
    return Object.fromEntries(strategies.map(s => {
      if (value[s] === undefined) throw bad(key, [], `no value for strategy ${s}; a map needs every strategy (${strategies.join(', ')})`)
      return [s, expand(value[s], key, [s], bad)]
    }))
  }
  const list = expand(value, key, [], bad)
  return Object.fromEntries(strategies.map(s => [s, list]))
}

/** @returns {{ value: any, path: (string|number)[] }[]} */
function items (value, at, key, bad, one) {
  const list = Array.isArray(value) ? value : [value]
  if (!list.length) throw bad(key, at, 'is empty; give at least one value')
  const out = list.flatMap((v, i) => one(v, Array.isArray(value) ? [...at, i] : at))
  const seen = new Set()
  for (const o of out) {
    if (seen.has(o.value)) throw bad(key, o.path, `${o.value} is listed twice`)
    seen.add(o.value)
  }
  return out
}

/**
 * Whole numbers as instances, instances-per-node and nodes take them: a number, a list, or a range "first..last".
 * @param {string} what the allowed forms, for the message
 */
export const wholeNumbers = what => (value, key, at, bad) => items(value, at, key, bad, (v, path) => {
  const m = typeof v === 'string' ? RANGE_RE.exec(v.trim()) : null
  if (m) {
    const [a, b] = [Number(m[1]), Number(m[2])]
    if (a < 1 || b < a || b - a > 256) throw bad(key, path, `"${v}" is not a range; write "first..last" with 1 <= first <= last`)
    return Array.from({ length: b - a + 1 }, (_, i) => ({ value: a + i, path }))
  }
  if (!Number.isInteger(v)) throw bad(key, path, `${JSON.stringify(v)} is not allowed; ${what}`)
  return [{ value: v, path }]
})

/** @param {string} what */
export const concurrencyValues = what => (value, key, at, bad) => items(value, at, key, bad, (v, path) => {
  if (typeof v === 'string') {
    const m = LEVEL_RE.exec(v.trim())
    if (!m) throw bad(key, path, `"${v}" is not allowed; ${what}`)
    return [{ value: v.replace(/\s+/g, ''), path }]
  }
  if (!Number.isInteger(v)) throw bad(key, path, `${JSON.stringify(v)} is not a whole number; ${what}`)
  return [{ value: v, path }]
})

export function rateValues (value, key, at, bad) {
  return items(value, at, key, bad, (v, path) => {
    if (typeof v !== 'number') throw bad(key, path, `${JSON.stringify(v)} is not a number of requests per second`)
    return [{ value: v, path }]
  })
}
