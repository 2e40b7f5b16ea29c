// A one-line progress bar on a terminal; silent when output is not a TTY or --json is set.

/**
 * @param {{ enabled: boolean, stream?: NodeJS.WriteStream }} opts
 */
export function createProgress ({ enabled, stream = process.stderr }) {
  let shown = false
  return {
    /** @param {{ phase: string, elapsed: number, total: number, requests: number, errors: number }} p */
    update (p) {
      if (!enabled) return
      const width = 24
      const frac = p.total > 0 ? Math.min(1, p.elapsed / p.total) : 0
      const done = Math.round(frac * width)
      const bar = '#'.repeat(done) + '.'.repeat(width - done)
      const line = `${p.phase.padEnd(6)} [${bar}] ${String(Math.round(frac * 100)).padStart(3)}%  ${p.elapsed.toFixed(0)}/${p.total.toFixed(0)} s  ` +
        `${p.requests.toLocaleString('en')} req  ${p.errors.toLocaleString('en')} err`
      stream.write(`\r${line}\x1b[K`)
      shown = true
    },
    done () {
      if (shown) stream.write('\r\x1b[K')
      shown = false
    }
  }
}

/**
 * A sweep's overall bar (runs done, time left) under the one-line-per-run log; the bar only on a terminal.
 * @param {{ enabled: boolean, stream?: NodeJS.WriteStream }} opts
 */
export function createSweepProgress ({ enabled, stream = process.stderr }) {
  let bar = ''
  const draw = () => { if (enabled && bar) stream.write(`\r${bar}\x1b[K`) }
  return {
    /** A line above the bar (the bar is redrawn under it). */
    line (text) {
      if (enabled && bar) stream.write('\r\x1b[K')
      stream.write(text + '\n')
      draw()
    },
    /** @param {{ done: number, total: number, failed: number, remaining: string, current?: string }} p */
    update (p) {
      const width = 24
      const filled = Math.round((p.total ? p.done / p.total : 0) * width)
      bar = `sweep [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total} runs` +
        `${p.failed ? ` · ${p.failed} failed` : ''} · ${p.remaining} left${p.current ? ` · ${p.current}` : ''}`
      bar = bar.slice(0, (stream.columns || 100) - 1) // a wrapped bar could not be redrawn in place
      draw()
    },
    done () {
      if (enabled && bar) stream.write('\r\x1b[K')
      bar = ''
    }
  }
}
