// POST /signup: email and password accounts; without email and phone, an
// anonymous sign-in (anonymous.ts, a per-project switch). Phone sign-ups are
// not offered (SPEC "Not offered").
import crypto from 'node:crypto'
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { signupAnonymously } from './anonymous.ts'
import { transaction } from './db/pool.ts'
import { insertUser, resetSignup, userByEmail, userById } from './db/users.ts'
import { normalizeEmail } from './email.ts'
import { authErrors } from './errors.ts'
import { audit, mailLink, pkceOf } from './links.ts'
import { checkNewPassword, hashPassword } from './passwords.ts'
import { obj, redirectTo, str, type AuthRequest } from './request.ts'
import { userJson } from './serialize.ts'
import { issueSession } from './tokens.ts'

export async function signup(req: AuthRequest): Promise<ServiceResponse> {
  const body = req.body
  const rawEmail = str(body, 'email')
  const phone = str(body, 'phone')
  if (!rawEmail && !phone) return signupAnonymously(req)
  if (phone && !rawEmail) throw authErrors.phoneDisabled('Phone signups are disabled')
  if (phone && rawEmail) throw authErrors.validation('Only an email address or phone number should be provided on signup.')
  if (req.settings.disableSignup) throw authErrors.signupDisabled()
  const password = checkNewPassword(str(body, 'password'), req.settings)
  const email = normalizeEmail(rawEmail!)
  const pkce = pkceOf(body)
  const redirect = redirectTo(req)
  const data = obj(body, 'data') ?? {}

  const existing = await userByEmail(req.pool, email)
  if (existing?.email_confirmed_at) {
    if (req.settings.mailerAutoconfirm) throw authErrors.userAlreadyExists()
    // GoTrue: an obfuscated user and no mail, so sign-up does not reveal accounts.
    const now = new Date().toISOString()
    return json(200, {
      id: crypto.randomUUID(), aud: 'authenticated', role: 'authenticated', email, phone: '',
      confirmation_sent_at: now, app_metadata: { provider: 'email', providers: ['email'] }, user_metadata: data,
      identities: [], created_at: now, updated_at: now, is_anonymous: false,
    })
  }
  const encrypted = hashPassword(password)
  const result = await transaction(req.pool, async (client) => {
    let userId: string
    if (existing) {
      userId = existing.id
      await resetSignup(client, userId, encrypted, data)
    } else {
      userId = await insertUser(client, { email, encryptedPassword: encrypted, confirmed: req.settings.mailerAutoconfirm, userMetadata: data })
      await audit(client, req, userId, 'user_signedup', { provider: 'email' })
    }
    if (req.settings.mailerAutoconfirm) {
      const user = (await userById(client, userId))!
      return { session: await issueSession(client, req, user, { method: 'password', action: 'login' }) }
    }
    await mailLink(client, req, { userId, email, type: 'signup', redirectTo: redirect, pkce })
    await audit(client, req, userId, 'user_confirmation_requested')
    return { user: (await userById(client, userId))! }
  })
  if ('session' in result) return json(200, result.session)
  return json(200, userJson(result.user))
}
