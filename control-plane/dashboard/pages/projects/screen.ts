// The list of projects and the new-project form (outside any project), as
// drawn. Its form is in forms.ts.
import { PLANS } from '../../../../lib/catalogue.ts'
import { projectView } from '../../../views.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table } from '../../html.ts'
import type { DashboardContext, PageInput, Screen, ScreenPart } from '../../module.ts'
import { standingOn, type Caller } from '../../../access.ts'
import { listAllProjects } from '../../../projects.ts'

/** The projects and the new-project form, with its state. */
export async function projectsScreen(context: DashboardContext, state: FormState, caller: Caller): Promise<Screen> {
  // A member sees only their own projects, with their role; creating one and the servers are the operator's.
  const projects = (await listAllProjects(context.controlPlane)).filter((p) => standingOn(caller, p.ref) !== undefined)
  const operator = caller.kind === 'operator'
  const rows = projects.map((p) => {
    const view = projectView(p, context.addressing)
    return html`<tr><td><a href="/dashboard/projects/${p.ref}">${p.name}</a></td><td><code>${p.ref}</code></td><td>${p.plan}</td>
<td>${p.state}</td><td>${['Data API', 'GraphQL', p.authEnabled ? 'Auth' : '', p.pushEnabled ? 'Push' : ''].filter(Boolean).join(', ')}</td><td><code>${view.base_url}</code></td></tr>`
  })
  const plan = state.value('create', 'plan', 'free')
  const list = html`<section><h1>Projects</h1>${
    projects.length === 0
      ? empty(operator ? 'No projects yet. Create one below: it gets its own database, keys and base URL.' : 'You are not a member of any project yet.')
      : table(['Name', 'Ref', 'Plan', 'State', 'Products', 'Base URL'], rows)
  }${
    operator
      ? html`<p><a href="/dashboard/servers" id="servers-link">PostgreSQL servers</a>: where project databases live. <a href="/dashboard/members" id="all-members-link">Members</a>: everyone invited to a project.</p>`
      : html`<p><a href="/dashboard/account" id="account-link">Your account</a> (${caller.email}): password, authenticator, personal access tokens.</p>`
  }</section>`
  if (!operator) return { title: 'Projects', body: list }
  const body = html`${list}
<section><h2>New project</h2><form method="post" action="/dashboard/projects">
<label for="name">Name</label><input type="text" id="name" name="name" required maxlength="200" value="${state.value('create', 'name', '')}" ${state.attrs('create', 'name')}>
${state.error('create', 'name')}
<label for="plan">Plan</label><select id="plan" name="plan" ${state.attrs('create', 'plan')}>${PLANS.map((p) => html`<option ${p === plan ? 'selected' : ''}>${p}</option>`)}</select>
${state.error('create', 'plan')}${state.error('create', '')}
<p><button>Create project</button></p></form></section>`
  return { title: 'Projects', body }
}

export function projectsScreens(context: DashboardContext): ScreenPart {
  const draw = async (input: PageInput) => projectsScreen(context, NO_STATE, input.caller)
  return {
    pages: [
      { method: 'GET', path: '', page: draw },
      { method: 'GET', path: '/', page: draw },
    ],
  }
}
