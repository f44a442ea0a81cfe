// Auth's user administration, the face the control plane may import: list
// (search, pages), create, get, update (bans among it), delete, invite, a
// recovery mail, second factors, sessions. Each operation takes a scope (a
// project database and what Auth knows of the project) and answers GoTrue's
// JSON shapes or throws Auth's catalogue errors (errors.ts). Two callers:
// the Auth admin API's handlers (admin.ts, admin-factors.ts, recover.ts) with
// a request's scope, and control-plane/auth-users.ts (the CLI's `auth users`,
// the dashboard's Users tab) with a connection of its own to the project's
// database (projectScope), so those work without a running server.
import bcrypt from 'bcrypt'
import type pg from 'pg'
import { AUTH_SESSION_SETTINGS } from '../../lib/db/auth-transaction.ts'
import type { WorkerOptions } from '../../lib/service.ts'
import type { Queryable } from './db/pool.ts'
import { deleteFactor as deleteFactorRows } from './db/factors.ts'
import { deleteIdentitiesOfUser } from './db/identities.ts'
import { deleteCodesOfUser } from './db/one-time-tokens.ts'
import { deleteSessions, deleteSessionsOfUser, sessionsOfUser } from './db/sessions.ts'
import {
  confirmEmail,
  countUsers,
  deleteUser as deleteUserRow,
  insertUser,
  listUsers as listUserRows,
  mergeMetadata,
  replaceEmail,
  setBannedUntil,
  setPassword,
  setRole,
  softDeleteUser,
  userByEmail,
  userById,
  type UserRow,
} from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, type LinkContext } from './links.ts'
import { BCRYPT_COST, checkNewPassword } from './passwords.ts'
import type { Pkce } from './db/flow-state.ts'
import { resolveRedirect } from './redirects.ts'
import { isUuid, obj, str, uuidParam } from './request.ts'
import { factorJson, userJson } from './serialize.ts'
import { resolveSettings } from './settings.ts'

/** A project's database and what the operations need to know of the project. */
export interface AuthAdminScope extends LinkContext {
  /** Single statements. */
  db: Queryable
  /** Runs `work` in one transaction as baseplane_auth_admin; rolls back when it throws. */
  transaction<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>
  /** Roles a user may be given besides `authenticated` (the project's own, `baseplane projects roles`). */
  projectRoles: readonly string[]
  /** bcrypt of a new password: synchronous on an auth worker thread, on libuv's pool in the control plane (never on a main thread). */
  hashPassword(password: string): string | Promise<string>
}

export type UserJson = Record<string, unknown> & { id: string }

/** Most users one page lists (GoTrue has no ceiling; one request must not load every user at once). */
export const MAX_PER_PAGE = 1000

/** How many sessions of a user `userSessions` shows. */
const SESSIONS_SHOWN = 100

/**
 * The scope of a project for the control plane, on `client` (a connection of
 * its own to the project's database, inside a transaction): the session is
 * switched to Auth's role and settings for that transaction, so the same
 * statements run as on an auth worker thread.
 */
export async function projectScope(
  client: pg.ClientBase,
  project: { ref: string; version: number; authSettings: Record<string, unknown>; projectRoles: readonly string[]; baseUrl: string },
  mail: WorkerOptions['mail'],
): Promise<AuthAdminScope> {
  await client.query(Object.entries(AUTH_SESSION_SETTINGS).map(([name, value]) => `set local ${name} = '${value}'`).join('; '))
  return {
    db: client,
    transaction: (work) => work(client),
    settings: resolveSettings(project.ref, project.version, project.authSettings),
    baseUrl: project.baseUrl,
    projectRoles: project.projectRoles,
    ip: '',
    mail,
    hashPassword: (password) => bcrypt.hash(password, BCRYPT_COST),
  }
}

/** Go's time.ParseDuration subset GoTrue's ban_duration takes ("24h", "1h30m", "90s"), or "none". */
function banUntil(value: string | undefined): Date | null | undefined {
  if (value === undefined) return undefined
  if (value === 'none') return null
  const match = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(value)
  if (!match || value === '') throw authErrors.validation('invalid format for ban duration: use a duration such as "24h" or "none"')
  const seconds = Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0)
  return new Date(Date.now() + seconds * 1000)
}

function bool(body: Record<string, unknown>, name: string): boolean {
  return body[name] === true
}

/**
 * The `role` to give a user: absent or "" keeps the current one (GoTrue sets
 * only a non-empty role). GoTrue takes any string; here it must be a role the
 * gate accepts for a signed-in user, so an admin cannot mint service_role
 * sessions or tokens every request would refuse.
 */
function userRoleOf(scope: AuthAdminScope, body: Record<string, unknown>): string | undefined {
  const role = str(body, 'role')
  if (role === undefined || role === '') return undefined
  const allowed = ['authenticated', ...scope.projectRoles]
  if (!allowed.includes(role)) {
    throw authErrors.validation(`role must be ${allowed.length === 1 ? 'authenticated' : `one of ${allowed.join(', ')}`} (add roles with baseplane projects roles), got "${role}"`)
  }
  return role
}

async function passwordHashOf(scope: AuthAdminScope, body: Record<string, unknown>): Promise<string | null | undefined> {
  const password = str(body, 'password')
  const hash = str(body, 'password_hash')
  if (password !== undefined && hash !== undefined) throw authErrors.validation('Only a password or a password hash should be provided')
  if (hash !== undefined) {
    if (!/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(hash)) throw authErrors.validation('Invalid password hash format: only bcrypt hashes are accepted')
    return hash
  }
  if (password !== undefined) return scope.hashPassword(checkNewPassword(password, scope.settings))
  return undefined
}

async function userOr404(db: Queryable, id: string): Promise<UserRow> {
  const user = await userById(db, id)
  if (user === undefined) throw authErrors.userNotFound()
  return user
}

/** A page of the users not deleted, newest first; `filter` matches within the address or full name (GoTrue's filter). */
export async function listUsers(scope: AuthAdminScope, options: { page: number; perPage: number; filter?: string | null }): Promise<{ users: UserJson[]; total: number }> {
  const page = Math.max(1, options.page)
  if (options.perPage === 0) throw authErrors.validation('Bad Pagination Parameters: per_page must be greater than 0')
  if (options.perPage > MAX_PER_PAGE) throw authErrors.validation(`Bad Pagination Parameters: per_page must be at most ${MAX_PER_PAGE}`)
  const like = options.filter ? `%${options.filter.replace(/[\\%_]/g, '\\$&')}%` : null
  const [rows, total] = await Promise.all([listUserRows(scope.db, like, options.perPage, (page - 1) * options.perPage), countUsers(scope.db, like)])
  return { users: rows.map(userJson) as UserJson[], total }
}

/** GoTrue's POST /admin/users body: email (phone refused), password or password_hash, email_confirm, metadata, id, role, ban_duration. */
export async function createUser(scope: AuthAdminScope, body: Record<string, unknown>): Promise<UserJson> {
  const rawEmail = str(body, 'email')
  const id = str(body, 'id')
  if (!rawEmail && !str(body, 'phone')) throw authErrors.validation('Cannot create a user without either an email or phone')
  if (!rawEmail) throw authErrors.phoneDisabled('Phone signups are disabled')
  if (id !== undefined && !isUuid(id)) throw authErrors.validation('ID must conform to the uuid v4 format')
  const email = normalizeEmail(rawEmail)
  const encrypted = await passwordHashOf(scope, body)
  const banned = banUntil(str(body, 'ban_duration'))
  const role = userRoleOf(scope, body)
  const user = await scope.transaction(async (client) => {
    if (await userByEmail(client, email)) throw authErrors.emailExists()
    const userId = await insertUser(client, {
      id,
      email,
      encryptedPassword: encrypted ?? null,
      confirmed: bool(body, 'email_confirm'),
      userMetadata: obj(body, 'user_metadata') ?? {},
      appMetadata: obj(body, 'app_metadata') ?? {},
      bannedUntil: banned ?? null,
    })
    if (bool(body, 'email_confirm')) await confirmEmail(client, userId)
    if (role !== undefined) await setRole(client, userId, role)
    await audit(client, scope, userId, 'user_signedup', { provider: 'email', via: 'admin' })
    return userOr404(client, userId)
  })
  return userJson(user) as UserJson
}

/** `id` as given in a path (any case; 404 validation_failed when not a UUID). */
export async function getUser(scope: AuthAdminScope, id: string): Promise<UserJson> {
  return userJson(await userOr404(scope.db, uuidParam(id, 'user_id'))) as UserJson
}

/** GoTrue's PUT /admin/users/{id} body: email, password or password_hash, email_confirm, metadata (merged), ban_duration ("none" lifts), role. */
export async function updateUser(scope: AuthAdminScope, idParam: string, body: Record<string, unknown>): Promise<UserJson> {
  const id = uuidParam(idParam, 'user_id')
  const rawEmail = str(body, 'email')
  const email = rawEmail !== undefined ? normalizeEmail(rawEmail) : undefined
  if (str(body, 'phone')) throw authErrors.phoneDisabled()
  const encrypted = await passwordHashOf(scope, body)
  const banned = banUntil(str(body, 'ban_duration'))
  const role = userRoleOf(scope, body)
  const user = await scope.transaction(async (client) => {
    const current = await userOr404(client, id)
    if (email !== undefined && email !== current.email) {
      const other = await userByEmail(client, email)
      if (other && other.id !== id) throw authErrors.emailExists()
      await replaceEmail(client, id, email)
    }
    if (encrypted) await setPassword(client, id, encrypted)
    if (bool(body, 'email_confirm')) await confirmEmail(client, id)
    const userMetadata = obj(body, 'user_metadata')
    const appMetadata = obj(body, 'app_metadata')
    if (userMetadata) await mergeMetadata(client, id, 'raw_user_meta_data', userMetadata)
    if (appMetadata) await mergeMetadata(client, id, 'raw_app_meta_data', appMetadata)
    if (banned !== undefined) {
      await setBannedUntil(client, id, banned)
      if (banned !== null) await deleteSessionsOfUser(client, id)
    }
    if (role !== undefined) await setRole(client, id, role)
    await audit(client, scope, id, 'user_modified', { via: 'admin' })
    return userOr404(client, id)
  })
  return userJson(user) as UserJson
}

/** Deletes the user and what Auth keeps about them; `soft` keeps the row, emptied (GoTrue's should_soft_delete). */
export async function deleteUser(scope: AuthAdminScope, idParam: string, options: { soft?: boolean } = {}): Promise<void> {
  const id = uuidParam(idParam, 'user_id')
  const soft = options.soft === true
  await scope.transaction(async (client) => {
    await userOr404(client, id)
    if (soft) {
      await softDeleteUser(client, id)
      await deleteIdentitiesOfUser(client, id)
      await deleteSessionsOfUser(client, id)
      await deleteCodesOfUser(client, id)
    } else {
      await deleteUserRow(client, id)
    }
    await audit(client, scope, id, 'user_deleted', { soft })
  })
}

/**
 * GoTrue's POST /invite: the user (new, or existing and unconfirmed) gets the
 * invite template's mail, sent as every Auth mail is (the send email hook,
 * SMTP or the project's outbox), within the same transaction.
 */
export async function inviteUser(scope: AuthAdminScope, input: { email: string | undefined; data?: Record<string, unknown>; redirectTo?: string | null }): Promise<UserJson> {
  if (!input.email) throw authErrors.validation('An email address is required')
  const email = normalizeEmail(input.email)
  const redirect = resolveRedirect(scope.settings, input.redirectTo ?? undefined)
  const user = await scope.transaction(async (client) => {
    const existing = await userByEmail(client, email)
    if (existing?.email_confirmed_at) throw authErrors.emailExists()
    const userId = existing?.id ?? (await insertUser(client, { email, encryptedPassword: null, confirmed: false, invited: true, userMetadata: input.data ?? {} }))
    await mailLink(client, scope, { userId, email, type: 'invite', redirectTo: redirect })
    await audit(client, scope, userId, 'user_invited', { user_email: email })
    return userOr404(client, userId)
  })
  return userJson(user) as UserJson
}

/** GoTrue's POST /recover: a recovery mail when the address is a user's; nothing (and no sign of it) otherwise. */
export async function sendRecovery(scope: AuthAdminScope, input: { email: string | undefined; redirectTo?: string | null; pkce?: Pkce }): Promise<void> {
  if (!input.email) throw authErrors.validation('Password recovery requires an email')
  const email = normalizeEmail(input.email)
  const redirect = resolveRedirect(scope.settings, input.redirectTo ?? undefined)
  const user = await userByEmail(scope.db, email)
  if (user === undefined) return
  await scope.transaction(async (client) => {
    await mailLink(client, scope, { userId: user.id, email, type: 'recovery', redirectTo: redirect, pkce: input.pkce })
    await audit(client, scope, user.id, 'user_recovery_requested')
  })
}

/** The user's factors, verified and unverified (never their secrets). */
export async function listFactors(scope: AuthAdminScope, userId: string): Promise<Array<Record<string, unknown>>> {
  const user = await userOr404(scope.db, uuidParam(userId, 'user_id'))
  return (user.factors ?? []).map(factorJson)
}

/**
 * Removes the factor and answers it as it was. The sessions it had raised
 * to aal2 drop back to aal1 (GoTrue since v2.193.0): their next refresh and
 * Auth's own checks see aal1; access tokens already issued keep their `aal`
 * claim until they expire, as every JWT does.
 */
export async function deleteFactor(scope: AuthAdminScope, userId: string, factorParam: string): Promise<Record<string, unknown>> {
  const deleted = await scope.transaction(async (client) => {
    const user = await userOr404(client, uuidParam(userId, 'user_id'))
    const factorId = uuidParam(factorParam, 'factor_id')
    const factor = (user.factors ?? []).find((f) => f.id === factorId)
    if (factor === undefined) throw authErrors.factorNotFound()
    await deleteFactorRows(client, factorId)
    await audit(client, scope, user.id, 'factor_deleted', { factor_id: factorId, factor_status: factor.status, via: 'admin' })
    return factor
  })
  return factorJson(deleted)
}

export interface UserSession {
  id: string
  created_at: string
  updated_at: string | null
  aal: string | null
  user_agent: string | null
  ip: string | null
}

/** The user's sessions, newest first (at most 100): GoTrue's API has no call for them. */
export async function userSessions(scope: AuthAdminScope, userId: string): Promise<UserSession[]> {
  const rows = await sessionsOfUser(scope.db, uuidParam(userId, 'user_id'), SESSIONS_SHOWN)
  return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at ? row.updated_at.toISOString() : null }))
}

/** Ends every session of the user, as their own `signOut({scope: 'global'})` does (refresh tokens stop working; access tokens run out at their expiry). */
export async function signOutEverywhere(scope: AuthAdminScope, userId: string): Promise<void> {
  const id = uuidParam(userId, 'user_id')
  await userOr404(scope.db, id)
  await deleteSessions(scope.db, id, null, 'global', scope.ip)
}
