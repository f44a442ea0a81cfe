// The operator's dashboard under /dashboard: server-rendered pages whose forms
// call the same ControlPlane and auth-settings operations as the CLI and the
// admin API. Every answer to a form is a redirect (post/redirect/get) with
// the outcome in the query string.
import type { IncomingRequest, OutgoingResponse, PlatformRoutes } from '../../lib/http.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { log } from '../../lib/log.ts'
import { getAuthSettings, listMail, listTemplates, resetTemplate, setGoogle, setRedirects, setTemplate } from '../auth-settings.ts'
import { describeCredentials } from '../../workers/push/credentials.ts'
import type { ControlPlane } from '../control-plane.ts'
import { runInProjectDatabase } from '../project-database.ts'
import type { Addressing } from '../views.ts'
import { page, type Safe } from './html.ts'
import { notFoundPage, projectPage, projectsPage, signInPage, templatePage, type AuthPanel } from './pages.ts'
import { clearedCookie, sameOrigin, sessionCookie, signedIn, tokenMatches } from './session.ts'
import { Router, type RouteSpec } from '../../lib/http/router.ts'
import { REF_PARAM } from '../admin-api.ts'

const PREFIX = '/dashboard'

type Outcome = { signedIn: true; notice?: string; error?: string }

/** A page; undefined when what it shows does not exist (answered as the 404 page). */
interface DashboardPage extends RouteSpec {
  page: (params: Record<string, string>, outcome: Outcome) => Promise<OutgoingResponse | undefined>
}

/** A form's operation, reading the posted fields ('' when absent). */
interface DashboardForm extends RouteSpec {
  form: (params: Record<string, string>, field: (name: string) => string) => Promise<OutgoingResponse>
}

function redirect(location: string, cookie?: string): OutgoingResponse {
  return { status: 303, headers: { location, ...(cookie ? { 'set-cookie': cookie } : {}) }, body: '' }
}

function withOutcome(path: string, outcome: { notice?: string; error?: string }): string {
  const query = new URLSearchParams(outcome as Record<string, string>).toString()
  return `${PREFIX}${path}${query ? `?${query}` : ''}`
}

function htmlResponse(status: number, title: string, body: Safe, options: { signedIn: boolean; notice?: string; error?: string }): OutgoingResponse {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    },
    body: page(title, body, options),
  }
}

export function dashboard(controlPlane: ControlPlane, addressing: Addressing, adminToken: string): PlatformRoutes {
  const secure = addressing.publicUrl.startsWith('https:')

  async function authPanel(ref: string): Promise<AuthPanel> {
    const [settings, templates, mail] = await Promise.all([
      getAuthSettings(controlPlane, ref),
      listTemplates(controlPlane, ref),
      listMail(controlPlane, ref, 20).catch(() => []),
    ])
    return { siteUrl: settings.site_url, allow: settings.additional_redirect_urls, templates, google: settings.google, mail }
  }

  async function projectPageOf(ref: string, outcome: Outcome): Promise<OutgoingResponse> {
    const project = await controlPlane.get(ref)
    const auth = project.authEnabled ? await authPanel(project.ref) : undefined
    const push = project.pushEnabled
      ? await runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, (client) => describeCredentials(client))
      : undefined
    return htmlResponse(200, project.name, projectPage(project, addressing, auth, push), outcome)
  }

  async function templatePageOf(ref: string, kind: string, outcome: Outcome): Promise<OutgoingResponse | undefined> {
    const template = (await listTemplates(controlPlane, ref)).find((t) => t.kind === kind)
    return template ? htmlResponse(200, `Template ${template.kind}`, templatePage(ref, template), outcome) : undefined
  }

  /** Runs a form's operation; answers with a redirect to `back` carrying the outcome. */
  async function act(back: string, operation: () => Promise<unknown>, notice: string): Promise<OutgoingResponse> {
    try {
      await operation()
      return redirect(withOutcome(back, { notice }))
    } catch (error) {
      if (!BaseplaneError.is(error)) throw error
      return redirect(withOutcome(back, { error: error.message }))
    }
  }

  const projectList = async (outcome: Outcome) => htmlResponse(200, 'Projects', projectsPage(await controlPlane.list(), addressing), outcome)
  const back = (params: Record<string, string>) => `/projects/${params.ref!}`
  const templateBack = (params: Record<string, string>) => `/projects/${params.ref!}/auth/templates/${params.kind!}`
  const template = { ...REF_PARAM, kind: '[a-z_]+' }

  const pages = new Router<DashboardPage>([
    { method: 'GET', path: '', page: (_, outcome) => projectList(outcome) },
    { method: 'GET', path: '/', page: (_, outcome) => projectList(outcome) },
    { method: 'GET', path: '/projects/:ref', where: REF_PARAM, page: (params, outcome) => projectPageOf(params.ref!, outcome) },
    { method: 'GET', path: '/projects/:ref/auth/templates/:kind', where: template, page: (params, outcome) => templatePageOf(params.ref!, params.kind!, outcome) },
  ])

  const forms = new Router<DashboardForm>([
    {
      method: 'POST',
      path: '/projects',
      form: async (_, field) => {
        try {
          const project = await controlPlane.create({ name: field('name'), plan: field('plan') || undefined })
          return redirect(withOutcome(`/projects/${project.ref}`, { notice: `Created project ${project.ref}` }))
        } catch (error) {
          if (!BaseplaneError.is(error)) throw error
          return redirect(withOutcome('', { error: error.message }))
        }
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/plan',
      where: REF_PARAM,
      form: (params, field) => act(back(params), () => controlPlane.setPlan(params.ref!, field('plan')), `Plan changed to ${field('plan')}`),
    },
    {
      method: 'POST',
      path: '/projects/:ref/products/:product',
      where: { ...REF_PARAM, product: 'auth|push' },
      form: (params, field) => {
        const product = params.product!
        const on = field('enabled') === 'true'
        return act(back(params), () => controlPlane.setProduct(params.ref!, product, on), `${product === 'auth' ? 'Auth' : 'Push'} turned ${on ? 'on' : 'off'}`)
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/keys/rotate',
      where: REF_PARAM,
      form: (params) => act(back(params), () => controlPlane.rotateKeys(params.ref!), 'New JWT secret and keys'),
    },
    {
      method: 'POST',
      path: '/projects/:ref/delete',
      where: REF_PARAM,
      form: async (params, field) => {
        const ref = params.ref!
        if (field('confirm') !== ref) return redirect(withOutcome(back(params), { error: `Type ${ref} to confirm` }))
        return act('', () => controlPlane.delete(ref), `Deleted project ${ref}`)
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/auth/redirects',
      where: REF_PARAM,
      form: (params, field) => {
        const allow = field('allow')
          .split(/\s+/)
          .map((line) => line.trim())
          .filter(Boolean)
        return act(back(params), () => setRedirects(controlPlane, params.ref!, { siteUrl: field('site_url'), allow }), 'Redirects saved')
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/auth/google',
      where: REF_PARAM,
      form: (params, field) => {
        const secret = field('client_secret')
        return act(
          back(params),
          () => setGoogle(controlPlane, params.ref!, { clientId: field('client_id') || undefined, clientSecret: secret || undefined, enabled: field('enabled') === 'true' }),
          'Google settings saved',
        )
      },
    },
    {
      method: 'POST',
      path: '/projects/:ref/auth/templates/:kind',
      where: template,
      form: (params, field) =>
        act(templateBack(params), () => setTemplate(controlPlane, params.ref!, params.kind!, { subject: field('subject'), body: field('body') }), `Template ${params.kind!} saved`),
    },
    {
      method: 'POST',
      path: '/projects/:ref/auth/templates/:kind/reset',
      where: template,
      form: (params) => act(templateBack(params), () => resetTemplate(controlPlane, params.ref!, params.kind!), `Template ${params.kind!} reset to the default`),
    },
  ])

  async function get(path: string, query: URLSearchParams): Promise<OutgoingResponse> {
    const outcome: Outcome = { signedIn: true, notice: query.get('notice') ?? undefined, error: query.get('error') ?? undefined }
    const match = pages.match('GET', path)
    const answer = match.kind === 'found' ? await match.route.page(match.params, outcome) : undefined
    return answer ?? htmlResponse(404, 'Not found', notFoundPage(), { ...outcome, error: `No page at ${PREFIX}${path}` })
  }

  async function post(path: string, form: URLSearchParams): Promise<OutgoingResponse> {
    const match = forms.match('POST', path)
    if (match.kind !== 'found') return redirect(withOutcome('', { error: `Unknown action ${path}` }))
    return match.route.form(match.params, (name) => form.get(name) ?? '')
  }

  return async (request: IncomingRequest) => {
    if (request.path === '/' && request.method === 'GET') return redirect(PREFIX)
    if (request.path !== PREFIX && !request.path.startsWith(`${PREFIX}/`)) return undefined
    const path = request.path.slice(PREFIX.length)
    const query = new URLSearchParams(request.query)
    try {
      if (request.method === 'POST' && !sameOrigin(request.headers.origin, request.headers.host)) {
        return { status: 403, headers: { 'content-type': 'text/plain' }, body: 'Cross-site form refused' }
      }
      if (path === '/login' && request.method === 'POST') {
        const form = new URLSearchParams(await request.body())
        if (!tokenMatches(form.get('token') ?? '', adminToken)) {
          return htmlResponse(401, 'Sign in', signInPage(), { signedIn: false, error: 'That is not the platform admin token' })
        }
        return redirect(PREFIX, sessionCookie(adminToken, secure))
      }
      if (path === '/logout' && request.method === 'POST') return redirect(PREFIX, clearedCookie())
      if (!signedIn(request.headers.cookie, adminToken)) {
        return htmlResponse(request.method === 'GET' ? 200 : 401, 'Sign in', signInPage(), { signedIn: false })
      }
      if (request.method === 'GET') return await get(path, query)
      if (request.method === 'POST') return await post(path, new URLSearchParams(await request.body()))
      return { status: 405, headers: { allow: 'GET, POST' }, body: '' }
    } catch (error) {
      if (BaseplaneError.is(error) && error.status === 404) {
        return htmlResponse(404, 'Not found', notFoundPage(), { signedIn: true, error: error.message })
      }
      log.error('dashboard request failed', error, { path: request.path })
      return htmlResponse(500, 'Error', notFoundPage(), { signedIn: true, error: 'Something went wrong; see the server log' })
    }
  }
}
