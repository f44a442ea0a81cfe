// GET /health and GET /settings (GoTrue's shapes).
import type { ServiceResponse } from '../../lib/service.ts'
import { json } from '../../lib/service.ts'
import { NOT_OFFERED } from './disabled.ts'
import type { AuthRequest } from './request.ts'
import { googleMissing } from './settings.ts'
import { AUTH_OPTIONS } from './settings-table.ts'

export function health(): ServiceResponse {
  return json(200, { version: 'v2.170.0-baseplane', name: 'GoTrue', description: 'GoTrue is a user registration and authentication API' })
}

/** GoTrue's `external` keys, in its order (internal/api/settings.go). */
const PROVIDERS = [
  'anonymous_users', 'apple', 'azure', 'bitbucket', 'discord', 'facebook', 'snapchat', 'figma', 'fly', 'github', 'gitlab',
  'google', 'keycloak', 'kakao', 'linkedin', 'linkedin_oidc', 'notion', 'spotify', 'slack', 'slack_oidc', 'workos', 'twitch',
  'twitter', 'email', 'phone', 'zoom',
]

/** The project's switches GoTrue's GET /settings shows, as the table says where (settings-table.ts). */
function shownSwitches(req: AuthRequest): { top: Record<string, boolean>; external: Record<string, boolean> } {
  const shown = { top: {} as Record<string, boolean>, external: {} as Record<string, boolean> }
  for (const option of AUTH_OPTIONS) {
    if (option.type !== 'switch' || !('public' in option) || !('field' in option)) continue
    shown['external' in option.public ? 'external' : 'top'][option.public.key] = req.settings[option.field]
  }
  return shown
}

export function settings(req: AuthRequest): ServiceResponse {
  const switches = shownSwitches(req)
  const external: Record<string, boolean> = {}
  for (const name of PROVIDERS) external[name] = switches.external[name] ?? false
  external.phone = NOT_OFFERED.phone
  external.email = true
  external.google = googleMissing(req.settings.google).length === 0
  return json(200, {
    external,
    // disable_signup, mailer_autoconfirm: GoTrue's order is the table's.
    ...switches.top,
    phone_autoconfirm: NOT_OFFERED.phoneAutoconfirm,
    sms_provider: NOT_OFFERED.smsProvider,
    saml_enabled: NOT_OFFERED.saml,
    saml_private_key_next_configured: false,
    passkeys_enabled: NOT_OFFERED.passkeys,
  })
}
