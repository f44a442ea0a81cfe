// Whether this node still holds a project's lease of a given generation, by
// the catalogue's clock: asked before each batch is claimed.
import type pg from 'pg'

const text = `
select exists (
  select 1 from baseplane.push_leases
   where ref = $1 and holder = $2 and generation = $3::bigint and expires_at > now()
) as held`

export async function leaseHeld(catalogue: pg.Pool, ref: string, holder: string, generation: string): Promise<boolean> {
  const { rows } = await catalogue.query<{ held: boolean }>({ text, values: [ref, holder, generation] })
  return rows[0]?.held === true
}
