// GET /health and GET /settings (GoTrue's shapes).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { NOT_OFFERED } from './disabled.ts'
import type { AuthRequest } from './request.ts'
import { googleMissing } from './settings.ts'

export function health(): ServiceResponse {
  return json(200, { version: 'v2.170.0-baseplane', name: 'GoTrue', description: 'GoTrue is a user registration and authentication API' })
}

/** GoTrue's `external` keys, in its order (internal/api/settings.go). */
const PROVIDERS = [
  'anonymous_users', 'apple', 'azure', 'bitbucket', 'discord', 'facebook', 'snapchat', 'figma', 'fly', 'github', 'gitlab',
  'google', 'keycloak', 'kakao', 'linkedin', 'linkedin_oidc', 'notion', 'spotify', 'slack', 'slack_oidc', 'workos', 'twitch',
  'twitter', 'email', 'phone', 'zoom',
]

export function settings(req: AuthRequest): ServiceResponse {
  const external: Record<string, boolean> = {}
  for (const name of PROVIDERS) external[name] = false
  external.anonymous_users = req.settings.anonymousUsersEnabled
  external.phone = NOT_OFFERED.phone
  external.email = true
  external.google = googleMissing(req.settings.google).length === 0
  return json(200, {
    external,
    disable_signup: req.settings.disableSignup,
    mailer_autoconfirm: req.settings.mailerAutoconfirm,
    phone_autoconfirm: NOT_OFFERED.phoneAutoconfirm,
    sms_provider: NOT_OFFERED.smsProvider,
    saml_enabled: NOT_OFFERED.saml,
    saml_private_key_next_configured: false,
    passkeys_enabled: NOT_OFFERED.passkeys,
  })
}
