// Exact latency statistics from a growable histogram of integer milliseconds: O(1) memory per sample.
import { fail } from '../../lib/messages.js'

/** Latencies up to this many ms live in the dense array (4 MiB at most); longer ones (over 17 min) in a sparse map. */
const DENSE_LIMIT = 1 << 20
/**
 * A histogram's bounds (docs/SECURITY.md, "Bounded parsers"): its completions' end times span at most MAX_SPAN_TENTHS
 * tenths of a second (24 h: 3.3 MiB of slots), and at most MAX_SPARSE distinct latencies over DENSE_LIMIT are kept.
 * Past either, add() throws NS_ERR_BAD_FILE with details.bound (the JTL reader names the file and the row's line):
 * one histogram holds at most ~4 + 3.3 MiB of arrays, and maps of at most MAX_SPARSE and MAX_SPAN_TENTHS entries.
 */
export const MAX_SPAN_TENTHS = 24 * 3600 * 10
export const MAX_SPARSE = 1 << 16

/** @param {string} what */
const spanError = (what) => fail('HISTOGRAM_SPAN_TOO_LONG', { what, hours: MAX_SPAN_TENTHS / 36000 }, { details: { bound: 'span' } })

/**
 * One group of samples (a label, or the total): counts, sums, extremes and an exact histogram of `elapsed`.
 * Percentiles follow JMeter 5.6's dashboard (statistics.json): commons-math3 `Percentile` with its default
 * `EstimationType.LEGACY`: pos = p (n + 1) / 100; pos < 1 -> min; pos >= n -> max; otherwise
 * x[floor(pos)] + (pos - floor(pos)) (x[floor(pos) + 1] - x[floor(pos)]) over the sorted values (1-based).
 */
export class LatencyHistogram {
  constructor (initialSize = 256) {
    /** @type {Uint32Array} counts[ms] */
    this.counts = new Uint32Array(initialSize)
    /** @type {Map<number, number> | null} counts of latencies >= DENSE_LIMIT */
    this.sparse = null
    this.count = 0
    this.sum = 0
    this.min = Infinity
    this.max = -Infinity
    this.errors = 0
    this.bytes = 0
    this.sentBytes = 0
    this.firstStart = Infinity
    this.lastEnd = -Infinity
    /** completions per tenth of a second: slots[i] counts the samples that ended in tenth firstSlot + i */
    this.slots = new Uint32Array(0)
    this.firstSlot = Infinity
    this.firstEnd = Infinity
    /** @type {Map<number, number> | null} failed completions per tenth of a second (what a node loss costs) */
    this.errorSlots = null
  }

  /**
   * Adds one sample. `elapsed` must be a non-negative integer (JTL elapsed is whole ms).
   * @param {number} start timeStamp (ms since epoch, the sample's start)
   * @param {number} elapsed ms
   * @param {boolean} success
   * @param {number} bytes
   * @param {number} sentBytes
   */
  add (start, elapsed, success, bytes, sentBytes) {
    // what can throw (a bound) comes before any change: a refused sample leaves the histogram as it was
    if (elapsed >= DENSE_LIMIT && this.sparse !== null && this.sparse.size >= MAX_SPARSE && !this.sparse.has(elapsed)) {
      throw fail('LATENCIES_TOO_MANY', { max: MAX_SPARSE, denseMs: DENSE_LIMIT }, { details: { bound: 'latencies' } })
    }
    const end = start + elapsed
    const i = Math.floor(end / 100) - this.firstSlot
    if (i >= 0 && i < this.slots.length) this.slots[i]++
    else this.countSlot(Math.floor(end / 100), 1)
    if (elapsed < this.counts.length) this.counts[elapsed]++
    else this.addSlow(elapsed)
    this.count++
    this.sum += elapsed
    if (elapsed < this.min) this.min = elapsed
    if (elapsed > this.max) this.max = elapsed
    if (!success) this.countError(start + elapsed)
    this.bytes += bytes
    this.sentBytes += sentBytes
    if (start < this.firstStart) this.firstStart = start
    if (end > this.lastEnd) this.lastEnd = end
    if (end < this.firstEnd) this.firstEnd = end
  }

  /** @param {number} end the failed sample's end (ms since the epoch) */
  countError (end) {
    this.errors++
    const slot = Math.floor(end / 100)
    this.errorSlots ??= new Map()
    this.errorSlots.set(slot, (this.errorSlots.get(slot) ?? 0) + 1)
  }

  /**
   * Completions and failed ones by end time, to the tenth of a second: the tenths that start in [from, to).
   * @param {number} from ms since the epoch
   * @param {number} to
   * @returns {{ requests: number, errors: number }}
   */
  endedIn (from, to) {
    let requests = 0
    let errors = 0
    for (let slot = Math.ceil(from / 100); slot * 100 < to; slot++) {
      const i = slot - this.firstSlot
      if (i >= 0 && i < this.slots.length) requests += this.slots[i]
      errors += this.errorSlots?.get(slot) ?? 0
    }
    return { requests, errors }
  }

  /**
   * Counts n completions in a tenth of a second, growing the array (to twice its size at least) when the tenth is
   * outside it: rows come roughly in time order, so it grows rarely, or shifts for a row that ended before any other.
   * @param {number} slot the tenth of a second since the epoch
   * @param {number} n
   */
  countSlot (slot, n) {
    let i = slot - this.firstSlot
    if (!(i >= 0 && i < this.slots.length)) {
      if (!Number.isSafeInteger(slot) || slot < 0) throw spanError(`an end time of ${slot * 100} ms`)
      const first = Math.min(this.firstSlot, slot)
      const lastUsed = this.firstSlot === Infinity ? slot : Math.max(slot, this.lastSlotUsed())
      if (lastUsed - first >= MAX_SPAN_TENTHS) {
        throw spanError(`end times from ${first * 100} to ${lastUsed * 100} ms since the epoch span more than ${MAX_SPAN_TENTHS / 36000} h`)
      }
      const shift = this.firstSlot === Infinity ? 0 : this.firstSlot - first
      const grown = new Uint32Array(Math.min(Math.max(slot - first + 1, shift + this.slots.length, this.slots.length * 2, 256), MAX_SPAN_TENTHS))
      grown.set(this.slots, shift)
      this.slots = grown
      this.firstSlot = first
      i = slot - first
    }
    this.slots[i] += n
  }

  /**
   * Completions in each whole second (to a tenth of a second) of a window, the last partial second left out: the
   * throughput second by second. Without a window, from the first completion to the last.
   * @param {{ from?: number, to?: number }} [window] ms since the epoch
   * @returns {number[]}
   */
  perSecond ({ from = this.firstEnd, to = this.lastEnd } = {}) {
    if (this.firstSlot === Infinity || !(to > from)) return []
    const first = Math.floor(from / 100) - this.firstSlot
    const count = (i) => (i >= 0 && i < this.slots.length ? this.slots[i] : 0)
    return Array.from({ length: Math.floor((to - from) / 1000) }, (_, s) => {
      let n = 0
      for (let i = first + s * 10; i < first + s * 10 + 10; i++) n += count(i)
      return n
    })
  }

  /**
   * Completions in each whole tenth of a second of a window (the tenths that start at or after the one `from` falls
   * in and end by `to`): the throughput tenth by tenth, what the steady-state judgement reads
   * (analyzer/samples/steady-state.js). Without a window, from the first completion to the last.
   * @param {{ from?: number, to?: number }} [window] ms since the epoch
   * @returns {number[]}
   */
  perTenth ({ from = this.firstEnd, to = this.lastEnd } = {}) {
    if (this.firstSlot === Infinity || !(to > from)) return []
    const first = Math.floor(from / 100) - this.firstSlot
    return Array.from({ length: Math.floor((to - from) / 100) }, (_, i) => {
      const j = first + i
      return j >= 0 && j < this.slots.length ? this.slots[j] : 0
    })
  }

  /** The last tenth that holds a completion (the slots array may run past it). */
  lastSlotUsed () {
    let last = this.slots.length - 1
    while (last > 0 && this.slots[last] === 0) last--
    return this.firstSlot + last
  }

  /** @param {number} elapsed */
  addSlow (elapsed) {
    if (elapsed >= DENSE_LIMIT) {
      this.sparse ??= new Map()
      this.sparse.set(elapsed, (this.sparse.get(elapsed) ?? 0) + 1)
      return
    }
    let size = this.counts.length
    while (size <= elapsed) size *= 2
    const grown = new Uint32Array(Math.min(size, DENSE_LIMIT))
    grown.set(this.counts)
    this.counts = grown
    this.counts[elapsed]++
  }

  /**
   * Adds every sample of another histogram into this one.
   * @param {LatencyHistogram} other
   */
  merge (other) {
    if (other.count === 0) return this
    if (other.counts.length > this.counts.length) {
      const grown = new Uint32Array(other.counts.length)
      grown.set(this.counts)
      this.counts = grown
    }
    const c = other.counts
    for (let i = 0; i < c.length; i++) if (c[i]) this.counts[i] += c[i]
    if (other.sparse) {
      this.sparse ??= new Map()
      for (const [v, n] of other.sparse) this.sparse.set(v, (this.sparse.get(v) ?? 0) + n)
    }
    this.count += other.count
    this.sum += other.sum
    this.min = Math.min(this.min, other.min)
    this.max = Math.max(this.max, other.max)
    this.errors += other.errors
    this.bytes += other.bytes
    this.sentBytes += other.sentBytes
    this.firstStart = Math.min(this.firstStart, other.firstStart)
    other.slots.forEach((n, i) => { if (n) this.countSlot(other.firstSlot + i, n) })
    if (other.errorSlots) {
      this.errorSlots ??= new Map()
      for (const [slot, n] of other.errorSlots) this.errorSlots.set(slot, (this.errorSlots.get(slot) ?? 0) + n)
    }
    this.firstEnd = Math.min(this.firstEnd, other.firstEnd)
    this.lastEnd = Math.max(this.lastEnd, other.lastEnd)
    return this
  }

  /**
   * The k-th smallest latency (1-based) for each of the ascending ranks given, in one pass.
   * @param {number[]} ranks ascending, each in 1..count
   * @returns {number[]}
   */
  valuesAtRanks (ranks) {
    const out = new Array(ranks.length)
    let r = 0
    let seen = 0
    const c = this.counts
    for (let v = 0; v < c.length && r < ranks.length; v++) {
      if (c[v] === 0) continue
      seen += c[v]
      while (r < ranks.length && ranks[r] <= seen) out[r++] = v
    }
    if (r < ranks.length && this.sparse) {
      for (const v of [...this.sparse.keys()].sort((a, b) => a - b)) {
        seen += this.sparse.get(v)
        while (r < ranks.length && ranks[r] <= seen) out[r++] = v
      }
    }
    return out
  }

  /**
   * Percentiles by JMeter's definition (commons-math3 Percentile, LEGACY estimation); null when empty.
   * @param {number[]} ps percentiles in (0, 100]
   * @returns {(number|null)[]}
   */
  percentiles (ps) {
    const n = this.count
    if (n === 0) return ps.map(() => null)
    // Each percentile needs at most two neighbouring order statistics.
    const plan = ps.map(p => {
      const pos = p * (n + 1) / 100
      if (n === 1 || pos < 1) return { lo: 1, hi: 1, d: 0 }
      if (pos >= n) return { lo: n, hi: n, d: 0 }
      const f = Math.floor(pos)
      return { lo: f, hi: f + 1, d: pos - f }
    })
    const ranks = [...new Set(plan.flatMap(x => [x.lo, x.hi]))].sort((a, b) => a - b)
    const values = this.valuesAtRanks(ranks)
    const at = new Map(ranks.map((k, i) => [k, values[i]]))
    return plan.map(({ lo, hi, d }) => at.get(lo) + d * (at.get(hi) - at.get(lo)))
  }

  /**
   * A compact copy for a file: sums and extremes, the latency counts as sparse pairs (the ms that occur and how often),
   * the completions per tenth of a second from the first tenth that has one, the failed ones as sparse pairs.
   * `LatencyHistogram.fromJSON` gives back a histogram whose every figure is the same.
   */
  toJSON () {
    const ms = []
    const n = []
    this.counts.forEach((c, v) => { if (c) { ms.push(v); n.push(c) } })
    for (const [v, c] of [...(this.sparse ?? [])].sort((a, b) => a[0] - b[0])) { ms.push(v); n.push(c) }
    let last = this.slots.length
    while (last > 0 && this.slots[last - 1] === 0) last--
    const finite = (x) => (Number.isFinite(x) ? x : null)
    const errorSlots = [...(this.errorSlots ?? [])].sort((a, b) => a[0] - b[0])
    return {
      count: this.count,
      sum: this.sum,
      min: finite(this.min),
      max: finite(this.max),
      errors: this.errors,
      bytes: this.bytes,
      sentBytes: this.sentBytes,
      firstStart: finite(this.firstStart),
      firstEnd: finite(this.firstEnd),
      lastEnd: finite(this.lastEnd),
      latency: { ms, n },
      tenths: { first: finite(this.firstSlot), n: Array.from(this.slots.subarray(0, last)) },
      errorTenths: { at: errorSlots.map(e => e[0]), n: errorSlots.map(e => e[1]) }
    }
  }

  /**
   * A histogram from its `toJSON` copy.
   * @param {ReturnType<LatencyHistogram['toJSON']>} j
   * @returns {LatencyHistogram}
   */
  static fromJSON (j) {
    const { ms, n } = j.latency
    const dense = ms.filter(v => v < DENSE_LIMIT)
    let size = 256
    while (dense.length && size <= dense[dense.length - 1]) size *= 2
    const h = new LatencyHistogram(Math.min(size, DENSE_LIMIT))
    for (let i = 0; i < ms.length; i++) {
      if (ms[i] < DENSE_LIMIT) h.counts[ms[i]] = n[i]
      else (h.sparse ??= new Map()).set(ms[i], n[i])
    }
    const orInf = (x, inf) => (x === null ? inf : x)
    Object.assign(h, {
      count: j.count,
      sum: j.sum,
      min: orInf(j.min, Infinity),
      max: orInf(j.max, -Infinity),
      errors: j.errors,
      bytes: j.bytes,
      sentBytes: j.sentBytes,
      firstStart: orInf(j.firstStart, Infinity),
      firstEnd: orInf(j.firstEnd, Infinity),
      lastEnd: orInf(j.lastEnd, -Infinity)
    })
    if (j.tenths.first !== null) {
      h.slots = Uint32Array.from(j.tenths.n)
      h.firstSlot = j.tenths.first
    }
    if (j.errorTenths.at.length) h.errorSlots = new Map(j.errorTenths.at.map((slot, i) => [slot, j.errorTenths.n[i]]))
    return h
  }
}
