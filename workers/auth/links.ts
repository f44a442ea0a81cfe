// Mailing a code and its link: the shared step of sign-up, invite, recovery,
// magic link, resend and email change. Also the PKCE parameters those
// endpoints accept.
import type pg from 'pg'
import type { Queryable } from './db/pool.ts'
import { issueCode } from './codes.ts'
import { insertAuditEntry } from './db/audit.ts'
import { secondsUntilNextCode, type TokenType } from './db/one-time-tokens.ts'
import { markMailSent } from './db/users.ts'
import { createFlowState, type Pkce } from './db/flow-state.ts'
import { authErrors } from './errors.ts'
import { sendMail } from './mail/mailer.ts'
import type { TemplateKind } from './mail/templates.ts'
import { str, type AuthRequest } from './request.ts'

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

export function verifyUrl(req: AuthRequest, linkToken: string, type: LinkType, redirectTo: string): string {
  const q = new URLSearchParams({ token: linkToken, type, redirect_to: redirectTo })
  return `${req.raw.project.baseUrl}/auth/v1/verify?${q.toString()}`
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
}

export interface IssuedLink {
  code: string
  hash: string
  link: string
}

/**
 * Issues a fresh code for the user and mails its link, inside the caller's
 * transaction. Refuses with 429 when the same kind was mailed to this user
 * less than the minimum interval ago, or the project's hourly ceiling is hit.
 */
export async function mailLink(client: pg.ClientBase, req: AuthRequest, link: LinkRequest): Promise<IssuedLink> {
  const tokenType = TOKEN_TYPE_OF[link.type]
  const send = link.send !== false
  if (send && req.settings.mailMinIntervalSeconds > 0) {
    const wait = await secondsUntilNextCode(client, link.userId, tokenType, req.settings.mailMinIntervalSeconds)
    if (wait) throw authErrors.emailTooSoon(Math.max(1, wait))
  }
  const flow = link.pkce
    ? await createFlowState(client, { userId: link.userId, pkce: link.pkce, providerType: 'email', method: PKCE_METHOD_OF[link.type], referrer: link.redirectTo })
    : undefined
  const relatesTo = link.newEmail ?? link.email
  const issued = await issueCode(client, link.userId, tokenType, relatesTo, { flowStateId: flow?.id ?? null, redirectTo: link.redirectTo })
  const url = verifyUrl(req, issued.linkToken, link.type, link.redirectTo)
  if (send) {
    await markMailSent(client, link.userId, link.type)
    await sendMail(client, req.settings, {
      kind: KIND_OF[link.type],
      to: relatesTo,
      values: {
        ConfirmationURL: url,
        Token: issued.code,
        TokenHash: issued.hash,
        SiteURL: req.settings.siteUrl,
        Email: link.email,
        NewEmail: link.newEmail ?? '',
        RedirectTo: link.redirectTo,
      },
    })
  }
  return { code: issued.code, hash: issued.hash, link: url }
}

export async function audit(db: Queryable, req: AuthRequest, actorId: string | null, action: string, traits: Record<string, unknown> = {}): Promise<void> {
  await insertAuditEntry(db, actorId, action, traits, req.ip)
}
