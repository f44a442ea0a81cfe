// The operator's dashboard under /dashboard: server-rendered pages whose forms
// call the same control-plane operations as the CLI and the admin API. The
// pages come from the modules in pages/ (one per project tab); this file signs
// the operator in and out, routes, and wraps each page in the layout.
// A saved form answers with a redirect (post/redirect/get) carrying a notice
// code; a refused one answers with the page again, the typed input kept and
// the error beside its field. Nothing from the URL is shown as text except
// notice values that pass NOTICE_VALUE.
import type { IncomingRequest, OutgoingResponse, PlatformRoutes } from '../../lib/http.ts'
import { incidents, unavailableAs } from '../../lib/db/database-errors.ts'
import { BaseplaneError, platformErrors, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import { Router } from '../../lib/http/router.ts'
import type { MinuteFigures } from '../../lib/metrics/recent-minutes.ts'
import type { MailDelivery } from '../auth-users.ts'
import { actorOf, allows, type Caller, type ProjectAccess } from '../access.ts'
import { appendEvent, withActor } from '../events.ts'
import { acceptInvitation, memberErrors, requestPasswordReset, resetPassword, signInMember } from '../members.ts'
import type { ControlPlane } from '../control-plane.ts'
import type { PushAdminOptions } from '../push-admin.ts'
import { withProjectLogin } from '../project-database.ts'
import type { Addressing } from '../views.ts'
import { asset } from './assets.ts'
import { html, page, type LayoutOptions, type Safe, type Tab } from './html.ts'
import { tabPath, type DashboardCall, type DashboardContext, type DashboardForm, type DashboardPage, type Screen } from './module.ts'
import { MODULES } from './pages/index.ts'
import { sameOrigin, Sessions, tokenMatches } from './session.ts'
import { acceptPage, resetPage, resetSentPage } from './member-sign-in.ts'

const PREFIX = '/dashboard'
/** A notice value from the URL: a word, a ref, a number, a plan, a duration. Anything else is dropped. */
const NOTICE_VALUE = /^[A-Za-z0-9_.:-]{1,64}$/
/** The pages' policy; `connect`: origins besides the dashboard's a page's script opens sockets to (the Realtime inspector's). */
const cspOf = (connect: string[] = []) =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src ${["'self'", ...connect].join(' ')}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`

function redirect(location: string, cookie?: string): OutgoingResponse {
  return { status: 303, headers: { location, ...(cookie ? { 'set-cookie': cookie } : {}) }, body: '' }
}

function htmlResponse(status: number, title: string, body: Safe, options: LayoutOptions): OutgoingResponse {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'content-security-policy': cspOf(options.connect),
    },
    body: page(title, body, options),
  }
}

function jsonResponse(status: number, body: unknown): OutgoingResponse {
  return { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) }
}

/** `tokenAt`: where this node's admin token is kept (BASEPLANE_ADMIN_TOKEN, or its home's admin-token file). */
export function signInPage(tokenAt = 'BASEPLANE_ADMIN_TOKEN, or the admin-token file of the platform home', email = ''): Safe {
  // The operator's form first: its button is the page's first "Sign in".
  return html`<section><h1>Sign in</h1>
<form method="post" action="/dashboard/login">
<label for="token">Platform admin token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required>
<p><button>Sign in</button></p></form>
<p id="token-hint">The token is the one in <code>${tokenAt}</code> (the start banner says where).</p>
<h2>Members</h2>
<form method="post" action="/dashboard/login" id="member-sign-in">
<label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" value="${email}" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<label for="code">Authenticator code (when enrolled)</label><input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">
<p><button id="member-sign-in-button">Sign in with email</button> <a href="/dashboard/reset">Forgot the password?</a></p></form></section>`
}

function forbiddenPage(message: string): Safe {
  return html`<section><h1>Not allowed</h1><p id="forbidden">${message}</p><p><a href="/dashboard">Back to the projects</a></p></section>`
}

/**
 * Whether the caller may use a page, form or call: the operator everything; a
 * member what its `access` allows on the path's project (absent: the
 * operator's alone); one with `access` and no project in its path (the
 * projects list, the member's account) lets every member in and answers for
 * the caller alone. Answers the refusal, or undefined.
 */
function refusalOf(caller: Caller, access: ProjectAccess | undefined, ref: string | undefined): BaseplaneError | undefined {
  if (caller.kind === 'operator') return undefined
  if (access === undefined) return memberErrors.operatorOnly()
  if (ref === undefined || allows(caller, ref, access)) return undefined
  const role = caller.roles.get(ref)
  return role === undefined ? memberErrors.notAMember(ref) : memberErrors.insufficientRole(ref, role)
}

/** The source of the dashboard's database incidents (one log line when they begin, one when they end). */
const DATABASE = "the dashboard's database"

function unavailablePage(): Safe {
  return html`<section><h1>Unavailable</h1><p>A database this page needs does not answer at the moment; try again in a few seconds.</p>
<p><a href="/dashboard">Back to the projects</a></p></section>`
}

function notFoundPage(): Safe {
  return html`<section><h1>Not found</h1><p><a href="/dashboard">Back to the projects</a></p></section>`
}

export interface DashboardOptions {
  /** How the platform sends Auth's mail (invitations and recovery links from the Users tab). */
  mail: MailDelivery
  push?: PushAdminOptions
  /** The data plane's last hour of a project's figures (the Overview's charts). */
  recentFigures?: (ref: string) => MinuteFigures[]
  /** Where this node's admin token is kept, for the sign-in page's hint. */
  adminTokenAt?: string
  /** This process's data plane, which the REST tab's requests go through (DashboardContext.dataPlane). */
  dataPlane?: DashboardContext['dataPlane']
  /** This process's Realtime figures of a project (DashboardContext.realtimeFigures). */
  realtimeFigures?: DashboardContext['realtimeFigures']
}

export function dashboard(controlPlane: ControlPlane, addressing: Addressing, adminToken: string, options: DashboardOptions): PlatformRoutes {
  const sessions = new Sessions(controlPlane, adminToken, addressing.publicUrl.startsWith('https:'))
  const context: DashboardContext = {
    controlPlane,
    addressing,
    // The API's login role, as the endpoint runs: a document may call the owner's functions.
    inProject: async (project, fn) => withProjectLogin(await controlPlane.serverUrl(project.dbServer), project, 'api', fn),
    push: options.push,
    mail: options.mail,
    recentFigures: options.recentFigures,
    dataPlane: options.dataPlane,
    realtimeFigures: options.realtimeFigures,
  }
  const modules = MODULES.map((make) => make(context))
  const tabs = modules.flatMap((m) => (m.tab ? [m.tab] : []))
  const notices = Object.assign({}, ...modules.map((m) => m.notices ?? {})) as Record<string, (values: string[]) => string>
  const pages = new Router<DashboardPage>(modules.flatMap((m) => m.pages ?? []))
  const forms = new Router<DashboardForm>(modules.flatMap((m) => m.forms ?? []))
  const calls = new Router<DashboardCall>(modules.flatMap((m) => m.calls ?? []))

  function noticeOf(query: URLSearchParams): string | undefined {
    const text = notices[query.get('done') ?? '']
    if (!text) return undefined
    const values = query.getAll('v')
    return values.every((v) => NOTICE_VALUE.test(v)) ? text(values) : undefined
  }

  /** Whether the caller may open the tab's page (a tab they cannot use is not drawn). */
  function tabAllowed(caller: Caller, ref: string, tab: (typeof tabs)[number]): boolean {
    const match = pages.match('GET', tabPath(ref, tab.id))
    return match.kind === 'found' && refusalOf(caller, match.route.access, ref) === undefined
  }

  function forbidden(caller: Caller, refusal: BaseplaneError): OutgoingResponse {
    return htmlResponse(403, 'Not allowed', forbiddenPage(refusal.message), { signedIn: true, error: refusal.message })
  }

  function render(screen: Screen, caller: Caller, notice?: string): OutgoingResponse {
    const project = screen.project
    const frame: LayoutOptions['project'] = project
      ? {
          name: project.name,
          ref: project.ref,
          current: screen.tab,
          tabs: tabs.filter((t) => tabAllowed(caller, project.ref, t)).map((t): Tab => ({ id: t.id, label: t.label, path: tabPath(project.ref, t.id) })),
        }
      : undefined
    return htmlResponse(screen.status ?? 200, screen.title, screen.body, { signedIn: true, notice, project: frame, scripts: screen.scripts, styles: screen.styles, connect: screen.connect })
  }

  async function get(caller: Caller, path: string, query: URLSearchParams): Promise<OutgoingResponse> {
    const match = pages.match('GET', path)
    if (match.kind === 'found') {
      const refusal = refusalOf(caller, match.route.access, match.params.ref)
      if (refusal) return forbidden(caller, refusal)
    }
    const screen = match.kind === 'found' ? await match.route.page({ caller, params: match.params, query }) : undefined
    return screen ? render(screen, caller, noticeOf(query)) : htmlResponse(404, 'Not found', notFoundPage(), { signedIn: true, error: 'There is no such page.' })
  }

  /** A member's change that reports no event of its own still says who made it (issue 42). */
  async function noteChange(caller: Caller, ref: string | undefined, path: string): Promise<void> {
    if (caller.kind === 'member' && ref !== undefined) await appendEvent(controlPlane.catalogue, 'project.changed', ref, { method: 'POST', path: `${PREFIX}${path}` }, actorOf(caller))
  }

  async function post(request: IncomingRequest, caller: Caller, path: string): Promise<OutgoingResponse> {
    const call = calls.match('POST', path)
    if (call.kind === 'found') {
      const refusal = refusalOf(caller, call.route.access, call.params.ref)
      if (refusal) return jsonResponse(403, { code: refusal.code, message: refusal.message })
      let body: unknown
      try {
        body = JSON.parse((await request.body()) || '{}')
      } catch {
        return jsonResponse(400, { code: 'invalid_json', message: 'The body is not JSON' })
      }
      const [status, answer] = await call.route.call({ caller, params: call.params, query: new URLSearchParams(request.query), body, peerAddress: () => request.peerAddress() })
      return jsonResponse(status, answer)
    }
    const match = forms.match('POST', path)
    if (match.kind !== 'found') return htmlResponse(404, 'Not found', notFoundPage(), { signedIn: true, error: 'There is no such action.' })
    const refusal = refusalOf(caller, match.route.access, match.params.ref)
    if (refusal) return forbidden(caller, refusal)
    const form = new URLSearchParams(await request.body())
    const answer = await match.route.form({ caller, params: match.params, form, field: (name) => form.get(name) ?? '' })
    if ('screen' in answer) return render(answer.screen, caller)
    if (!match.route.ownEvents) await noteChange(caller, match.params.ref, path)
    const query = new URLSearchParams({ done: answer.notice })
    for (const value of answer.values ?? []) query.append('v', value)
    // A page of its own query (the Storage tab's bucket and folder) keeps it, the notice after.
    return redirect(`${PREFIX}${answer.to}${answer.to.includes('?') ? '&' : '?'}${query}`)
  }

  /** The invitation's page (`/accept`) and the password reset (`/reset`, `/reset/confirm`): a refusal is drawn again with its reason. */
  async function signedOutPages(request: IncomingRequest, path: string): Promise<OutgoingResponse | undefined> {
    const query = new URLSearchParams(request.query)
    const mailContext = { mail: options.mail, addressing }
    const refused = (error: unknown, title: string, body: Safe): OutgoingResponse => {
      if (!BaseplaneError.is(error) || error.status >= 500) throw error
      return htmlResponse(error.status, title, body, { signedIn: false, error: error.message })
    }
    if (path === '/accept') {
      if (request.method === 'GET') return htmlResponse(200, 'Accept the invitation', acceptPage(query.get('token') ?? ''), { signedIn: false })
      const form = new URLSearchParams(await request.body())
      try {
        const memberId = await acceptInvitation(controlPlane, form.get('token') ?? '', form.get('password') ?? '')
        return redirect(PREFIX, await sessions.openForMember(memberId))
      } catch (error) {
        return refused(error, 'Accept the invitation', acceptPage(form.get('token') ?? ''))
      }
    }
    if (path === '/reset') {
      if (request.method === 'GET') return htmlResponse(200, 'Reset the password', resetPage(query.get('token') ?? undefined), { signedIn: false })
      const form = new URLSearchParams(await request.body())
      try {
        await requestPasswordReset(controlPlane, form.get('email') ?? '', mailContext)
      } catch (error) {
        return refused(error, 'Reset the password', resetPage(undefined))
      }
      return htmlResponse(200, 'Reset the password', resetSentPage(), { signedIn: false })
    }
    if (path === '/reset/confirm' && request.method === 'POST') {
      const form = new URLSearchParams(await request.body())
      try {
        const memberId = await resetPassword(controlPlane, form.get('token') ?? '', form.get('password') ?? '')
        return redirect(PREFIX, await sessions.openForMember(memberId))
      } catch (error) {
        return refused(error, 'Reset the password', resetPage(form.get('token') ?? ''))
      }
    }
    return undefined
  }

  return async (request: IncomingRequest) => {
    if (request.path === '/' && request.method === 'GET') return redirect(PREFIX)
    if (request.path !== PREFIX && !request.path.startsWith(`${PREFIX}/`)) return undefined
    const path = request.path.slice(PREFIX.length)
    try {
      if (request.method === 'GET' && path.startsWith('/assets/')) {
        return asset(path.slice('/assets/'.length)) ?? { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not found' }
      }
      if (request.method === 'POST' && !sameOrigin(request.headers.origin, request.headers.host)) {
        return { status: 403, headers: { 'content-type': 'text/plain' }, body: 'Cross-site form refused' }
      }
      if (path === '/login' && request.method === 'POST') {
        const form = new URLSearchParams(await request.body())
        if (form.has('email')) {
          try {
            const memberId = await signInMember(controlPlane, { email: form.get('email'), password: form.get('password'), code: form.get('code') ?? '', address: request.peerAddress() })
            return redirect(PREFIX, await sessions.openForMember(memberId))
          } catch (error) {
            if (!BaseplaneError.is(error) || error.status >= 500) throw error
            return htmlResponse(error.status, 'Sign in', signInPage(options.adminTokenAt, form.get('email') ?? ''), { signedIn: false, error: error.message })
          }
        }
        if (!tokenMatches(form.get('token') ?? '', adminToken)) {
          return htmlResponse(401, 'Sign in', signInPage(options.adminTokenAt), { signedIn: false, error: 'That is not the platform admin token' })
        }
        return redirect(PREFIX, await sessions.open())
      }
      if (path === '/logout' && request.method === 'POST') return redirect(PREFIX, await sessions.close(request.headers.cookie))
      // A member's own way in, before any session: the invitation's link and the password reset.
      const signedOut = await signedOutPages(request, path)
      if (signedOut) return signedOut
      const caller = await sessions.caller(request.headers.cookie)
      if (caller === undefined) {
        if (calls.match(request.method, path).kind === 'found') return jsonResponse(401, { code: 'signed_out', message: 'Sign in to the dashboard again' })
        return htmlResponse(request.method === 'GET' ? 200 : 401, 'Sign in', signInPage(options.adminTokenAt), { signedIn: false })
      }
      return await withActor(actorOf(caller), async () => {
        if (request.method === 'GET') {
          const call = calls.match('GET', path)
          if (call.kind === 'found') {
            const refusal = refusalOf(caller, call.route.access, call.params.ref)
            if (refusal) return jsonResponse(403, { code: refusal.code, message: refusal.message })
            const [status, answer] = await call.route.call({ caller, params: call.params, query: new URLSearchParams(request.query), body: undefined, peerAddress: () => request.peerAddress() })
            return jsonResponse(status, answer)
          }
          const answer = await get(caller, path, new URLSearchParams(request.query))
          incidents.recovered(DATABASE)
          return answer
        }
        if (request.method === 'POST') return await post(request, caller, path)
        return { status: 405, headers: { allow: 'GET, POST' }, body: '' } satisfies OutgoingResponse
      })
    } catch (error) {
      if (BaseplaneError.is(error) && error.status === 404) {
        return htmlResponse(404, 'Not found', notFoundPage(), { signedIn: true, error: error.message })
      }
      // A body past the limit (read before the session is known: the sign-in form too) is the sender's, not ours.
      if (BaseplaneError.is(error) && error.status === 413) {
        return htmlResponse(413, 'Too large', html`<section><h1>Too large</h1><p><a href="/dashboard">Back to the dashboard</a></p></section>`, { signedIn: false, error: error.message })
      }
      // The catalogue or a project's database did not answer (directly, or through the
      // platform's Auth for the Users tab): 503 with Retry-After, logged once per incident.
      const unavailable = unavailableAs(error, platformErrors.someDatabaseUnavailable)
      if (unavailable !== undefined) {
        incidents.failed(DATABASE, error, { path: request.path })
        const response = htmlResponse(503, 'Unavailable', unavailablePage(), { signedIn: true, error: unavailable.message })
        response.headers['retry-after'] = String(unavailable.retryAfter ?? UNAVAILABLE_RETRY_AFTER_SECONDS)
        return response
      }
      log.error('dashboard request failed', error, { path: request.path })
      return htmlResponse(500, 'Error', notFoundPage(), { signedIn: true, error: 'Something went wrong; see the server log' })
    }
  }
}
