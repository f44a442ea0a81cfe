// Takes the leases of the given projects that are free: never held, lapsed
// (by the catalogue's clock), or already this node's (taking again bumps the
// generation, so an actor of an earlier take fails its checks). One statement
// for every project the node wants and does not hold. A project that is not
// active (suspended, paused) has no lease to take: suspending it deletes its
// lease, so its holder's next check fails and nobody sends until it resumes.
import type pg from 'pg'

export interface TakenLease {
  ref: string
  generation: string
}

const text = `
insert into baseplane.push_leases as l (ref, holder, expires_at)
select p.ref, $2, now() + $3 * interval '1 millisecond'
  from baseplane.projects p
 where p.ref = any($1::text[]) and p.push_enabled and p.state = 'active'
on conflict (ref) do update
   set holder = excluded.holder, expires_at = excluded.expires_at, generation = l.generation + 1, taken_at = now()
 where l.expires_at < now() or l.holder = excluded.holder
returning l.ref, l.generation::text as generation`

export async function takeLeases(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]> {
  const { rows } = await catalogue.query<TakenLease>({ text, values: [refs, holder, leaseMs] })
  return rows
}
