// Admin endpoints (service_role): /admin/users (list, create, get, update,
// delete), /invite, /admin/generate_link. Shapes as GoTrue's admin API. The
// handlers read the request and call users-admin.ts, the operations the
// control plane calls too; generate_link (no control-plane caller) stays here.
import { latestMail } from './db/mail-messages.ts'
import type { Queryable } from './db/pool.ts'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { transaction } from './db/pool.ts'
import { insertUser, setEmailChange, setPassword, userByEmail, userById, type UserRow } from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { mailLink, type LinkType } from './links.ts'
import { checkNewPassword, hashPassword } from './passwords.ts'
import { resolveRedirect } from './redirects.ts'
import { obj, requireAdmin, str, type AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'
import * as usersAdmin from './users-admin.ts'
import type { AuthAdminScope } from './users-admin.ts'

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

/** The request's scope for users-admin.ts: its project's pool and settings, its caller's address. */
export function requestScope(req: AuthRequest): AuthAdminScope {
  return {
    db: req.pool,
    transaction: (work) => transaction(req.pool, work),
    settings: req.settings,
    baseUrl: req.baseUrl,
    projectRoles: req.raw.project.projectRoles,
    ip: req.ip,
    mail: req.mail,
    usage: req.usage,
    hashPassword,
  }
}

export async function listUsers(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const page = Math.max(1, paginationParam(req.query, 'page', 1))
  const perPage = paginationParam(req.query, 'per_page', 50)
  const { users, total } = await usersAdmin.listUsers(requestScope(req), { page, perPage, filter: req.query.get('filter') })
  const link = paginationLinks(`${req.baseUrl}/auth/v1/admin/users`, req.query, page, perPage, total)
  return json(200, { users, aud: 'authenticated' }, { 'x-total-count': String(total), link })
}

/** The most mail a page of GET /admin/mail holds. */
const MAIL_PAGE_LIMIT = 200

/**
 * GET /admin/mail?limit=N (service_role): the project's mail record, newest
 * first, as the operator's `baseplane mail list` reads it; bodies (and so the
 * links) only for mail the outbox kept because no SMTP server is set.
 */
export async function listMail(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const limit = paginationParam(req.query, 'limit', 50)
  if (limit < 1 || limit > MAIL_PAGE_LIMIT) throw authErrors.validation(`limit must be from 1 to ${MAIL_PAGE_LIMIT}, got ${limit}`)
  return json(200, { mail: await latestMail(req.pool, limit) })
}

export async function createUser(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  return json(200, await usersAdmin.createUser(requestScope(req), req.body))
}

export async function getUserById(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  return json(200, await usersAdmin.getUser(requestScope(req), param))
}

export async function updateUser(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  return json(200, await usersAdmin.updateUser(requestScope(req), param, req.body))
}

export async function deleteUser(req: AuthRequest, param: string): Promise<ServiceResponse> {
  requireAdmin(req)
  await usersAdmin.deleteUser(requestScope(req), param, { soft: req.body.should_soft_delete === true })
  return json(200, {})
}

export async function invite(req: AuthRequest): Promise<ServiceResponse> {
  requireAdmin(req)
  const email = str(req.body, 'email')
  const data = obj(req.body, 'data')
  return json(200, await usersAdmin.inviteUser(requestScope(req), { email, data, redirectTo: req.query.get('redirect_to') ?? req.raw.headers['redirect_to'] }))
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
