// SQL of the data API's per-project settings on the catalogue: the exposed
// schemas (sql/catalogue/0017_rest_schemas.sql), the max rows
// (sql/catalogue/0018_rest_max_rows.sql), the pre-request function
// (sql/catalogue/0019_rest_pre_request.sql), the transactions' end and the
// plans (sql/catalogue/0023_rest_tx_end_and_plans.sql), on the project's row so a change
// bumps its version and every node serves it from its next request.
import type { Queryable } from './queryable.ts'
import type { TxEnd } from '../../lib/rest-tx-end.ts'

/** What to save: each setting given is written as given (checked by the caller), the others kept. */
export interface RestSettingsRow {
  schemas?: readonly string[]
  /** null: the node's default. */
  maxRows?: number | null
  /** null: none. */
  preRequest?: string | null
  txEnd?: TxEnd
  plans?: boolean
}

/** Saves the settings given, in one statement; false when no such project. */
export async function writeRestSettings(db: Queryable, ref: string, change: RestSettingsRow): Promise<boolean> {
  const result = await db.query(
    `update baseplane.projects
        set rest_schemas = coalesce($2::text[], rest_schemas),
            rest_max_rows = case when $3::boolean then $4::integer else rest_max_rows end,
            rest_pre_request = case when $5::boolean then $6::text else rest_pre_request end,
            rest_tx_end = coalesce($7::text, rest_tx_end),
            rest_plans = coalesce($8::boolean, rest_plans)
      where ref = $1`,
    [ref, change.schemas ?? null, change.maxRows !== undefined, change.maxRows ?? null, change.preRequest !== undefined, change.preRequest ?? null, change.txEnd ?? null, change.plans ?? null],
  )
  return (result.rowCount ?? 0) > 0
}
