// Sends a batch of row changes to this node's subscribers of one project. Each
// change goes to the channels with a binding it matches (event, schema, table,
// filter), and of those only to callers who may select the row: one visibility
// statement per table of the batch (visibility.ts), the callers grouped by
// role and claims. DELETEs are not checked against RLS (the row is gone; as on
// Supabase, every subscriber whose filter the old record matches hears it),
// but every record, old or new, carries only the columns its caller may
// select (and those its binding's `select` names).
import type pg from 'pg'
import type { RequestIdentity } from '../../../lib/roles.ts'
import { matches } from '../../../workers/realtime/postgres-filter.ts'
import type { RowChange } from '../../../workers/realtime/changes/messages.ts'
import type { CheckedBinding } from './bindings.ts'
import { checkVisibility, type CheckGroup, type Sight } from './visibility.ts'

/** One channel's Postgres Changes on this node. */
export interface Subscriber {
  bindings: CheckedBinding[]
  identity(): RequestIdentity
  push(payload: Record<string, unknown>): void
}

export interface TimedChange {
  change: RowChange
  commitTimestamp: string
  /** Its transaction's id (the check waits until it is visible). */
  xid: number
}

function bound(binding: CheckedBinding, change: RowChange): boolean {
  if (binding.event !== '*' && binding.event !== change.type) return false
  if (binding.schema !== '*' && binding.schema !== change.schema) return false
  if (binding.table !== undefined && binding.table !== change.table) return false
  return matches(binding.conditions, change.type === 'DELETE' ? change.oldRecord : change.record)
}

const callerKey = (identity: RequestIdentity) => `${identity.role}\u0000${JSON.stringify(identity.claims)}`

function narrowed(record: Record<string, unknown> | undefined, allowed: (name: string) => boolean): Record<string, unknown> | undefined {
  if (!record) return undefined
  return Object.fromEntries(Object.entries(record).filter(([name]) => allowed(name)))
}

export async function deliver(pool: pg.Pool, changes: TimedChange[], subscribers: Subscriber[]): Promise<void> {
  // Who each change is for, and the distinct callers among them.
  const routes = changes.map(({ change }) => {
    const to: { subscriber: Subscriber; ids: number[]; caller: number; select: string[] | undefined }[] = []
    for (const subscriber of subscribers) {
      // Bindings that narrow the columns differently get a push each (realtime-js hands one push's record to every id in it).
      const bySelect = new Map<string, CheckedBinding[]>()
      for (const binding of subscriber.bindings.filter((b) => bound(b, change))) {
        const key = binding.select?.join(',') ?? '*'
        bySelect.set(key, [...(bySelect.get(key) ?? []), binding])
      }
      for (const hit of bySelect.values()) to.push({ subscriber, ids: hit.map((b) => b.id), caller: -1, select: hit[0]!.select })
    }
    return to
  })
  const callers = new Map<string, { index: number; identity: RequestIdentity }>()
  for (const to of routes)
    for (const route of to) {
      const identity = route.subscriber.identity()
      const key = callerKey(identity)
      let caller = callers.get(key)
      if (!caller) callers.set(key, (caller = { index: callers.size, identity }))
      route.caller = caller.index
    }
  if (callers.size === 0) return
  // One statement per table: the rows' keys are their new records (the function reads the primary key from them);
  // each caller is handed the rows routed to it, and every caller with a route in the table learns its columns.
  const tables = new Map<string, { schema: string; table: string; keys: Record<string, unknown>[]; at: Map<number, number>; groups: Map<number, CheckGroup>; xids: Set<number> }>()
  const identities = [...callers.values()].map((c) => c.identity)
  changes.forEach(({ change, xid }, i) => {
    if (routes[i]!.length === 0) return
    const name = `${change.schema}.${change.table}`
    let entry = tables.get(name)
    if (!entry) tables.set(name, (entry = { schema: change.schema, table: change.table, keys: [], at: new Map(), groups: new Map(), xids: new Set() }))
    let key: number | undefined
    if (change.type !== 'DELETE') {
      key = entry.keys.length
      entry.at.set(i, key)
      entry.keys.push(change.record ?? {})
      entry.xids.add(xid)
    }
    for (const route of routes[i]!) {
      let group = entry.groups.get(route.caller)
      if (!group) entry.groups.set(route.caller, (group = { identity: identities[route.caller]!, rows: [] }))
      if (key !== undefined && group.rows.at(-1) !== key) group.rows.push(key)
    }
  })
  // By table, then by caller's index.
  const sights = new Map<string, Map<number, Sight>>()
  for (const [name, entry] of tables) {
    const callersHere = [...entry.groups.keys()]
    const found = await checkVisibility(pool, entry.schema, entry.table, entry.keys, [...entry.groups.values()], [...entry.xids])
    sights.set(name, new Map(callersHere.map((caller, n) => [caller, found[n]!])))
  }
  changes.forEach(({ change, commitTimestamp }, i) => {
    const name = `${change.schema}.${change.table}`
    for (const route of routes[i]!) {
      const sight = sights.get(name)?.get(route.caller)
      if (!sight) continue
      if (change.type !== 'DELETE' && !sight.visible.has(tables.get(name)!.at.get(i)!)) continue
      const allowed = (column: string) => sight.selectable.has(column) && (route.select === undefined || route.select.includes(column))
      const columns = change.columns.filter((c) => allowed(c.name))
      if (columns.length === 0) continue
      const record = narrowed(change.record, allowed)
      const oldRecord = narrowed(change.oldRecord, allowed)
      route.subscriber.push({
        ids: route.ids,
        data: {
          schema: change.schema,
          table: change.table,
          commit_timestamp: commitTimestamp,
          type: change.type,
          columns,
          ...(record ? { record } : {}),
          ...(change.type !== 'INSERT' ? { old_record: oldRecord ?? {} } : {}),
          errors: null,
        },
      })
    }
  })
}
