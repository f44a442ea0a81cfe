// Operations on a project's auth settings (catalogue column auth_settings)
// and its auth mail, shared by the CLI (commands/auth.ts, commands/mail.ts)
// and the admin API (admin-api/auth.ts). Saving bumps the project's catalogue
// version (trigger), so the next request uses the new settings.
import { withPoolTransaction } from '../lib/db/request-transaction.ts'
import { Checks, platformErrors } from '../lib/errors.ts'
import {
  TEMPLATE_KINDS,
  type TemplateKind,
  applyDefaults,
  BOOLEAN_SETTINGS,
  googleMissing,
  NUMERIC_SETTINGS,
  redirectUrlProblem,
  settingsProblems,
  templateBodyProblem,
  templateSubjectProblem,
  googleClientIdsProblems,
  type StoredAuthSettings,
  HOOK_SETTINGS,
  hooksView,
  withoutClearedHooks,
  WEBAUTHN_SETTINGS,
  latestMail,
  type OutboxMail,
} from '../workers/auth/face.ts'

export type { OutboxMail }
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { lockAuthSettings, updateAuthSettings } from './db/projects.ts'
import { runInProjectDatabase } from './project-database.ts'

/** Kind names on the command line and in the API (SPEC 2.2: `recovery`; the others are ours). */
export const KINDS = TEMPLATE_KINDS

async function stored(controlPlane: ControlPlane, ref: string): Promise<StoredAuthSettings> {
  return (await getProject(controlPlane, ref)).authSettings as StoredAuthSettings
}

/** Read-modify-write under a row lock, validated as a whole before it is saved. */
async function update(controlPlane: ControlPlane, ref: string, change: (current: StoredAuthSettings) => StoredAuthSettings): Promise<StoredAuthSettings> {
  await getProject(controlPlane, ref)
  const next = await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const next = change(structuredClone((await lockAuthSettings<StoredAuthSettings>(client, ref)) ?? {}))
    const problems = settingsProblems(next as Record<string, unknown>)
    if (problems.length > 0) throw platformErrors.invalidArgument(problems.join('; '))
    await updateAuthSettings(client, ref, next)
    return next
  })
  await controlPlane.changed()
  return next
}

/** What the CLI and API show: every setting with defaults applied, secrets reduced to "set or not". */
export function authSettingsView(ref: string, settings: StoredAuthSettings) {
  const effective = applyDefaults(settings as Record<string, unknown>)
  return {
    ref,
    site_url: effective.siteUrl,
    additional_redirect_urls: effective.additionalRedirectUrls,
    mail_per_hour: effective.mailPerHour,
    mail_min_interval_seconds: effective.mailMinIntervalSeconds,
    otp_expiry_seconds: effective.otpExpirySeconds,
    jwt_expiry_seconds: effective.jwtExpirySeconds,
    refresh_token_reuse_interval_seconds: effective.refreshTokenReuseIntervalSeconds,
    password_min_length: effective.passwordMinLength,
    disable_signup: effective.disableSignup,
    mailer_autoconfirm: effective.mailerAutoconfirm,
    mailer_secure_email_change_enabled: effective.secureEmailChange,
    security_update_password_require_reauthentication: effective.passwordChangeRequiresReauthentication,
    external_anonymous_users_enabled: effective.anonymousUsersEnabled,
    rate_limit_anonymous_users: effective.anonymousUsersPerHour,
    security_manual_linking_enabled: effective.manualLinkingEnabled,
    mfa_web_authn_enroll_enabled: effective.webauthn.enrollEnabled,
    mfa_web_authn_verify_enabled: effective.webauthn.verifyEnabled,
    webauthn_rp_id: effective.webauthn.rpId,
    webauthn_rp_display_name: effective.webauthn.rpDisplayName,
    webauthn_rp_origins: effective.webauthn.rpOrigins,
    ...hooksView(settings as Record<string, unknown>),
    custom_templates: effective.customTemplates,
    google: googleView(settings),
  }
}

export function googleView(settings: StoredAuthSettings) {
  const effective = applyDefaults(settings as Record<string, unknown>).google
  const missing = googleMissing(effective)
  return {
    client_id: effective.clientId ?? null,
    client_secret_set: effective.clientSecret !== undefined,
    enabled: effective.enabled,
    additional_client_ids: effective.additionalClientIds,
    offered: missing.length === 0,
    missing,
  }
}

export async function getAuthSettings(controlPlane: ControlPlane, ref: string) {
  return authSettingsView(ref, await stored(controlPlane, ref))
}

/** Google sign-in's settings as shown (the secret as "set or not"). */
export async function getGoogle(controlPlane: ControlPlane, ref: string) {
  return googleView(await stored(controlPlane, ref))
}

export interface RedirectsChange {
  siteUrl?: string
  /** The whole allow list, replacing what is there. */
  allow?: string[]
  /** Entries added to the list (after `allow`, when both are given). */
  add?: string[]
  /** Entries taken off the list; each must be on it. */
  remove?: string[]
}

export async function setRedirects(controlPlane: ControlPlane, ref: string, input: RedirectsChange) {
  if (input.siteUrl === undefined && input.allow === undefined && !input.add?.length && !input.remove?.length) {
    throw platformErrors.invalidArgument('Give a site URL, allowed redirect URLs, or both')
  }
  if (input.siteUrl !== undefined) {
    const problem = redirectUrlProblem(input.siteUrl, 'Site URL')
    if (problem) throw platformErrors.invalidArgument(problem, 'site_url')
  }
  for (const url of [...(input.allow ?? []), ...(input.add ?? [])]) {
    const problem = redirectUrlProblem(url, 'Allowed redirect URL')
    if (problem) throw platformErrors.invalidArgument(problem, 'additional_redirect_urls')
  }
  const next = await update(controlPlane, ref, (current) => {
    const list = new Set(input.allow ?? current.additional_redirect_urls ?? [])
    for (const url of input.add ?? []) list.add(url)
    for (const url of input.remove ?? []) {
      if (!list.delete(url)) throw platformErrors.invalidArgument(`"${url}" is not on the allow list of ${ref}`, 'additional_redirect_urls')
    }
    return {
      ...current,
      ...(input.siteUrl !== undefined ? { site_url: input.siteUrl.replace(/\/$/, '') } : {}),
      ...(input.allow !== undefined || input.add?.length || input.remove?.length ? { additional_redirect_urls: [...list] } : {}),
    }
  })
  return authSettingsView(ref, next)
}

function checkKind(kind: string): TemplateKind {
  if (!(KINDS as readonly string[]).includes(kind)) throw platformErrors.invalidArgument(`Unknown template kind "${kind}": use one of ${KINDS.join(', ')}`)
  return kind as TemplateKind
}

export async function listTemplates(controlPlane: ControlPlane, ref: string) {
  const effective = applyDefaults((await stored(controlPlane, ref)) as Record<string, unknown>)
  return KINDS.map((kind) => ({
    kind,
    custom: effective.customTemplates.includes(kind),
    subject: effective.templates[kind].subject,
    body: effective.templates[kind].body,
  }))
}

export async function setTemplate(controlPlane: ControlPlane, ref: string, kind: string, template: { subject: string; body: string }) {
  const valid = checkKind(kind)
  // Both fields' problems at once (a form shows each beside its input).
  const checks = new Checks()
  const subjectProblem = templateSubjectProblem(valid, template.subject)
  if (subjectProblem) checks.refuse(platformErrors.invalidArgument(subjectProblem, 'subject'))
  const problem = templateBodyProblem(valid, template.body)
  if (problem) checks.refuse(platformErrors.invalidArgument(problem, 'body'))
  checks.settle()
  await update(controlPlane, ref, (current) => ({ ...current, templates: { ...(current.templates ?? {}), [valid]: { subject: template.subject, body: template.body } } }))
  return { ref, kind: valid, custom: true, subject: template.subject, body: template.body }
}

export async function resetTemplate(controlPlane: ControlPlane, ref: string, kind: string) {
  const valid = checkKind(kind)
  const next = await update(controlPlane, ref, (current) => {
    const templates = { ...(current.templates ?? {}) }
    delete templates[valid]
    return { ...current, templates }
  })
  const effective = applyDefaults(next as Record<string, unknown>)
  return { ref, kind: valid, custom: false, subject: effective.templates[valid].subject, body: effective.templates[valid].body }
}

export interface GoogleInput {
  /** null removes it (the provider is then no longer offered). */
  clientId?: string | null
  /** null removes it. */
  clientSecret?: string | null
  enabled?: boolean
  /** The project's iOS and Android client IDs, which native sign-in (the id_token grant) also accepts; [] removes them. */
  additionalClientIds?: string[]
}

/** Client ID, write-only secret, switch. The answer says which of the three is missing. */
export async function setGoogle(controlPlane: ControlPlane, ref: string, input: GoogleInput) {
  // Every field's problem at once (a form shows each beside its input).
  const checks = new Checks()
  const refuse = (message: string, field: string) => checks.refuse(platformErrors.invalidArgument(message, field))
  if (typeof input.clientId === 'string' && input.clientId.trim() === '') refuse('The Google client ID must not be empty', 'client_id')
  if (typeof input.clientSecret === 'string' && input.clientSecret.trim() === '') refuse('The Google client secret must not be empty', 'client_secret')
  const idsProblems = input.additionalClientIds === undefined ? [] : googleClientIdsProblems([...new Set(input.additionalClientIds.map((id) => id.trim()))])
  if (idsProblems.length > 0) refuse(idsProblems.join('; '), 'additional_client_ids')
  checks.settle()
  const next = await update(controlPlane, ref, (current) => {
    const google = {
      ...(current.google ?? {}),
      ...(typeof input.clientId === 'string' ? { client_id: input.clientId.trim() } : {}),
      ...(typeof input.clientSecret === 'string' ? { client_secret: input.clientSecret.trim() } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(input.additionalClientIds !== undefined ? { additional_client_ids: [...new Set(input.additionalClientIds.map((id) => id.trim()))] } : {}),
    }
    if (input.clientId === null) delete google.client_id
    if (input.clientSecret === null) delete google.client_secret
    return { ...current, google }
  })
  return { ref, ...googleView(next) }
}

/** Other settings (mail ceiling, intervals, expiries, switches) by their stored names. */
export async function setAuthOptions(controlPlane: ControlPlane, ref: string, patch: Record<string, unknown>) {
  const known = new Set<string>([...Object.keys(NUMERIC_SETTINGS), ...BOOLEAN_SETTINGS, ...WEBAUTHN_SETTINGS, ...HOOK_SETTINGS])
  for (const key of Object.keys(patch)) {
    if (!known.has(key)) throw platformErrors.invalidArgument(`Unknown auth setting "${key}": use one of ${[...known].join(', ')}`)
  }
  const next = await update(controlPlane, ref, (current) => withoutClearedHooks({ ...current, ...patch }))
  return authSettingsView(ref, next)
}

/** The project's mail record, newest first (bodies kept for outbox delivery only). */
export async function listMail(controlPlane: ControlPlane, ref: string, limit = 50): Promise<OutboxMail[]> {
  const project = await getProject(controlPlane, ref)
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  return runInProjectDatabase(serverUrl, project.dbName, async (client) => {
    return latestMail(client, limit)
  })
}
