// Waiting for what happens a moment later (a write batched every 200 ms, a
// server coming back), without a fixed sleep.

/**
 * Polls `check` until it gives a value (anything but undefined or false) and
 * returns it; throws, naming `what`, when `ms` pass without one.
 */
export async function eventually<V>(what: string, ms: number, check: () => Promise<V | undefined | false>, everyMs = 50): Promise<V> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
