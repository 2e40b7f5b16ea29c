// Aligned plain-text tables for human output (the --json output carries the same data).

/**
 * Renders rows as an aligned table: text columns left-aligned, numeric-looking columns right-aligned.
 * @param {string[]} header
 * @param {(string|number|null|undefined)[][]} rows
 * @param {{ indent?: string }} [opts]
 * @returns {string}
 */
export function table (header, rows, { indent = '' } = {}) {
  const cells = [header, ...rows.map(r => r.map(c => (c === null || c === undefined ? '-' : String(c))))]
  const widths = header.map((_, j) => Math.max(...cells.map(r => (r[j] ?? '').length)))
  const numeric = header.map((_, j) => rows.length > 0 && rows.every(r => /^[-+]?[\d,.]+(e[-+]?\d+)?%?$|^-$|^\[.*\]$/.test(String(r[j] ?? '-'))))
  const line = r => indent + r.map((c, j) => (numeric[j] ? c.padStart(widths[j]) : c.padEnd(widths[j]))).join('  ').trimEnd()
  return [line(cells[0]), indent + widths.map(w => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n')
}
