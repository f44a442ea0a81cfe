// A project's Auth users for the dashboard and the CLI, through Auth's own
// operations (workers/auth/users-admin.ts, offered by Auth's face,
// workers/auth/face.ts; the Auth admin API's handlers call them too), so there
// is one implementation of each, with its validation, mail and audit. Each call is one short connection to the project's database
// as Auth's role, in one transaction: nothing here needs the platform to be
// serving. Invitations and recovery mails go out as the worker sends them
// (the project's send email hook, else SMTP_URL, else the project's outbox),
// with the mail settings of this process's configuration, which every
// operation is given with the addressing (AuthUsersContext) after its own
// arguments.
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { signAccessToken } from '../lib/jwt.ts'
import type { WorkerOptions } from '../lib/service.ts'
import * as usersAdmin from '../workers/auth/face.ts'
import type { AuthAdminScope } from '../workers/auth/face.ts'
import type { ControlPlane } from './control-plane.ts'
import { runAsProjectLogin } from './project-database.ts'
import { getProject } from './projects.ts'
import { keysView, type Addressing } from './views.ts'
import { isUuid } from '../lib/uuid.ts'

export type { UserSession } from '../workers/auth/face.ts'

/** A refusal of the control plane's own (Auth's refusals are Auth's errors, with GoTrue's codes and statuses). */
export class AuthUsersError extends BaseplaneError {
  constructor(code: string, message: string, status: number) {
    super(code, message, status)
    this.name = 'AuthUsersError'
  }
}

export const authUsersErrors = {
  authOff: (ref: string) => new AuthUsersError('auth_disabled', `Auth is off for project ${ref}: turn it on first (baseplane products enable auth ${ref})`, 409),
  invalid: (message: string) => new AuthUsersError('validation_failed', message, 400),
}

/** How the platform sends Auth's mail (config SMTP_URL and BASEPLANE_MAIL_FROM). */
export type MailDelivery = WorkerOptions['mail']

/** What GoTrue's admin API answers for a user (the fields shown here). */
export interface AuthUser {
  id: string
  email?: string
  phone?: string
  role?: string
  created_at: string
  last_sign_in_at?: string | null
  email_confirmed_at?: string | null
  banned_until?: string | null
  invited_at?: string | null
  identities?: Array<{ identity_id?: string; id: string; provider: string; email?: string; created_at?: string; last_sign_in_at?: string }>
  factors?: Array<{ id: string; factor_type: string; status: string; friendly_name?: string; created_at: string }>
  app_metadata?: Record<string, unknown>
  user_metadata?: Record<string, unknown>
}

/** Auth's JSON of a user, read as the fields shown here. */
function asUser(user: usersAdmin.UserJson): AuthUser {
  return user as unknown as AuthUser
}

export interface UserPage {
  ref: string
  users: AuthUser[]
  total: number
  page: number
  per_page: number
}

/** Go's duration subset the ban takes ("24h", "90m", "1h30m"), or "none" to lift it. */
export const BAN_DURATION = /^(none|(?:\d+h)?(?:\d+m)?(?:\d+s)?)$/

/**
 * What Auth's operations need of this process: where the project's API is
 * (the links' and the tokens' base URL) and how its mail goes out. The
 * dashboard's context is one; the CLI makes one from its configuration.
 */
export interface AuthUsersContext {
  addressing: Addressing
  mail: MailDelivery
}

async function authProject(controlPlane: ControlPlane, ref: string): Promise<ProjectRecord> {
  const project = await getProject(controlPlane, ref)
  if (!project.authEnabled) throw authUsersErrors.authOff(project.ref)
  return project
}

/** Runs one operation of Auth's on the project's database, in one transaction. */
async function runAuth<T>(controlPlane: ControlPlane, ref: string, context: AuthUsersContext, work: (scope: AuthAdminScope) => Promise<T>): Promise<T> {
  const project = await authProject(controlPlane, ref)
  const baseUrl = keysView(project, context.addressing).base_url
  // As Auth's own login role, as the worker runs: the owner's triggers on auth.users fire here.
  return runAsProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'auth', async (client) =>
    work(await usersAdmin.projectScope(client, { ...project, baseUrl }, context.mail)),
  )
}

export async function listAuthUsers(
  controlPlane: ControlPlane,
  ref: string,
  options: { page?: number; perPage?: number; email?: string },
  context: AuthUsersContext,
): Promise<UserPage> {
  const page = options.page ?? 1
  const perPage = options.perPage ?? 25
  const { users, total } = await runAuth(controlPlane, ref, context, (scope) => usersAdmin.listUsers(scope, { page, perPage, filter: options.email }))
  return { ref, users: users.map(asUser), total, page, per_page: perPage }
}

export async function getAuthUser(controlPlane: ControlPlane, ref: string, id: string, context: AuthUsersContext): Promise<AuthUser> {
  checkId(id)
  return asUser(await runAuth(controlPlane, ref, context, (scope) => usersAdmin.getUser(scope, id)))
}

/**
 * The user an operator names by id or by email (the dashboard's explorers run
 * as them): an id is read as it is, an email matched without regard to case.
 */
export async function findAuthUser(controlPlane: ControlPlane, ref: string, given: string, context: AuthUsersContext): Promise<AuthUser> {
  if (isUuid(given)) return getAuthUser(controlPlane, ref, given, context)
  const found = (await listAuthUsers(controlPlane, ref, { email: given, perPage: 50 }, context)).users.find((u) => u.email?.toLowerCase() === given.toLowerCase())
  if (!found) throw authUsersErrors.invalid(`No user with the email ${given}`)
  return found
}

/** The user's sessions, newest first. */
export async function authUserSessions(controlPlane: ControlPlane, ref: string, id: string, context: AuthUsersContext): Promise<usersAdmin.UserSession[]> {
  checkId(id)
  return runAuth(controlPlane, ref, context, (scope) => usersAdmin.userSessions(scope, id))
}

export async function createAuthUser(
  controlPlane: ControlPlane,
  ref: string,
  input: { email: string; password?: string; confirm?: boolean },
  context: AuthUsersContext,
): Promise<AuthUser> {
  const body = { email: input.email, ...(input.password ? { password: input.password } : {}), email_confirm: input.confirm ?? true }
  return asUser(await runAuth(controlPlane, ref, context, (scope) => usersAdmin.createUser(scope, body)))
}

/** Sends the invitation mail (the project's invite template); its link lands on the site URL. */
export async function inviteAuthUser(controlPlane: ControlPlane, ref: string, email: string, context: AuthUsersContext): Promise<AuthUser> {
  return asUser(await runAuth(controlPlane, ref, context, (scope) => usersAdmin.inviteUser(scope, { email })))
}

/** Sends the recovery mail, as the user's "forgot password" does. */
export async function sendAuthUserRecovery(controlPlane: ControlPlane, ref: string, email: string, context: AuthUsersContext): Promise<void> {
  await runAuth(controlPlane, ref, context, (scope) => usersAdmin.sendRecovery(scope, { email }))
}

/** Bans for a duration ("24h", "30m"), or lifts a ban with "none". */
export async function banAuthUser(controlPlane: ControlPlane, ref: string, id: string, duration: string, context: AuthUsersContext): Promise<AuthUser> {
  checkId(id)
  if (!BAN_DURATION.test(duration) || duration === '') throw authUsersErrors.invalid(`The ban lasts a duration such as 24h, 30m or 1h30m, or "none" to lift it; got "${duration}"`).concerning('duration')
  return asUser(await runAuth(controlPlane, ref, context, (scope) => usersAdmin.updateUser(scope, id, { ban_duration: duration })))
}

export async function deleteAuthUser(controlPlane: ControlPlane, ref: string, id: string, context: AuthUsersContext): Promise<void> {
  checkId(id)
  await runAuth(controlPlane, ref, context, (scope) => usersAdmin.deleteUser(scope, id))
}

export async function removeAuthUserFactor(controlPlane: ControlPlane, ref: string, id: string, factorId: string, context: AuthUsersContext): Promise<void> {
  checkId(id)
  checkId(factorId)
  await runAuth(controlPlane, ref, context, (scope) => usersAdmin.deleteFactor(scope, id, factorId))
}

/** Ends every session of the user (refresh tokens stop working; access tokens run out at their expiry). */
export async function signOutAuthUserEverywhere(controlPlane: ControlPlane, ref: string, id: string, context: AuthUsersContext): Promise<void> {
  checkId(id)
  await runAuth(controlPlane, ref, context, (scope) => usersAdmin.signOutEverywhere(scope, id))
}

/**
 * A short-lived access token for the user, signed with the project's key as
 * Auth signs its own (no session: it is for the dashboard's own requests as
 * that user, such as the GraphQL explorer's). It sends no mail: only the
 * addressing (the token's issuer) is needed.
 */
export async function authUserToken(
  controlPlane: ControlPlane,
  ref: string,
  user: AuthUser,
  seconds: number,
  context: Pick<AuthUsersContext, 'addressing'>,
): Promise<string> {
  const project = await authProject(controlPlane, ref)
  const now = Math.floor(Date.now() / 1000)
  return signAccessToken(project, {
    iss: `${keysView(project, context.addressing).base_url}/auth/v1`,
    sub: user.id,
    aud: 'authenticated',
    role: user.role || 'authenticated',
    email: user.email ?? '',
    phone: user.phone ?? '',
    app_metadata: user.app_metadata ?? {},
    user_metadata: user.user_metadata ?? {},
    aal: 'aal1',
    is_anonymous: false,
    iat: now,
    exp: now + seconds,
  })
}

function checkId(id: string): void {
  if (!isUuid(id)) throw authUsersErrors.invalid(`"${id}" is not a user or factor id (a UUID)`)
}
