// The project's Auth tab: site URL and allowed redirects, the settings, the six email
// templates (and their editor), Google sign-in, and recent mail.
import type { ProjectRecord } from '../../../lib/catalogue.ts'
import { REF_PARAM } from '../../admin-api.ts'
import { getAuthSettings, listMail, listTemplates, resetTemplate, setAuthOptions, setGoogle, setRedirects, setTemplate } from '../../auth-settings.ts'
import { platformErrors } from '../../../lib/errors.ts'
import { BOOLEAN_SETTINGS, NUMERIC_SETTINGS } from '../../../workers/auth/settings.ts'
import { keysView } from '../../views.ts'
import { attempt, FormState, NO_STATE } from '../form-state.ts'
import { empty, html, table, type Safe } from '../html.ts'
import { NEXT_REQUEST, type DashboardContext, type DashboardModule, type Screen } from '../module.ts'

const CHANGE_NAMES: Record<string, string> = {
  site_url: 'site URL',
  allow: 'allowed redirect URLs',
  client_id: 'client ID',
  client_secret: 'client secret',
  enabled: 'switched on',
  disabled: 'switched off',
  additional_client_ids: 'app client IDs',
}

/** The settings form's numbers and switches, in the order drawn, with the words the page uses. */
const NUMBER_FIELDS: Array<{ name: keyof typeof NUMERIC_SETTINGS; label: string; changed: string }> = [
  { name: 'mail_per_hour', label: 'Mails per hour (all addresses together)', changed: 'mails per hour' },
  { name: 'mail_min_interval_seconds', label: 'Seconds between two mails to one address', changed: 'interval between mails' },
  { name: 'otp_expiry_seconds', label: 'Email links and codes expire after (seconds)', changed: 'link and code expiry' },
  { name: 'jwt_expiry_seconds', label: 'Access tokens expire after (seconds)', changed: 'access token expiry' },
  { name: 'refresh_token_reuse_interval_seconds', label: 'Refresh token reuse interval (seconds)', changed: 'refresh token reuse interval' },
  { name: 'password_min_length', label: 'Shortest password', changed: 'shortest password' },
]
/** Each switch with what the notice says when it is turned on and off. */
const SWITCH_FIELDS: Array<{ name: (typeof BOOLEAN_SETTINGS)[number]; label: string; on: string; off: string }> = [
  { name: 'disable_signup', label: 'Sign-ups are closed (only invited or created users)', on: 'sign-ups closed', off: 'sign-ups open' },
  { name: 'mailer_autoconfirm', label: 'Confirm new addresses without a mail', on: 'addresses confirmed without a mail', off: 'addresses confirmed by mail' },
  { name: 'mailer_secure_email_change_enabled', label: 'An email change is confirmed by both addresses', on: 'email changes confirmed by both addresses', off: 'email changes confirmed by the new address' },
  {
    name: 'security_update_password_require_reauthentication',
    label: 'A password change needs a code sent by mail (sessions older than 24 hours)',
    on: 'password changes need a code',
    off: 'password changes need no code',
  },
  { name: 'external_anonymous_users_enabled', label: 'Anonymous sign-ins (signInAnonymously)', on: 'anonymous sign-ins on', off: 'anonymous sign-ins off' },
  { name: 'security_manual_linking_enabled', label: 'Users link and unlink identities (linkIdentity, unlinkIdentity)', on: 'manual linking on', off: 'manual linking off' },
]
const SETTING_LABELS: Record<string, string> = Object.fromEntries([
  ...NUMBER_FIELDS.map((f) => [f.name, f.changed]),
  ...SWITCH_FIELDS.flatMap((f) => [
    [`${f.name}:on`, f.on],
    [`${f.name}:off`, f.off],
  ]),
])

/** A number field's name in its refusal: its label without the unit in brackets. */
const titleOf = (label: string) => label.replace(/ \(.*\)$/, '')

/**
 * The settings the form changes, as the settings store them (unchanged ones stay unstored, so they
 * keep following the platform's defaults); a number out of range is refused naming its field.
 */
function settingsPatch(field: (name: string) => string, before: Record<string, unknown>): Record<string, number | boolean> {
  const patch: Record<string, number | boolean> = {}
  for (const { name, label } of NUMBER_FIELDS) {
    const text = field(name).trim()
    const { min, max } = NUMERIC_SETTINGS[name]!
    const value = Number(text)
    if (!/^\d+$/.test(text) || value < min || value > max) {
      throw platformErrors.invalidArgument(`${titleOf(label)}: a whole number from ${min} to ${max}, got "${text}"`)
    }
    if (value !== before[name]) patch[name] = value
  }
  for (const { name } of SWITCH_FIELDS) {
    const on = field(name) === 'true'
    if (on !== before[name]) patch[name] = on
  }
  return patch
}

function changed(values: string[]): string {
  const names = values.map((v) => CHANGE_NAMES[v] ?? SETTING_LABELS[v]).filter(Boolean)
  return names.length === 0 ? 'nothing changed' : names.join(', ')
}

/** One entry a line (redirect URLs, client IDs), as the boxes say; blank lines are dropped. */
function entryLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
}

function authOff(project: ProjectRecord): Screen {
  return {
    title: 'Auth',
    project,
    tab: 'auth',
    body: html`<section><h2>Auth</h2>${empty(
      html`Auth is off. Turn it on under <a href="/dashboard/projects/${project.ref}/settings">Settings</a> to sign users in, then set the site URL, redirects, email templates and Google sign-in here.`,
    )}</section>`,
  }
}

export function authPage(context: DashboardContext): DashboardModule {
  const { controlPlane } = context

  async function screen(ref: string, state: FormState): Promise<Screen> {
    const project = await controlPlane.get(ref)
    if (!project.authEnabled) return authOff(project)
    const [settings, templates, mail] = await Promise.all([getAuthSettings(controlPlane, ref), listTemplates(controlPlane, ref), listMail(controlPlane, ref, 20).catch(() => [])])
    const google = settings.google
    const current: Record<string, unknown> = settings
    const callback = `${keysView(project, context.addressing).base_url}/auth/v1/callback`
    const body: Safe = html`<section><h2>Redirects</h2><form method="post" action="/dashboard/projects/${ref}/auth/redirects">
<label for="site-url">Site URL</label><input type="url" id="site-url" name="site_url" value="${state.value('redirects', 'site_url', settings.site_url)}" required ${state.attrs('redirects', 'site_url')}>
${state.error('redirects', 'site_url')}
<label for="allow">Also allowed (one per line)</label><textarea id="allow" name="allow" ${state.attrs('redirects', 'allow')}>${state.value(
      'redirects',
      'allow',
      settings.additional_redirect_urls.join('\n'),
    )}</textarea>
${state.error('redirects', 'allow')}
<p><button>Save redirects</button></p></form></section>
<section><h2>Settings</h2><form method="post" action="/dashboard/projects/${ref}/auth/settings">
${NUMBER_FIELDS.map(
  ({ name, label }) => html`<label for="setting-${name}">${label}</label><input type="number" inputmode="numeric" id="setting-${name}" name="${name}" value="${state.value(
    'settings',
    name,
    String(current[name]),
  )}" ${state.attrs('settings', name)}>
${state.error('settings', name)}`,
)}
${SWITCH_FIELDS.map(
  ({ name, label }) =>
    html`<label class="check"><input type="checkbox" id="setting-${name}" name="${name}" value="true" ${
      state.value('settings', name, current[name] === true ? 'true' : '') === 'true' ? 'checked' : ''
    }> ${label}</label>`,
)}
${state.error('settings', '')}
<p><button>Save settings</button></p></form></section>
<section><h2>Email templates</h2>${table(
      ['Kind', 'Subject', 'Action'],
      templates.map(
        (t) =>
          html`<tr><td>${t.kind}</td><td>${t.subject} ${t.custom ? html`<em>(custom)</em>` : ''}</td><td><a href="/dashboard/projects/${ref}/auth/templates/${t.kind}" aria-label="Edit the ${t.kind} template">Edit</a></td></tr>`,
      ),
    )}</section>
<section><h2>Google sign-in</h2>
<p id="google-state">${google.offered ? html`<span class="on">Offered to users</span>` : html`<span class="off">Not offered</span>: missing ${google.missing.join(', ')}`}</p>
<p>Register this exact redirect URI with Google: <code id="google-callback">${callback}</code> (it stays the same with a custom domain).</p>
<form method="post" action="/dashboard/projects/${ref}/auth/google">
<label for="client-id">Client ID</label><input type="text" id="client-id" name="client_id" value="${state.value('google', 'client_id', google.client_id ?? '')}" ${state.attrs('google', 'client_id')}>
${state.error('google', 'client_id')}
<label for="client-secret">Client secret ${google.client_secret_set ? '(set; leave empty to keep it)' : '(not set)'}</label>
<input type="password" id="client-secret" name="client_secret" autocomplete="off" ${state.attrs('google', 'client_secret')}>
${state.error('google', 'client_secret')}
<label for="additional-client-ids">App client IDs for native sign-in (iOS, Android; one per line)</label>
<textarea id="additional-client-ids" name="additional_client_ids" rows="2" ${state.attrs('google', 'additional_client_ids')}>${state.value(
      'google',
      'additional_client_ids',
      google.additional_client_ids.join('\n'),
    )}</textarea>
${state.error('google', 'additional_client_ids')}
<label class="check"><input type="checkbox" id="google-enabled" name="enabled" value="true" ${
      state.value('google', 'enabled', google.enabled ? 'true' : '') === 'true' ? 'checked' : ''
    }> Offer Google sign-in</label>
${state.error('google', '')}
<p><button>Save Google settings</button></p></form>
${
  google.client_id !== null || google.client_secret_set
    ? html`<form method="post" action="/dashboard/projects/${ref}/auth/google/clear"><p><button class="secondary">Remove client ID and secret</button> (Google sign-in is then no longer offered)</p></form>`
    : ''
}</section>
<section><h2>Mail</h2>${
      mail.length === 0
        ? empty('No mail sent yet. Sign-up confirmations, magic links, recoveries and invitations show here as they are sent.')
        : table(
            ['When', 'To', 'Kind', 'Subject', 'Delivery'],
            mail.map((m) => html`<tr><td>${m.created_at}</td><td>${m.to}</td><td>${m.kind}</td><td>${m.subject}</td><td>${m.delivery}</td></tr>`),
          )
    }</section>`
    return { title: 'Auth', body, project, tab: 'auth' }
  }

  async function templateScreen(ref: string, kind: string, state: FormState): Promise<Screen | undefined> {
    const project = await controlPlane.get(ref)
    if (!project.authEnabled) return authOff(project)
    const template = (await listTemplates(controlPlane, ref)).find((t) => t.kind === kind)
    if (!template) return undefined
    const body = html`<section><h2>Template <code>${template.kind}</code></h2><p><a href="/dashboard/projects/${ref}/auth">Back to Auth</a></p>
<form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}">
<label for="subject">Subject</label><input type="text" id="subject" name="subject" value="${state.value('template', 'subject', template.subject)}" required ${state.attrs('template', 'subject')}>
${state.error('template', 'subject')}
<label for="body">HTML body (must contain <code>${template.kind === 'reauthentication' ? '{{ .Token }}' : '{{ .ConfirmationURL }}'}</code>; also ${
      template.kind === 'reauthentication' ? html`<code>{{ .ConfirmationURL }}</code>, ` : html`<code>{{ .Token }}</code>, `
    }<code>{{ .SiteURL }}</code>, <code>{{ .Email }}</code>, <code>{{ .NewEmail }}</code>)</label>
<textarea id="body" name="body" rows="14" ${state.attrs('template', 'body')}>${state.value('template', 'body', template.body)}</textarea>
${state.error('template', 'body')}
<p><button>Save template</button></p></form>
${template.custom ? html`<form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}/reset"><button class="secondary">Reset to default</button></form>` : ''}
</section>`
    return { title: `Template ${template.kind}`, body, project, tab: 'auth' }
  }

  const template = { ...REF_PARAM, kind: '[a-z_]+' }
  const authPath = (ref: string) => `/projects/${ref}/auth`

  return {
    tab: { id: 'auth', label: 'Auth' },
    pages: [
      { method: 'GET', path: '/projects/:ref/auth', where: REF_PARAM, page: ({ params }) => screen(params.ref!, NO_STATE) },
      {
        method: 'GET',
        path: '/projects/:ref/auth/templates/:kind',
        where: template,
        page: ({ params }) => templateScreen(params.ref!, params.kind!, NO_STATE),
      },
    ],
    forms: [
      {
        method: 'POST',
        path: '/projects/:ref/auth/redirects',
        where: REF_PARAM,
        form: (input) =>
          attempt(input, {
            form: 'redirects',
            fields: ['site_url', 'allow'],
            fieldOf: (message) => (message.startsWith('Site URL') ? 'site_url' : 'allow'),
            run: async () => {
              const ref = input.params.ref!
              const before = await getAuthSettings(controlPlane, ref)
              const after = await setRedirects(controlPlane, ref, { siteUrl: input.field('site_url'), allow: entryLines(input.field('allow')) })
              const changes = [
                before.site_url !== after.site_url ? 'site_url' : '',
                before.additional_redirect_urls.join('\n') !== after.additional_redirect_urls.join('\n') ? 'allow' : '',
              ].filter(Boolean)
              return { to: authPath(ref), notice: 'redirects', values: changes }
            },
            screen: (state) => screen(input.params.ref!, state),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/auth/google',
        where: REF_PARAM,
        form: (input) =>
          attempt(input, {
            form: 'google',
            fields: ['client_id', 'additional_client_ids', 'enabled'],
            fieldOf: (message) =>
              /additional_client_ids|app client/i.test(message) ? 'additional_client_ids' : /client ID/.test(message) ? 'client_id' : /secret/.test(message) ? 'client_secret' : undefined,
            run: async () => {
              const ref = input.params.ref!
              const before = (await getAuthSettings(controlPlane, ref)).google
              const secret = input.field('client_secret')
              const enabled = input.field('enabled') === 'true'
              const clientId = input.field('client_id')
              const additionalClientIds = entryLines(input.field('additional_client_ids'))
              await setGoogle(controlPlane, ref, {
                clientId: clientId === '' && before.client_id === null ? undefined : clientId,
                clientSecret: secret || undefined,
                enabled,
                additionalClientIds,
              })
              const changes = [
                clientId !== (before.client_id ?? '') ? 'client_id' : '',
                secret ? 'client_secret' : '',
                additionalClientIds.join('\n') !== before.additional_client_ids.join('\n') ? 'additional_client_ids' : '',
                enabled !== before.enabled ? (enabled ? 'enabled' : 'disabled') : '',
              ].filter(Boolean)
              return { to: authPath(ref), notice: 'google', values: changes }
            },
            screen: (state) => screen(input.params.ref!, state),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/auth/settings',
        where: REF_PARAM,
        form: (input) =>
          attempt(input, {
            form: 'settings',
            fields: [...NUMBER_FIELDS.map((f) => f.name), ...SWITCH_FIELDS.map((f) => f.name)],
            fieldOf: (message) => NUMBER_FIELDS.find((f) => message.startsWith(`${titleOf(f.label)}:`))?.name,
            run: async () => {
              const ref = input.params.ref!
              const patch = settingsPatch(input.field, await getAuthSettings(controlPlane, ref))
              if (Object.keys(patch).length > 0) await setAuthOptions(controlPlane, ref, patch)
              const changes = Object.entries(patch).map(([name, value]) => (typeof value === 'boolean' ? `${name}:${value ? 'on' : 'off'}` : name))
              return { to: authPath(ref), notice: 'settings', values: changes }
            },
            screen: (state) => screen(input.params.ref!, state),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/auth/google/clear',
        where: REF_PARAM,
        form: async ({ params }) => {
          await setGoogle(controlPlane, params.ref!, { clientId: null, clientSecret: null })
          return { to: authPath(params.ref!), notice: 'google_cleared', values: [] }
        },
      },
      {
        method: 'POST',
        path: '/projects/:ref/auth/templates/:kind',
        where: template,
        form: (input) =>
          attempt(input, {
            form: 'template',
            fields: ['subject', 'body'],
            fieldOf: (message) => (/subject/i.test(message) ? 'subject' : 'body'),
            run: async () => {
              const before = (await listTemplates(controlPlane, input.params.ref!)).find((t) => t.kind === input.params.kind)
              await setTemplate(controlPlane, input.params.ref!, input.params.kind!, { subject: input.field('subject'), body: input.field('body') })
              const changes = [before?.subject !== input.field('subject') ? 'subject' : '', before?.body !== input.field('body') ? 'body' : ''].filter(Boolean)
              return { to: `${authPath(input.params.ref!)}/templates/${input.params.kind!}`, notice: 'template_saved', values: [input.params.kind!, ...changes] }
            },
            screen: (state) => templateScreen(input.params.ref!, input.params.kind!, state),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/auth/templates/:kind/reset',
        where: template,
        form: async ({ params }) => {
          await resetTemplate(controlPlane, params.ref!, params.kind!)
          return { to: `${authPath(params.ref!)}/templates/${params.kind!}`, notice: 'template_reset', values: [params.kind!] }
        },
      },
    ],
    notices: {
      redirects: (values) => (values.length === 0 ? 'Redirects saved; nothing changed.' : `Redirects saved: ${changed(values)}. ${NEXT_REQUEST}`),
      google: (values) => (values.length === 0 ? 'Google settings saved; nothing changed.' : `Google settings saved: ${changed(values)}. ${NEXT_REQUEST}`),
      template_saved: ([kind, ...parts]) => `Template ${kind} saved${parts.length ? `: ${parts.map((p) => (p === 'subject' ? 'subject' : p === 'body' ? 'body' : '')).filter(Boolean).join(', ')}` : '; nothing changed'}. ${NEXT_REQUEST}`,
      settings: (values) => (values.length === 0 ? 'Settings saved; nothing changed.' : `Settings saved: ${changed(values)}. ${NEXT_REQUEST}`),
      google_cleared: () => `Google client ID and secret removed; Google sign-in is not offered. ${NEXT_REQUEST}`,
      template_reset: ([kind]) => `Template ${kind} reset to the default. ${NEXT_REQUEST}`,
    },
  }
}
