// SQL on the catalogue's record of data-plane processes (baseplane.nodes) and
// its change counter: how the control plane waits for a change to be applied
// everywhere, and how many processes share the servers' budgets.
import type { Queryable } from './queryable.ts'

/** The catalogue's latest change (baseplane.last_change()). */
export async function lastChange(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ change: string }>('select baseplane.last_change() as change')
  return Number(rows[0]!.change)
}

/** Processes heard from within `seconds` that have not applied change `target` yet. */
export async function countNodesBehind(db: Queryable, target: number, seconds: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `select count(*)::int as count from baseplane.nodes
      where seen_change < $1 and heartbeat_at > now() - make_interval(secs => $2)`,
    [target, seconds],
  )
  return rows[0]!.count
}

/** The ids of those processes, sorted. */
export async function nodesBehind(db: Queryable, target: number, seconds: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from baseplane.nodes where seen_change < $1 and heartbeat_at > now() - make_interval(secs => $2) order by id`,
    [target, seconds],
  )
  return rows.map((row) => row.id)
}

/** Processes whose heartbeat is more recent than `seconds` ago. */
export async function countLiveNodes(db: Queryable, seconds: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `select count(*)::int as count from baseplane.nodes where heartbeat_at > now() - make_interval(secs => $1)`,
    [seconds],
  )
  return rows[0]!.count
}
