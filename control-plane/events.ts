// Events for the host (issue 27 item 5): what happened to the fleet's projects,
// appended to the catalogue in the transaction of the change (db/events.ts),
// read by `baseplane events` and `GET /platform/v1/events`, and posted to the
// operator webhook by any node (event-outbox.ts).
import { AsyncLocalStorage } from 'node:async_hooks'
import { platformErrors } from '../lib/errors.ts'
import { isRef } from '../lib/refs.ts'
import type { ControlPlane } from './control-plane.ts'
import * as db from './db/events.ts'
import type { Queryable } from './db/queryable.ts'

/**
 * The kinds of event, and what each carries in `data` besides the ref. An open
 * list: a new kind (the quotas' `quota.crossed`) is added here, and the
 * catalogue's check admits any dotted lowercase name, so it needs no migration.
 */
export const EVENT_KINDS = [
  /** `{name, plan}` */
  'project.created',
  /** `{name, plan}` */
  'project.deleted',
  /** `{from, to}`: the plans before and after */
  'project.plan_changed',
  /** `{reason}`: the operator's */
  'project.suspended',
  /** `{idle_days, last_request_at}`: the fleet's idle time, and the last request seen (null: none since it was made or resumed) */
  'project.paused',
  /** `{from: 'suspended' | 'paused', by: 'operator' | 'request'}` */
  'project.resumed',
  /** `{quota, percent: 80 | 100, used, figure, policy: 'bill' | 'cap', month: 'YYYY-MM', resets_at}` (resets_at null for the database size) */
  'quota.crossed',
  /** `{email, role}`: a person invited to the project (a new member, or one who had other projects) */
  'member.invited',
  /** `{email, from, to}` */
  'member.role_changed',
  /** `{email, role}`: the membership ended (the member keeps their other projects) */
  'member.removed',
  /** `{email}`: an invitation accepted (the password set) */
  'member.joined',
  /** `{method, path}`: a change a member made through the admin API or the dashboard that reports no event of its own (settings, keys, Storage...) */
  'project.changed',
] as const satisfies readonly string[]

export type EventKind = (typeof EVENT_KINDS)[number]

const actors = new AsyncLocalStorage<string>()

/**
 * Runs `work` as `actor` (access.ts actorOf): every event it appends records
 * who made the change. The admin API, the dashboard and the CLI wrap each
 * operation in it, so the operations need not carry the caller down to
 * appendEvent; outside it (the pause sweep, the quotas) the actor is null.
 */
export function withActor<T>(actor: string, work: () => Promise<T>): Promise<T> {
  return actors.run(actor, work)
}

/**
 * Appends an event in the caller's transaction (`client`), so it exists
 * exactly when the change it reports was committed; `actor` defaults to the
 * one withActor() runs the operation as.
 */
export async function appendEvent(client: Queryable, kind: EventKind, ref: string, data: Record<string, unknown> = {}, actor: string | null = actors.getStore() ?? null): Promise<void> {
  await db.insertEvent(client, kind, ref, data, actor)
}

/** An event as the admin API and the CLI show it. */
export interface EventView {
  id: number
  kind: string
  ref: string
  at: string
  /** Who made the change: `operator`, `member:<email>`, or null (the platform itself). */
  actor: string | null
  data: Record<string, unknown>
  /** The operator webhook's delivery: `none` (no webhook then), `pending`, `delivered`, `failed` (gave up). */
  delivery: { state: db.EventRow['delivery']; attempts: number; next_attempt_at: string | null; last_error: string | null; delivered_at: string | null }
}

export interface EventPage {
  events: EventView[]
  /** Pass as `before` for the next (older) page; null on the last. */
  next_before: number | null
}

export interface EventFilterInput {
  project?: string
  kind?: string
  since?: string
  limit?: number
  before?: number
}

const DEFAULT_LIMIT = 50
const MAX_LIMIT = 1000

/** An ISO 8601 date or date-time: `2026-05-01` or `2026-05-01T12:00:00Z` (with an offset or Z when it has a time). */
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

/** The filters checked, each refusal naming its field (400 invalid_argument). */
export function eventFilter(input: EventFilterInput): db.EventFilter {
  const { project, kind, since, limit, before } = input
  if (project !== undefined && !isRef(project)) {
    throw platformErrors.invalidArgument(`project must be a project ref (3 to 40 lowercase letters and digits), got ${JSON.stringify(project.slice(0, 40))}`, 'project')
  }
  if (kind !== undefined && !(EVENT_KINDS as readonly string[]).includes(kind)) {
    throw platformErrors.invalidArgument(`kind must be one of ${EVENT_KINDS.join(', ')}; got ${JSON.stringify(kind.slice(0, 40))}`, 'kind')
  }
  let from: Date | null = null
  if (since !== undefined) {
    from = ISO.test(since) ? new Date(since) : new Date(NaN)
    if (Number.isNaN(from.getTime())) {
      throw platformErrors.invalidArgument(`since must be an ISO 8601 date or time such as 2026-05-01 or 2026-05-01T12:00:00Z, got ${JSON.stringify(since.slice(0, 40))}`, 'since')
    }
  }
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT)) {
    throw platformErrors.invalidArgument(`limit must be a whole number from 1 to ${MAX_LIMIT}, got ${limit}`, 'limit')
  }
  if (before !== undefined && !(Number.isInteger(before) && before >= 1)) throw platformErrors.invalidArgument(`before must be an event id, got ${before}`, 'before')
  return { ref: project ?? null, kind: kind ?? null, since: from, before: before ?? null, limit: limit ?? DEFAULT_LIMIT }
}

function eventView(row: db.EventRow): EventView {
  return {
    id: Number(row.id),
    kind: row.kind,
    ref: row.ref,
    at: row.at.toISOString(),
    actor: row.actor,
    data: row.data,
    delivery: {
      state: row.delivery,
      attempts: row.attempts,
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      last_error: row.last_error,
      delivered_at: row.delivered_at?.toISOString() ?? null,
    },
  }
}

/**
 * The fleet's events, newest first, filtered and paged by id. A project's
 * events outlive it (a deleted project's are kept), so `project` need not
 * name a project that exists.
 */
export async function listEvents(controlPlane: ControlPlane, input: EventFilterInput = {}): Promise<EventPage> {
  const filter = eventFilter(input)
  const rows = await db.events(controlPlane.catalogue, { ...filter, limit: filter.limit + 1 })
  const events = rows.slice(0, filter.limit).map(eventView)
  return { events, next_before: rows.length > filter.limit ? events[events.length - 1]!.id : null }
}
