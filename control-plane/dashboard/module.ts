// What a dashboard page module offers the router (routes.ts): pages (GET,
// rendered in the shared layout), forms (POST, answered with a redirect that
// carries a notice code, or the page again with the refused input and the
// error beside its field), JSON calls for the page's own script, and the
// notice texts of its codes. Each tab is a folder under pages/ with the same
// two files: screen.ts draws (its pages) and forms.ts acts (its forms, calls
// that change something, notices); pages/index.ts joins them in tab order.
import type pg from 'pg'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { REF_SOURCE } from '../../lib/refs.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../../lib/http.ts'
import type { RouteSpec } from '../../lib/http/router.ts'
import type { MinuteFigures } from '../../lib/metrics/recent-minutes.ts'
import type { MailDelivery } from '../auth-users.ts'
import type { ControlPlane } from '../control-plane.ts'
import type { PushAdminOptions } from '../push-admin.ts'
import type { Caller, ProjectAccess } from '../access.ts'
import type { Addressing } from '../views.ts'
import { empty, html, type Safe } from './html.ts'

export type TabId = 'overview' | 'auth' | 'users' | 'graphql' | 'rest' | 'sql' | 'push' | 'realtime' | 'storage' | 'tables' | 'usage' | 'database' | 'keys' | 'members' | 'settings'

export interface DashboardContext {
  controlPlane: ControlPlane
  addressing: Addressing
  /** Runs `fn` on the project's own database as the server's superuser (short-lived client, no transaction open: `fn` opens its own). */
  inProject<T>(project: ProjectRecord, fn: (client: pg.ClientBase) => Promise<T>): Promise<T>
  /** Where Push's credential checks reach the providers (config BASEPLANE_FCM_TOKEN_URL). */
  push?: PushAdminOptions
  /**
   * How this process sends Auth's mail (config SMTP_URL and BASEPLANE_MAIL_FROM):
   * with `addressing`, what the Auth users' operations take (auth-users.ts
   * AuthUsersContext), so the context itself is passed to them.
   */
  mail: MailDelivery
  /**
   * This process's last hour of a project's figures, minute by minute, oldest
   * first: the data plane's counts, handed in by whoever assembles the
   * dashboard beside it (server/platform.ts); absent, the charts stay empty.
   */
  recentFigures?: (ref: string) => MinuteFigures[]
  /**
   * This process's data plane, handed in by whoever assembles the dashboard
   * beside it (server/platform.ts): a request given here is answered as its
   * HTTP server's are (the project's endpoint: the key and token checks, the
   * project's state, fair share, quotas, usage). The REST tab runs its
   * requests through it; absent, it runs none.
   */
  dataPlane?: (request: IncomingRequest) => Promise<OutgoingResponse<ResponseBody>>
  /** This process's Realtime figures of a project (its open sockets, the broadcasts it took), handed in beside the data plane; absent, the Realtime tab shows none. */
  realtimeFigures?: (ref: string) => { connections: number; messages: number }
}

/** A rendered page: its body goes into the layout; with `project`, under that project's header and tabs. */
export interface Screen {
  title: string
  body: Safe
  project?: ProjectRecord
  tab?: TabId
  /** 200 unless said (a refused form answers 400 with the page and the typed input). */
  status?: number
  /** Files under /dashboard/assets/ the page loads (besides dashboard.js). */
  scripts?: string[]
  styles?: string[]
  /** Origins its scripts open sockets to (LayoutOptions.connect). */
  connect?: string[]
}

export interface PageInput {
  /** Who is signed in: the operator or a member (control-plane/access.ts). */
  caller: Caller
  params: Record<string, string>
  query: URLSearchParams
}

/** A refused form: which form, what was typed, and every error with the field it belongs to. */
export interface Refusal {
  form: string
  fields: Record<string, string>
  /** Each error by the input it shows beside ('': beside the form's button). */
  errors: Record<string, string>
}

export interface FormInput {
  caller: Caller
  params: Record<string, string>
  /** A posted field; '' when absent. */
  field: (name: string) => string
  form: URLSearchParams
}

export type FormAnswer =
  /** Success: back to `to` (a path under /dashboard, with a query string of its own if the page has one) with notice `notice` (a code of some module's `notices`) and its values. */
  | { to: string; notice: string; values?: string[] }
  | { screen: Screen }

export interface DashboardPage extends RouteSpec {
  /** What a member needs on the path's project (control-plane/access.ts); absent: the operator's alone. */
  access?: ProjectAccess
  page: (input: PageInput) => Promise<Screen | undefined>
}

export interface DashboardForm extends RouteSpec {
  /** What a member needs on the path's project (control-plane/access.ts); absent: the operator's alone. */
  access?: ProjectAccess
  /** The form appends its own events (with the actor); otherwise a member's saved form is recorded as one `project.changed` event. */
  ownEvents?: true
  form: (input: FormInput) => Promise<FormAnswer>
}

export interface CallInput {
  caller: Caller
  params: Record<string, string>
  query: URLSearchParams
  body: unknown
  /** The address the dashboard's request came from. */
  peerAddress: () => string
}

/** A JSON call from the page's own script (same origin, signed in): answers [status, body]. */
export interface DashboardCall extends RouteSpec {
  /** What a member needs on the path's project (control-plane/access.ts); absent: the operator's alone. */
  access?: ProjectAccess
  call: (input: CallInput) => Promise<[number, unknown]>
}

/** Notice texts by code (see DashboardModule.notices). */
export type Notices = Record<string, (values: string[]) => string>

export interface DashboardModule {
  /** The project tab this module draws (absent for pages outside a project). */
  tab?: { id: TabId; label: string }
  pages?: DashboardPage[]
  forms?: DashboardForm[]
  calls?: DashboardCall[]
  /**
   * Notice texts by code. Values come from the URL, so each is checked by
   * routes.ts against NOTICE_VALUE (a word, a ref, a number) before it is
   * shown; a text never shows anything else the URL carried.
   */
  notices?: Notices
}

/** What a tab's screen.ts offers: its pages, and the JSON its page's script reads to draw. */
export interface ScreenPart {
  pages: DashboardPage[]
  calls?: DashboardCall[]
}

/** What a tab's forms.ts offers: its forms, the JSON calls of its script that act, and their notices. */
export interface FormsPart {
  forms?: DashboardForm[]
  calls?: DashboardCall[]
  notices?: Notices
}

export type ModuleFactory = (context: DashboardContext) => DashboardModule

/** The path of a project's tab under /dashboard. */
export function tabPath(ref: string, tab: TabId): string {
  return tab === 'overview' ? `/projects/${ref}` : `/projects/${ref}/${tab}`
}

/** How long a token the dashboard signs for a chosen user lasts (the GraphQL and REST tabs run as that user with it). */
export const USER_TOKEN_SECONDS = 300

/**
 * The explorers' "Run as" choice (ids `{prefix}-role`, `{prefix}-user-row`,
 * `{prefix}-user`): anon, a user picked by email or id (while Auth is on), or
 * service_role; with `owner`, the project's owner role first. The page's script shows the user's box for "a user".
 */
export function runAsChoice(prefix: string, project: ProjectRecord, options: { owner?: boolean } = {}): Safe {
  // The SQL tab runs as the project's owner role too (no row-level security on the tables it owns), and starts there.
  const owner = options.owner ? html`<option value="owner">the owner (${project.dbOwnerRole}: row-level security does not apply to its own tables)</option>` : ''
  return html`<label for="${prefix}-role">Run as</label><select id="${prefix}-role" name="role">${owner}
<option value="anon">anon (the anon key)</option><option value="user" ${project.authEnabled ? '' : 'disabled'}>a user${project.authEnabled ? '' : ' (turn Auth on first)'}</option><option value="service_role">service_role (bypasses row-level security)</option></select>
<div id="${prefix}-user-row" hidden><label for="${prefix}-user">User's email or id</label><input type="text" id="${prefix}-user" name="user" autocomplete="off">
<p class="muted">The dashboard signs a token for that user valid for ${USER_TOKEN_SECONDS / 60} minutes.</p></div>`
}

/** Said by every notice of a saved change: the data plane reads the catalogue again before its next request. */
export const NEXT_REQUEST = 'It applies from the next request.'

/** A project's ref in a dashboard path. */
export const REF_PARAM = { ref: REF_SOURCE } as const

type Where = Readonly<Record<string, string>>

/** GET `/projects/:ref{rest}`: a page of a project, drawn for the ref in the path. */
export function projectPage(rest: string, draw: (ref: string, input: PageInput) => Promise<Screen | undefined>, where: Where = {}): DashboardPage {
  return { method: 'GET', path: `/projects/:ref${rest}`, where: { ...REF_PARAM, ...where }, page: (input) => draw(input.params.ref!, input) }
}

/** POST `/projects/:ref{rest}`: a form of a project's page. */
export function projectForm(rest: string, form: (input: FormInput) => Promise<FormAnswer>, where: Where = {}): DashboardForm {
  return { method: 'POST', path: `/projects/:ref${rest}`, where: { ...REF_PARAM, ...where }, form }
}

/** `/projects/:ref{rest}`: a JSON call of a project page's script, for the ref in the path. */
export function projectCall(method: 'GET' | 'POST', rest: string, call: (ref: string, input: CallInput) => Promise<[number, unknown]>): DashboardCall {
  return { method, path: `/projects/:ref${rest}`, where: REF_PARAM, call: (input) => call(input.params.ref!, input) }
}

/** A tab of a product that is off: its heading and what to do (`text`). */
export function offScreen(project: ProjectRecord, tab: TabId, title: string, text: Safe): Screen {
  return { title, project, tab, body: html`<section><h2>${title}</h2>${empty(text)}</section>` }
}
