// A member's own account as drawn (issue 42): the projects and roles, the
// password change, the authenticator (TOTP) enrolment, and the personal
// access tokens (a new one shown once, right after it is made). Its forms
// are in forms.ts. The operator has no account: the admin token is theirs.
import type { Caller } from '../../../access.ts'
import { accountOf, listTokens, newTotp } from '../../../members.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { copyable, empty, html, table, type Safe } from '../../html.ts'
import type { DashboardContext, Screen, ScreenPart } from '../../module.ts'

export async function accountScreen(context: DashboardContext, caller: Caller, state: FormState, made?: string): Promise<Screen> {
  if (caller.kind === 'operator') {
    return { title: 'Account', body: html`<section><h1>Account</h1>${empty('The operator signs in with the admin token and has no account; members have one each.')}</section>` }
  }
  const account = await accountOf(context.controlPlane, caller)
  const tokens = await listTokens(context.controlPlane, caller)
  const projects = table(
    ['Project', 'Role'],
    account.projects.map((p) => html`<tr><td><a href="/dashboard/projects/${p.ref}">${p.ref}</a></td><td>${p.role}</td></tr>`),
  )
  const tokenRows = tokens.map(
    (t) => html`<tr data-token="${t.name}"><td>${t.name}</td><td><code>${t.prefix}…</code></td><td class="token-state">${t.state}</td><td>${t.expires_at.slice(0, 10)}</td><td>${t.last_used_at?.slice(0, 16).replace('T', ' ') ?? 'never'}</td><td>${
      t.state === 'active' ? html`<form class="inline" method="post" action="/dashboard/account/tokens/${t.id}/revoke"><button class="danger">Revoke</button></form>` : ''
    }</td></tr>`,
  )
  const shown: Safe = made
    ? html`<div class="notice" role="status" id="new-token"><p>Your new token (shown once: copy it now):</p>${copyable('token-value', made, 'token')}</div>`
    : html``
  const totp = account.totp
    ? html`<p id="totp-state">An authenticator is enrolled: sign-in asks for its code.</p><form method="post" action="/dashboard/account/totp/remove"><button class="secondary">Remove the authenticator</button></form>`
    : (() => {
        const enrol = newTotp(caller)
        return html`<p id="totp-state">No authenticator. Add this secret to an authenticator app, then enter its code.</p>
<form method="post" action="/dashboard/account/totp" id="totp-enrol"><input type="hidden" name="secret" value="${enrol.secret}">
<p>Secret: <code id="totp-secret">${enrol.secret}</code> (<code>${enrol.uri}</code>)</p>
<label for="totp-code">Code</label><input type="text" id="totp-code" name="code" inputmode="numeric" pattern="[0-9]{6}" required ${state.attrs('totp', 'code')}>
${state.error('totp', 'code')}${state.error('totp', '')}
<p><button>Enrol</button></p></form>`
      })()
  const body = html`<section><h1>Account</h1><p>Signed in as <strong id="account-email">${account.email}</strong>.</p>${projects}</section>
<section><h2>Personal access tokens</h2><p>For the admin API (<code>Authorization: Bearer …</code>) and the CLI (<code>baseplane login</code>); a token does what your roles allow and nothing else.</p>
${shown}${tokens.length === 0 ? empty('No tokens yet.') : html`<div id="tokens">${table(['Name', 'Starts', 'State', 'Expires', 'Last used', ''], tokenRows)}</div>`}
<form method="post" action="/dashboard/account/tokens" id="token-create">
<label for="token-name">Name</label><input type="text" id="token-name" name="name" maxlength="100" required value="${state.value('token', 'name', '')}" ${state.attrs('token', 'name')}>
${state.error('token', 'name')}
<label for="token-days">Expires in (days)</label><input type="number" id="token-days" name="expires_in_days" min="1" max="366" value="${state.value('token', 'expires_in_days', '30')}" ${state.attrs('token', 'expires_in_days')}>
${state.error('token', 'expires_in_days')}
<p><button>Create token</button></p></form></section>
<section><h2>Password</h2><form method="post" action="/dashboard/account/password" id="password-change">
<label for="current-password">Current password</label><input type="password" id="current-password" name="current_password" autocomplete="current-password" required ${state.attrs('password', 'current_password')}>
${state.error('password', 'current_password')}
<label for="new-password">New password</label><input type="password" id="new-password" name="new_password" autocomplete="new-password" minlength="8" required ${state.attrs('password', 'new_password')}>
${state.error('password', 'new_password')}
<p><button>Change the password</button></p></form></section>
<section><h2>Authenticator</h2>${totp}</section>`
  return { title: 'Account', body }
}

export function accountScreens(context: DashboardContext): ScreenPart {
  return { pages: [{ method: 'GET', path: '/account', page: ({ caller }) => accountScreen(context, caller, NO_STATE) }] }
}
