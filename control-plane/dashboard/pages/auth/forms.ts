// The Auth tab's forms: redirects, Google sign-in (and removing its client),
// the settings' numbers and switches, an email template (and its reset). Each
// calls control-plane/auth-settings.ts; a refusal is drawn beside the field
// its error names. The notices say what changed (../../changes.ts).
import { platformErrors } from '../../../../lib/errors.ts'
import { NUMERIC_SETTINGS, redirectUrlProblem } from '../../../../workers/auth/face.ts'
import { getAuthSettings, listTemplates, resetTemplate, setAuthOptions, setGoogle, setRedirects, setTemplate } from '../../../auth-settings.ts'
import { changedNames, changes, savedNotice } from '../../changes.ts'
import { Checks, refusable, type FormState, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectForm, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { authScreen, NUMBER_FIELDS, SWITCH_FIELDS, TEMPLATE_PARAM, templateScreen } from './screen.ts'

/** What the notices call each changed value. */
const CHANGE_WORDS: Record<string, string> = {
  site_url: 'site URL',
  allow: 'allowed redirect URLs',
  client_id: 'client ID',
  client_secret: 'client secret',
  'enabled:on': 'switched on',
  'enabled:off': 'switched off',
  additional_client_ids: 'app client IDs',
  ...Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, f.changed])),
  ...Object.fromEntries(SWITCH_FIELDS.flatMap((f) => [[`${f.name}:on`, f.on], [`${f.name}:off`, f.off]])),
  subject: 'subject',
  body: 'body',
}

/** One entry a line (redirect URLs, client IDs), as the boxes say; blank lines are dropped. */
function entryLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
}

const authPath = (ref: string) => `/projects/${ref}/auth`

/** Refuses `url` as setRedirects would, naming `field`. */
function urlChecked(url: string, what: string, field: string): void {
  const problem = redirectUrlProblem(url, what)
  if (problem) throw platformErrors.invalidArgument(problem, field)
}

async function saveRedirects(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  // Both inputs checked before either is saved, so each shows its own error.
  const checks = new Checks()
  checks.check(() => urlChecked(input.field('site_url'), 'Site URL', 'site_url'))
  for (const url of entryLines(input.field('allow'))) checks.check(() => urlChecked(url, 'Allowed redirect URL', 'additional_redirect_urls'))
  checks.settle()
  const before = await getAuthSettings(context.controlPlane, ref)
  const after = await setRedirects(context.controlPlane, ref, { siteUrl: input.field('site_url'), allow: entryLines(input.field('allow')) })
  const values = changes({ site_url: before.site_url, allow: before.additional_redirect_urls }, { site_url: after.site_url, allow: after.additional_redirect_urls })
  return { to: authPath(ref), notice: 'redirects', values }
}

async function saveGoogle(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const before = (await getAuthSettings(context.controlPlane, ref)).google
  const submitted = {
    client_id: input.field('client_id'),
    // The secret is write-only: one typed is a change.
    client_secret: input.field('client_secret') || undefined,
    additional_client_ids: entryLines(input.field('additional_client_ids')),
    enabled: input.field('enabled') === 'true',
  }
  await setGoogle(context.controlPlane, ref, {
    clientId: submitted.client_id === '' && before.client_id === null ? undefined : submitted.client_id,
    clientSecret: submitted.client_secret,
    enabled: submitted.enabled,
    additionalClientIds: submitted.additional_client_ids,
  })
  const values = changes({ client_id: before.client_id ?? '', additional_client_ids: before.additional_client_ids, enabled: before.enabled }, submitted)
  return { to: authPath(ref), notice: 'google', values }
}

/** A number field's name in its refusal: its label without the unit in brackets. */
const titleOf = (label: string) => label.replace(/ \(.*\)$/, '')

/** The settings as submitted; each number out of range is refused naming its field (all of them at once). */
function submittedSettings(field: (name: string) => string): Record<string, number | boolean> {
  const submitted: Record<string, number | boolean> = {}
  const checks = new Checks()
  for (const { name, label } of NUMBER_FIELDS) {
    const text = field(name).trim()
    const { min, max } = NUMERIC_SETTINGS[name]!
    const value = Number(text)
    checks.check(() => {
      if (!/^\d+$/.test(text) || value < min || value > max) {
        throw platformErrors.invalidArgument(`${titleOf(label)}: a whole number from ${min} to ${max}, got "${text}"`, name)
      }
    })
    submitted[name] = value
  }
  checks.settle()
  for (const { name } of SWITCH_FIELDS) submitted[name] = field(name) === 'true'
  return submitted
}

/** Stores only the settings that changed, so unchanged ones keep following the platform's defaults. */
async function saveSettings(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const submitted = submittedSettings(input.field)
  const before: Record<string, unknown> = await getAuthSettings(context.controlPlane, ref)
  const stored = before as Record<string, number | boolean>
  const patch = Object.fromEntries(changedNames(stored, submitted).map((name) => [name, submitted[name]!]))
  if (Object.keys(patch).length > 0) await setAuthOptions(context.controlPlane, ref, patch)
  return { to: authPath(ref), notice: 'settings', values: changes(stored, submitted) }
}

async function saveTemplate(context: DashboardContext, input: FormInput): Promise<Saved> {
  const [ref, kind] = [input.params.ref!, input.params.kind!]
  const before = (await listTemplates(context.controlPlane, ref)).find((t) => t.kind === kind)
  const submitted = { subject: input.field('subject'), body: input.field('body') }
  await setTemplate(context.controlPlane, ref, kind, submitted)
  return { to: `${authPath(ref)}/templates/${kind}`, notice: 'template_saved', values: [kind, ...changes({ subject: before?.subject, body: before?.body }, submitted)] }
}

export function authForms(context: DashboardContext): FormsPart {
  const tab = (input: FormInput, state: FormState) => authScreen(context, input.params.ref!, state)
  const editor = (input: FormInput, state: FormState) => templateScreen(context, input.params.ref!, input.params.kind!, state)
  return {
    forms: [
      projectForm(
        '/auth/redirects',
        refusable({ form: 'redirects', fields: ['site_url', 'allow'], names: { additional_redirect_urls: 'allow' }, run: (input) => saveRedirects(context, input), screen: tab }),
      ),
      projectForm(
        '/auth/google',
        refusable({
          form: 'google',
          fields: ['client_id', 'additional_client_ids', 'enabled'],
          secret: ['client_secret'],
          run: (input) => saveGoogle(context, input),
          screen: tab,
        }),
      ),
      projectForm(
        '/auth/settings',
        refusable({ form: 'settings', fields: [...NUMBER_FIELDS.map((f) => f.name), ...SWITCH_FIELDS.map((f) => f.name)], run: (input) => saveSettings(context, input), screen: tab }),
      ),
      projectForm('/auth/google/clear', async ({ params }) => {
        await setGoogle(context.controlPlane, params.ref!, { clientId: null, clientSecret: null })
        return { to: authPath(params.ref!), notice: 'google_cleared', values: [] }
      }),
      projectForm('/auth/templates/:kind', refusable({ form: 'template', fields: ['subject', 'body'], run: (input) => saveTemplate(context, input), screen: editor }), TEMPLATE_PARAM),
      projectForm(
        '/auth/templates/:kind/reset',
        async ({ params }) => {
          await resetTemplate(context.controlPlane, params.ref!, params.kind!)
          return { to: `${authPath(params.ref!)}/templates/${params.kind!}`, notice: 'template_reset', values: [params.kind!] }
        },
        TEMPLATE_PARAM,
      ),
    ],
    notices: {
      redirects: (values) => savedNotice('Redirects', values, CHANGE_WORDS),
      google: (values) => savedNotice('Google settings', values, CHANGE_WORDS),
      settings: (values) => savedNotice('Settings', values, CHANGE_WORDS),
      template_saved: ([kind, ...values]) => savedNotice(`Template ${kind}`, values, CHANGE_WORDS),
      google_cleared: () => `Google client ID and secret removed; Google sign-in is not offered. ${NEXT_REQUEST}`,
      template_reset: ([kind]) => `Template ${kind} reset to the default. ${NEXT_REQUEST}`,
    },
  }
}
