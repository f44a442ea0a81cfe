// The Members tab as drawn (issue 42): the project's members and their roles
// for every member; for its owner (and the operator) the invitation form and
// each member's role and removal. Outside any project, the operator's list of
// every member (`/members`). Its forms are in forms.ts.
import { MEMBER_ROLES, allows, type Caller } from '../../../access.ts'
import { listMembers, projectMembers } from '../../../members.ts'
import { getProject } from '../../../projects.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'

/** The email in a path segment. */
export const memberPath = (ref: string, email: string) => `/projects/${ref}/members/${encodeURIComponent(email)}`

export async function membersScreen(context: DashboardContext, ref: string, caller: Caller, state: FormState): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const members = await projectMembers(context.controlPlane, ref)
  const manages = allows(caller, ref, 'owner')
  const roleChoice = (name: string, id: string, chosen: string) =>
    html`<select name="${name}" id="${id}">${MEMBER_ROLES.map((r) => html`<option ${r === chosen ? 'selected' : ''}>${r}</option>`)}</select>`
  const rows = members.map((m, i) => {
    const actions = manages
      ? html`<td><form class="inline" method="post" action="/dashboard${memberPath(ref, m.email)}/role">${roleChoice('role', `role-${i}`, m.role)}<button class="secondary">Change role</button></form>
<form class="inline" method="post" action="/dashboard${memberPath(ref, m.email)}/remove" data-confirm="Remove ${m.email} from the project?"><button class="danger">Remove</button></form></td>`
      : ''
    return html`<tr data-email="${m.email}"><td>${m.email}</td><td class="member-role">${m.role}</td><td>${m.joined ? 'yes' : 'invited'}</td>${actions}</tr>`
  })
  const invite = manages
    ? html`<section><h2>Invite</h2><form method="post" action="/dashboard/projects/${ref}/members" id="invite-member">
<label for="member-email">Email</label><input type="email" id="member-email" name="email" required value="${state.value('invite', 'email', '')}" ${state.attrs('invite', 'email')}>
${state.error('invite', 'email')}
<label for="member-role">Role</label>${roleChoice('role', 'member-role', state.value('invite', 'role', 'developer'))}
${state.error('invite', 'role')}${state.error('invite', '')}
<p class="muted">An owner manages the project (settings, keys, members, deletion); a developer the same but key rotation, members and deletion; read-only reads.</p>
<p><button>Send the invitation</button></p></form></section>`
    : ''
  const body = html`<section><h2>Members</h2>${
    members.length === 0 ? empty('No members yet.') : html`<div id="members">${table(['Email', 'Role', 'Joined', ...(manages ? [''] : [])], rows)}</div>`
  }${state.error('member', '')}</section>${invite}`
  return { title: 'Members', project, tab: 'members', body }
}

/** Every member with their projects: the operator's. */
async function allMembersScreen(context: DashboardContext): Promise<Screen> {
  const members = await listMembers(context.controlPlane)
  const rows = members.map(
    (m) => html`<tr><td>${m.email}</td><td>${m.joined ? 'yes' : 'invited'}</td><td>${m.totp ? 'yes' : 'no'}</td><td>${m.projects.map((p) => html`<a href="/dashboard/projects/${p.ref}/members">${p.ref}</a> (${p.role}) `)}</td></tr>`,
  )
  const body = html`<section><h1>Members</h1>${
    members.length === 0 ? empty('Nobody is invited yet: invite people from a project\'s Members tab.') : table(['Email', 'Joined', 'Authenticator', 'Projects'], rows)
  }</section>`
  return { title: 'Members', body }
}

export function membersScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [
      projectPage('/members', (ref, { caller }) => membersScreen(context, ref, caller, NO_STATE)),
      { method: 'GET', path: '/members', page: () => allMembersScreen(context) },
    ],
  }
}
