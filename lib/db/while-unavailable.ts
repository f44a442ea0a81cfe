// A start-up step that meets its database away (refused, ended, "the database
// system is starting up": what classifyDatabaseError calls unavailable) runs
// again with backoff instead of ending the process: the embedded PostgreSQL's
// supervisor is starting it again (lib/db/embedded-supervisor.ts). Only steps
// that are safe to run again (each statement or transaction all or nothing)
// go through here. Any other error is the step's own and is thrown at once.
import { BaseplaneError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors.ts'
import { describeError, log } from '../log.ts'
import { classifyDatabaseError } from './database-errors.ts'

export interface WhileUnavailable {
  /** How long the step may keep meeting an unavailable database, from its first failure; Infinity: until it works or `stopped`. */
  deadlineMs: number
  firstDelayMs?: number
  maxDelayMs?: number
  /** Asked before each new attempt: true ends the wait (the process is stopping), throwing the last failure. */
  stopped?: () => boolean
}

/** A database away, or a catalogue error that says so (503: the pools' busy, the control plane's own). */
function unavailable(error: unknown): boolean {
  if (BaseplaneError.is(error)) return error.status === 503 && error.code !== 'product_disabled'
  return classifyDatabaseError(error) === 'unavailable'
}

/**
 * Runs `step` until it succeeds, again after each unavailable failure (one log
 * line when the wait begins, one when it ends). Past the deadline, throws
 * `database_unavailable` naming what was being done and the last cause.
 */
export async function whileUnavailable<T>(what: string, step: () => Promise<T>, options: WhileUnavailable): Promise<T> {
  const { deadlineMs, firstDelayMs = 250, maxDelayMs = 2000, stopped = () => false } = options
  let delay = firstDelayMs
  let since: number | undefined
  let failures = 0
  for (;;) {
    try {
      const result = await step()
      if (since !== undefined) log.info('the platform database answers again', { step: what, waitedMs: Date.now() - since, failures })
      return result
    } catch (error) {
      if (!unavailable(error)) throw error
      failures++
      since ??= Date.now()
      if (failures === 1) log.error('the platform database is unavailable; trying again', undefined, { step: what, error: describeError(error) })
      if (stopped()) throw error
      if (Date.now() - since >= deadlineMs) {
        throw new BaseplaneError(
          'database_unavailable',
          `the platform database did not answer for ${Math.round(deadlineMs / 1000)} s while ${what}: ${describeError(error)}`,
          503,
          undefined,
          UNAVAILABLE_RETRY_AFTER_SECONDS,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, delay))
      delay = Math.min(delay * 2, maxDelayMs)
    }
  }
}
