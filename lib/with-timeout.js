// One bound for any promise: a daemon, node or registry that does not answer must not stall the caller.

/**
 * Resolves or rejects as the promise does, or rejects with an ETIMEDOUT error after ms; the timer never outlives it.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T>}
 */
export function withTimeout (promise, ms) {
  let timer
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms)
  })
  return /** @type {Promise<T>} */ (Promise.race([promise, late]).finally(() => clearTimeout(timer)))
}

/**
 * Waits for the promise to settle, or ms at most, whichever comes first; never rejects, and the timer never outlives
 * the wait (a bare `Promise.race([p, sleep(ms)])` keeps the process alive for the rest of ms after p settles).
 * @param {Promise<unknown>} promise
 * @param {number} ms
 * @returns {Promise<void>}
 */
export async function waitAtMost (promise, ms) {
  await withTimeout(promise, ms).catch(() => {})
}
