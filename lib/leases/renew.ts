// Extends every lease this node still holds; a lease missing from the answer
// has lapsed or been taken by another node meanwhile, and its actor stops.
import type pg from 'pg'
import type { TakenLease } from './take.ts'

const text = `
update baseplane.push_leases
   set expires_at = now() + $3 * interval '1 millisecond'
 where ref = any($1::text[]) and holder = $2 and expires_at > now()
returning ref, generation::text as generation`

export async function renewLeases(catalogue: pg.Pool, refs: string[], holder: string, leaseMs: number): Promise<TakenLease[]> {
  const { rows } = await catalogue.query<TakenLease>({ text, values: [refs, holder, leaseMs] })
  return rows
}
