// The platform's own login roles in a project's database, beside the API's
// (`bp_<ref>_api`, Supabase's `authenticator`: it may only become the API
// roles, and owner code runs on its connections):
//
// - `bp_<ref>_auth`: Auth's connections. Owner code runs here too (triggers on
//   auth.users, Postgres hooks), as on Supabase, where such code runs as
//   supabase_auth_admin: what it reaches by resetting its role is Auth's own
//   tables, never the quota counters or Push's keys.
// - `bp_<ref>_platform`: Push's statements (provider keys, VAPID keys, the
//   queue, the log) and the quota counters. No owner code runs on these
//   connections: what touches the owner's tables goes through functions that
//   run as a role with nothing else (sql/push/0004, sql/project/0011).
//
// Their names follow the API role's; their passwords are derived from the API
// role's (HMAC), so the catalogue stores nothing new and every node knows them.
import { createHmac } from 'node:crypto'

export type PlatformLogin = 'auth' | 'platform'

export interface LoginRole {
  user: string
  password: string
}

/** What a project's catalogue record holds of its API login role. */
export interface ApiLogin {
  dbApiRole: string
  dbApiPassword: string
}

/** `bp_<ref>_api` becomes `bp_<ref>_auth` or `bp_<ref>_platform`. */
export function platformLoginName(apiRole: string, login: PlatformLogin): string {
  return `${apiRole.replace(/_api$/, '')}_${login}`
}

export function platformLoginOf(project: ApiLogin, login: PlatformLogin): LoginRole {
  return {
    user: platformLoginName(project.dbApiRole, login),
    password: createHmac('sha256', project.dbApiPassword).update(`baseplane login ${login}`).digest('base64url'),
  }
}

/** Every login role the platform itself connects with, the API's first. */
export function platformLoginRoles(apiRole: string): string[] {
  return [apiRole, platformLoginName(apiRole, 'auth'), platformLoginName(apiRole, 'platform')]
}
