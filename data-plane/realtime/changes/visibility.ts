// Which subscribers may see which changed rows: one statement for a table's
// changes in a batch and every distinct caller (role and claims) among this
// node's subscribers, run by realtime.visible_rows() in the project's database
// (sql/project/0042), under each caller's role and claims in turn, never one
// statement per subscriber per change. Each caller looks up only the rows
// routed to it, after the batch's transactions are visible.
import type pg from 'pg'
import type { RequestIdentity } from '../../../lib/roles.ts'

/** One caller's part in a check: who it is, and the 0-based indexes of the keys routed to it. */
export interface CheckGroup {
  identity: RequestIdentity
  rows: number[]
}

/** What one caller may see: the 0-based indexes of its keys whose rows it may select, and the columns. */
export interface Sight {
  visible: Set<number>
  selectable: Set<string>
}

export async function checkVisibility(
  pool: pg.Pool,
  schema: string,
  table: string,
  keys: Record<string, unknown>[],
  groups: CheckGroup[],
  xids: number[],
): Promise<Sight[]> {
  const { rows } = await pool.query<{ grp: number; visible: number[]; selectable: string[] }>({
    name: 'baseplane_realtime_visible_rows',
    text: 'select grp, visible, selectable from realtime.visible_rows(format($1::text, $2::text, $3::text)::regclass, $4::jsonb, $5::jsonb, $6::text[]::xid[])',
    values: [
      '%I.%I',
      schema,
      table,
      JSON.stringify(keys),
      JSON.stringify(groups.map((g) => ({ role: g.identity.role, claims: g.identity.claims, rows: g.rows.map((i) => i + 1) }))),
      xids.map(String),
    ],
  })
  const sights: Sight[] = groups.map(() => ({ visible: new Set(), selectable: new Set() }))
  for (const row of rows) sights[row.grp] = { visible: new Set(row.visible.map((i) => i - 1)), selectable: new Set(row.selectable) }
  return sights
}
