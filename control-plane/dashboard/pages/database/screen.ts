// The project's Database tab as drawn: the owner role's connection string
// (its password only when the operator asks to reveal it), the API roles'
// statement timeouts, and the project's own roles. Its forms are in forms.ts.
//
// The password is hidden by default because it is the owner role's: it owns
// the project's tables (so row-level security does not hold it) and may drop
// any of them. A page left open, a screenshot or a screen share should not
// hand it out; the operator who needs it for psql or migrations
// asks (a POST, so it is never in a URL, a history entry or a cache), as
// `baseplane db url REF` gives it to the operator on the command line.
import { ownerUrlOf, type ProjectRecord } from '../../../../lib/catalogue.ts'
import { getRoleTimeouts, formatTimeout, TIMEOUT_FIELDS, type RoleTimeoutsView, type TimeoutField } from '../../../role-timeouts.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { copyable, empty, html, table, type Safe } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'
import { MAX_PROJECT_ROLES } from '../../../project-roles.ts'

/** Each timeout's input label, and what the notice calls it. */
export const TIMEOUT_LABELS: Record<TimeoutField, string> = {
  anon: 'anon: statement timeout',
  authenticated: 'authenticated: statement timeout',
  service_role: 'service_role: statement timeout',
  idle_in_transaction: 'Idle in a transaction (every API role)',
}

/** A timeout as its input shows it: a duration with its unit, 0 for no limit. */
export function timeoutText(ms: number): string {
  return ms === 0 ? '0' : formatTimeout(ms)
}

/** The owner role's connection string with the password replaced by a placeholder. */
export function maskedOwnerUrl(project: ProjectRecord): string {
  const url = new URL(ownerUrlOf(project))
  url.password = 'PASSWORD'
  return url.toString()
}

function connectionSection(project: ProjectRecord, revealed: boolean): Safe {
  const ref = project.ref
  const shown = revealed
    ? html`${copyable('db-url', ownerUrlOf(project), 'connection string')}
<p class="muted">Shown because you asked; it is not shown again when the page is reloaded.</p>`
    : html`<code class="key" id="db-url">${maskedOwnerUrl(project)}</code>
<form method="post" action="/dashboard/projects/${ref}/database/reveal" class="row"><button class="secondary" id="db-url-reveal">Show with the password</button></form>`
  return html`<section><h2>Connection</h2>
<p>The project's owner role, for psql, migrations and tools: it creates tables, policies and functions in this database, nothing elsewhere. Server <code id="db-server">${project.dbServer}</code> (<a href="/dashboard/servers">servers</a>).</p>
${shown}
<p class="muted">The password is hidden unless asked for: the owner role may change or drop anything in the database. <code>baseplane db url ${ref}</code> prints the same string.</p></section>`
}

function timeoutInput(field: TimeoutField, view: RoleTimeoutsView, state: FormState): Safe {
  const custom = view.custom.includes(field)
  return html`<label for="timeout-${field}">${TIMEOUT_LABELS[field]} <span class="muted" id="timeout-${field}-source">(${custom ? 'set here' : 'plan default'})</span></label>
<input type="text" id="timeout-${field}" name="${field}" autocomplete="off" value="${state.value('timeouts', field, timeoutText(view[field]))}" ${state.attrs('timeouts', field)}>
${state.error('timeouts', field)}`
}

function timeoutsSection(ref: string, view: RoleTimeoutsView, state: FormState): Safe {
  return html`<section><h2>Statement timeouts</h2>
<p>How long one statement of an API request may run as each role, and how long a transaction may sit idle, before PostgreSQL cancels it. A duration with its unit: <code>500ms</code>, <code>5s</code>, <code>2m</code>, <code>1h</code> at most; <code>0</code> for no limit; empty for the plan's default.</p>
<form method="post" action="/dashboard/projects/${ref}/database/timeouts">
${TIMEOUT_FIELDS.map((field) => timeoutInput(field, view, state))}
${state.error('timeouts', '')}
<p><button class="secondary">Save timeouts</button></p></form></section>`
}

function rolesSection(project: ProjectRecord, state: FormState): Safe {
  const ref = project.ref
  const rows = project.projectRoles.map(
    (role) => html`<tr><td><code>${role}</code></td><td><form method="post" class="inline" action="/dashboard/projects/${ref}/database/roles/${role}/remove" data-confirm="Remove role ${role}? Tokens naming it are refused from the next request; its grants in the database stay.">
<button class="secondary" aria-label="Remove role ${role}">Remove</button></form></td></tr>`,
  )
  return html`<section><h2>Project roles</h2>
<p>Roles besides <code>anon</code>, <code>authenticated</code> and <code>service_role</code> that the project's tokens may name (a <code>role</code> claim): the platform makes them, the owner grants them what they may do. At most ${MAX_PROJECT_ROLES}.</p>
<div id="project-roles">${rows.length === 0 ? empty('No roles of its own yet.') : table(['Role', ''], rows)}</div>
${state.error('role_remove', '')}
<form method="post" action="/dashboard/projects/${ref}/database/roles">
<label for="role-name">New role (lowercase letters, digits and _)</label>
<input type="text" id="role-name" name="name" autocomplete="off" value="${state.value('role_add', 'name', '')}" ${state.attrs('role_add', 'name')}>
${state.error('role_add', 'name')}
<p><button class="secondary">Add role</button></p></form></section>`
}

/** The Database tab of project `ref`, with a form's state; `revealed` shows the password. */
export async function databaseScreen(context: DashboardContext, ref: string, state: FormState, revealed = false): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const timeouts = await getRoleTimeouts(context.controlPlane, ref)
  const body = html`${connectionSection(project, revealed)}
${timeoutsSection(ref, timeouts, state)}
${rolesSection(project, state)}`
  return { title: 'Database', body, project, tab: 'database' }
}

export function databaseScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/database', (ref) => databaseScreen(context, ref, NO_STATE))] }
}
