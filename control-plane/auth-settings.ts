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
  AUTH_OPTIONS,
  authOption,
  googleMissing,
  optionsView,
  redirectUrlProblem,
  settingsRefusals,
  templateBodyProblem,
  templateSubjectProblem,
  googleClientIdsProblems,
  type StoredAuthSettings,
  withoutCleared,
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

/** The same stored value (jsonb keeps no key order that matters here). */
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Read-modify-write under a row lock, validated as a whole before it is
 * saved: every problem at once, each naming its setting (a form draws it
 * beside that input; the API answers them as one refusal, their sentences
 * joined). A change that leaves the stored settings as they were writes
 * nothing (no new catalogue version): `before` and `after` say what it did.
 */
async function update(
  controlPlane: ControlPlane,
  ref: string,
  change: (current: StoredAuthSettings) => StoredAuthSettings,
): Promise<{ before: StoredAuthSettings; after: StoredAuthSettings }> {
  await getProject(controlPlane, ref)
  const result = await withPoolTransaction(controlPlane.catalogue, async (client) => {
    const before = (await lockAuthSettings<StoredAuthSettings>(client, ref)) ?? {}
    const after = change(structuredClone(before))
    const checks = new Checks()
    for (const problem of settingsRefusals(after as Record<string, unknown>)) checks.refuse(platformErrors.invalidArgument(problem.message, problem.field))
    checks.settle()
    if (same(before, after)) return { before, after, written: false }
    await updateAuthSettings(client, ref, after)
    return { before, after, written: true }
  })
  if (result.written) await controlPlane.changed()
  return { before: result.before, after: result.after }
}

/** What the CLI and API show: every setting with defaults applied, secrets reduced to "set or not". */
export function authSettingsView(ref: string, settings: StoredAuthSettings) {
  const effective = applyDefaults(settings as Record<string, unknown>)
  return {
    ref,
    site_url: effective.siteUrl,
    additional_redirect_urls: effective.additionalRedirectUrls,
    ...optionsView(settings as Record<string, unknown>),
    custom_templates: effective.customTemplates,
    google: googleView(settings),
  }
}

export type AuthSettingsView = ReturnType<typeof authSettingsView>

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

/** The redirect settings as `auth redirects` shows them. */
export function redirectsView(settings: AuthSettingsView) {
  return { ref: settings.ref, site_url: settings.site_url, additional_redirect_urls: settings.additional_redirect_urls }
}

/** Changes the redirect settings; answers every setting and the ones that changed (site_url, additional_redirect_urls). */
export async function changeRedirects(controlPlane: ControlPlane, ref: string, input: RedirectsChange) {
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
  const { before, after } = await update(controlPlane, ref, (current) => {
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
  const [was, now] = [authSettingsView(ref, before), authSettingsView(ref, after)]
  return { settings: now, changed: (['site_url', 'additional_redirect_urls'] as const).filter((key) => !same(was[key], now[key])) }
}

export async function setRedirects(controlPlane: ControlPlane, ref: string, input: RedirectsChange) {
  return (await changeRedirects(controlPlane, ref, input)).settings
}

function checkKind(kind: string): TemplateKind {
  if (!(KINDS as readonly string[]).includes(kind)) throw platformErrors.invalidArgument(`Unknown template kind "${kind}": use one of ${KINDS.join(', ')}`)
  return kind as TemplateKind
}

/** A template in effect: the saved one, or the default. */
function templateOf(settings: StoredAuthSettings, kind: TemplateKind) {
  const effective = applyDefaults(settings as Record<string, unknown>)
  return { kind, custom: effective.customTemplates.includes(kind), subject: effective.templates[kind].subject, body: effective.templates[kind].body }
}

const templateView = (ref: string, settings: StoredAuthSettings, kind: TemplateKind) => ({ ref, ...templateOf(settings, kind) })

export async function listTemplates(controlPlane: ControlPlane, ref: string) {
  const settings = await stored(controlPlane, ref)
  return KINDS.map((kind) => templateOf(settings, kind))
}

/** One template as mail uses it (the saved one, or the default). */
export async function getTemplate(controlPlane: ControlPlane, ref: string, kind: string) {
  const valid = checkKind(kind)
  return templateView(ref, await stored(controlPlane, ref), valid)
}

/** Saves a template; `changed` is false when it was saved with this subject and body already. */
export async function saveTemplate(controlPlane: ControlPlane, ref: string, kind: string, template: { subject: string; body: string }) {
  const valid = checkKind(kind)
  // Both fields' problems at once (a form shows each beside its input).
  const checks = new Checks()
  const subjectProblem = templateSubjectProblem(valid, template.subject)
  if (subjectProblem) checks.refuse(platformErrors.invalidArgument(subjectProblem, 'subject'))
  const problem = templateBodyProblem(valid, template.body)
  if (problem) checks.refuse(platformErrors.invalidArgument(problem, 'body'))
  checks.settle()
  const { before, after } = await update(controlPlane, ref, (current) => ({
    ...current,
    templates: { ...(current.templates ?? {}), [valid]: { subject: template.subject, body: template.body } },
  }))
  const [was, now] = [templateView(ref, before, valid), templateView(ref, after, valid)]
  return { template: now, changed: !same(was, now) }
}

export async function setTemplate(controlPlane: ControlPlane, ref: string, kind: string, template: { subject: string; body: string }) {
  return (await saveTemplate(controlPlane, ref, kind, template)).template
}

/** Resets a template to the default; `changed` is false when it was the default already. */
export async function restoreTemplate(controlPlane: ControlPlane, ref: string, kind: string) {
  const valid = checkKind(kind)
  const { before, after } = await update(controlPlane, ref, (current) => {
    if (current.templates?.[valid] === undefined) return current
    const templates = { ...current.templates }
    delete templates[valid]
    return { ...current, templates }
  })
  const [was, now] = [templateView(ref, before, valid), templateView(ref, after, valid)]
  return { template: now, changed: !same(was, now) }
}

export async function resetTemplate(controlPlane: ControlPlane, ref: string, kind: string) {
  return (await restoreTemplate(controlPlane, ref, kind)).template
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
  const { after } = await update(controlPlane, ref, (current) => {
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
  return { ref, ...googleView(after) }
}

/**
 * Other settings (mail ceiling, intervals, expiries, switches, WebAuthn,
 * hooks: settings-table.ts) by their stored names; null (or "" for a hook or
 * secret) removes one. Answers every setting, and which of the patched ones
 * changed: as shown, or for a write-only secret as stored.
 */
export async function changeAuthOptions(controlPlane: ControlPlane, ref: string, patch: Record<string, unknown>) {
  for (const key of Object.keys(patch)) {
    if (!authOption(key)) throw platformErrors.invalidArgument(`Unknown auth setting "${key}": use one of ${AUTH_OPTIONS.map((option) => option.name).join(', ')}`)
  }
  const { before, after } = await update(controlPlane, ref, (current) => withoutCleared({ ...current, ...patch }))
  const [was, now]: Record<string, unknown>[] = [authSettingsView(ref, before), authSettingsView(ref, after)]
  const changed = Object.keys(patch).filter((key) => {
    const option = authOption(key)!
    return option.type === 'secret' ? !same(before[key as keyof StoredAuthSettings], after[key as keyof StoredAuthSettings]) : !same(was[key], now[key])
  })
  return { settings: authSettingsView(ref, after), changed }
}

export async function setAuthOptions(controlPlane: ControlPlane, ref: string, patch: Record<string, unknown>) {
  return (await changeAuthOptions(controlPlane, ref, patch)).settings
}

/** The project's mail record, newest first (bodies kept for outbox delivery only). */
export async function listMail(controlPlane: ControlPlane, ref: string, limit = 50): Promise<OutboxMail[]> {
  const project = await getProject(controlPlane, ref)
  const serverUrl = await controlPlane.serverUrl(project.dbServer)
  return runInProjectDatabase(serverUrl, project.dbName, async (client) => {
    return latestMail(client, limit)
  })
}
