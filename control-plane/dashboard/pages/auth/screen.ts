// The project's Auth tab as drawn: site URL and allowed redirects, the
// settings, WebAuthn second factors, the hooks, the six email templates (and
// their editor), Google sign-in, and recent mail. The settings, WebAuthn and
// hooks forms are drawn from Auth's settings table (workers/auth/settings-table.ts:
// each setting's label, type, bounds). Its forms are in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { getAuthSettings, listMail, listTemplates, type OutboxMail } from '../../../auth-settings.ts'
import { AUTH_OPTIONS, type AuthOption, type OptionGroup } from '../../../../workers/auth/face.ts'
import { keysView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { offScreen, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

type AuthSettingsView = Awaited<ReturnType<typeof getAuthSettings>>
type Template = Awaited<ReturnType<typeof listTemplates>>[number]

/** Each form drawn from the table: its name in the page (and its errors' ids), its path, title and button. */
export const OPTION_FORMS: Record<OptionGroup, { path: string; title: string; button: string; lead?: string }> = {
  settings: { path: 'settings', title: 'Settings', button: 'Save settings' },
  webauthn: {
    path: 'webauthn',
    title: 'WebAuthn second factors',
    button: 'Save WebAuthn settings',
    lead: 'Security keys and platform authenticators as a second factor (mfa.enroll with factorType webauthn). The relying party is these settings, never what the client sends.',
  },
  hooks: {
    path: 'hooks',
    title: 'Hooks',
    button: 'Save hooks',
    lead: 'A hook is on while its URI is set; empty the URI to turn it off. An https send email hook signs each call with its secrets, which are never shown again.',
  },
}

/** The table's settings drawn in `group`'s form, numbers first, then switches, then the rest, each in the table's order. */
export function groupOptions(group: OptionGroup): AuthOption[] {
  const order = ['integer', 'switch', 'text', 'list', 'hook', 'secret']
  return AUTH_OPTIONS.filter((option) => option.group === group).sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))
}

/** The checkbox that removes a secret (its input is write-only, so empty keeps it). */
export const clearName = (name: string) => `clear_${name}`

/** What a form shows as a setting's current value: the effective one, or for a text with a derived default the stored one ("" while it follows the default). */
export function formValue(option: AuthOption, view: Record<string, unknown>, stored: Record<string, unknown>): string {
  switch (option.type) {
    case 'integer':
      return String(view[option.name])
    case 'switch':
      return view[option.name] === true ? 'true' : ''
    case 'text':
      return typeof stored[option.name] === 'string' ? (stored[option.name] as string) : ''
    case 'list':
      return Array.isArray(stored[option.name]) ? (stored[option.name] as string[]).join('\n') : ''
    case 'hook':
      return typeof view[option.name] === 'string' ? (view[option.name] as string) : ''
    case 'secret':
      return ''
  }
}

/** A table label as drawn: its URIs (pg-functions://..., https://...) as code, which may break anywhere, so a phone's width holds them. */
function labelText(text: string): Safe {
  return html`${text.split(/([a-z-]+:\/\/[^\s,;)]+)/).map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`
}

function optionInput(form: string, option: AuthOption, view: Record<string, unknown>, stored: Record<string, unknown>, state: FormState): Safe {
  const { name } = option
  const label = labelText(option.label)
  const id = `setting-${name}`
  const value = state.value(form, name, formValue(option, view, stored))
  const error = state.error(form, name)
  switch (option.type) {
    case 'integer':
      return html`<label for="${id}">${label}</label><input type="number" inputmode="numeric" id="${id}" name="${name}" value="${value}" ${state.attrs(form, name)}>
${error}`
    case 'switch':
      return html`<label class="check"><input type="checkbox" id="${id}" name="${name}" value="true" ${value === 'true' ? 'checked' : ''}> ${label}</label>
${error}`
    case 'text':
      return html`<label for="${id}">${label}; empty: ${option.defaultIs} (now <code>${String(view[name])}</code>)</label><input type="text" id="${id}" name="${name}" value="${value}" ${state.attrs(form, name)}>
${error}`
    case 'list':
      return html`<label for="${id}">${label}; empty: ${option.defaultIs} (now <code>${(view[name] as string[]).join(', ')}</code>)</label><textarea id="${id}" name="${name}" rows="2" ${state.attrs(form, name)}>${value}</textarea>
${error}`
    case 'hook':
      return html`<label for="${id}">${label}; empty: no hook</label><input type="text" id="${id}" name="${name}" value="${value}" ${state.attrs(form, name)}>
${error}`
    case 'secret': {
      const count = Number(view[option.countShownAs] ?? 0)
      return html`<label for="${id}">${label}: <span id="${id}-count">${count === 0 ? 'none set' : `${count} set`}</span>${count > 0 ? '; leave empty to keep them' : ''}</label>
<input type="password" id="${id}" name="${name}" autocomplete="off" ${state.attrs(form, name)}>
${error}${count > 0 ? html`<label class="check"><input type="checkbox" id="${id}-clear" name="${clearName(name)}" value="true"> Remove the signing secrets</label>` : ''}`
    }
  }
}

/** One of the table's forms (Settings, WebAuthn, Hooks) with the project's values, or what was typed when it was refused. */
function optionsSection(ref: string, group: OptionGroup, view: Record<string, unknown>, stored: Record<string, unknown>, state: FormState): Safe {
  const form = OPTION_FORMS[group]
  return html`<section id="auth-${group}"><h2>${form.title}</h2>${form.lead ? html`<p class="muted">${form.lead}</p>` : ''}<form method="post" action="/dashboard/projects/${ref}/auth/${form.path}">
${groupOptions(group).map((option) => optionInput(group, option, view, stored, state))}
${state.error(group, '')}
<p><button>${form.button}</button></p></form></section>`
}

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
  const [view, stored] = [settings as Record<string, unknown>, project.authSettings]
  const body = html`${redirectsSection(ref, settings, state)}
${optionsSection(ref, 'settings', view, stored, state)}
${optionsSection(ref, 'webauthn', view, stored, state)}
${optionsSection(ref, 'hooks', view, stored, state)}
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
