// One health probe's bound and how long its result stands: the platform's
// /health (data-plane/platform-health.ts) and each project's
// (project-pool-probe.ts) never wait past it for a database that hangs
// instead of refusing, and probe again once the result is older.

export interface ProbeTiming {
  /** A probe that has not answered by then counts as "does not answer". */
  probeTimeoutMs: number
  /** How long a probe's result stands before the next probe. */
  cacheMs: number
}

/** A second each: load balancers poll /health often, under load. */
export const PROBE_TIMING: ProbeTiming = { probeTimeoutMs: 1000, cacheMs: 1000 }

/** A probe's result: whether the database answered, and when (ms since the epoch). */
export interface Probed {
  up: boolean
  at: number
}

/** Awaits `work` for at most `timeoutMs`: resolves with why it failed or timed out, or undefined when it answered. */
export async function probeFailure(work: Promise<unknown>, timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([work, deadline])
    return undefined
  } catch (error) {
    return error
  } finally {
    clearTimeout(timer)
  }
}
