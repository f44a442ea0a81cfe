// SQL on a project's state (sql/catalogue/0015_project_states.sql): active,
// suspended by its operator, paused for want of requests. Updating the row
// fires its trigger, so the data planes and the push actor hosts reload it.
import type { ProjectState } from '../../lib/catalogue.ts'
import type { Queryable } from './queryable.ts'

export interface StateRow {
  state: ProjectState
  state_reason: string | null
  state_changed_at: Date | null
  plan: string
}

/** The project's state, its row locked until the transaction ends (so two changes of state take turns); undefined when no such project. */
export async function lockState(db: Queryable, ref: string): Promise<StateRow | undefined> {
  const { rows } = await db.query<StateRow>('select state, state_reason, state_changed_at, plan from baseplane.projects where ref = $1 for update', [ref])
  return rows[0]
}

/** `reason`: a suspension's (and only a suspension's, the table's check says). */
export async function updateState(db: Queryable, ref: string, state: ProjectState, reason: string | null): Promise<void> {
  await db.query('update baseplane.projects set state = $2, state_reason = $3, state_changed_at = now() where ref = $1', [ref, state, reason])
}

/**
 * Lets the project's push sending lease go: the holder's next check before a
 * batch finds it gone and its actor stops, and no node takes it again while
 * the project is not active (lib/leases/take.ts).
 */
export async function dropPushLease(db: Queryable, ref: string): Promise<void> {
  await db.query('delete from baseplane.push_leases where ref = $1', [ref])
}

/** Its last activity: the last request a node saw, else its last change of state, else its creation. */
const LAST_ACTIVE = 'greatest(p.created_at, p.state_changed_at, a.last_request_at)'

export interface IdleProject {
  ref: string
  last_request_at: Date | null
}

/** Active free projects whose last activity is older than `idleMillis` (by the catalogue's clock), at most `limit`. */
export async function idleFreeProjects(db: Queryable, idleMillis: number, limit: number): Promise<IdleProject[]> {
  const { rows } = await db.query<IdleProject>(
    `select p.ref, a.last_request_at
       from baseplane.projects p left join baseplane.project_activity a on a.ref = p.ref
      where p.state = 'active' and p.plan = 'free' and ${LAST_ACTIVE} < now() - $1 * interval '1 millisecond'
      order by ${LAST_ACTIVE} limit $2`,
    [idleMillis, limit],
  )
  return rows
}

/** The same question for one project, asked again under its row's lock before it is paused: undefined when it is no longer idle (or not free, or not active). */
export async function stillIdle(db: Queryable, ref: string, idleMillis: number): Promise<IdleProject | undefined> {
  const { rows } = await db.query<IdleProject>(
    `select p.ref, a.last_request_at
       from baseplane.projects p left join baseplane.project_activity a on a.ref = p.ref
      where p.ref = $1 and p.state = 'active' and p.plan = 'free' and ${LAST_ACTIVE} < now() - $2 * interval '1 millisecond'`,
    [ref, idleMillis],
  )
  return rows[0]
}

/** When a node last saw a request for the project (written once a flush interval); undefined: none recorded. */
export async function lastRequestAt(db: Queryable, ref: string): Promise<Date | undefined> {
  const { rows } = await db.query<{ last_request_at: Date }>('select last_request_at from baseplane.project_activity where ref = $1', [ref])
  return rows[0]?.last_request_at
}

/** One node at a time sweeps for idle projects: a session lock, false when another node holds it. */
export async function tryLockPauseSweep(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ taken: boolean }>(`select pg_try_advisory_lock(hashtext('baseplane.pause_sweep')) as taken`)
  return rows[0]!.taken
}

export async function unlockPauseSweep(db: Queryable): Promise<void> {
  await db.query(`select pg_advisory_unlock(hashtext('baseplane.pause_sweep'))`)
}
