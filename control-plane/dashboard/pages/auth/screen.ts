// The project's Auth tab as drawn: site URL and allowed redirects, the
// settings, the six email templates (and their editor), Google sign-in, and
// recent mail. Its forms are in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { getAuthSettings, listMail, listTemplates, type OutboxMail } from '../../../auth-settings.ts'
import { BOOLEAN_SETTINGS, NUMERIC_SETTINGS } from '../../../../workers/auth/face.ts'
import { keysView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { offScreen, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

type AuthSettingsView = Awaited<ReturnType<typeof getAuthSettings>>
type Template = Awaited<ReturnType<typeof listTemplates>>[number]

/** The settings form's numbers and switches, in the order drawn, with the words the page uses. */
export const NUMBER_FIELDS: Array<{ name: keyof typeof NUMERIC_SETTINGS; label: string; changed: string }> = [
  { name: 'mail_per_hour', label: 'Mails per hour (all addresses together)', changed: 'mails per hour' },
  { name: 'mail_min_interval_seconds', label: 'Seconds between two mails to one address', changed: 'interval between mails' },
  { name: 'otp_expiry_seconds', label: 'Email links and codes expire after (seconds)', changed: 'link and code expiry' },
  { name: 'jwt_expiry_seconds', label: 'Access tokens expire after (seconds)', changed: 'access token expiry' },
  { name: 'refresh_token_reuse_interval_seconds', label: 'Refresh token reuse interval (seconds)', changed: 'refresh token reuse interval' },
  { name: 'password_min_length', label: 'Shortest password', changed: 'shortest password' },
]
/** Each switch with what the notice says when it is turned on and off. */
export const SWITCH_FIELDS: Array<{ name: (typeof BOOLEAN_SETTINGS)[number]; label: string; on: string; off: string }> = [
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

function authOff(project: ProjectRecord): Screen {
  return offScreen(
    project,
    'auth',
    'Auth',
    html`Auth is off. Turn it on under <a href="/dashboard/projects/${project.ref}/settings">Settings</a> to sign users in, then set the site URL, redirects, email templates and Google sign-in here.`,
  )
}

function redirectsSection(ref: string, settings: AuthSettingsView, state: FormState): Safe {
  return html`<section><h2>Redirects</h2><form method="post" action="/dashboard/projects/${ref}/auth/redirects">
<label for="site-url">Site URL</label><input type="url" id="site-url" name="site_url" value="${state.value('redirects', 'site_url', settings.site_url)}" required ${state.attrs('redirects', 'site_url')}>
${state.error('redirects', 'site_url')}
<label for="allow">Also allowed (one per line)</label><textarea id="allow" name="allow" ${state.attrs('redirects', 'allow')}>${state.value(
    'redirects',
    'allow',
    settings.additional_redirect_urls.join('\n'),
  )}</textarea>
${state.error('redirects', 'allow')}${state.error('redirects', '')}
<p><button>Save redirects</button></p></form></section>`
}

function numberInput(name: string, label: string, stored: unknown, state: FormState): Safe {
  return html`<label for="setting-${name}">${label}</label><input type="number" inputmode="numeric" id="setting-${name}" name="${name}" value="${state.value(
    'settings',
    name,
    String(stored),
  )}" ${state.attrs('settings', name)}>
${state.error('settings', name)}`
}

function switchInput(name: string, label: string, stored: unknown, state: FormState): Safe {
  const on = state.value('settings', name, stored === true ? 'true' : '') === 'true'
  return html`<label class="check"><input type="checkbox" id="setting-${name}" name="${name}" value="true" ${on ? 'checked' : ''}> ${label}</label>`
}

function settingsSection(ref: string, current: Record<string, unknown>, state: FormState): Safe {
  return html`<section><h2>Settings</h2><form method="post" action="/dashboard/projects/${ref}/auth/settings">
${NUMBER_FIELDS.map(({ name, label }) => numberInput(name, label, current[name], state))}
${SWITCH_FIELDS.map(({ name, label }) => switchInput(name, label, current[name], state))}
${state.error('settings', '')}
<p><button>Save settings</button></p></form></section>`
}

function templatesSection(ref: string, templates: Template[]): Safe {
  return html`<section><h2>Email templates</h2>${table(
    ['Kind', 'Subject', 'Action'],
    templates.map(
      (t) =>
        html`<tr><td>${t.kind}</td><td>${t.subject} ${t.custom ? html`<em>(custom)</em>` : ''}</td><td><a href="/dashboard/projects/${ref}/auth/templates/${t.kind}" aria-label="Edit the ${t.kind} template">Edit</a></td></tr>`,
    ),
  )}</section>`
}

function googleSection(ref: string, google: AuthSettingsView['google'], callback: string, state: FormState): Safe {
  return html`<section><h2>Google sign-in</h2>
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
}</section>`
}

function mailSection(mail: OutboxMail[]): Safe {
  return html`<section><h2>Mail</h2>${
    mail.length === 0
      ? empty('No mail sent yet. Sign-up confirmations, magic links, recoveries and invitations show here as they are sent.')
      : table(
          ['When', 'To', 'Kind', 'Subject', 'Delivery'],
          mail.map((m) => html`<tr><td>${m.created_at}</td><td>${m.to}</td><td>${m.kind}</td><td>${m.subject}</td><td>${m.delivery}</td></tr>`),
        )
  }</section>`
}

/** The Auth tab of project `ref`, with a form's state. */
export async function authScreen(context: DashboardContext, ref: string, state: FormState): Promise<Screen> {
  const { controlPlane } = context
  const project = await getProject(controlPlane, ref)
  if (!project.authEnabled) return authOff(project)
  const [settings, templates, mail] = await Promise.all([getAuthSettings(controlPlane, ref), listTemplates(controlPlane, ref), listMail(controlPlane, ref, 20).catch(() => [])])
  const callback = `${keysView(project, context.addressing).base_url}/auth/v1/callback`
  const body = html`${redirectsSection(ref, settings, state)}
${settingsSection(ref, settings, state)}
${templatesSection(ref, templates)}
${googleSection(ref, settings.google, callback, state)}
${mailSection(mail)}`
  return { title: 'Auth', body, project, tab: 'auth' }
}

function templateVariables(kind: string): Safe {
  return html`(must contain <code>${kind === 'reauthentication' ? '{{ .Token }}' : '{{ .ConfirmationURL }}'}</code>; also ${
    kind === 'reauthentication' ? html`<code>{{ .ConfirmationURL }}</code>, ` : html`<code>{{ .Token }}</code>, `
  }<code>{{ .SiteURL }}</code>, <code>{{ .Email }}</code>, <code>{{ .NewEmail }}</code>)`
}

/** One email template's editor, with a form's state; undefined for a kind there is not. */
export async function templateScreen(context: DashboardContext, ref: string, kind: string, state: FormState): Promise<Screen | undefined> {
  const project = await getProject(context.controlPlane, ref)
  if (!project.authEnabled) return authOff(project)
  const template = (await listTemplates(context.controlPlane, ref)).find((t) => t.kind === kind)
  if (!template) return undefined
  const body = html`<section><h2>Template <code>${template.kind}</code></h2><p><a href="/dashboard/projects/${ref}/auth">Back to Auth</a></p>
<form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}">
<label for="subject">Subject</label><input type="text" id="subject" name="subject" value="${state.value('template', 'subject', template.subject)}" required ${state.attrs('template', 'subject')}>
${state.error('template', 'subject')}
<label for="body">HTML body ${templateVariables(template.kind)}</label>
<textarea id="body" name="body" rows="14" ${state.attrs('template', 'body')}>${state.value('template', 'body', template.body)}</textarea>
${state.error('template', 'body')}${state.error('template', '')}
<p><button>Save template</button></p></form>
${template.custom ? html`<form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}/reset"><button class="secondary">Reset to default</button></form>` : ''}
</section>`
  return { title: `Template ${template.kind}`, body, project, tab: 'auth' }
}

/** A template's kind in a path. */
export const TEMPLATE_PARAM = { kind: '[a-z_]+' }

export function authScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [
      projectPage('/auth', (ref) => authScreen(context, ref, NO_STATE)),
      projectPage('/auth/templates/:kind', (ref, { params }) => templateScreen(context, ref, params.kind!, NO_STATE), TEMPLATE_PARAM),
    ],
  }
}
