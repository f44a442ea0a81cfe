// The Auth tab's forms: redirects, Google sign-in (and removing its client),
// the settings, WebAuthn's and the hooks' (read by Auth's settings table), an
// email template (and its reset). Each calls control-plane/auth-settings.ts; a
// refusal is drawn beside the field its error names. The notices say what
// changed (../../changes.ts).
import { platformErrors } from '../../../../lib/errors.ts'
import { AUTH_OPTIONS, redirectUrlProblem, type AuthOption, type OptionGroup } from '../../../../workers/auth/face.ts'
import { changeAuthOptions, getAuthSettings, listTemplates, resetTemplate, setGoogle, setRedirects, setTemplate } from '../../../auth-settings.ts'
import { getProject } from '../../../projects.ts'
import { changes, savedNotice } from '../../changes.ts'
import { Checks, refusable, type FormState, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectForm, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { authScreen, clearName, formValue, groupOptions, OPTION_FORMS, TEMPLATE_PARAM, templateScreen } from './screen.ts'

/** What the notices call each changed value: the table's words for its settings, a switch by what it now does. */
const CHANGE_WORDS: Record<string, string> = {
  site_url: 'site URL',
  allow: 'allowed redirect URLs',
  client_id: 'client ID',
  client_secret: 'client secret',
  'enabled:on': 'switched on',
  'enabled:off': 'switched off',
  additional_client_ids: 'app client IDs',
  ...Object.fromEntries(AUTH_OPTIONS.flatMap((o): Array<[string, string]> => (o.type === 'switch' ? [[`${o.name}:on`, o.on], [`${o.name}:off`, o.off]] : [[o.name, o.noun]]))),
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

/** The value a setting's input asks to store (null: back to the default, or removed), or undefined when it asks for no change. */
function submittedValue(option: AuthOption, typed: string, current: string, clear: boolean): unknown {
  switch (option.type) {
    case 'integer': {
      const text = typed.trim()
      if (!/^\d+$/.test(text) || Number(text) < option.min || Number(text) > option.max) {
        throw platformErrors.invalidArgument(`${titleOf(option.label)}: a whole number from ${option.min} to ${option.max}, got "${text}"`, option.name)
      }
      return Number(text) === Number(current) ? undefined : Number(text)
    }
    case 'switch':
      return (typed === 'true') === (current === 'true') ? undefined : typed === 'true'
    case 'list': {
      const lines = entryLines(typed)
      return lines.join('\n') === current ? undefined : lines.length > 0 ? lines : null
    }
    case 'secret':
      // Write-only: an empty input keeps what is set; the checkbox removes it.
      return clear ? null : typed.trim() === '' ? undefined : typed.trim()
    default:
      return typed.trim() === current ? undefined : typed.trim() === '' ? null : typed.trim()
  }
}

/**
 * Saves one of the table's forms (Settings, WebAuthn, Hooks): only the
 * settings whose input differs from what is shown, so the others keep
 * following the platform's defaults. Every number out of range is refused
 * naming its field (all at once), as are the platform's refusals.
 */
async function saveOptions(context: DashboardContext, input: FormInput, group: OptionGroup): Promise<Saved> {
  const ref = input.params.ref!
  const [view, project] = await Promise.all([getAuthSettings(context.controlPlane, ref), getProject(context.controlPlane, ref)])
  const patch: Record<string, unknown> = {}
  const checks = new Checks()
  for (const option of groupOptions(group)) {
    const current = formValue(option, view as Record<string, unknown>, project.authSettings)
    const value = checks.check(() => submittedValue(option, input.field(option.name), current, input.field(clearName(option.name)) === 'true'))
    if (value !== undefined) patch[option.name] = value
  }
  checks.settle()
  if (Object.keys(patch).length === 0) return { to: authPath(ref), notice: group, values: [] }
  const { settings, changed } = await changeAuthOptions(context.controlPlane, ref, patch)
  const after = settings as Record<string, unknown>
  const values = changed.map((name) => (typeof after[name] === 'boolean' ? `${name}:${after[name] ? 'on' : 'off'}` : name))
  return { to: authPath(ref), notice: group, values }
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
      ...(Object.keys(OPTION_FORMS) as OptionGroup[]).map((group) => {
        const options = groupOptions(group)
        return projectForm(
          `/auth/${OPTION_FORMS[group].path}`,
          refusable({
            form: group,
            fields: options.filter((o) => o.type !== 'secret').map((o) => o.name),
            secret: options.filter((o) => o.type === 'secret').map((o) => o.name),
            run: (input) => saveOptions(context, input, group),
            screen: tab,
          }),
        )
      }),
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
      webauthn: (values) => savedNotice('WebAuthn settings', values, CHANGE_WORDS),
      hooks: (values) => savedNotice('Hooks', values, CHANGE_WORDS),
      template_saved: ([kind, ...values]) => savedNotice(`Template ${kind}`, values, CHANGE_WORDS),
      google_cleared: () => `Google client ID and secret removed; Google sign-in is not offered. ${NEXT_REQUEST}`,
      template_reset: ([kind]) => `Template ${kind} reset to the default. ${NEXT_REQUEST}`,
    },
  }
}
