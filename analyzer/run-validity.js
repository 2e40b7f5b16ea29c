// Whether a finished run measured the server: run.json's validity (flags such as generator-saturated, host-saturated,
// throttled, unstable, errors). Runs without it (older runs) count as valid.

/**
 * A run's validity as the analyzer uses it: ok unless run.json says `validity.ok === false`, the names of its
 * flags, and of those that make it invalid (severity invalid; a flag recorded as a bare name counts as one).
 * @param {any} run a run.json object
 * @returns {{ ok: boolean, flags: string[], invalid: string[] }}
 */
export function validityOf (run) {
  const v = run?.validity
  const list = Array.isArray(v?.flags) ? v.flags.filter(f => typeof f === 'string' || f?.name) : []
  const name = f => String(typeof f === 'string' ? f : f.name)
  return { ok: v?.ok !== false, flags: list.map(name), invalid: list.filter(f => typeof f === 'string' || f.severity !== 'warning').map(name) }
}

/**
 * One line on the runs of a group left out as invalid: "left out 2 invalid runs: N=4 (generator-saturated), N=8
 * (throttled, unstable); --include-invalid puts them back". Null when none was.
 * @param {{ excluded?: { n: number, flags: string[] }[] }} group
 */
export function excludedLine (group) {
  const list = group.excluded ?? []
  if (!list.length) return null
  const items = [...list].sort((a, b) => a.n - b.n).map(e => `N=${e.n} (${e.flags.join(', ') || 'no flag named'})`)
  return `left out ${list.length} invalid run${list.length === 1 ? '' : 's'}: ${items.join(', ')}; --include-invalid puts them back`
}

/**
 * Why a finished run is invalid, with each flag's message when it has one; null for a valid run.
 * @param {any} run a run.json object
 */
export function invalidReason (run) {
  if (validityOf(run).ok) return null
  const flags = Array.isArray(run.validity.flags) ? run.validity.flags : []
  const said = flags.map(f => (typeof f === 'string' ? f : f?.message ? `${f.name}: ${f.message}` : f?.name)).filter(Boolean)
  return `invalid: ${said.join('; ') || 'no flag named'}`
}
