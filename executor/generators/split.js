// How one run's load is shared by its generators: the connections (closed model) or the rate (open model) split as
// evenly as they go, each generator its own part.
import { badFlag } from '../../lib/errors.js'

/**
 * The part of the load each of k generators drives: C connections as whole numbers that differ by one at most (the
 * first ones take the remainder), or R requests/s in k equal parts. A generator with no connection is refused.
 * @param {{ concurrency?: number, rate?: number }} load
 * @param {number} k generators
 * @param {{ flag?: string }} [opts] the flag that asked for k generators, for the error
 * @returns {{ concurrency?: number, rate?: number }[]}
 */
export function splitLoad ({ concurrency, rate }, k, { flag = '--load-nodes' } = {}) {
  if (!Number.isInteger(k) || k < 1) throw badFlag(flag, `${k} is not a number of generators (a whole number >= 1)`)
  if (rate !== undefined && rate !== null) return Array.from({ length: k }, () => ({ rate: rate / k }))
  if (!Number.isInteger(concurrency) || concurrency < 1) throw badFlag('--concurrency', `${concurrency} is not a positive whole number`)
  if (concurrency < k) {
    throw badFlag(flag, `${k} generators cannot share ${concurrency} connection${concurrency === 1 ? '' : 's'}: each needs one at least; ` +
      `raise --concurrency to ${k} or more, or use fewer generators`)
  }
  const base = Math.floor(concurrency / k)
  const extra = concurrency - base * k
  return Array.from({ length: k }, (_, i) => ({ concurrency: base + (i < extra ? 1 : 0) }))
}
