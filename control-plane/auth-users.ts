// A project's Auth users for the dashboard and the CLI, through Auth's own
// operations (workers/auth/users-admin.ts, offered by Auth's face,
// workers/auth/face.ts; the Auth admin API's handlers call them too), so there
// is one implementation of each, with its validation, mail and audit. Each call is one short connection to the project's database
// as Auth's role, in one transaction: nothing here needs the platform to be
// serving. Invitations and recovery mails go out as the worker sends them
// (the project's send email hook, else SMTP_URL, else the project's outbox),
// with the mail settings of this process's configuration.
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { signAccessToken } from '../lib/jwt.ts'
import type { WorkerOptions } from '../lib/service.ts'
import * as usersAdmin from '../workers/auth/face.ts'
import type { AuthAdminScope } from '../workers/auth/face.ts'
import type { ControlPlane } from './control-plane.ts'
import { runInProjectDatabase } from './project-database.ts'
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

export class AuthUsers {
  readonly #controlPlane: ControlPlane
  readonly #addressing: Addressing
  readonly #mail: MailDelivery

  constructor(controlPlane: ControlPlane, addressing: Addressing, mail: MailDelivery) {
    this.#controlPlane = controlPlane
    this.#addressing = addressing
    this.#mail = mail
  }

  async #project(ref: string): Promise<ProjectRecord> {
    const project = await this.#controlPlane.get(ref)
    if (!project.authEnabled) throw authUsersErrors.authOff(project.ref)
    return project
  }

  /** Runs one operation of Auth's on the project's database, in one transaction. */
  async #auth<T>(ref: string, work: (scope: AuthAdminScope) => Promise<T>): Promise<T> {
    const project = await this.#project(ref)
    const baseUrl = keysView(project, this.#addressing).base_url
    return runInProjectDatabase(await this.#controlPlane.serverUrl(project.dbServer), project.dbName, async (client) =>
      work(await usersAdmin.projectScope(client, { ...project, baseUrl }, this.#mail)),
    )
  }

  async list(ref: string, options: { page?: number; perPage?: number; email?: string } = {}): Promise<UserPage> {
    const page = options.page ?? 1
    const perPage = options.perPage ?? 25
    const { users, total } = await this.#auth(ref, (scope) => usersAdmin.listUsers(scope, { page, perPage, filter: options.email }))
    return { ref, users: users.map(asUser), total, page, per_page: perPage }
  }

  async get(ref: string, id: string): Promise<AuthUser> {
    checkId(id)
    return asUser(await this.#auth(ref, (scope) => usersAdmin.getUser(scope, id)))
  }

  /** The user's sessions, newest first. */
  async sessions(ref: string, id: string): Promise<usersAdmin.UserSession[]> {
    checkId(id)
    return this.#auth(ref, (scope) => usersAdmin.userSessions(scope, id))
  }

  async create(ref: string, input: { email: string; password?: string; confirm?: boolean }): Promise<AuthUser> {
    const body = { email: input.email, ...(input.password ? { password: input.password } : {}), email_confirm: input.confirm ?? true }
    return asUser(await this.#auth(ref, (scope) => usersAdmin.createUser(scope, body)))
  }

  /** Sends the invitation mail (the project's invite template); its link lands on the site URL. */
  async invite(ref: string, email: string): Promise<AuthUser> {
    return asUser(await this.#auth(ref, (scope) => usersAdmin.inviteUser(scope, { email })))
  }

  /** Sends the recovery mail, as the user's "forgot password" does. */
  async sendRecovery(ref: string, email: string): Promise<void> {
    await this.#auth(ref, (scope) => usersAdmin.sendRecovery(scope, { email }))
  }

  /** Bans for a duration ("24h", "30m"), or lifts a ban with "none". */
  async ban(ref: string, id: string, duration: string): Promise<AuthUser> {
    checkId(id)
    if (!BAN_DURATION.test(duration) || duration === '') throw authUsersErrors.invalid(`The ban lasts a duration such as 24h, 30m or 1h30m, or "none" to lift it; got "${duration}"`).concerning('duration')
    return asUser(await this.#auth(ref, (scope) => usersAdmin.updateUser(scope, id, { ban_duration: duration })))
  }

  async delete(ref: string, id: string): Promise<void> {
    checkId(id)
    await this.#auth(ref, (scope) => usersAdmin.deleteUser(scope, id))
  }

  async removeFactor(ref: string, id: string, factorId: string): Promise<void> {
    checkId(id)
    checkId(factorId)
    await this.#auth(ref, (scope) => usersAdmin.deleteFactor(scope, id, factorId))
  }

  /** Ends every session of the user (refresh tokens stop working; access tokens run out at their expiry). */
  async signOutEverywhere(ref: string, id: string): Promise<void> {
    checkId(id)
    await this.#auth(ref, (scope) => usersAdmin.signOutEverywhere(scope, id))
  }

  /**
   * A short-lived access token for the user, signed with the project's key as
   * Auth signs its own (no session: it is for the dashboard's own requests as
   * that user, such as the GraphQL explorer's).
   */
  async userToken(ref: string, user: AuthUser, seconds: number): Promise<string> {
    const project = await this.#project(ref)
    const now = Math.floor(Date.now() / 1000)
    return signAccessToken(project, {
      iss: `${keysView(project, this.#addressing).base_url}/auth/v1`,
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
}

function checkId(id: string): void {
  if (!isUuid(id)) throw authUsersErrors.invalid(`"${id}" is not a user or factor id (a UUID)`)
}
