// The GraphQL tab's calls, posted by its script (assets/graphql.js): run a
// document, load the types (read by the platform from the catalogue while
// introspection is off), load the schema report; and its one form, the
// introspection switch (control-plane/graphql-schema.ts). The server runs each in
// this process, through GraphQL's face (workers/graphql/face.ts runAsRole), on
// a connection of its own to the project's database, as the caller the
// endpoint would see: the role's key, or for a user a token it signs for five
// minutes, verified as the data plane's gate verifies it (lib/jwt.ts
// callerOf). No HTTP call is made, and no token or service_role key reaches
// the browser. The answer is the endpoint's status and body.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import type { RequestIdentity } from '../../../../lib/roles.ts'
import { BaseplaneError } from '../../../../lib/errors.ts'
import { platformErrorResponse } from '../../../../lib/http/errors.ts'
import { callerOf } from '../../../../lib/jwt.ts'
import { runAsRole } from '../../../../workers/graphql/face.ts'
import { authUserToken, findAuthUser } from '../../../auth-users.ts'
import { INTROSPECTED_SCHEMA, schemaTypes, setIntrospection } from '../../../graphql-schema.ts'
import { refusable, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectCall, projectForm, USER_TOKEN_SECONDS, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { graphqlScreen } from './screen.ts'
import { getProject } from '../../../projects.ts'

const ROLES = ['anon', 'user', 'service_role'] as const

export const TYPES_QUERY = `query DashboardTypes { __schema { types { name kind description fields { name type { name kind ofType { name kind ofType { name kind ofType { name kind } } } } } inputFields { name type { name kind ofType { name kind ofType { name kind } } } } enumValues { name } } } }`

interface RunInput {
  query: string
  variables?: Record<string, unknown>
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
  return { query: b.query, variables: (b.variables ?? undefined) as Record<string, unknown> | undefined, role: b.role as RunInput['role'], user: typeof b.user === 'string' ? b.user.trim() : undefined }
}

/** Runs the document as the role, in this process, as the endpoint would; answers the endpoint's status and body. */
async function run(context: DashboardContext, project: ProjectRecord, input: RunInput): Promise<[number, unknown]> {
  // The token the endpoint would be sent as Bearer: the key's own, or the user's.
  let token = input.role === 'service_role' ? project.serviceRoleKey : project.anonKey
  if (input.role === 'user') token = await authUserToken(context.controlPlane, project.ref, await findAuthUser(context.controlPlane, project.ref, input.user!, context), USER_TOKEN_SECONDS, context)
  const started = Date.now()
  let identity: RequestIdentity
  try {
    identity = await callerOf(project, token)
  } catch (error) {
    // The gate's refusal (a user whose role the project no longer has), as the endpoint answers it.
    if (!BaseplaneError.is(error)) throw error
    return [200, { status: error.status, ms: Date.now() - started, answer: JSON.parse(platformErrorResponse(error).body) }]
  }
  const request = { query: input.query, variables: input.variables, ...(input.extensions ? { extensions: input.extensions } : {}) }
  const answer = await context.inProject(project, (client) => runAsRole(client, request, identity, project))
  return [200, { status: answer.status, ms: Date.now() - started, answer: answer.body }]
}

/** A call's answer: the endpoint's, or 400 with what is wrong with the input, or the refusal's code and message. */
async function call(context: DashboardContext, ref: string, body: unknown, extra?: Partial<RunInput>): Promise<[number, unknown]> {
  const project = await getProject(context.controlPlane, ref)
  const input = runInput({ ...(body as object), ...extra })
  if (typeof input === 'string') return [400, { code: 'invalid_argument', message: input }]
  try {
    return await run(context, project, { ...input, ...(extra?.extensions ? { extensions: extra.extensions } : {}) })
  } catch (error) {
    const e = error as { code?: string; message?: string; status?: number }
    if (typeof e.code === 'string' && typeof e.status === 'number' && e.status < 500) return [e.status, { code: e.code, message: e.message }]
    throw error
  }
}

async function switchIntrospection(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const on = input.field('enabled') === 'true'
  await setIntrospection(context.controlPlane, ref, on)
  return { to: `/projects/${ref}/graphql`, notice: on ? 'introspection_on' : 'introspection_off', values: [INTROSPECTED_SCHEMA] }
}

export function graphqlForms(context: DashboardContext): FormsPart {
  return {
    forms: [
      projectForm(
        '/graphql/introspection',
        refusable({ form: 'introspection', run: (input) => switchIntrospection(context, input), screen: (input, state) => graphqlScreen(context, input.params.ref!, state) }),
      ),
    ],
    notices: {
      introspection_on: ([schema]) => `Introspection of schema ${schema} is on: anyone with the anon key may read the schema's names and types (never its rows). ${NEXT_REQUEST}`,
      introspection_off: ([schema]) => `Introspection of schema ${schema} is off: the endpoint answers no __schema or __type. ${NEXT_REQUEST}`,
    },
    calls: [
      projectCall('POST', '/graphql/run', (ref, { body }) => call(context, ref, body)),
      projectCall('POST', '/graphql/types', async (ref, { body }) => {
        const role = (body as { role?: unknown })?.role === 'service_role' ? 'service_role' : 'anon'
        // Introspection off (a new project): the platform reads the types itself, not as the role.
        const read = await schemaTypes(context.controlPlane, ref)
        if (!read.introspection) return [200, { source: 'catalogue', schemas: read.schemas, types: read.types }]
        const [status, answer] = await call(context, ref, { query: TYPES_QUERY, role })
        return [status, { ...(answer as object), source: 'introspection' }]
      }),
      projectCall('POST', '/graphql/report', (ref) => call(context, ref, { query: 'query DashboardSchemaReport { __typename }', role: 'service_role' }, { extensions: { schemaReport: true } })),
    ],
  }
}
