// The operator webhook (issue 27 item 5): every node configured with
// BASEPLANE_OPERATOR_WEBHOOK_URL posts the catalogue's pending events to it,
// signed per Standard Webhooks (lib/webhooks.ts, the implementation Auth's
// send email hook uses). The events table is the outbox: a node claims one due
// event with `for update skip locked` (so each event is posted by one node at
// a time, and the nodes share the backlog), posts it, and records the attempt
// before its transaction ends. A node that dies mid-post ends its transaction
// with its connection, and the event is posted again: at least once, never
// lost. Receivers deduplicate by `webhook-id`, which stays the same across
// attempts.
//
// The body (application/json):
//   {"type": "project.suspended", "timestamp": "<when it happened, ISO 8601>",
//    "data": {"event_id": 42, "ref": "abcdefghijklmnopqrst", ...what the kind carries (events.ts)}}
import pg from 'pg'
import { AnswerBoundError, fetchBounded } from '../lib/bounded-body.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { log } from '../lib/log.ts'
import { signedWebhookHeaders, webhookSecretBytes } from '../lib/webhooks.ts'
import { claimDueEvent, recordDelivered, recordFailedAttempt, type EventRow } from './db/events.ts'

/**
 * Seconds before each retry after a failed attempt (Standard Webhooks'
 * suggested schedule): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. After the
 * last, the event is `failed` and stays readable with its last error.
 */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const
/** One attempt's bound: a receiver that does not answer in time has failed it. */
export const ATTEMPT_TIMEOUT_MS = 10_000
/** How often a node looks for due events. */
const POLL_MS = 2000
/** Events one look posts at most, one after another, before it yields to the next look. */
const BATCH = 50

export interface EventOutboxOptions {
  url: string
  /** `whsec_<base64>` (config BASEPLANE_OPERATOR_WEBHOOK_SECRET, already checked). */
  secret: string
  pollMillis?: number
}

/** The webhook's body for an event (documented above and in the README). */
export function webhookPayload(event: Pick<EventRow, 'id' | 'kind' | 'ref' | 'at' | 'data' | 'actor'>): string {
  return JSON.stringify({ type: event.kind, timestamp: event.at.toISOString(), actor: event.actor, data: { event_id: Number(event.id), ref: event.ref, ...event.data } })
}

export class EventOutbox {
  readonly #pool: pg.Pool
  readonly #url: string
  readonly #secrets: Buffer[]
  readonly #pollMillis: number
  #timer: NodeJS.Timeout | undefined
  #running: Promise<number> | undefined
  #stopped = false

  /** `catalogueUrl`: the outbox keeps a connection of its own (its claim holds a transaction open during a post). */
  constructor(catalogueUrl: string, options: EventOutboxOptions) {
    this.#pool = new pg.Pool({ connectionString: catalogueUrl, max: 1, application_name: 'baseplane-event-outbox', connectionTimeoutMillis: 5000 })
    this.#pool.on('error', () => {})
    // A claim's connection ended by the server mid-post (a restart) must not throw from an 'error' event: the post's transaction fails instead.
    this.#pool.on('connect', (client) => client.on('error', () => {}))
    this.#url = options.url
    this.#secrets = [webhookSecretBytes(options.secret)!]
    this.#pollMillis = options.pollMillis ?? POLL_MS
  }

  start(): void {
    const tick = () => {
      this.#timer = setTimeout(async () => {
        await this.deliverDue().catch((error: unknown) => log.info('could not read the events due for the operator webhook; trying again', { error: (error as Error).message }))
        if (!this.#stopped) tick()
      }, this.#pollMillis)
      this.#timer.unref()
    }
    tick()
  }

  /** Posts the due events (at most a batch); answers how many were attempted. A look already running is joined. */
  deliverDue(): Promise<number> {
    this.#running ??= this.#deliver().finally(() => (this.#running = undefined))
    return this.#running
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#running?.catch(() => {})
    await this.#pool.end().catch(() => {})
  }

  async #deliver(): Promise<number> {
    let attempted = 0
    while (attempted < BATCH && !this.#stopped) {
      const posted = await withPoolTransaction(this.#pool, async (client) => {
        const event = await claimDueEvent(client)
        if (event === undefined) return false
        const failure = await this.#post(event)
        if (failure === undefined) await recordDelivered(client, event.id)
        else {
          const retryIn = RETRY_SCHEDULE_SECONDS[event.attempts]
          await recordFailedAttempt(client, event.id, failure, retryIn)
          log.info(retryIn === undefined ? 'the operator webhook failed an event for the last time; it is kept as failed' : 'the operator webhook failed an event; it is posted again later', {
            event: event.id,
            kind: event.kind,
            attempt: event.attempts + 1,
            error: failure,
            retryInSeconds: retryIn,
          })
        }
        return true
      })
      if (!posted) break
      attempted++
    }
    return attempted
  }

  /** One attempt: undefined when the receiver took it (any 2xx), else what went wrong. */
  async #post(event: EventRow): Promise<string | undefined> {
    const body = webhookPayload(event)
    const headers = signedWebhookHeaders(this.#secrets, `evt_${event.id}`, Math.floor(Date.now() / 1000), body)
    try {
      // The body is never read (lib/bounded-body.ts): the status decides, and a receiver's endless or
      // trickled answer is dropped with its connection as soon as the headers are in.
      const answer = await fetchBounded(
        this.#url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'Baseplane-Webhooks', ...headers }, body, redirect: 'manual' },
        { maxBytes: 0, timeoutMs: ATTEMPT_TIMEOUT_MS },
      )
      await answer.discard()
      return answer.status >= 200 && answer.status < 300 ? undefined : `HTTP ${answer.status}`
    } catch (error) {
      return error instanceof AnswerBoundError ? `no answer within ${ATTEMPT_TIMEOUT_MS} ms` : `unreachable: ${describeCause(error)}`
    }
  }
}

/** fetch's "fetch failed" hides the cause (ECONNREFUSED, a DNS failure): the cause's code or message, short. */
function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return (cause?.code ?? cause?.message ?? (error as Error).message ?? 'unknown').slice(0, 200)
}
