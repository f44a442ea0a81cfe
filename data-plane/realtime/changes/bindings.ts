// A channel's postgres_changes bindings checked at join, as Supabase Realtime
// checks them: the event one of INSERT, UPDATE, DELETE or *, the filter
// parsed, and a named table one of the `supabase_realtime` publication's
// (with the filter's columns its own). A binding that fails answers the
// channel a `system` error in Realtime's words; broadcast and presence on the
// channel go on.
import type pg from 'pg'
import type { PostgresChangesBinding } from '../../../workers/realtime/join.ts'
import { FilterError, parseFilter, type Condition } from '../../../workers/realtime/postgres-filter.ts'

export type ChangeEvent = 'INSERT' | 'UPDATE' | 'DELETE' | '*'

/** A binding ready to match changes against: its id in the join's reply, its conditions. */
export interface CheckedBinding {
  id: number
  event: ChangeEvent
  schema: string
  /** Undefined: every table of the schema (as `table: '*'`). */
  table: string | undefined
  conditions: Condition[]
  select: string[] | undefined
}

/** A binding that cannot be served: the `system` message says why. */
export class BindingError extends Error {
  readonly code = 'InvalidBinding'
  constructor(message: string) {
    super(message)
    this.name = 'BindingError'
  }
}

const EVENTS = new Set(['INSERT', 'UPDATE', 'DELETE', '*'])

const published = `
select pt.schemaname as schema, pt.tablename as table,
       array(select a.attname::text from pg_catalog.pg_attribute a
              where a.attrelid = format('%I.%I', pt.schemaname, pt.tablename)::regclass and a.attnum > 0 and not a.attisdropped) as columns
  from pg_catalog.pg_publication_tables pt
 where pt.pubname = 'supabase_realtime'`

/** Supabase Realtime's sentence for a binding naming what it does not publish. */
function notEnabled(binding: PostgresChangesBinding): string {
  return `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [event: ${binding.event}, schema: ${binding.schema}, table: ${binding.table ?? '*'}, filters: ${JSON.stringify(binding.filter ? [binding.filter] : [])}]`
}

/** The bindings, in the join's order (ids from 1), or the first one's error. */
export async function checkBindings(pool: pg.Pool, bindings: readonly PostgresChangesBinding[]): Promise<CheckedBinding[]> {
  const tables = new Map<string, Set<string>>()
  for (const row of (await pool.query<{ schema: string; table: string; columns: string[] }>(published)).rows) tables.set(`${row.schema}.${row.table}`, new Set(row.columns))
  return bindings.map((binding, i) => {
    const event = binding.event.toUpperCase()
    if (!EVENTS.has(event)) throw new BindingError(`${notEnabled(binding)}: event must be INSERT, UPDATE, DELETE or *`)
    let conditions: Condition[]
    try {
      conditions = parseFilter(binding.filter)
    } catch (error) {
      if (error instanceof FilterError) throw new BindingError(error.message)
      throw error
    }
    const table = binding.table === undefined || binding.table === '*' ? undefined : binding.table
    if (table !== undefined && binding.schema !== '*') {
      const columns = tables.get(`${binding.schema}.${table}`)
      if (columns === undefined) throw new BindingError(notEnabled(binding))
      const unknown = conditions.find((c) => !columns.has(c.column))
      if (unknown) throw new BindingError(`${notEnabled(binding)}: no column ${JSON.stringify(unknown.column)}`)
    }
    return { id: i + 1, event: event as ChangeEvent, schema: binding.schema, table, conditions, select: binding.select }
  })
}
