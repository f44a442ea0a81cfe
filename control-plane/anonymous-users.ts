// Removing old anonymous users (issue 25 item 2). Anonymous sign-ins make a
// user per guest, and Supabase leaves their clean-up to the operator (its
// docs suggest deleting those older than 30 days). Here it is one statement in
// the project's database: a user's sessions, identities, factors and codes go
// with it (their foreign keys cascade), and a converted user (given an email
// or linked) is no longer anonymous, so it is never removed.
import { platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { deleteAnonymousUsers } from './db/auth.ts'
import { runAsProjectLogin } from './project-database.ts'

/** Supabase's suggested age. */
export const DEFAULT_ANONYMOUS_AGE_DAYS = 30
const MAX_AGE_DAYS = 36500

export function validAgeDays(raw: unknown): number {
  const days = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 0 || days > MAX_AGE_DAYS) {
    throw platformErrors.invalidArgument(`The age of anonymous users to remove must be a whole number of days from 0 to ${MAX_AGE_DAYS}, got ${JSON.stringify(raw)}`)
  }
  return days
}

/** Deletes the project's anonymous users created more than `olderThanDays` days ago; returns how many. */
export async function purgeAnonymousUsers(controlPlane: ControlPlane, ref: string, olderThanDays: number): Promise<number> {
  const days = validAgeDays(olderThanDays)
  const project = await getProject(controlPlane, ref)
  // As Auth's own login role: deleting users fires the owner's triggers, which must never run as the server's admin.
  return runAsProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'auth', (client) => deleteAnonymousUsers(client, days))
}
