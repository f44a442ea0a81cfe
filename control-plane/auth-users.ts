// A project's Auth users for the dashboard and the CLI, through the same
// operations the Auth API offers: each call is a request to the project's own
// Auth admin API (`{base_url}/auth/v1/admin/...`, `/invite`, `/recover`,
// `/logout`) with its service_role key, so there is one implementation of each
// (the Auth worker's), with its validation, mail and audit. Only the sessions
// list reads the project database, since GoTrue's API has no call for it.
// It needs the platform to be serving (`baseplane start`).
import type { ProjectRecord } from '../lib/catalogue.ts'
import { BaseplaneError } from '../lib/errors.ts'
import { signAccessToken } from '../lib/jwt.ts'
import type { ControlPlane } from './control-plane.ts'
import { runInProjectDatabase } from './project-database.ts'
import { keysView, type Addressing } from './views.ts'
import { isUuid } from '../lib/uuid.ts'

/** A refusal of the project's Auth API, with its GoTrue error code and status. */
export class AuthUsersError extends BaseplaneError {
  constructor(code: string, message: string, status: number) {
    super(code, message, status)
    this.name = 'AuthUsersError'
  }
}

export const authUsersErrors = {
  authOff: (ref: string) => new AuthUsersError('auth_disabled', `Auth is off for project ${ref}: turn it on first (baseplane products enable auth ${ref})`, 409),
  unreachable: (url: string, detail: string) =>
    new AuthUsersError('platform_unreachable', `The platform at ${url} does not answer (${detail}): user operations go through the running platform; start it with \`baseplane start\``, 503),
  invalid: (message: string) => new AuthUsersError('validation_failed', message, 400),
}

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

export interface UserSession {
  id: string
  created_at: string
  updated_at: string | null
  aal: string | null
  user_agent: string | null
  ip: string | null
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

  constructor(controlPlane: ControlPlane, addressing: Addressing) {
    this.#controlPlane = controlPlane
    this.#addressing = addressing
  }

  async #project(ref: string): Promise<ProjectRecord> {
    const project = await this.#controlPlane.get(ref)
    if (!project.authEnabled) throw authUsersErrors.authOff(project.ref)
    return project
  }

  /** One request to the project's Auth API as service_role; GoTrue's refusals become AuthUsersErrors. */
  async #auth(ref: string, method: string, path: string, body?: unknown, bearer?: string): Promise<{ json: unknown; headers: Headers }> {
    const project = await this.#project(ref)
    const keys = keysView(project, this.#addressing)
    const url = `${keys.base_url}/auth/v1${path}`
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers: {
          apikey: keys.service_role_key,
          authorization: `Bearer ${bearer ?? keys.service_role_key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      })
    } catch (error) {
      throw authUsersErrors.unreachable(this.#addressing.publicUrl, (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message)
    }
    const text = await response.text()
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    if (!response.ok) {
      const answer = (json ?? {}) as Record<string, unknown>
      const code = String(answer.error_code ?? answer.code ?? answer.error ?? 'auth_error')
      const message = String(answer.msg ?? answer.message ?? answer.error_description ?? `Auth answered ${response.status}`)
      throw new AuthUsersError(/^\d+$/.test(code) ? 'auth_error' : code, message, response.status)
    }
    return { json, headers: response.headers }
  }

  async list(ref: string, options: { page?: number; perPage?: number; email?: string } = {}): Promise<UserPage> {
    const page = options.page ?? 1
    const perPage = options.perPage ?? 25
    const query = new URLSearchParams({ page: String(page), per_page: String(perPage) })
    if (options.email) query.set('filter', options.email)
    const { json, headers } = await this.#auth(ref, 'GET', `/admin/users?${query}`)
    const users = ((json as { users?: AuthUser[] }).users ?? []) as AuthUser[]
    return { ref, users, total: Number(headers.get('x-total-count') ?? users.length), page, per_page: perPage }
  }

  async get(ref: string, id: string): Promise<AuthUser> {
    checkId(id)
    return (await this.#auth(ref, 'GET', `/admin/users/${id}`)).json as AuthUser
  }

  /** The user's sessions, newest first (read from the project database: the Auth API has no call for them). */
  async sessions(ref: string, id: string): Promise<UserSession[]> {
    checkId(id)
    const project = await this.#project(ref)
    return runInProjectDatabase(await this.#controlPlane.serverUrl(project.dbServer), project.dbName, async (client) => {
      const { rows } = await client.query<UserSession>(
        `select id::text, created_at::text, updated_at::text, aal::text, user_agent, host(ip) as ip
           from auth.sessions where user_id = $1 order by created_at desc limit 100`,
        [id],
      )
      return rows
    })
  }

  async create(ref: string, input: { email: string; password?: string; confirm?: boolean }): Promise<AuthUser> {
    return (
      await this.#auth(ref, 'POST', '/admin/users', {
        email: input.email,
        ...(input.password ? { password: input.password } : {}),
        email_confirm: input.confirm ?? true,
      })
    ).json as AuthUser
  }

  /** Sends the invitation mail (the project's invite template). */
  async invite(ref: string, email: string): Promise<AuthUser> {
    return (await this.#auth(ref, 'POST', '/invite', { email })).json as AuthUser
  }

  /** Sends the recovery mail, as the user's "forgot password" does. */
  async sendRecovery(ref: string, email: string): Promise<void> {
    await this.#auth(ref, 'POST', '/recover', { email })
  }

  /** Bans for a duration ("24h", "30m"), or lifts a ban with "none". */
  async ban(ref: string, id: string, duration: string): Promise<AuthUser> {
    checkId(id)
    if (!BAN_DURATION.test(duration) || duration === '') throw authUsersErrors.invalid(`The ban lasts a duration such as 24h, 30m or 1h30m, or "none" to lift it; got "${duration}"`)
    return (await this.#auth(ref, 'PUT', `/admin/users/${id}`, { ban_duration: duration })).json as AuthUser
  }

  async delete(ref: string, id: string): Promise<void> {
    checkId(id)
    await this.#auth(ref, 'DELETE', `/admin/users/${id}`)
  }

  async removeFactor(ref: string, id: string, factorId: string): Promise<void> {
    checkId(id)
    checkId(factorId)
    await this.#auth(ref, 'DELETE', `/admin/users/${id}/factors/${factorId}`)
  }

  /** Ends every session of the user (refresh tokens stop working; access tokens run out at their expiry). */
  async signOutEverywhere(ref: string, id: string): Promise<void> {
    const user = await this.get(ref, id)
    await this.#auth(ref, 'POST', '/logout?scope=global', undefined, await this.userToken(ref, user, 60))
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
