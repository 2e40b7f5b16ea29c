// A sampler with one more series beside it: something read every interval on this host (HAProxy's figures, the CPU of
// processes by role) and kept in the timeline under a key of its own.

/**
 * Wraps a sampler: every interval while it runs, `read(seconds since the last reading)` (sync or async; null or
 * undefined: nothing this time) becomes a sample `{ t, ...value }`; the timeline the sampler stops with gets them as
 * `timeline[key] = { intervalMs, samples }`. The first reading, at start, only sets a baseline and is not kept; a
 * reading still pending when the next one is due is not asked again.
 * @template {{ start(): any, stop(): Promise<any> }} S
 * @param {S} sampler
 * @param {string} key
 * @param {(seconds: number) => any} read
 * @param {{ intervalMs?: number }} [opts]
 * @returns {S}
 */
export function withSamples (sampler, key, read, { intervalMs = 1000 } = {}) {
  /** @type {{ t: number }[]} */
  const samples = []
  let timer = null
  let last = 0
  let reading = false
  const tick = async () => {
    if (reading) return
    reading = true
    const now = Date.now()
    try {
      const value = await read((now - last) / 1000)
      if (value && timer) samples.push({ t: now, ...value })
    } catch {
      // a reading that fails is a sample missing, not a run failed
    } finally {
      last = now
      reading = false
    }
  }
  return {
    ...sampler,
    async start () {
      await sampler.start()
      last = Date.now()
      await Promise.resolve(read(0)).catch(() => {})
      timer = setInterval(tick, intervalMs)
      timer.unref()
    },
    async stop () {
      clearInterval(timer)
      timer = null
      const timeline = await sampler.stop()
      return timeline && { ...timeline, [key]: { intervalMs, samples: samples.slice() } }
    }
  }
}
