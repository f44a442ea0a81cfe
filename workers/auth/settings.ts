// A project's auth settings: the raw jsonb the catalogue stores
// (baseplane.projects.auth_settings), validated, with defaults applied.
// The control plane validates with the same functions before saving. The
// settings PATCH /projects/{ref}/auth takes are declared in settings-table.ts.
import { globExample, globSyntaxProblem } from './redirects.ts'
import { defaultTemplates, REQUIRED_VARIABLE, TEMPLATE_KINDS, type TemplateKind } from './mail/templates.ts'
import { hooksView, hookSettingsOf, sendEmailHookSecretsMissing, type HookSettings } from './hooks/settings.ts'
import { originsOffRpIdProblems, webauthnSettings, type WebAuthnSettings } from './webauthn-settings.ts'
import { AUTH_OPTIONS, optionProblems, type OptionFields, type OptionFieldsView, type StoredOptions } from './settings-table.ts'

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

/** The effective settings; the table's numbers and switches (OptionFields: mailPerHour, mailerAutoconfirm, ...) besides these. */
export interface AuthSettings extends OptionFields {
  /** Where links land when they ask for nowhere in particular (SPEC 1, redirect addresses). */
  siteUrl: string
  /** Further allowed redirect addresses (GoTrue's glob syntax). */
  additionalRedirectUrls: string[]
  templates: Record<TemplateKind, Template>
  /** Which kinds have a saved (non-default) template. */
  customTemplates: TemplateKind[]
  /** Wrong guesses after which a code is spent (SPEC 8.2: five). */
  otpMaxAttempts: number
  google: GoogleSettings
  /** Auth hooks (hooks/settings.ts): each on when its URI is set. */
  hooks: HookSettings
  /** WebAuthn second factors: both switches off by default, the relying party (webauthn-settings.ts). */
  webauthn: WebAuthnSettings
}

/** Stored keys (snake_case, as in the catalogue's jsonb): the table's (StoredOptions) and these. */
export interface StoredAuthSettings extends StoredOptions {
  site_url?: string
  additional_redirect_urls?: string[]
  templates?: Partial<Record<TemplateKind, Template>>
  google?: { client_id?: string; client_secret?: string; enabled?: boolean; additional_client_ids?: string[] }
}

export const DEFAULTS = {
  siteUrl: 'http://localhost:3000',
  otpMaxAttempts: 5,
} as const

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

/** A problem of a stored settings object, with the setting it concerns (a form draws it beside that input). */
export interface SettingProblem {
  field: string
  message: string
}

/** Every problem of a stored settings object, each with its setting (empty when valid). */
export function settingsRefusals(stored: Record<string, unknown>): SettingProblem[] {
  const problems: SettingProblem[] = []
  const refuse = (field: string, message: string | undefined) => {
    if (message !== undefined) problems.push({ field, message })
  }
  const s = stored as StoredAuthSettings
  if (s.site_url !== undefined) refuse('site_url', redirectUrlProblem(s.site_url, 'Site URL'))
  if (s.additional_redirect_urls !== undefined) {
    if (!Array.isArray(s.additional_redirect_urls)) refuse('additional_redirect_urls', 'additional_redirect_urls must be a list of URLs')
    else for (const url of s.additional_redirect_urls) refuse('additional_redirect_urls', redirectUrlProblem(url, 'Allowed redirect URL'))
  }
  for (const option of AUTH_OPTIONS) for (const message of optionProblems(option, stored[option.name])) refuse(option.name, message)
  // Checks across settings, after each one's own.
  for (const message of originsOffRpIdProblems(stored)) refuse('webauthn_rp_origins', message)
  refuse('hook_send_email_uri', sendEmailHookSecretsMissing(stored))
  if (s.templates !== undefined) {
    if (typeof s.templates !== 'object' || s.templates === null) refuse('templates', 'templates must be an object')
    else for (const [kind, template] of Object.entries(s.templates)) refuse('templates', templateProblem(kind, (template ?? {}) as Template))
  }
  if (s.google !== undefined) {
    const g = s.google
    if (typeof g !== 'object' || g === null) refuse('google', 'google must be an object')
    else {
      if (g.client_id !== undefined && (typeof g.client_id !== 'string' || g.client_id.trim() === '')) refuse('google.client_id', 'google.client_id must be a non-empty string')
      if (g.client_secret !== undefined && (typeof g.client_secret !== 'string' || g.client_secret.trim() === '')) refuse('google.client_secret', 'google.client_secret must be a non-empty string')
      if (g.enabled !== undefined && typeof g.enabled !== 'boolean') refuse('google.enabled', 'google.enabled must be true or false')
      if (g.additional_client_ids !== undefined) for (const message of googleClientIdsProblems(g.additional_client_ids)) refuse('google.additional_client_ids', message)
    }
  }
  return problems
}

/** Every problem of a stored settings object (empty when valid). */
export function settingsProblems(stored: Record<string, unknown>): string[] {
  return settingsRefusals(stored).map((problem) => problem.message)
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

/** The table's numbers and switches in effect: a stored value that fails its check (never saved so) gives the default. */
function optionFields(stored: Record<string, unknown>): OptionFields {
  const fields: Record<string, number | boolean> = {}
  for (const option of AUTH_OPTIONS) {
    if (!('field' in option)) continue
    const value = stored[option.name]
    fields[option.field] = value !== undefined && optionProblems(option, value).length === 0 ? (value as number | boolean) : option.default
  }
  return fields as OptionFields
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
    otpMaxAttempts: DEFAULTS.otpMaxAttempts,
    ...optionFields(stored),
    hooks: hookSettingsOf(stored),
    webauthn: webauthnSettings(stored, siteUrl),
    google: {
      clientId: typeof google.client_id === 'string' && google.client_id !== '' ? google.client_id : undefined,
      clientSecret: typeof google.client_secret === 'string' && google.client_secret !== '' ? google.client_secret : undefined,
      enabled: google.enabled === true,
      additionalClientIds: Array.isArray(google.additional_client_ids) ? google.additional_client_ids.filter((id) => typeof id === 'string' && id !== '') : [],
    },
  })
}

/**
 * The table's settings as GET /projects/{ref}/auth shows them, defaults
 * applied, by stored name: the numbers and switches, WebAuthn's relying
 * party, the hooks' URIs and how many secrets are set (never the secrets).
 */
export function optionsView(stored: Record<string, unknown>) {
  const effective = applyDefaults(stored)
  const fields = Object.fromEntries(AUTH_OPTIONS.flatMap((option) => ('field' in option ? [[option.name, effective[option.field]]] : []))) as OptionFieldsView
  return {
    ...fields,
    mfa_web_authn_enroll_enabled: effective.webauthn.enrollEnabled,
    mfa_web_authn_verify_enabled: effective.webauthn.verifyEnabled,
    webauthn_rp_id: effective.webauthn.rpId,
    webauthn_rp_display_name: effective.webauthn.rpDisplayName,
    webauthn_rp_origins: effective.webauthn.rpOrigins,
    ...hooksView(stored),
  }
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
