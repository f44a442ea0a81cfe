// A project's auth settings: the raw jsonb the catalogue stores
// (baseplane.projects.auth_settings), validated, with defaults applied.
// The control plane validates with the same functions before saving.
import { globExample, globSyntaxProblem } from './redirects.ts'
import { defaultTemplates, REQUIRED_VARIABLE, TEMPLATE_KINDS, type TemplateKind } from './mail/templates.ts'
import { hookSettingsOf, hookSettingsProblems, type HookSettings } from './hooks/settings.ts'
import { webauthnSettings, webauthnSettingsProblems, type WebAuthnSettings } from './webauthn-settings.ts'

export interface Template {
  subject: string
  body: string
}

export interface GoogleSettings {
  clientId: string | undefined
  clientSecret: string | undefined
  enabled: boolean
  /** Further audiences the id_token grant accepts: the project's iOS and Android client IDs (GoTrue's comma-separated GOOGLE_CLIENT_ID). */
  additionalClientIds: string[]
}

export interface AuthSettings {
  /** Where links land when they ask for nowhere in particular (SPEC 1, redirect addresses). */
  siteUrl: string
  /** Further allowed redirect addresses (GoTrue's glob syntax). */
  additionalRedirectUrls: string[]
  templates: Record<TemplateKind, Template>
  /** Which kinds have a saved (non-default) template. */
  customTemplates: TemplateKind[]
  /** Ceiling on successful mails per project per hour (SPEC 8.3). */
  mailPerHour: number
  /** Least time between two mails of one kind to one user (GoTrue's SMTP max frequency). */
  mailMinIntervalSeconds: number
  /** Lifetime of emailed codes and links. */
  otpExpirySeconds: number
  /** Wrong guesses after which a code is spent (SPEC 8.2: five). */
  otpMaxAttempts: number
  jwtExpirySeconds: number
  /** Within this many seconds of a session's last refresh, any of its used refresh tokens gets the current one (GoTrue's SECURITY_REFRESH_TOKEN_REUSE_INTERVAL). */
  refreshTokenReuseIntervalSeconds: number
  disableSignup: boolean
  mailerAutoconfirm: boolean
  passwordMinLength: number
  /** GoTrue's MAILER_SECURE_EMAIL_CHANGE_ENABLED (default on): an address change is confirmed by the current address too. */
  secureEmailChange: boolean
  /** GoTrue's SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION (default off): a password change from a session older than 24 h needs the GET /reauthenticate code. */
  passwordChangeRequiresReauthentication: boolean
  /** GoTrue's EXTERNAL_ANONYMOUS_USERS_ENABLED (default off): POST /signup with neither email nor phone signs in an anonymous user. */
  anonymousUsersEnabled: boolean
  /** GoTrue's RATE_LIMIT_ANONYMOUS_USERS: anonymous sign-ins per source address per hour. */
  anonymousUsersPerHour: number
  /** GoTrue's SECURITY_MANUAL_LINKING_ENABLED (default off): linkIdentity() and unlinkIdentity() (/user/identities/*). */
  manualLinkingEnabled: boolean
  google: GoogleSettings
  /** Auth hooks (hooks/settings.ts): each on when its URI is set. */
  hooks: HookSettings
  /** WebAuthn second factors: both switches off by default, the relying party (webauthn-settings.ts). */
  webauthn: WebAuthnSettings
}

/** Stored keys (snake_case, as in the catalogue's jsonb). */
export interface StoredAuthSettings {
  site_url?: string
  additional_redirect_urls?: string[]
  templates?: Partial<Record<TemplateKind, Template>>
  mail_per_hour?: number
  mail_min_interval_seconds?: number
  otp_expiry_seconds?: number
  jwt_expiry_seconds?: number
  refresh_token_reuse_interval_seconds?: number
  disable_signup?: boolean
  mailer_autoconfirm?: boolean
  password_min_length?: number
  mailer_secure_email_change_enabled?: boolean
  security_update_password_require_reauthentication?: boolean
  external_anonymous_users_enabled?: boolean
  rate_limit_anonymous_users?: number
  security_manual_linking_enabled?: boolean
  google?: { client_id?: string; client_secret?: string; enabled?: boolean; additional_client_ids?: string[] }
  hook_custom_access_token_uri?: string | null
  hook_send_email_uri?: string | null
  /** Write-only: `v1,whsec_<base64>`, `|`-separated. */
  hook_send_email_secrets?: string | null
  mfa_web_authn_enroll_enabled?: boolean
  mfa_web_authn_verify_enabled?: boolean
  webauthn_rp_id?: string
  webauthn_rp_display_name?: string
  webauthn_rp_origins?: string[]
}

export const DEFAULTS = {
  siteUrl: 'http://localhost:3000',
  mailPerHour: 30,
  mailMinIntervalSeconds: 60,
  otpExpirySeconds: 3600,
  otpMaxAttempts: 5,
  jwtExpirySeconds: 3600,
  refreshTokenReuseIntervalSeconds: 10,
  passwordMinLength: 6,
  anonymousUsersPerHour: 30,
} as const

/** The numeric settings: stored key, bounds. */
export const NUMERIC_SETTINGS: Record<string, { min: number; max: number }> = {
  mail_per_hour: { min: 0, max: 1000000 },
  mail_min_interval_seconds: { min: 0, max: 86400 },
  otp_expiry_seconds: { min: 60, max: 86400 },
  jwt_expiry_seconds: { min: 30, max: 604800 },
  refresh_token_reuse_interval_seconds: { min: 0, max: 3600 },
  password_min_length: { min: 6, max: 72 },
  rate_limit_anonymous_users: { min: 1, max: 1000000 },
}

/** Switches; the security and anonymous ones keep the names of Supabase's management API. */
export const BOOLEAN_SETTINGS = [
  'disable_signup',
  'mailer_autoconfirm',
  'mailer_secure_email_change_enabled',
  'security_update_password_require_reauthentication',
  'external_anonymous_users_enabled',
  'security_manual_linking_enabled',
] as const

/** Checks a redirect address setting: an absolute http(s) URL or a glob of one. Returns the message of what is wrong. */
export function redirectUrlProblem(value: string, what: string): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return `${what} must be a URL`
  if (/\s/.test(value)) return `${what} must not contain spaces: "${value}"`
  // Allow-list entries are GoTrue globs (redirects.ts): valid syntax, and an address they match is a URL.
  const isSite = what.startsWith('Site URL')
  const syntax = isSite ? undefined : globSyntaxProblem(value)
  if (syntax) return `${what} "${value}" is not a valid pattern: ${syntax}`
  const probe = isSite ? value : globExample(value)
  let parsed: URL
  try {
    parsed = new URL(probe)
  } catch {
    return `${what} must be an absolute URL such as https://app.example.com, got "${value}"`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    // Custom schemes (mobile deep links) are allowed on the allow list only.
    if (isSite) return `${what} must be an http or https URL, got "${value}"`
  }
  return undefined
}

/** What is wrong with a template's subject, if anything (the subject alone, so a refusal can name its field). */
export function templateSubjectProblem(kind: string, subject: unknown): string | undefined {
  if (typeof subject !== 'string' || subject.trim() === '') return `The ${kind} template needs a subject`
  if (subject.length > 500) return `The ${kind} template's subject is longer than 500 characters`
  return undefined
}

export function templateProblem(kind: string, template: { subject?: unknown; body?: unknown }): string | undefined {
  if (!(TEMPLATE_KINDS as readonly string[]).includes(kind)) return `Unknown template kind "${kind}": use one of ${TEMPLATE_KINDS.join(', ')}`
  return templateSubjectProblem(kind, template.subject) ?? templateBodyProblem(kind as TemplateKind, template.body)
}

/** What is wrong with a template's body alone (`kind` known). */
export function templateBodyProblem(kind: TemplateKind, body: unknown): string | undefined {
  if (typeof body !== 'string' || body.trim() === '') return `The ${kind} template needs an HTML body`
  if (body.length > 100000) return `The ${kind} template's body is longer than 100000 characters`
  const required = REQUIRED_VARIABLE[kind]
  if (!required.pattern.test(body)) {
    const what = kind === 'reauthentication' ? 'the code the user enters' : 'the link the user clicks'
    return `The ${kind} template's body must contain ${required.name} (${what}); it was refused`
  }
  return undefined
}

/** Every problem of a stored settings object (empty when valid). */
export function settingsProblems(stored: Record<string, unknown>): string[] {
  const problems: string[] = []
  const s = stored as StoredAuthSettings
  if (s.site_url !== undefined) {
    const p = redirectUrlProblem(s.site_url, 'Site URL')
    if (p) problems.push(p)
  }
  if (s.additional_redirect_urls !== undefined) {
    if (!Array.isArray(s.additional_redirect_urls)) problems.push('additional_redirect_urls must be a list of URLs')
    else for (const url of s.additional_redirect_urls) {
      const p = redirectUrlProblem(url, 'Allowed redirect URL')
      if (p) problems.push(p)
    }
  }
  for (const [key, bounds] of Object.entries(NUMERIC_SETTINGS)) {
    const value = stored[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      problems.push(`${key} must be a whole number from ${bounds.min} to ${bounds.max}`)
    }
  }
  for (const key of BOOLEAN_SETTINGS) {
    if (stored[key] !== undefined && typeof stored[key] !== 'boolean') problems.push(`${key} must be true or false`)
  }
  if (s.templates !== undefined) {
    if (typeof s.templates !== 'object' || s.templates === null) problems.push('templates must be an object')
    else for (const [kind, template] of Object.entries(s.templates)) {
      const p = templateProblem(kind, (template ?? {}) as Template)
      if (p) problems.push(p)
    }
  }
  if (s.google !== undefined) {
    const g = s.google
    if (typeof g !== 'object' || g === null) problems.push('google must be an object')
    else {
      if (g.client_id !== undefined && (typeof g.client_id !== 'string' || g.client_id.trim() === '')) problems.push('google.client_id must be a non-empty string')
      if (g.client_secret !== undefined && (typeof g.client_secret !== 'string' || g.client_secret.trim() === '')) problems.push('google.client_secret must be a non-empty string')
      if (g.enabled !== undefined && typeof g.enabled !== 'boolean') problems.push('google.enabled must be true or false')
      if (g.additional_client_ids !== undefined) problems.push(...googleClientIdsProblems(g.additional_client_ids))
    }
  }
  problems.push(...webauthnSettingsProblems(stored))
  problems.push(...hookSettingsProblems(stored))
  return problems
}

const cache = new Map<string, { version: number; settings: AuthSettings }>()

/**
 * The effective settings of a project. Stored values that fail validation
 * (the control plane never saves such) fall back to defaults rather than fail
 * every request. Cached per project and catalogue version.
 */
export function resolveSettings(ref: string, version: number, stored: Record<string, unknown>): AuthSettings {
  const hit = cache.get(ref)
  if (hit && hit.version === version) return hit.settings
  const settings = applyDefaults(stored)
  if (cache.size > 5000) cache.clear()
  cache.set(ref, { version, settings })
  return settings
}

function num(stored: Record<string, unknown>, key: string, fallback: number): number {
  const value = stored[key]
  const bounds = NUMERIC_SETTINGS[key]!
  return typeof value === 'number' && Number.isInteger(value) && value >= bounds.min && value <= bounds.max ? value : fallback
}

export function applyDefaults(stored: Record<string, unknown>): AuthSettings {
  const s = stored as StoredAuthSettings
  const templates = { ...defaultTemplates() }
  const customTemplates: TemplateKind[] = []
  if (s.templates && typeof s.templates === 'object') {
    for (const kind of TEMPLATE_KINDS) {
      const t = s.templates[kind]
      if (t && templateProblem(kind, t) === undefined) {
        templates[kind] = { subject: t.subject, body: t.body }
        customTemplates.push(kind)
      }
    }
  }
  const siteUrl = typeof s.site_url === 'string' && !redirectUrlProblem(s.site_url, 'Site URL') ? s.site_url : DEFAULTS.siteUrl
  const google = s.google && typeof s.google === 'object' ? s.google : {}
  return Object.freeze({
    siteUrl,
    additionalRedirectUrls: Array.isArray(s.additional_redirect_urls) ? s.additional_redirect_urls.filter((u) => typeof u === 'string') : [],
    templates,
    customTemplates,
    mailPerHour: num(stored, 'mail_per_hour', DEFAULTS.mailPerHour),
    mailMinIntervalSeconds: num(stored, 'mail_min_interval_seconds', DEFAULTS.mailMinIntervalSeconds),
    otpExpirySeconds: num(stored, 'otp_expiry_seconds', DEFAULTS.otpExpirySeconds),
    otpMaxAttempts: DEFAULTS.otpMaxAttempts,
    jwtExpirySeconds: num(stored, 'jwt_expiry_seconds', DEFAULTS.jwtExpirySeconds),
    refreshTokenReuseIntervalSeconds: num(stored, 'refresh_token_reuse_interval_seconds', DEFAULTS.refreshTokenReuseIntervalSeconds),
    disableSignup: s.disable_signup === true,
    mailerAutoconfirm: s.mailer_autoconfirm === true,
    passwordMinLength: num(stored, 'password_min_length', DEFAULTS.passwordMinLength),
    secureEmailChange: s.mailer_secure_email_change_enabled !== false,
    passwordChangeRequiresReauthentication: s.security_update_password_require_reauthentication === true,
    anonymousUsersEnabled: s.external_anonymous_users_enabled === true,
    anonymousUsersPerHour: num(stored, 'rate_limit_anonymous_users', DEFAULTS.anonymousUsersPerHour),
    hooks: hookSettingsOf(stored),
    manualLinkingEnabled: s.security_manual_linking_enabled === true,
    webauthn: webauthnSettings(stored, siteUrl),
    google: {
      clientId: typeof google.client_id === 'string' && google.client_id !== '' ? google.client_id : undefined,
      clientSecret: typeof google.client_secret === 'string' && google.client_secret !== '' ? google.client_secret : undefined,
      enabled: google.enabled === true,
      additionalClientIds: Array.isArray(google.additional_client_ids) ? google.additional_client_ids.filter((id) => typeof id === 'string' && id !== '') : [],
    },
  })
}

/** The most extra Google client IDs a project lists (a web, iOS and Android client each, with room to spare). */
export const MAX_GOOGLE_CLIENT_IDS = 20

/** What is wrong with a list of further Google client IDs (google.additional_client_ids), one problem each. */
export function googleClientIdsProblems(ids: unknown): string[] {
  if (!Array.isArray(ids)) return ['google.additional_client_ids must be a list of client IDs']
  const problems: string[] = []
  if (ids.length > MAX_GOOGLE_CLIENT_IDS) problems.push(`google.additional_client_ids holds at most ${MAX_GOOGLE_CLIENT_IDS} client IDs`)
  for (const id of ids) {
    if (typeof id !== 'string' || !/^[^\s,]{1,255}$/.test(id)) problems.push(`google.additional_client_ids: ${JSON.stringify(id)} is not a client ID (no spaces or commas, 1 to 255 characters)`)
  }
  return problems
}

/** Which of the three Google settings are missing (empty when the provider is offered). */
export function googleMissing(google: GoogleSettings): string[] {
  const missing: string[] = []
  if (!google.clientId) missing.push('client ID')
  if (!google.clientSecret) missing.push('client secret')
  if (!google.enabled) missing.push('the on switch (enable)')
  return missing
}
