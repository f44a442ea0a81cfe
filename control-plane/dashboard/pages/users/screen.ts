// The project's Users tab as drawn: Auth users with search by email and
// paging, and a user's detail (identities, factors, sessions, last sign-in)
// with the admin operations' buttons. Its forms are in forms.ts.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import { UUID_SOURCE } from '../../../../lib/uuid.ts'
import { authUserSessions, getAuthUser, listAuthUsers, type AuthUser, type UserSession } from '../../../auth-users.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { offScreen, projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

const PER_PAGE = 20
const BANS: Array<[string, string]> = [
  ['1h', '1 hour'],
  ['24h', '1 day'],
  ['168h', '1 week'],
  ['720h', '30 days'],
  ['876000h', 'indefinitely (100 years)'],
]

/** A user's id in a path. */
export const USER_PARAM = { id: UUID_SOURCE }

function when(value: string | null | undefined): string {
  return value ? value.replace('T', ' ').replace(/\.\d+/, '').replace(/\+00:00$|Z$/, ' UTC') : 'never'
}

function banned(user: AuthUser): boolean {
  return !!user.banned_until && new Date(user.banned_until) > new Date()
}

function status(user: AuthUser): string {
  if (banned(user)) return `banned until ${when(user.banned_until)}`
  if (!user.email_confirmed_at) return user.invited_at ? 'invited' : 'unconfirmed'
  return 'active'
}

function authOff(project: ProjectRecord): Screen {
  return offScreen(project, 'users', 'Users', html`Auth is off, so the project has no users yet. Turn Auth on under <a href="/dashboard/projects/${project.ref}/settings">Settings</a>.`)
}

function listing(ref: string, email: string, page: number, list: { users: AuthUser[]; total: number }): Safe {
  if (list.total === 0) {
    return empty(
      email
        ? html`No user's email contains “${email}”. <a href="/dashboard/projects/${ref}/users">Show every user</a>.`
        : 'No users yet. Create one or send an invitation below; users who sign up from your app appear here.',
    )
  }
  const pages = Math.max(1, Math.ceil(list.total / PER_PAGE))
  const link = (p: number) => `/dashboard/projects/${ref}/users?${new URLSearchParams({ ...(email ? { email } : {}), page: String(p) })}`
  const rows = list.users.map(
    (u) =>
      html`<tr><td><a href="/dashboard/projects/${ref}/users/${u.id}">${u.email || u.phone || u.id}</a></td><td>${status(u)}</td><td>${when(u.last_sign_in_at)}</td><td>${when(u.created_at)}</td></tr>`,
  )
  return html`${table(['Email', 'Status', 'Last sign-in', 'Created'], rows)}
<nav class="row" aria-label="Pages"><span id="users-count">${list.total} user${list.total === 1 ? '' : 's'}, page ${page} of ${pages}</span>${
    page > 1 ? html`<a href="${link(page - 1)}" rel="prev">Previous page</a>` : ''
  }${page < pages ? html`<a href="${link(page + 1)}" rel="next">Next page</a>` : ''}</nav>`
}

function newUserForms(ref: string, state: FormState): Safe {
  return html`<section><h2>New user</h2><form method="post" action="/dashboard/projects/${ref}/users">
<label for="new-email">Email</label><input type="email" id="new-email" name="email" required value="${state.value('create', 'email', '')}" ${state.attrs('create', 'email')}>
${state.error('create', 'email')}
<label for="new-password">Password (optional: without one, the user signs in by link or recovery)</label>
<input type="password" id="new-password" name="password" autocomplete="new-password" ${state.attrs('create', 'password')}>
${state.error('create', 'password')}${state.error('create', '')}
<p class="muted">The address is marked confirmed.</p>
<p><button>Create user</button></p></form></section>
<section><h2>Invite</h2><form method="post" action="/dashboard/projects/${ref}/users/invite">
<label for="invite-email">Email</label><input type="email" id="invite-email" name="email" required value="${state.value('invite', 'email', '')}" ${state.attrs('invite', 'email')}>
${state.error('invite', 'email')}
<p class="muted">Sends the invite mail (Auth's invite template); the link lands on the site URL.</p>
<p><button>Send invitation</button></p></form></section>`
}

/** The list of users (filtered and paged by `query`) and the new-user forms, with a form's state. */
export async function listScreen(context: DashboardContext, ref: string, query: URLSearchParams, state: FormState): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  if (!project.authEnabled) return authOff(project)
  const email = query.get('email') ?? ''
  const page = Math.max(1, Math.min(1_000_000, Number.parseInt(query.get('page') ?? '1', 10) || 1))
  const list = await listAuthUsers(context.controlPlane, ref, { email: email || undefined, page, perPage: PER_PAGE }, context)
  const body = html`<section><h2>Users</h2>
<form method="get" action="/dashboard/projects/${ref}/users" role="search" class="row">
<label for="user-search" class="check">Email contains</label><input type="search" id="user-search" name="email" value="${email}" style="max-width:20rem">
<button class="secondary">Search</button></form>
${listing(ref, email, page, list)}</section>
${newUserForms(ref, state)}`
  return { title: 'Users', body, project, tab: 'users' }
}

function factorsTable(base: string, user: AuthUser): Safe {
  const factors = user.factors ?? []
  if (factors.length === 0) return empty('No second factors. The user can enrol a TOTP app from your app (supabase.auth.mfa.enroll).')
  return table(
    ['Type', 'Name', 'Status', 'Created', 'Action'],
    factors.map(
      (f) =>
        html`<tr><td>${f.factor_type}</td><td>${f.friendly_name ?? ''}</td><td>${f.status}</td><td>${when(f.created_at)}</td><td><form method="post" action="${base}/factors/${f.id}/delete" data-confirm="Remove this factor? The user signs in without it."><button class="secondary" aria-label="Remove ${f.factor_type} factor ${f.friendly_name || f.id}">Remove</button></form></td></tr>`,
    ),
  )
}

function identitiesTable(user: AuthUser): Safe {
  const identities = user.identities ?? []
  if (identities.length === 0) return empty('No identities: the user has not signed in with email or a provider yet.')
  return table(
    ['Provider', 'Email', 'Created', 'Last sign-in'],
    identities.map((i) => html`<tr><td>${i.provider}</td><td>${i.email ?? ''}</td><td>${when(i.created_at)}</td><td>${when(i.last_sign_in_at)}</td></tr>`),
  )
}

function sessionsTable(sessions: UserSession[]): Safe {
  if (sessions.length === 0) return empty('No sessions: the user is signed in nowhere.')
  return table(
    ['Started', 'Last refreshed', 'Level', 'Client', 'Address'],
    sessions.map((s) => html`<tr><td>${when(s.created_at)}</td><td>${when(s.updated_at)}</td><td>${s.aal ?? ''}</td><td>${s.user_agent ?? ''}</td><td>${s.ip ?? ''}</td></tr>`),
  )
}

function actions(base: string, user: AuthUser, state: FormState): Safe {
  return html`<section><h2>Actions</h2>
<form method="post" action="${base}/recovery"><p><button class="secondary" ${user.email ? '' : 'disabled'}>Send a recovery link</button></p>${state.error('recovery', '')}</form>
<form method="post" action="${base}/ban" class="row"><label for="ban-duration" class="check">Ban for</label>
<select id="ban-duration" name="duration" style="max-width:16rem" ${state.attrs('ban', 'duration')}>${BANS.map(
    ([value, label]) => html`<option value="${value}" ${state.value('ban', 'duration', '24h') === value ? 'selected' : ''}>${label}</option>`,
  )}${banned(user) ? html`<option value="none">lift the ban</option>` : ''}</select><button class="secondary">Ban</button></form>
${state.error('ban', 'duration')}
${banned(user) ? html`<form method="post" action="${base}/ban"><input type="hidden" name="duration" value="none"><p><button class="secondary">Lift the ban</button></p></form>` : ''}
<form method="post" action="${base}/delete" data-confirm="Delete this user and everything Auth keeps about them?"><p><button class="danger">Delete user</button></p></form></section>`
}

/** One user's detail and actions, with a form's state. */
export async function userScreen(context: DashboardContext, ref: string, id: string, state: FormState): Promise<Screen | undefined> {
  const project = await getProject(context.controlPlane, ref)
  if (!project.authEnabled) return authOff(project)
  const [user, sessions] = await Promise.all([getAuthUser(context.controlPlane, ref, id, context), authUserSessions(context.controlPlane, ref, id, context)])
  const base = `/dashboard/projects/${ref}/users/${user.id}`
  const name = user.email || user.phone || user.id
  const body = html`<section><h2 id="user-email">${name}</h2><div class="scroll"><table>
<tr><th scope="row">ID</th><td><code id="user-id">${user.id}</code></td></tr>
<tr><th scope="row">Status</th><td id="user-status">${status(user)}</td></tr>
<tr><th scope="row">Last sign-in</th><td id="user-last-sign-in">${when(user.last_sign_in_at)}</td></tr>
<tr><th scope="row">Created</th><td>${when(user.created_at)}</td></tr>
<tr><th scope="row">Email confirmed</th><td>${when(user.email_confirmed_at)}</td></tr>
<tr><th scope="row">Role</th><td>${user.role ?? 'authenticated'}</td></tr>
</table></div><p><a href="/dashboard/projects/${ref}/users">All users</a></p></section>
<section><h2>Identities</h2>${identitiesTable(user)}</section>
<section><h2>Factors</h2>${factorsTable(base, user)}${state.error('factor', '')}</section>
<section><h2>Sessions</h2>${sessionsTable(sessions)}
<form method="post" action="${base}/logout" data-confirm="End every session of this user?"><p><button class="secondary" ${sessions.length ? '' : 'disabled'}>Sign out everywhere</button></p></form></section>
${actions(base, user, state)}`
  return { title: name, body, project, tab: 'users' }
}

export function usersScreens(context: DashboardContext): ScreenPart {
  return {
    pages: [
      projectPage('/users', (ref, { query }) => listScreen(context, ref, query, NO_STATE)),
      projectPage('/users/:id', (ref, { params }) => userScreen(context, ref, params.id!, NO_STATE), USER_PARAM),
    ],
  }
}
