// The throttle's table in the catalogue (sql/catalogue/0005_throttle.sql):
// the statements each data-plane process runs on its timer, and at once for
// an attempt from an address that already has a count. Times cross as
// durations measured on PostgreSQL's clock, never as instants, so processes on
// machines whose clocks disagree still agree on when a window or block ends.
import type pg from 'pg'
import type { ThrottleSettings } from './throttle.ts'

/** This process's counted attempts since its last write, one row per (ref, address). */
export interface FailureBatch {
  refs: string[]
  addresses: string[]
  /** Attempts counted (each either in flight or a failure); never negative. */
  failures: number[]
  /** Whether this process already blocked the address (the shared total may say less). */
  blocks: boolean[]
}

/** An address's shared state after a write. */
export interface SharedCount {
  ref: string
  address: string
  /** Failures and attempts in flight in the current window, every process's included (0 once blocked). */
  failures: number
  windowAgeMs: number
  /** Time left of the block; 0 when not blocked. */
  blockedMs: number
}

export interface SharedBlock {
  ref: string
  address: string
  blockedMs: number
}

const RETURNING = `returning ref, address, failures,
  (extract(epoch from now() - window_start) * 1000)::float8 as window_age_ms,
  coalesce(greatest(0, extract(epoch from blocked_until - now()) * 1000), 0)::float8 as blocked_ms`

// One upsert for the whole batch. A row whose window is over starts again
// from this batch's attempts, and a block the batch asks for resets the count
// as the in-process throttle does. The total alone blocks nothing: it counts
// attempts still in flight, and the process that settles a failure decides
// (data-plane/throttle.ts).
const ADD_FAILURES = `
insert into baseplane.throttle as t (ref, address, window_start, failures, blocked_until, blocked_at)
select u.ref, u.address, now(),
       case when u.blocks then 0 else u.failures end,
       case when u.blocks then now() + make_interval(secs => $6) end,
       case when u.blocks then now() end
  from unnest($1::text[], $2::text[], $3::int[], $4::bool[]) as u(ref, address, failures, blocks)
on conflict (ref, address) do update set (window_start, failures, blocked_until, blocked_at) = (
  select case when s.blocks then now() else s.window_start end,
         case when s.blocks then 0 else s.total end,
         case when s.blocks then greatest(t.blocked_until, now() + make_interval(secs => $6)) else t.blocked_until end,
         case when s.blocks then now() else t.blocked_at end
    from (select w.window_start, w.total, excluded.blocked_at is not null as blocks
            from (select case when t.window_start < now() - make_interval(secs => $5) then now() else t.window_start end as window_start,
                         case when t.window_start < now() - make_interval(secs => $5) then 0 else t.failures end
                           + excluded.failures as total) w) s)
${RETURNING}`

// Attempts counted before they were checked and then not failed: taken off the
// count again (never below zero; a window that is over starts again at zero).
const RELEASE_ATTEMPTS = `
update baseplane.throttle as t
   set (window_start, failures) = (
         case when t.window_start < now() - make_interval(secs => $4) then now() else t.window_start end,
         case when t.window_start < now() - make_interval(secs => $4) then 0 else greatest(0, t.failures - u.released) end)
  from unnest($1::text[], $2::text[], $3::int[]) as u(released_ref, released_address, released)
 where t.ref = u.released_ref and t.address = u.released_address
${RETURNING}`

interface CountRow {
  ref: string
  address: string
  failures: number
  window_age_ms: number
  blocked_ms: number
}

export async function addFailures(catalogue: pg.Pool, batch: FailureBatch, settings: ThrottleSettings): Promise<SharedCount[]> {
  const { rows } = await catalogue.query<CountRow>({
    name: 'baseplane_throttle_add_failures',
    text: ADD_FAILURES,
    values: [batch.refs, batch.addresses, batch.failures, batch.blocks, settings.windowSeconds, settings.blockSeconds],
  })
  return rows.map(toSharedCount)
}

/** Attempts released per (ref, address), one row each. */
export interface ReleaseBatch {
  refs: string[]
  addresses: string[]
  released: number[]
}

export async function releaseAttempts(catalogue: pg.Pool, batch: ReleaseBatch, settings: ThrottleSettings): Promise<SharedCount[]> {
  const { rows } = await catalogue.query<CountRow>({
    name: 'baseplane_throttle_release_attempts',
    text: RELEASE_ATTEMPTS,
    values: [batch.refs, batch.addresses, batch.released, settings.windowSeconds],
  })
  return rows.map(toSharedCount)
}

function toSharedCount(row: CountRow): SharedCount {
  return { ref: row.ref, address: row.address, failures: row.failures, windowAgeMs: row.window_age_ms, blockedMs: row.blocked_ms }
}

interface BlocksRow {
  at: Date
  refs: string[]
  addresses: string[]
  blocked_ms: number[]
}

/** Blocks still in force that were set after `since` (any process's), and the catalogue's time of the look. */
export async function blocksSince(catalogue: pg.Pool, since: Date | undefined): Promise<{ at: Date; blocks: SharedBlock[] }> {
  const { rows } = await catalogue.query<BlocksRow>({
    name: 'baseplane_throttle_blocks_since',
    text: `select now() as at,
                  coalesce(array_agg(ref), '{}') as refs,
                  coalesce(array_agg(address), '{}') as addresses,
                  coalesce(array_agg((extract(epoch from blocked_until - now()) * 1000)::float8), '{}') as blocked_ms
             from baseplane.throttle
            where blocked_at > coalesce($1::timestamptz, '-infinity') and blocked_until > now()`,
    values: [since ?? null],
  })
  const row = rows[0]!
  return { at: row.at, blocks: row.refs.map((ref, i) => ({ ref, address: row.addresses[i]!, blockedMs: row.blocked_ms[i]! })) }
}

/** Deletes rows whose window and block are both over; returns how many. */
export async function sweepExpired(catalogue: pg.Pool, windowSeconds: number): Promise<number> {
  const { rowCount } = await catalogue.query({
    name: 'baseplane_throttle_sweep',
    text: `delete from baseplane.throttle
            where coalesce(blocked_until, '-infinity') < now() and window_start < now() - make_interval(secs => $1)`,
    values: [windowSeconds],
  })
  return rowCount ?? 0
}

/** Forgets every address of `ref` in the catalogue. */
export async function forgetProject(catalogue: pg.Pool, ref: string): Promise<void> {
  await catalogue.query({ name: 'baseplane_throttle_forget', text: 'delete from baseplane.throttle where ref = $1', values: [ref] })
}
