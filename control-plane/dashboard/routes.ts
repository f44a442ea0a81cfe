// The operator's dashboard under /dashboard: server-rendered pages whose forms
// call the same ControlPlane and auth-settings operations as the CLI and the
// admin API. Every answer to a form is a redirect (post/redirect/get) with
// the outcome in the query string.
import type { IncomingRequest, OutgoingResponse, PlatformRoutes } from '../../data-plane/data-plane.ts'
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

const PREFIX = '/dashboard'

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

  async function get(path: string, query: URLSearchParams): Promise<OutgoingResponse> {
    const outcome = { signedIn: true, notice: query.get('notice') ?? undefined, error: query.get('error') ?? undefined }
    if (path === '' || path === '/') return htmlResponse(200, 'Projects', projectsPage(await controlPlane.list(), addressing), outcome)
    const projectMatch = /^\/projects\/([a-z][a-z0-9]{2,39})$/.exec(path)
    if (projectMatch) {
      const project = await controlPlane.get(projectMatch[1]!)
      const auth = project.authEnabled ? await authPanel(project.ref) : undefined
      const push = project.pushEnabled
        ? await runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, (client) => describeCredentials(client))
        : undefined
      return htmlResponse(200, project.name, projectPage(project, addressing, auth, push), outcome)
    }
    const templateMatch = /^\/projects\/([a-z][a-z0-9]{2,39})\/auth\/templates\/([a-z_]+)$/.exec(path)
    if (templateMatch) {
      const template = (await listTemplates(controlPlane, templateMatch[1]!)).find((t) => t.kind === templateMatch[2])
      if (template) return htmlResponse(200, `Template ${template.kind}`, templatePage(templateMatch[1]!, template), outcome)
    }
    return htmlResponse(404, 'Not found', notFoundPage(), { ...outcome, error: `No page at ${PREFIX}${path}` })
  }

  /** Runs a form's operation; answers with a redirect to `back` carrying the outcome. */
  async function post(path: string, form: URLSearchParams): Promise<OutgoingResponse> {
    const field = (name: string) => form.get(name) ?? ''
    let match: RegExpExecArray | null
    const act = async (back: string, operation: () => Promise<unknown>, notice: string) => {
      try {
        await operation()
        return redirect(withOutcome(back, { notice }))
      } catch (error) {
        if (!BaseplaneError.is(error)) throw error
        return redirect(withOutcome(back, { error: error.message }))
      }
    }
    if (path === '/projects') {
      try {
        const project = await controlPlane.create({ name: field('name'), plan: field('plan') || undefined })
        return redirect(withOutcome(`/projects/${project.ref}`, { notice: `Created project ${project.ref}` }))
      } catch (error) {
        if (!BaseplaneError.is(error)) throw error
        return redirect(withOutcome('', { error: error.message }))
      }
    }
    if ((match = /^\/projects\/([a-z][a-z0-9]{2,39})\/(.+)$/.exec(path))) {
      const ref = match[1]!
      const action = match[2]!
      const back = `/projects/${ref}`
      if (action === 'plan') return act(back, () => controlPlane.setPlan(ref, field('plan')), `Plan changed to ${field('plan')}`)
      const product = /^products\/(auth|push)$/.exec(action)?.[1]
      if (product) {
        const on = field('enabled') === 'true'
        return act(back, () => controlPlane.setProduct(ref, product, on), `${product === 'auth' ? 'Auth' : 'Push'} turned ${on ? 'on' : 'off'}`)
      }
      if (action === 'keys/rotate') return act(back, () => controlPlane.rotateKeys(ref), 'New JWT secret and keys')
      if (action === 'delete') {
        if (field('confirm') !== ref) return redirect(withOutcome(back, { error: `Type ${ref} to confirm` }))
        return act('', () => controlPlane.delete(ref), `Deleted project ${ref}`)
      }
      if (action === 'auth/redirects') {
        const allow = field('allow')
          .split(/\s+/)
          .map((line) => line.trim())
          .filter(Boolean)
        return act(back, () => setRedirects(controlPlane, ref, { siteUrl: field('site_url'), allow }), 'Redirects saved')
      }
      if (action === 'auth/google') {
        const secret = field('client_secret')
        return act(
          back,
          () => setGoogle(controlPlane, ref, { clientId: field('client_id') || undefined, clientSecret: secret || undefined, enabled: field('enabled') === 'true' }),
          'Google settings saved',
        )
      }
      const template = /^auth\/templates\/([a-z_]+)(\/reset)?$/.exec(action)
      if (template) {
        const kind = template[1]!
        if (template[2]) return act(`${back}/auth/templates/${kind}`, () => resetTemplate(controlPlane, ref, kind), `Template ${kind} reset to the default`)
        return act(`${back}/auth/templates/${kind}`, () => setTemplate(controlPlane, ref, kind, { subject: field('subject'), body: field('body') }), `Template ${kind} saved`)
      }
    }
    return redirect(withOutcome('', { error: `Unknown action ${path}` }))
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
