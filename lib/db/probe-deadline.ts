// One health probe's bound: the platform's /health (data-plane/platform-health.ts)
// and each project's (project-pool-probe.ts) never wait past it for a database
// that hangs instead of refusing.

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
