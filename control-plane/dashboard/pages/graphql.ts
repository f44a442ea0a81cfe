// The project's GraphQL tab: an explorer on the project's endpoint (document,
// variables, the role to run as: anon, a chosen user, service_role), the
// schema's types to browse (introspection), and the schema report when the
// project turns it on. The page's script (assets/graphql.js) posts to the
// calls below; the server sends the request to `{base_url}/graphql/v1` with
// the role's key, and for a user with a token it mints for five minutes, so
// no token or service_role key reaches the browser for it.
import type { ProjectRecord } from '../../../lib/catalogue.ts'
import { REF_PARAM } from '../../admin-api.ts'
import { authUsersErrors, type AuthUser } from '../../auth-users.ts'
import { keysView } from '../../views.ts'
import { html } from '../html.ts'
import type { DashboardContext, DashboardModule } from '../module.ts'

const USER_TOKEN_SECONDS = 300
const ROLES = ['anon', 'user', 'service_role'] as const

const EXAMPLE = `# Tables and views of the exposed schemas are collections:
# query { todosCollection(first: 10) { edges { node { id } } } }
query {
  __schema { queryType { name } }
}`

export const TYPES_QUERY = `query DashboardTypes { __schema { types { name kind description fields { name type { name kind ofType { name kind ofType { name kind ofType { name kind } } } } } inputFields { name type { name kind ofType { name kind ofType { name kind } } } } enumValues { name } } } }`

interface RunInput {
  query: string
  variables?: unknown
  role: (typeof ROLES)[number]
  user?: string
  extensions?: Record<string, unknown>
}

function runInput(body: unknown): RunInput | string {
  if (typeof body !== 'object' || body === null) return 'Send a JSON object'
  const b = body as Record<string, unknown>
  if (typeof b.query !== 'string' || b.query.trim() === '') return 'Write a GraphQL document to run'
  if (!(ROLES as readonly unknown[]).includes(b.role)) return `Choose a role: ${ROLES.join(', ')}`
  if (b.variables !== undefined && b.variables !== null && (typeof b.variables !== 'object' || Array.isArray(b.variables))) return 'Variables must be a JSON object'
  if (b.role === 'user' && (typeof b.user !== 'string' || b.user.trim() === '')) return "Give the user's email or id to run as"
  return { query: b.query, variables: b.variables ?? undefined, role: b.role as RunInput['role'], user: typeof b.user === 'string' ? b.user.trim() : undefined }
}

export function graphqlPage(context: DashboardContext): DashboardModule {
  const { controlPlane, addressing } = context
  const users = context.authUsers

  async function userOf(ref: string, given: string): Promise<AuthUser> {
    if (/^[0-9a-f-]{36}$/i.test(given)) return users.get(ref, given)
    const found = (await users.list(ref, { email: given, perPage: 50 })).users.find((u) => u.email?.toLowerCase() === given.toLowerCase())
    if (!found) throw authUsersErrors.invalid(`No user with the email ${given}`)
    return found
  }

  /** Runs the document on the project's endpoint as the role; answers the endpoint's status and body. */
  async function run(project: ProjectRecord, input: RunInput): Promise<[number, unknown]> {
    const keys = keysView(project, addressing)
    let apikey = keys.anon_key
    let bearer = keys.anon_key
    if (input.role === 'service_role') apikey = bearer = keys.service_role_key
    if (input.role === 'user') bearer = await users.userToken(project.ref, await userOf(project.ref, input.user!), USER_TOKEN_SECONDS)
    const started = Date.now()
    const response = await fetch(`${keys.base_url}/graphql/v1`, {
      method: 'POST',
      headers: { apikey, authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: input.query, variables: input.variables, ...(input.extensions ? { extensions: input.extensions } : {}) }),
      signal: AbortSignal.timeout(60_000),
    })
    const text = await response.text()
    let answer: unknown = text
    try {
      answer = JSON.parse(text)
    } catch {
      // Not JSON (a proxy's page): shown as text.
    }
    return [200, { status: response.status, ms: Date.now() - started, answer }]
  }

  async function call(ref: string, body: unknown, extra?: Partial<RunInput>): Promise<[number, unknown]> {
    const project = await controlPlane.get(ref)
    const input = runInput({ ...(body as object), ...extra })
    if (typeof input === 'string') return [400, { code: 'invalid_argument', message: input }]
    try {
      return await run(project, { ...input, ...(extra?.extensions ? { extensions: extra.extensions } : {}) })
    } catch (error) {
      const e = error as { code?: string; message?: string; status?: number }
      if (typeof e.code === 'string' && typeof e.status === 'number' && e.status < 500) return [e.status, { code: e.code, message: e.message }]
      throw error
    }
  }

  return {
    tab: { id: 'graphql', label: 'GraphQL' },
    pages: [
      {
        method: 'GET',
        path: '/projects/:ref/graphql',
        where: REF_PARAM,
        page: async ({ params }) => {
          const project = await controlPlane.get(params.ref!)
          const keys = keysView(project, addressing)
          const ref = project.ref
          const body = html`<section><h2>Explorer</h2>
<p>Runs on <code id="graphql-endpoint">${keys.base_url}/graphql/v1</code> as the role you choose, under its row-level security.</p>
<form id="explorer" data-run="/dashboard/projects/${ref}/graphql/run" data-types="/dashboard/projects/${ref}/graphql/types" data-report="/dashboard/projects/${ref}/graphql/report">
<div class="explorer"><div>
<label for="gql-query">Document</label><textarea id="gql-query" name="query" rows="14" spellcheck="false">${EXAMPLE}</textarea>
<label for="gql-variables">Variables (JSON)</label><textarea id="gql-variables" name="variables" rows="4" spellcheck="false" style="min-height:4rem">{}</textarea>
<label for="gql-role">Run as</label><select id="gql-role" name="role">
<option value="anon">anon (the anon key)</option><option value="user" ${project.authEnabled ? '' : 'disabled'}>a user${project.authEnabled ? '' : ' (turn Auth on first)'}</option><option value="service_role">service_role (bypasses row-level security)</option></select>
<div id="gql-user-row" hidden><label for="gql-user">User's email or id</label><input type="text" id="gql-user" name="user" autocomplete="off">
<p class="muted">The dashboard signs a token for that user valid for ${USER_TOKEN_SECONDS / 60} minutes.</p></div>
<p id="gql-problem" class="field-error" role="alert" hidden></p>
<p><button id="gql-run">Run</button> <span id="gql-status" class="muted" aria-live="polite"></span></p>
</div><div><label for="gql-answer">Answer</label><pre id="gql-answer" tabindex="0" aria-live="polite">Run a document to see the answer.</pre></div></div>
</form></section>
<section><h2>Types</h2><p class="muted">The schema as the chosen role sees it (introspection). Pick a type to see its fields.</p>
<div class="row"><label for="gql-types-role" class="check">As</label><select id="gql-types-role" style="max-width:14rem"><option value="anon">anon</option><option value="service_role">service_role</option></select>
<button type="button" class="secondary" id="gql-types-load">Load types</button></div>
<div class="explorer"><div><ul id="gql-types" class="types" aria-label="Types"></ul></div><div id="gql-type" aria-live="polite"></div></div></section>
<section><h2>Schema report</h2><div id="gql-report"><p class="muted">Loading…</p></div></section>`
          return { title: 'GraphQL', body, project, tab: 'graphql', scripts: ['graphql.js'] }
        },
      },
    ],
    calls: [
      { method: 'POST', path: '/projects/:ref/graphql/run', where: REF_PARAM, call: ({ params, body }) => call(params.ref!, body) },
      {
        method: 'POST',
        path: '/projects/:ref/graphql/types',
        where: REF_PARAM,
        call: ({ params, body }) => {
          const role = (body as { role?: unknown })?.role === 'service_role' ? 'service_role' : 'anon'
          return call(params.ref!, { query: TYPES_QUERY, role })
        },
      },
      {
        method: 'POST',
        path: '/projects/:ref/graphql/report',
        where: REF_PARAM,
        call: ({ params }) => call(params.ref!, { query: 'query DashboardSchemaReport { __typename }', role: 'service_role' }, { extensions: { schemaReport: true } }),
      },
    ],
  }
}
