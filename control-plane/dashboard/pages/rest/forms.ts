// The REST tab's call, posted by its script (assets/rest.js): run a request
// on the project's data API as a chosen role; and its forms, the exposed
// schemas, the max rows with the pre-request function, and the transactions'
// end with the plans (rest-settings.ts,
// as the CLI and the admin API change them). Unlike the GraphQL
// explorer, which runs GraphQL's code in this process, the request goes
// through this process's data plane (DashboardContext.dataPlane, handed in by
// server/platform.ts) as an app's request arrives over HTTP: the project's
// gate checks the key and the token, the project's state, fair share and
// quotas apply, it is counted in the project's usage, and the REST worker
// answers under the role's row-level security. The dashboard adds only what
// an app would send: the anon or service_role key, or for a chosen user a
// token it signs for five minutes (never shown to the browser). The answer is
// the endpoint's status, its headers that matter here and its body.
import type { ProjectRecord } from '../../../../lib/catalogue.ts'
import type { IncomingRequest, OutgoingResponse, ResponseBody } from '../../../../lib/http.ts'
import { authUserToken, findAuthUser } from '../../../auth-users.ts'
import { getProject } from '../../../projects.ts'
import { maxRowsFromText, setRestSettings, type RestSettingsChange } from '../../../rest-settings.ts'
import { exposedSchemasFromText } from '../../../../lib/pg-catalog/exposed-schemas.ts'
import { preRequestFromText } from '../../../../lib/pg-catalog/pre-request.ts'
import { plansFromText } from '../../../../lib/rest-plans.ts'
import { txEndFromText } from '../../../../lib/rest-tx-end.ts'
import { Checks, refusable, type FormState, type Saved } from '../../form-state.ts'
import { NEXT_REQUEST, projectCall, projectForm, USER_TOKEN_SECONDS, type CallInput, type DashboardContext, type FormInput, type FormsPart } from '../../module.ts'
import { METHODS, PREFER_CHOICES, REQUESTS_FORM, restScreen, TX_PLANS_FORM, WRITE_CONFIRMATION } from './screen.ts'

const ROLES = ['anon', 'user', 'service_role'] as const
/** The HTTP servers refuse a request line and headers past 16 KB (README: Data API, Limits). */
const MAX_TARGET = 16 * 1024
/** The headers of the endpoint's answer the page shows. */
const SHOWN_HEADERS = ['content-range', 'content-type', 'location', 'preference-applied'] as const

type Method = (typeof METHODS)[number]

interface RunInput {
  method: Method
  /** Below /rest/v1, encoded as a client would send it: `notes`, `rpc/add`. */
  path: string
  /** The query string, encoded, without `?`. */
  query: string
  prefer: string[]
  /** The JSON text as typed, for POST and PATCH. */
  body?: string
  role: (typeof ROLES)[number]
  user?: string
  /** The schema asked for (Accept-Profile / Content-Profile); none: the default. */
  profile?: string
  confirmed: boolean
}

interface Refusal {
  code: string
  message: string
  field: string
}

const refused = (field: string, message: string): Refusal => ({ code: 'invalid_argument', message, field })

/**
 * The path and query as typed (`notes?select=*&id=eq.1`, `/rpc/add`), encoded
 * as a browser would encode them. A target of `.` or `..` is refused: a URL
 * would resolve it to another service's path.
 */
function targetOf(ref: string, typed: string): { path: string; query: string } | Refusal {
  const text = typed.trim().replace(/^\/+/, '')
  if (/[\u0000-\u001f#]/.test(text)) return refused('path', 'The path may not hold control characters or #')
  const mark = text.indexOf('?')
  const target = mark === -1 ? text : text.slice(0, mark)
  const query = mark === -1 ? '' : text.slice(mark + 1)
  if (!/^(?:rpc\/)?[^/]*$/.test(target)) return refused('path', 'Name a table or view (notes), or a function (rpc/add), then the query string')
  const name = target.replace(/^rpc\//, '')
  if (name === '.' || name === '..' || (target.startsWith('rpc/') && name === '')) return refused('path', 'Name a table or view (notes), or a function (rpc/add), then the query string')
  const url = new URL(`http://project.invalid/project/${ref}/rest/v1/${target}${mark === -1 ? '' : `?${query}`}`)
  if (url.pathname.length + url.search.length > MAX_TARGET) return refused('path', 'The path and query string may be at most 16 KB, as the endpoint takes them')
  return { path: url.pathname, query: url.search.slice(1) }
}

function runInput(ref: string, body: unknown): RunInput | Refusal {
  if (typeof body !== 'object' || body === null) return refused('', 'Send a JSON object')
  const b = body as Record<string, unknown>
  if (!(METHODS as readonly unknown[]).includes(b.method)) return refused('method', `Choose a method: ${METHODS.join(', ')}`)
  if (typeof b.path !== 'string') return refused('path', 'Name a table or view (notes), or a function (rpc/add), then the query string')
  const target = targetOf(ref, b.path)
  if ('code' in target) return target
  const prefer = b.prefer ?? []
  if (!Array.isArray(prefer) || !prefer.every((p) => (PREFER_CHOICES as readonly unknown[]).includes(p))) return refused('prefer', `Prefer may say ${PREFER_CHOICES.join(', ')}`)
  if (!(ROLES as readonly unknown[]).includes(b.role)) return refused('role', `Choose a role: ${ROLES.join(', ')}`)
  if (b.role === 'user' && (typeof b.user !== 'string' || b.user.trim() === '')) return refused('user', "Give the user's email or id to run as")
  // Any name is passed on: the endpoint answers one it does not expose with PGRST106, as it answers an app.
  if (b.profile !== undefined && (typeof b.profile !== 'string' || b.profile.length > 63)) return refused('profile', 'Choose one of the exposed schemas')
  const method = b.method as Method
  let text: string | undefined
  if ((method === 'POST' || method === 'PATCH') && typeof b.body === 'string' && b.body.trim() !== '') {
    try {
      JSON.parse(b.body)
    } catch (error) {
      return refused('body', `The body is not JSON: ${(error as Error).message}`)
    }
    text = b.body
  }
  return {
    method,
    path: target.path,
    query: target.query,
    prefer: prefer as string[],
    body: text,
    role: b.role as RunInput['role'],
    user: typeof b.user === 'string' ? b.user.trim() : undefined,
    profile: typeof b.profile === 'string' && b.profile !== '' ? b.profile : undefined,
    confirmed: b.confirmed === true,
  }
}

function bodyText(body: ResponseBody): string {
  if (typeof body === 'string') return body
  if (body instanceof Uint8Array) return new TextDecoder().decode(body)
  // A streamed answer is the admin API's usage export; the data API answers whole.
  return ''
}

/** The endpoint's answer as the page draws it: status, the headers it shows, the body (parsed when JSON). */
function answerOf(response: OutgoingResponse<ResponseBody>, ms: number, sent: string) {
  const headers: Record<string, string> = {}
  for (const name of SHOWN_HEADERS) {
    const value = Object.entries(response.headers).find(([key]) => key.toLowerCase() === name)?.[1]
    if (value !== undefined) headers[name] = value
  }
  const text = bodyText(response.body)
  let body: unknown = text
  let json = false
  if (/json/.test(headers['content-type'] ?? '') && text !== '') {
    try {
      body = JSON.parse(text)
      json = true
    } catch {
      // Shown as the text it is.
    }
  }
  return { status: response.status, ms, sent, headers, json, body }
}

/** Runs the request through the data plane as the role; answers what the endpoint answered. */
async function run(context: DashboardContext, project: ProjectRecord, input: RunInput, peerAddress: () => string): Promise<[number, unknown]> {
  const dataPlane = context.dataPlane
  if (!dataPlane) return [503, { code: 'no_data_plane', message: 'This process serves no data plane, so the REST tab cannot run requests: open the dashboard of a running node (baseplane start)', field: '' }]
  // What an app sends (supabase-js): the key as apikey, and as Bearer the key or the user's token.
  const apikey = input.role === 'service_role' ? project.serviceRoleKey : project.anonKey
  const bearer = input.role === 'user' ? await authUserToken(context.controlPlane, project.ref, await findAuthUser(context.controlPlane, project.ref, input.user!, context), USER_TOKEN_SECONDS, context) : apikey
  const headers: Record<string, string> = { apikey, authorization: `Bearer ${bearer}`, accept: 'application/json', 'x-client-info': 'baseplane-dashboard' }
  if (input.prefer.length > 0) headers.prefer = input.prefer.join(', ')
  if (input.body !== undefined) headers['content-type'] = 'application/json'
  if (input.profile !== undefined) headers[input.method === 'GET' ? 'accept-profile' : 'content-profile'] = input.profile
  const request: IncomingRequest = {
    method: input.method,
    path: input.path,
    query: input.query,
    headers,
    peerAddress,
    body: async () => input.body ?? '',
  }
  const started = Date.now()
  const response = await dataPlane(request)
  const sent = `${input.method} ${input.path.slice(`/project/${project.ref}`.length)}${input.query ? `?${input.query}` : ''}`
  return [200, answerOf(response, Date.now() - started, sent)]
}

/** The call's answer: the endpoint's, or 400 with what is wrong with the input (and the field), or a refusal's code and message. */
async function call(context: DashboardContext, ref: string, { body, peerAddress }: CallInput): Promise<[number, unknown]> {
  const project = await getProject(context.controlPlane, ref)
  const input = runInput(project.ref, body)
  if ('code' in input) return [400, input]
  // service_role bypasses row-level security: a write runs only once the operator said so (the page asks).
  if (input.role === 'service_role' && input.method !== 'GET' && !input.confirmed) return [409, { code: 'confirmation_required', message: WRITE_CONFIRMATION, field: 'role' }]
  try {
    return await run(context, project, input, peerAddress)
  } catch (error) {
    const e = error as { code?: string; message?: string; status?: number }
    if (typeof e.code === 'string' && typeof e.status === 'number' && e.status < 500) return [e.status, { code: e.code, message: e.message, field: input.role === 'user' ? 'user' : '' }]
    throw error
  }
}

/** Saves the exposed schemas as typed (names separated by commas), checked whole first. */
async function saveSchemas(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const schemas = exposedSchemasFromText(input.field('schemas'), 'schemas', 'The list')
  await setRestSettings(context.controlPlane, ref, { schemas })
  // The list is not a notice value (a name may hold `$`, which the notice's URL drops): the field shows it.
  return { to: `/projects/${ref}/rest`, notice: 'rest_schemas' }
}

/**
 * Saves the max rows (a whole number, or empty / `default` for the node's)
 * and the pre-request function (a name, or empty / `none` for none) as
 * typed, both checked first: a refusal of each is drawn beside its field.
 */
async function saveRequests(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const change: RestSettingsChange = {}
  const checks = new Checks()
  checks.check(() => (change.max_rows = maxRowsFromText(input.field('max_rows'), 'max_rows', 'Max rows')))
  let preRequest: string | null = null
  checks.check(() => (preRequest = preRequestFromText(input.field('pre_request'), 'pre_request', 'Pre-request function')))
  checks.settle()
  // Checked against the project's database only when it changes: saving the max rows beside a function dropped since is not refused for it (the tab says what is wrong).
  if (preRequest !== (await getProject(context.controlPlane, ref)).restPreRequest) change.pre_request = preRequest
  await setRestSettings(context.controlPlane, ref, change)
  return { to: `/projects/${ref}/rest`, notice: REQUESTS_FORM }
}

/** Saves how transactions end and whether plans are answered, as chosen, both checked first. */
async function saveTxPlans(context: DashboardContext, input: FormInput): Promise<Saved> {
  const ref = input.params.ref!
  const change: RestSettingsChange = {}
  const checks = new Checks()
  checks.check(() => (change.tx_end = txEndFromText(input.field('tx_end'), 'tx_end', 'Transaction end')))
  checks.check(() => (change.plans = plansFromText(input.field('plans'), 'plans', 'Plans')))
  checks.settle()
  await setRestSettings(context.controlPlane, ref, change)
  return { to: `/projects/${ref}/rest`, notice: TX_PLANS_FORM }
}

export function restForms(context: DashboardContext): FormsPart {
  const screen = (input: FormInput, state: FormState) => restScreen(context, input.params.ref!, state)
  return {
    forms: [
      projectForm('/rest/schemas', refusable({ form: 'rest_schemas', fields: ['schemas'], run: (input) => saveSchemas(context, input), screen })),
      projectForm('/rest/requests', refusable({ form: REQUESTS_FORM, fields: ['max_rows', 'pre_request'], run: (input) => saveRequests(context, input), screen })),
      projectForm('/rest/transactions', refusable({ form: TX_PLANS_FORM, fields: ['tx_end', 'plans'], run: (input) => saveTxPlans(context, input), screen })),
    ],
    calls: [projectCall('POST', '/rest/run', (ref, input) => call(context, ref, input))],
    notices: {
      rest_schemas: () => `Exposed schemas saved (the first is the default). ${NEXT_REQUEST}`,
      [REQUESTS_FORM]: () => `Max rows and pre-request function saved. ${NEXT_REQUEST}`,
      [TX_PLANS_FORM]: () => `Transaction end and plans saved. ${NEXT_REQUEST}`,
    },
  }
}
