// The dashboard's pages. Each is a function of the data it shows; forms post
// to routes.ts, which calls the same control-plane operations as the CLI.
import { PLANS, type ProjectRecord } from '../../lib/catalogue.ts'
import type { CredentialStatus } from '../../workers/push/credentials.ts'
import type { OutboxMail } from '../auth-settings.ts'
import { keysView, projectView, type Addressing } from '../views.ts'
import { html, type Safe } from './html.ts'

export function signInPage(): Safe {
  return html`<section><h1>Sign in</h1>
<form method="post" action="/dashboard/login">
<label for="token">Platform admin token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required>
<p><button>Sign in</button></p></form>
<p>The token is <code>BASEPLANE_ADMIN_TOKEN</code>, or the one <code>npm start</code> printed (kept in <code>.baseplane/admin-token</code>).</p></section>`
}

export function projectsPage(projects: ProjectRecord[], addressing: Addressing): Safe {
  const rows = projects.map((p) => {
    const view = projectView(p, addressing)
    return html`<tr><td><a href="/dashboard/projects/${p.ref}">${p.name}</a></td><td><code>${p.ref}</code></td><td>${p.plan}</td>
<td>${['GraphQL', p.authEnabled ? 'Auth' : '', p.pushEnabled ? 'Push' : ''].filter(Boolean).join(', ')}</td><td><code>${view.base_url}</code></td></tr>`
  })
  return html`<section><h1>Projects</h1>${
    projects.length === 0
      ? html`<p>No projects yet.</p>`
      : html`<table><thead><tr><th>Name</th><th>Ref</th><th>Plan</th><th>Products</th><th>Base URL</th></tr></thead><tbody>${rows}</tbody></table>`
  }</section>
<section><h2>New project</h2><form method="post" action="/dashboard/projects">
<label for="name">Name</label><input type="text" id="name" name="name" required maxlength="200">
<label for="plan">Plan</label><select id="plan" name="plan">${PLANS.map((plan) => html`<option>${plan}</option>`)}</select>
<p><button>Create project</button></p></form></section>`
}

function toggle(ref: string, product: 'auth' | 'push', on: boolean, label: string): Safe {
  return html`<form class="inline" method="post" action="/dashboard/projects/${ref}/products/${product}">
<input type="hidden" name="enabled" value="${on ? 'false' : 'true'}">
<span class="${on ? 'on' : 'off'}">${label}: ${on ? 'on' : 'off'}</span> <button class="secondary">${on ? 'Turn off' : 'Turn on'}</button></form>`
}

export interface AuthPanel {
  siteUrl: string
  allow: string[]
  templates: Array<{ kind: string; custom: boolean; subject: string }>
  google: { client_id: string | null; client_secret_set: boolean; enabled: boolean; offered: boolean; missing: string[] }
  mail: OutboxMail[]
}

function pushSection(ref: string, push: CredentialStatus): Safe {
  const stopped = (reason: string | null) => (reason ? html`<p class="off">Stopped: ${reason}. Store new keys to resume.</p>` : '')
  return html`<section><h2>Push</h2><div class="cards">
<div class="card" id="push-web"><h3>Web Push</h3><p class="on">Ready</p>
<p>VAPID public key (browsers subscribe with it):</p><code class="key">${push.web.public_key}</code></div>
<div class="card" id="push-apns"><h3>Apple (APNs)</h3>${
    push.apns
      ? html`<p class="on">Key set</p><p>Topic <code>${push.apns.topic}</code>, key <code>${push.apns.key_id}</code>, team <code>${push.apns.team_id}</code>, ${push.apns.environment}</p>${stopped(push.apns.stopped_reason)}`
      : html`<p class="off">Needs the app's key</p><p><code>baseplane push credentials set ${ref} apns --topic BUNDLE_ID --key-id KEY_ID --team-id TEAM_ID --file AuthKey.p8</code></p>`
  }</div>
<div class="card" id="push-fcm"><h3>Android (FCM)</h3>${
    push.fcm
      ? html`<p class="on">Service account set</p><p>Project <code>${push.fcm.project_id}</code>, <code>${push.fcm.client_email}</code></p>${stopped(push.fcm.stopped_reason)}`
      : html`<p class="off">Needs a service account</p><p><code>baseplane push credentials set ${ref} fcm --file service-account.json</code></p>`
  }</div></div></section>`
}

export function projectPage(project: ProjectRecord, addressing: Addressing, auth: AuthPanel | undefined, push?: CredentialStatus): Safe {
  const keys = keysView(project, addressing)
  const ref = project.ref
  return html`<h1>${project.name} <small><code>${ref}</code></small></h1>
<section><h2>API</h2><table>
<tr><th>Base URL</th><td><code id="base-url">${keys.base_url}</code></td></tr>
<tr><th>anon key</th><td><code class="key" id="anon-key">${keys.anon_key}</code></td></tr>
<tr><th>service_role key</th><td><details><summary>Show (server-side only)</summary><code class="key" id="service-role-key">${keys.service_role_key}</code></details></td></tr>
</table>
<form method="post" action="/dashboard/projects/${ref}/keys/rotate" onsubmit="return confirm('Every token signed with the old secret stops working. Rotate?')">
<p><button class="secondary">Rotate JWT secret and keys</button></p></form></section>
<section><h2>Plan and products</h2>
<form method="post" action="/dashboard/projects/${ref}/plan"><label for="plan">Plan</label>
<select id="plan" name="plan">${PLANS.map((plan) => html`<option ${plan === project.plan ? 'selected' : ''}>${plan}</option>`)}</select>
<p><button class="secondary">Change plan</button></p></form>
<p><span class="on">GraphQL: on</span> (with the data API)</p>
<p>${toggle(ref, 'auth', project.authEnabled, 'Auth')}</p>
<p>${toggle(ref, 'push', project.pushEnabled, 'Push')}</p></section>
${auth ? authSection(ref, keys.base_url, auth) : html`<section><h2>Auth</h2><p>Turn Auth on to set the site URL, redirects, email templates and Google sign-in.</p></section>`}
${push ? pushSection(ref, push) : ''}
<section><h2>Danger zone</h2><form method="post" action="/dashboard/projects/${ref}/delete">
<label for="confirm">Type the ref <code>${ref}</code> to delete the project and drop its database</label>
<input type="text" id="confirm" name="confirm" autocomplete="off"><p><button class="danger">Delete project</button></p></form></section>`
}

function authSection(ref: string, baseUrl: string, auth: AuthPanel): Safe {
  const google = auth.google
  return html`<section><h2>Auth: redirects</h2><form method="post" action="/dashboard/projects/${ref}/auth/redirects">
<label for="site-url">Site URL</label><input type="url" id="site-url" name="site_url" value="${auth.siteUrl}" required>
<label for="allow">Also allowed (one per line)</label><textarea id="allow" name="allow">${auth.allow.join('\n')}</textarea>
<p><button>Save redirects</button></p></form></section>
<section><h2>Auth: email templates</h2><table><thead><tr><th>Kind</th><th>Subject</th><th></th></tr></thead><tbody>${auth.templates.map(
    (t) => html`<tr><td>${t.kind}</td><td>${t.subject} ${t.custom ? html`<em>(custom)</em>` : ''}</td><td><a href="/dashboard/projects/${ref}/auth/templates/${t.kind}">Edit</a></td></tr>`,
  )}</tbody></table></section>
<section><h2>Auth: Google sign-in</h2>
<p>${google.offered ? html`<span class="on">Offered to users</span>` : html`<span class="off">Not offered</span>: missing ${google.missing.join(', ')}`}</p>
<p>Register this exact redirect URI with Google: <code id="google-callback">${baseUrl}/auth/v1/callback</code> (it stays the same with a custom domain).</p>
<form method="post" action="/dashboard/projects/${ref}/auth/google">
<label for="client-id">Client ID</label><input type="text" id="client-id" name="client_id" value="${google.client_id ?? ''}">
<label for="client-secret">Client secret ${google.client_secret_set ? '(set; leave empty to keep it)' : '(not set)'}</label>
<input type="password" id="client-secret" name="client_secret" autocomplete="off">
<label><input type="checkbox" id="google-enabled" name="enabled" value="true" ${google.enabled ? "checked" : ""}> Enabled</label>
<p><button>Save Google settings</button></p></form></section>
<section><h2>Auth: mail</h2>${
    auth.mail.length === 0
      ? html`<p>No mail sent yet.</p>`
      : html`<table><thead><tr><th>When</th><th>To</th><th>Kind</th><th>Subject</th><th>Delivery</th></tr></thead><tbody>${auth.mail.map(
          (m) => html`<tr><td>${m.created_at}</td><td>${m.to}</td><td>${m.kind}</td><td>${m.subject}</td><td>${m.delivery}</td></tr>`,
        )}</tbody></table>`
  }</section>`
}

export function templatePage(ref: string, template: { kind: string; custom: boolean; subject: string; body: string }): Safe {
  return html`<h1>Template <code>${template.kind}</code> of <a href="/dashboard/projects/${ref}">${ref}</a></h1>
<section><form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}">
<label for="subject">Subject</label><input type="text" id="subject" name="subject" value="${template.subject}" required>
<label for="body">HTML body (must contain <code>{{ .ConfirmationURL }}</code>; also <code>{{ .Token }}</code>, <code>{{ .SiteURL }}</code>, <code>{{ .Email }}</code>, <code>{{ .NewEmail }}</code>)</label>
<textarea id="body" name="body" rows="14">${template.body}</textarea>
<p><button>Save template</button></p></form>
${template.custom ? html`<form method="post" action="/dashboard/projects/${ref}/auth/templates/${template.kind}/reset"><button class="secondary">Reset to default</button></form>` : ''}
</section>`
}

export function notFoundPage(): Safe {
  return html`<section><h1>Not found</h1><p><a href="/dashboard">Back to the projects</a></p></section>`
}
