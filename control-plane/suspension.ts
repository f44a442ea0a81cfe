// Suspension and pause (issue 27 item 4): the operator suspends a project
// (with a reason, for operators only) and resumes it; the fleet pauses a free
// project that had no request for BASEPLANE_PAUSE_IDLE_DAYS (pause-sweep.ts),
// and its first request may wake it (BASEPLANE_WAKE_ON_REQUEST, the data
// plane's LifecycleGate through server/lifecycle.ts).
//
// A project that is not active is refused by every data plane (it reloads the
// record: the row's trigger notifies), sends no push (its lease is dropped and
// no node takes it while it is not active; its queue stays in push.messages),
// and holds no connection: its login roles are NOLOGIN, and once every node
// has applied the change their remaining sessions are ended, so the nodes'
// pools see their connections close and drop them. Its data is untouched.
// Resuming admits the roles again and the project answers from the next
// request; its push actor starts at the next lease scan and sends the queue.
import type { ProjectRecord, ProjectState } from '../lib/catalogue.ts'
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'
import type { ControlPlane } from './control-plane.ts'
import { appendEvent, type EventKind } from './events.ts'
import { endProjectSessions, projectDatabaseNames, setProjectLogin } from './project-database.ts'
import { getProject } from './projects.ts'
import type { Queryable } from './db/queryable.ts'
import { dropPushLease, lastRequestAt, lockState, stillIdle, updateState, type StateRow } from './db/project-states.ts'

/** The longest reason an operator may give (the catalogue's check says the same). */
export const MAX_REASON_LENGTH = 500

const DAY_MS = 86_400_000

interface StateChange {
  to: ProjectState
  reason: string | null
  /** Under the row's lock: throws to refuse, answers false when there is nothing to do (a wake someone else did). */
  check(row: StateRow, client: Queryable): Promise<boolean> | boolean
  /** The event that reports it, from the state it leaves. */
  event(row: StateRow): [EventKind, Record<string, unknown>] | Promise<[EventKind, Record<string, unknown>]>
}

/**
 * One change of state, under the row's lock, in one catalogue transaction with
 * its event. The roles are switched on their server before the commit, so a
 * server that does not answer leaves nothing changed (and a failed commit
 * switches them back). Answers whether it changed anything.
 */
async function changeState(controlPlane: ControlPlane, project: ProjectRecord, change: StateChange): Promise<boolean> {
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  const names = projectDatabaseNames(project)
  const login = change.to === 'active'
  let switchedFrom: boolean | undefined
  let changed: boolean
  try {
    changed = await withPoolTransaction(controlPlane.catalogue, async (client) => {
      const row = await lockState(client, project.ref)
      if (row === undefined) throw platformErrors.unknownProject(project.ref)
      if (!(await change.check(row, client))) return false
      const [kind, data] = await change.event(row)
      const hadLogin = row.state === 'active'
      if (hadLogin !== login) {
        await setProjectLogin(serverUrl, names, login)
        switchedFrom = hadLogin
      }
      await updateState(client, project.ref, change.to, change.reason)
      if (!login) await dropPushLease(client, project.ref)
      await appendEvent(client, kind, project.ref, data)
      return true
    })
  } catch (error) {
    if (switchedFrom !== undefined) await setProjectLogin(serverUrl, names, switchedFrom).catch(() => {})
    throw error
  }
  if (!changed) return false
  await controlPlane.changed()
  if (!login) {
    // Every node refuses the project now: what is still connected is ended (the nodes' idle pool connections, the owner's tools).
    await endProjectSessions(serverUrl, names).catch((error: unknown) =>
      log.info('could not end the sessions of a project that is no longer active; its roles refuse new ones', { ref: project.ref, error: (error as Error).message }),
    )
  }
  return true
}

/** The reason, trimmed; refused (naming `reason`) when missing, blank or too long. */
export function validateReason(reason: string | undefined): string {
  const trimmed = (reason ?? '').trim()
  if (trimmed.length === 0 || trimmed.length > MAX_REASON_LENGTH) {
    throw platformErrors.invalidArgument(
      `reason is required: say why the project is suspended, in 1 to ${MAX_REASON_LENGTH} characters (only operators see it)`,
      'reason',
    )
  }
  return trimmed
}

/**
 * Suspends a project (active or paused): every service answers 403
 * project_suspended, its roles are refused, its push queue waits. Refused when
 * it is suspended already (409 project_already_suspended).
 */
export async function suspendProject(controlPlane: ControlPlane, ref: string, reason: string | undefined): Promise<ProjectRecord> {
  const why = validateReason(reason)
  const project = await getProject(controlPlane, ref)
  await changeState(controlPlane, project, {
    to: 'suspended',
    reason: why,
    check: (row) => {
      if (row.state === 'suspended') throw platformErrors.alreadySuspended(ref, row.state_changed_at?.toISOString())
      return true
    },
    event: () => ['project.suspended', { reason: why }],
  })
  return getProject(controlPlane, ref)
}

/** Resumes a suspended or paused project; refused when it is active (409 project_not_suspended). */
export async function resumeProject(controlPlane: ControlPlane, ref: string): Promise<ProjectRecord> {
  const project = await getProject(controlPlane, ref)
  await changeState(controlPlane, project, {
    to: 'active',
    reason: null,
    check: (row) => {
      if (row.state === 'active') throw platformErrors.notSuspended(ref)
      return true
    },
    event: (row) => ['project.resumed', { from: row.state, by: 'operator' }],
  })
  return getProject(controlPlane, ref)
}

/**
 * Resumes a paused project for its first request (BASEPLANE_WAKE_ON_REQUEST).
 * Never a suspended one. Answers whether this call resumed it (false: it was
 * active already, another node woke it, or it is suspended).
 */
export async function wakeProject(controlPlane: ControlPlane, ref: string): Promise<boolean> {
  const project = await getProject(controlPlane, ref)
  return changeState(controlPlane, project, {
    to: 'active',
    reason: null,
    check: (row) => row.state === 'paused',
    event: () => ['project.resumed', { from: 'paused', by: 'request' }],
  })
}

/**
 * Pauses a free project that is still idle past `idleMillis` when its row is
 * locked (a request recorded, a plan changed or a resume meanwhile leaves it
 * be). Answers whether it paused it.
 */
export async function pauseProject(controlPlane: ControlPlane, ref: string, idleMillis: number): Promise<boolean> {
  const project = await getProject(controlPlane, ref)
  let lastSeen: Date | null = null
  return changeState(controlPlane, project, {
    to: 'paused',
    reason: null,
    check: async (row, client) => {
      if (row.state !== 'active') return false
      const idle = await stillIdle(client, ref, idleMillis)
      lastSeen = idle?.last_request_at ?? null
      return idle !== undefined
    },
    event: () => ['project.paused', { idle_days: idleMillis / DAY_MS, last_request_at: lastSeen?.toISOString() ?? null }],
  })
}

/** When a node last saw a request for the project (recorded once a flush interval); null when none is recorded. */
export async function lastRequestOf(controlPlane: ControlPlane, ref: string): Promise<string | null> {
  return (await lastRequestAt(controlPlane.catalogue, ref))?.toISOString() ?? null
}
