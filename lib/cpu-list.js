// A list of cores written the kernel's way ("0-3,6"): read and written; the bottom layer's, for the option table
// (--server-cpus) and for what reads /proc and /sys (rc/cpu-affinity.js).

/**
 * A kernel CPU list ("0-3,6,8-9") as its core numbers, ascending; null when the text is not one.
 * @param {string} text
 * @returns {number[] | null}
 */
export function parseCpuList (text) {
  const out = new Set()
  for (const part of String(text).trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim())
    if (!m) return null
    const [a, b] = [Number(m[1]), Number(m[2] ?? m[1])]
    if (b < a || b - a > 65535) return null
    for (let c = a; c <= b; c++) out.add(c)
  }
  return [...out].sort((x, y) => x - y)
}

/**
 * Cores written as the kernel writes them: [0, 1, 2, 5] is "0-2,5".
 * @param {readonly number[]} cores
 */
export function cpuListText (cores) {
  const sorted = [...new Set(cores)].sort((a, b) => a - b)
  const parts = []
  for (let i = 0; i < sorted.length; i++) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
    parts.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`)
    i = j
  }
  return parts.join(',')
}
