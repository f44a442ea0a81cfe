// Gives a lease up (the actor stopped, or the project left this node), so
// another node takes it at its next scan instead of after the lease lapses.
// Only the generation this node took: never one taken since by another.
import type pg from 'pg'

export async function releaseLease(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<void> {
  await catalogue.query({
    text: 'delete from baseplane.push_leases where ref = $1 and holder = $2 and generation = $3::bigint',
    values: [ref, holder, generation],
  })
}
