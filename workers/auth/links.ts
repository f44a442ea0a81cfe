// Mailing a code and its link: the shared step of sign-up, invite, recovery,
// magic link, resend and email change (to one or both addresses); mailing a
// reauthentication code. Also the PKCE parameters those endpoints accept.
import type pg from 'pg'
import type { Queryable } from './db/pool.ts'
import { issueCode } from './codes.ts'
import { insertAuditEntry } from './db/audit.ts'
import { deleteCodesOfType, secondsUntilNextCode, type TokenType } from './db/one-time-tokens.ts'
import { markMailSent, setEmailChange } from './db/users.ts'
import { createFlowState, type Pkce } from './db/flow-state.ts'
import { authErrors } from './errors.ts'
import type { EmailData } from './hooks/send-email.ts'
import { sendMail } from './mail/mailer.ts'
import type { QuotaCaps } from '../../lib/plans.ts'
import type { TemplateKind } from './mail/templates.ts'
import { str } from './request.ts'
import type { AuthSettings } from './settings.ts'
import type { ServiceUsage, WorkerOptions } from '../../lib/service.ts'
import { noteMail } from './usage-note.ts'

/**
 * What mailing a link needs to know besides the database: an AuthRequest in
 * the worker, or the control plane's scope of a project (users-admin.ts).
 */
export interface LinkContext {
  settings: AuthSettings
  /** The caller's address, for the audit log and the send email hook ('' from the control plane). */
  ip: string
  /** The project's base URL: links point at {baseUrl}/auth/v1/verify. */
  baseUrl: string
  /** How the platform sends mail (SMTP_URL or the outbox): the process's own configuration. */
  mail: WorkerOptions['mail']
  /** The request's usage note, where the mail sent counts (usage-note.ts); none from the control plane. */
  usage?: ServiceUsage
  /** The project's caps (lib/plans.ts); none from the control plane, whose operator's invitations are never refused. */
  caps?: QuotaCaps
}

/** The `type` a link carries to /verify. */
export type LinkType = 'signup' | 'invite' | 'recovery' | 'magiclink' | 'email_change'

const KIND_OF: Record<LinkType, TemplateKind> = {
  signup: 'confirmation',
  invite: 'invite',
  recovery: 'recovery',
  magiclink: 'magic_link',
  email_change: 'email_change',
}

export const TOKEN_TYPE_OF: Record<LinkType, TokenType> = {
  signup: 'confirmation_token',
  invite: 'confirmation_token',
  recovery: 'recovery_token',
  magiclink: 'recovery_token',
  email_change: 'email_change_token_new',
}

/** The flow's first-factor method in the amr claim after a PKCE exchange (GoTrue's names). */
export const PKCE_METHOD_OF: Record<LinkType, string> = {
  signup: 'email/signup',
  invite: 'invite',
  recovery: 'recovery',
  magiclink: 'magiclink',
  email_change: 'email_change',
}


/** PKCE parameters of the body: both or neither (GoTrue's messages). */
export function pkceOf(body: Record<string, unknown>): Pkce | undefined {
  const challenge = str(body, 'code_challenge')
  const method = str(body, 'code_challenge_method')
  if (!challenge && !method) return undefined
  if (!challenge || !method) throw authErrors.validation('PKCE flow requires code_challenge_method and code_challenge')
  if (challenge.length < 43 || challenge.length > 128) throw authErrors.validation('code challenge has to be between 43 and 128 characters')
  const lower = method.toLowerCase()
  if (lower !== 's256' && lower !== 'plain') throw authErrors.validation(`code challenge method ${method} is not supported: use s256 or plain`)
  return { challenge, method: lower }
}

export function verifyUrl(req: LinkContext, linkToken: string, type: LinkType, redirectTo: string): string {
  const q = new URLSearchParams({ token: linkToken, type, redirect_to: redirectTo })
  return `${req.baseUrl}/auth/v1/verify?${q.toString()}`
}

export interface LinkRequest {
  userId: string
  /** The user's address (template {{ .Email }}). */
  email: string
  type: LinkType
  redirectTo: string
  pkce?: Pkce
  /** Email change: the new address; the code is for it and the mail goes to it. */
  newEmail?: string
  /** generate_link: make the code and link but send nothing. */
  send?: boolean
  /** Email change: the code for the current address instead (secure email change), mailed to it. */
  current?: boolean
  /** The PKCE flow state an earlier link of the same request made (the two mails of a secure email change share one). */
  flowStateId?: string | null
}

export interface IssuedLink {
  code: string
  hash: string
  link: string
  flowStateId: string | null
}

/**
 * Issues a fresh code for the user and mails its link, inside the caller's
 * transaction. Refuses with 429 when the same kind was mailed to this user
 * less than the minimum interval ago, or the project's hourly ceiling is hit.
 */
export async function mailLink(client: pg.ClientBase, req: LinkContext, link: LinkRequest): Promise<IssuedLink> {
  const tokenType = link.current ? 'email_change_token_current' : TOKEN_TYPE_OF[link.type]
  const send = link.send !== false
  if (send) await checkInterval(client, req, link.userId, tokenType)
  const flowStateId = link.flowStateId !== undefined
    ? link.flowStateId
    : link.pkce
      ? (await createFlowState(client, { userId: link.userId, pkce: link.pkce, providerType: 'email', method: PKCE_METHOD_OF[link.type], referrer: link.redirectTo })).id
      : null
  const relatesTo = link.current ? link.email : (link.newEmail ?? link.email)
  const issued = await issueCode(client, link.userId, tokenType, relatesTo, { flowStateId, redirectTo: link.redirectTo })
  const url = verifyUrl(req, issued.linkToken, link.type, link.redirectTo)
  if (send) await deliverLink(client, req, link, issued, url, hookEmailData(req, link, issued.code, issued.hash))
  return { code: issued.code, hash: issued.hash, link: url, flowStateId }
}

/** Mails an issued link (the project's template, or its send email hook with `hookData`) and records when. */
async function deliverLink(client: pg.ClientBase, req: LinkContext, link: LinkRequest, issued: { code: string; hash: string }, url: string, hookData: EmailData): Promise<void> {
  await markMailSent(client, link.userId, link.type)
  const delivery = await sendMail(client, req.settings, req.mail, req.caps?.mail_sent, {
    kind: KIND_OF[link.type],
    to: link.current ? link.email : (link.newEmail ?? link.email),
    values: {
      ConfirmationURL: url,
      Token: issued.code,
      TokenHash: issued.hash,
      SiteURL: req.settings.siteUrl,
      Email: link.email,
      NewEmail: link.newEmail ?? '',
      RedirectTo: link.redirectTo,
    },
    hook: { userId: link.userId, ip: req.ip, data: hookData },
  })
  noteMail(req, delivery)
}

/** GoTrue's SMTP max frequency: 429 when a code of this type went to the user less than the minimum interval ago. */
async function checkInterval(client: pg.ClientBase, req: LinkContext, userId: string, tokenType: TokenType): Promise<void> {
  if (req.settings.mailMinIntervalSeconds <= 0) return
  const wait = await secondsUntilNextCode(client, userId, tokenType, req.settings.mailMinIntervalSeconds)
  if (wait) throw authErrors.emailTooSoon(Math.max(1, wait))
}

export interface EmailChangeRequest {
  userId: string
  /** The current address; empty when the user has none (then only the new address confirms). */
  email: string
  newEmail: string
  redirectTo: string
  pkce?: Pkce
}

/**
 * Mails an address change (PUT /user, POST /resend): a link to the new
 * address and, with secure email change on (GoTrue's default), one to the
 * current address too, both of type email_change; the change applies once
 * both are confirmed (verify.ts). Both links are new, so neither address
 * counts as confirmed yet.
 */
export async function mailEmailChange(client: pg.ClientBase, req: LinkContext, change: EmailChangeRequest): Promise<IssuedLink> {
  await setEmailChange(client, change.userId, change.newEmail, false)
  const common = { userId: change.userId, email: change.email, newEmail: change.newEmail, type: 'email_change' as const, redirectTo: change.redirectTo }
  if (!req.settings.secureEmailChange || change.email === '') {
    // A current-address code left from a change asked while the setting was on would hold this one back.
    await deleteCodesOfType(client, change.userId, ['email_change_token_current'])
    return mailLink(client, req, { ...common, pkce: change.pkce })
  }
  if (req.settings.hooks.sendEmail === undefined) {
    const toNew = await mailLink(client, req, { ...common, pkce: change.pkce })
    await mailLink(client, req, { ...common, current: true, flowStateId: toNew.flowStateId })
    return toNew
  }
  // A send email hook gets both addresses' codes in one call, as GoTrue makes it: token and
  // token_hash_new for the current address, token_new and token_hash for the new one.
  await checkInterval(client, req, change.userId, 'email_change_token_new')
  await checkInterval(client, req, change.userId, 'email_change_token_current')
  const toNew = await mailLink(client, req, { ...common, pkce: change.pkce, send: false })
  const toCurrent = await mailLink(client, req, { ...common, current: true, flowStateId: toNew.flowStateId, send: false })
  const data = { ...hookEmailData(req, common, toNew.code, toNew.hash), token: toCurrent.code, token_hash_new: toCurrent.hash }
  await deliverLink(client, req, common, toNew, toNew.link, data)
  return toNew
}

/** Mails a code with no link (GET /reauthenticate): GoTrue's reauthentication mail. */
export async function mailCode(client: pg.ClientBase, req: LinkContext, userId: string, email: string): Promise<void> {
  await checkInterval(client, req, userId, 'reauthentication_token')
  const issued = await issueCode(client, userId, 'reauthentication_token', email, { redirectTo: '' })
  await markMailSent(client, userId, 'reauthentication')
  const delivery = await sendMail(client, req.settings, req.mail, req.caps?.mail_sent, {
    kind: 'reauthentication',
    to: email,
    values: { ConfirmationURL: '', Token: issued.code, TokenHash: issued.hash, SiteURL: req.settings.siteUrl, Email: email, NewEmail: '', RedirectTo: '' },
    hook: {
      userId,
      ip: req.ip,
      data: { token: issued.code, token_hash: issued.hash, redirect_to: '', email_action_type: 'reauthentication', site_url: req.settings.siteUrl, token_new: '', token_hash_new: '' },
    },
  })
  noteMail(req, delivery)
}

/**
 * The send email hook's email_data for a link (GoTrue's names). An email
 * change's link carries its half: token + token_hash_new for the current
 * address, token_new + token_hash for the new one, as GoTrue pairs them
 * (mailEmailChange puts both halves in one call).
 */
function hookEmailData(req: LinkContext, link: LinkRequest, code: string, hash: string) {
  const base = { redirect_to: link.redirectTo, email_action_type: link.type, site_url: req.settings.siteUrl }
  if (link.type !== 'email_change') return { ...base, token: code, token_hash: hash, token_new: '', token_hash_new: '' }
  return link.current ? { ...base, token: code, token_hash: '', token_new: '', token_hash_new: hash } : { ...base, token: '', token_hash: hash, token_new: code, token_hash_new: '' }
}

export async function audit(db: Queryable, req: Pick<LinkContext, 'ip'>, actorId: string | null, action: string, traits: Record<string, unknown> = {}): Promise<void> {
  await insertAuditEntry(db, actorId, action, traits, req.ip)
}
