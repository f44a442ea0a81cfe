// Admin endpoints (service_role): /admin/users (list, create, get, update,
// delete), /invite, /admin/generate_link. Shapes as GoTrue's admin API.
import type { Queryable } from './db/pool.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { deleteIdentitiesOfUser } from './db/identities.ts'
import { deleteCodesOfUser } from './db/one-time-tokens.ts'
import { deleteSessionsOfUser } from './db/sessions.ts'
import {
  confirmEmail,
  countUsers,
  deleteUser as deleteUserRow,
  insertUser,
  listUsers as listUserRows,
  mergeMetadata,
  replaceEmail,
  setBannedUntil,
  setEmailChange,
  setPassword,
  setRole,
  softDeleteUser,
  userByEmail,
  userById,
  type UserRow,
} from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, type LinkType } from './links.ts'
import { checkNewPassword, hashPassword } from './passwords.ts'
import { resolveRedirect } from './redirects.ts'
import { isUuid, obj, redirectTo, requireAdmin, str, uuidParam, type AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'

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
function userRoleOf(req: AuthRequest, body: Record<string, unknown>): string | undefined {
  const role = str(body, 'role')
  if (role === undefined || role === '') return undefined
  const allowed = ['authenticated', ...req.raw.project.projectRoles]
  if (!allowed.includes(role)) {
    throw authErrors.validation(`role must be ${allowed.length === 1 ? 'authenticated' : `one of ${allowed.join(', ')}`} (add roles with baseplane projects roles), got "${role}"`)
  }
  return role
}

function passwordHashOf(req: AuthRequest, body: Record<string, unknown>): string | null | undefined {
  const password = str(body, 'password')
  const hash = str(body, 'password_hash')
  if (password !== undefined && hash !== undefined) throw authErrors.validation('Only a password or a password hash should be provided')
  if (hash !== undefined) {
    if (!/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(hash)) throw authErrors.validation('Invalid password hash format: only bcrypt hashes are accepted')
    return hash
  }
  if (password !== undefined) return hashPassword(checkNewPassword(password, req.settings))
  return undefined
}

async function userOr404(db: Queryable, id: string): Promise<UserRow> {
  const user = await userById(db, id)
  if (user === undefined) throw authErrors.userNotFound()
  return user
}

/**
 * GoTrue's paginate: an absent or empty value is the default (auth-js always
 * sends `page=&per_page=`), anything else an unsigned integer, else 400 with
 * Go's ParseUint text. Page 0 reads as page 1 (pop's paginator). Unlike
 * GoTrue, per_page is capped, so one request cannot load every user at once.
 */
function paginationParam(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name) ?? ''
  if (raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw authErrors.validation(`Bad Pagination Parameters: strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`)
  const value = Number(raw)
  if (!Number.isSafeInteger(value)) throw authErrors.validation(`Bad Pagination Parameters: strconv.ParseUint: parsing ${JSON.stringify(raw)}: value out of range`)
  return value
}

export const MAX_PER_PAGE = 1000

/**
 * GoTrue's Link header: the request's own address with `page` set, a `next`
 * link while pages remain, then always `last` (page 0 when there are no
 * users). `page` comes first: auth-js reads the page from the first `=`.
 */
function paginationLinks(base: string, query: URLSearchParams, page: number, perPage: number, total: number): string {
  const last = Math.ceil(total / perPage)
  const rest = [...query].filter(([key]) => key !== 'page').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const link = (p: number) => `<${base}?${new URLSearchParams([['page', String(p)], ...rest]).toString()}>`
  const links: string[] = []
  if (last > page) links.push(`${link(page + 1)}; rel="next"`)
  links.push(`${link(last)}; rel="last"`)
  return links.join(', ')
}

export async function listUsers(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const page = Math.max(1, paginationParam(req.query, 'page', 1))
  const perPage = paginationParam(req.query, 'per_page', 50)
  if (perPage === 0) throw authErrors.validation('Bad Pagination Parameters: per_page must be greater than 0')
  if (perPage > MAX_PER_PAGE) throw authErrors.validation(`Bad Pagination Parameters: per_page must be at most ${MAX_PER_PAGE}`)
  const filter = req.query.get('filter')
  const like = filter ? `%${filter.replace(/[\\%_]/g, '\\$&')}%` : null
  const [rows, total] = await Promise.all([listUserRows(req.pool, like, perPage, (page - 1) * perPage), countUsers(req.pool, like)])
  const link = paginationLinks(`${req.raw.project.baseUrl}/auth/v1/admin/users`, req.query, page, perPage, total)
  return json(200, { users: rows.map(userJson), aud: 'authenticated' }, { 'x-total-count': String(total), link })
}

export async function createUser(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const body = req.body
  const rawEmail = str(body, 'email')
  const id = str(body, 'id')
  if (!rawEmail && !str(body, 'phone')) throw authErrors.validation('Cannot create a user without either an email or phone')
  if (!rawEmail) throw authErrors.phoneDisabled('Phone signups are disabled')
  if (id !== undefined && !isUuid(id)) throw authErrors.validation('ID must conform to the uuid v4 format')
  const email = normalizeEmail(rawEmail)
  const encrypted = passwordHashOf(req, body)
  const banned = banUntil(str(body, 'ban_duration'))
  const role = userRoleOf(req, body)
  const user = await transaction(req.pool, async (client) => {
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
    await audit(client, req, userId, 'user_signedup', { provider: 'email', via: 'admin' })
    return userOr404(client, userId)
  })
  return json(200, userJson(user))
}

export async function getUserById(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  const id = uuidParam(param, 'user_id')
  return json(200, userJson(await userOr404(req.pool, id)))
}

export async function updateUser(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  const id = uuidParam(param, 'user_id')
  const body = req.body
  const rawEmail = str(body, 'email')
  const email = rawEmail !== undefined ? normalizeEmail(rawEmail) : undefined
  if (str(body, 'phone')) throw authErrors.phoneDisabled()
  const encrypted = passwordHashOf(req, body)
  const banned = banUntil(str(body, 'ban_duration'))
  const role = userRoleOf(req, body)
  const user = await transaction(req.pool, async (client) => {
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
    await audit(client, req, id, 'user_modified', { via: 'admin' })
    return userOr404(client, id)
  })
  return json(200, userJson(user))
}

export async function deleteUser(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  const id = uuidParam(param, 'user_id')
  const soft = req.body.should_soft_delete === true
  await transaction(req.pool, async (client) => {
    await userOr404(client, id)
    if (soft) {
      await softDeleteUser(client, id)
      await deleteIdentitiesOfUser(client, id)
      await deleteSessionsOfUser(client, id)
      await deleteCodesOfUser(client, id)
    } else {
      await deleteUserRow(client, id)
    }
    await audit(client, req, id, 'user_deleted', { soft })
  })
  return json(200, {})
}

export async function invite(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const raw = str(req.body, 'email')
  if (!raw) throw authErrors.validation('An email address is required')
  const email = normalizeEmail(raw)
  const redirect = redirectTo(req)
  const data = obj(req.body, 'data') ?? {}
  const user = await transaction(req.pool, async (client) => {
    const existing = await userByEmail(client, email)
    if (existing?.email_confirmed_at) throw authErrors.emailExists()
    const userId = existing?.id ?? (await insertUser(client, { email, encryptedPassword: null, confirmed: false, invited: true, userMetadata: data }))
    await mailLink(client, req, { userId, email, type: 'invite', redirectTo: redirect })
    await audit(client, req, userId, 'user_invited', { user_email: email })
    return userOr404(client, userId)
  })
  return json(200, userJson(user))
}

const LINK_TYPES = ['signup', 'invite', 'magiclink', 'recovery', 'email_change_current', 'email_change_new'] as const

export async function generateLink(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const body = req.body
  const type = str(body, 'type') ?? ''
  if (!(LINK_TYPES as readonly string[]).includes(type)) throw authErrors.validation(`Invalid email action link type requested: ${type}`)
  const changeType = type === 'email_change_current' || type === 'email_change_new'
  if (type === 'email_change_current' && !req.settings.secureEmailChange) throw authErrors.validation('Enable secure email change to generate link for current email')
  const email = normalizeEmail(str(body, 'email') ?? '')
  const redirect = resolveRedirect(req.settings, req.query.get('redirect_to') ?? str(body, 'redirect_to'))
  const data = obj(body, 'data') ?? {}
  const encrypted = type === 'signup' ? hashPassword(checkNewPassword(str(body, 'password'), req.settings)) : undefined
  const newEmail = changeType ? normalizeEmail(str(body, 'new_email') ?? '') : undefined
  const result = await transaction(req.pool, async (client) => {
    let user = await userByEmail(client, email)
    let linkType: LinkType
    if (type === 'recovery' || changeType) {
      if (!user) throw authErrors.userNotFound('User with this email not found')
      linkType = type === 'recovery' ? 'recovery' : 'email_change'
      if (newEmail) {
        if (await userByEmail(client, newEmail)) throw authErrors.emailExists()
        await setEmailChange(client, user.id, newEmail, true)
      }
    } else if (type === 'magiclink' && user) {
      linkType = 'magiclink'
    } else {
      if (user?.email_confirmed_at && type !== 'magiclink') throw authErrors.emailExists()
      if (!user) {
        const id = await insertUser(client, { email, encryptedPassword: encrypted ?? null, confirmed: false, invited: type === 'invite', userMetadata: data })
        user = (await userById(client, id))!
      } else if (encrypted) await setPassword(client, user.id, encrypted)
      linkType = type === 'invite' ? 'invite' : 'signup'
    }
    const issued = await mailLink(client, req, { userId: user.id, email, newEmail, type: linkType, redirectTo: redirect, send: false, current: type === 'email_change_current' })
    return { user: await userOr404(client, user.id), issued, linkType }
  })
  return json(200, {
    ...userJson(result.user),
    action_link: result.issued.link,
    email_otp: result.issued.code,
    hashed_token: result.issued.hash,
    verification_type: result.linkType,
    redirect_to: redirect,
  })
}
