// The PostgreSQL servers (outside any project): each with what it says of
// itself now (up or down, the platform's connections in use), its budget,
// projects and room, and for an added server its budget form, draining and
// removal; then the form that adds one. Its forms are in forms.ts. A server's
// URL is drawn with its password masked (views.ts serverView), and the URL
// typed into the add form is never drawn back.
import { databaseServerStates } from '../../../server-admin.ts'
import { DEFAULT_SERVER } from '../../../servers.ts'
import { serverStateView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { html, table, type Safe } from '../../html.ts'
import type { DashboardContext, Screen, ScreenPart } from '../../module.ts'

type ServerView = ReturnType<typeof serverStateView>

function actions(server: ServerView, state: FormState): Safe {
  if (server.id === DEFAULT_SERVER) return html`<span class="muted">The catalogue's own server: its budget is BASEPLANE_MAX_PROJECT_CONNECTIONS</span>`
  const id = server.id
  const form = `budget-${id}`
  return html`<form method="post" action="/dashboard/servers/${id}/budget" class="row">
<label for="connections-${id}" class="check">Budget</label><input type="text" inputmode="numeric" id="connections-${id}" name="connections" autocomplete="off" style="max-width:8rem" value="${state.value(form, 'connections', String(server.connection_budget))}" ${state.attrs(form, 'connections')}>
<button class="secondary" aria-label="Save the budget of ${id}">Save</button></form>${state.error(form, 'connections')}
<form method="post" action="/dashboard/servers/${id}/drain" class="inline"><input type="hidden" name="draining" value="${server.draining ? 'false' : 'true'}">
<button class="secondary" aria-label="${server.draining ? 'Take new projects on' : 'Drain'} ${id}">${server.draining ? 'Take new projects' : 'Drain'}</button></form>
<form method="post" action="/dashboard/servers/${id}/remove" class="inline" data-confirm="Remove database server ${id} from the platform? Only a server without projects can be removed; its databases are not touched.">
<button class="danger" aria-label="Remove ${id}">Remove</button></form>${state.error(`server-${id}`, '')}`
}

function serverRow(server: ServerView, state: FormState): Safe {
  const status = server.state === 'up' ? html`<span class="on">up</span>` : html`<span class="off">down</span>${server.reason ? html`: ${server.reason}` : ''}`
  return html`<tr id="server-${server.id}"><td><code>${server.id}</code></td><td><code>${server.url}</code></td><td class="server-state">${status}</td>
<td class="server-in-use">${server.connections_in_use ?? '-'}</td><td class="server-budget">${server.connection_budget}</td><td class="server-projects">${server.projects}</td><td>${server.used}</td><td>${server.room}</td>
<td class="server-draining">${server.draining ? 'draining: takes no new project' : 'takes new projects'}</td><td>${actions(server, state)}</td></tr>`
}

/** The servers page with a form's state. */
export async function serversScreen(context: DashboardContext, state: FormState): Promise<Screen> {
  const servers = (await databaseServerStates(context.controlPlane)).map(serverStateView)
  const body = html`<section><h1>PostgreSQL servers</h1>
<p>Where project databases live. A new project goes to the server with the most room (budget minus what its projects' plans may use) that answers and is not draining. The budget is the connections the fleet's data-plane processes together may open there.</p>
${table(['Id', 'Address', 'State', 'In use', 'Budget', 'Projects', 'Used', 'Room', 'New projects', ''], servers.map((server) => serverRow(server, state)))}
<p><a href="/dashboard">Back to the projects</a></p></section>
<section><h2>Add a server</h2><form method="post" action="/dashboard/servers">
<label for="server-url">Admin URL of a superuser, such as <code>postgres://user:password@host:5432/postgres</code>; it is checked, then kept in the catalogue</label>
<input type="password" id="server-url" name="url" autocomplete="off" ${state.attrs('add', 'url')}>
${state.error('add', 'url')}
<label for="server-id">Id (optional: db2, db3, ... otherwise)</label>
<input type="text" id="server-id" name="id" autocomplete="off" value="${state.value('add', 'id', '')}" ${state.attrs('add', 'id')}>
${state.error('add', 'id')}
<label for="server-connections">Budget (optional: computed from the server's settings otherwise)</label>
<input type="text" inputmode="numeric" id="server-connections" name="connections" autocomplete="off" value="${state.value('add', 'connections', '')}" ${state.attrs('add', 'connections')}>
${state.error('add', 'connections')}${state.error('add', '')}
<p><button class="secondary">Add server</button></p></form></section>`
  return { title: 'Servers', body }
}

export function serversScreens(context: DashboardContext): ScreenPart {
  return { pages: [{ method: 'GET', path: '/servers', page: () => serversScreen(context, NO_STATE) }] }
}
