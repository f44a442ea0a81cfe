// The statements on baseplane.realtime_leases (sql/catalogue/0020), in the
// shape push's lease keeper runs them (workers/push/lease-keeper.ts): taking
// the free leases of the projects this node has sockets of, renewing those it
// holds, giving one up, and asking whether one is still held. A project that
// is not active has no reader: its sockets are refused anyway.
import type pg from 'pg'
import type { LeaseStore } from '../../../lib/leases/lease-keeper.ts'
import type { TakenLease } from '../../../lib/leases/take.ts'

const take = `
insert into baseplane.realtime_leases as l (ref, holder, expires_at)
select p.ref, $2, now() + $3 * interval '1 millisecond'
  from baseplane.projects p
 where p.ref = any($1::text[]) and p.state = 'active'
on conflict (ref) do update
   set holder = excluded.holder, expires_at = excluded.expires_at, generation = l.generation + 1, taken_at = now()
 where l.expires_at < now() or l.holder = excluded.holder
returning l.ref, l.generation::text as generation`

const renew = `
update baseplane.realtime_leases
   set expires_at = now() + $3 * interval '1 millisecond'
 where ref = any($1::text[]) and holder = $2 and expires_at > now()
returning ref, generation::text as generation`

const release = 'delete from baseplane.realtime_leases where ref = $1 and holder = $2 and generation = $3::bigint'

const held = `
select exists (
  select 1 from baseplane.realtime_leases
   where ref = $1 and holder = $2 and generation = $3::bigint and expires_at > now()
) as held`

export const REALTIME_LEASES: LeaseStore = {
  async take(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]> {
    return (await catalogue.query<TakenLease>({ text: take, values: [refs, holder, leaseMs] })).rows
  },
  async renew(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]> {
    return (await catalogue.query<TakenLease>({ text: renew, values: [refs, holder, leaseMs] })).rows
  },
  async release(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<void> {
    await catalogue.query({ text: release, values: [ref, holder, generation] })
  },
  async held(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<boolean> {
    return (await catalogue.query<{ held: boolean }>({ text: held, values: [ref, holder, generation] })).rows[0]?.held === true
  },
}
