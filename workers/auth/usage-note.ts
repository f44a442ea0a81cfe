// What an Auth request counts for in its project's usage (issue 27 item 1):
// the session it issued (a sign-in, a refresh, a second factor's upgrade) and
// for whom, and the mail the platform sent while answering it. The request
// carries its note (AuthRequest.usage, and LinkContext.usage down to the
// mail); worker.ts hands it to the data plane with the answer
// (ServiceResponse.usage), which counts it on the main thread. A context
// without a note (the control plane's own operations) counts nothing.
import type { ServiceUsage } from '../../lib/service.ts'
import type { MailDelivery } from './mail/mailer.ts'

/** Whatever carries a request's note: the request, or a link context made from it. */
export interface UsageNoted {
  usage?: ServiceUsage
}

/**
 * A session issued to `user`. GoTrue's authentication method tells its kind:
 * `token_refresh` a refresh; a second factor (`totp`, `mfa/webauthn`) upgrades
 * a session whose sign-in was counted already; anything else is a sign-in.
 * The user is active either way (Supabase: signed in or refreshed a token).
 */
export function noteSession(noted: UsageNoted, user: { id: string; is_anonymous: boolean }, method: string): void {
  const note = noted.usage
  if (note === undefined) return
  note.session = sessionKind(method)
  note.user = { id: user.id, anonymous: user.is_anonymous === true }
}

/** What issuing a session with GoTrue's authentication `method` is. */
export function sessionKind(method: string): 'refresh' | 'upgrade' | 'sign_in' {
  return method === 'token_refresh' ? 'refresh' : SECOND_FACTORS.has(method) ? 'upgrade' : 'sign_in'
}

/** A mail delivered: the platform's (SMTP or the outbox) counts; a send email hook's is the project's own mail. */
export function noteMail(noted: UsageNoted, delivery: MailDelivery): void {
  const note = noted.usage
  if (note !== undefined && delivery !== 'hook') note.mails = (note.mails ?? 0) + 1
}

const SECOND_FACTORS = new Set(['totp', 'webauthn', 'phone', 'mfa/totp', 'mfa/webauthn', 'mfa/phone'])
