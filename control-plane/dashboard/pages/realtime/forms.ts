// The Realtime tab's one call: what the inspector's script needs to join a
// channel as the caller the operator chose: the socket's URL (the project's
// endpoint, with its anon key, protocol 1.0.0) and that caller's token (the
// service role's key, or a signed-in user's short-lived token; anon joins on
// the key alone). The channel itself is joined by the browser, as an app's is.
import { authUserToken, findAuthUser } from '../../../auth-users.ts'
import { getProject } from '../../../projects.ts'
import { keysView } from '../../../views.ts'
import { projectCall, USER_TOKEN_SECONDS, type CallInput, type DashboardContext, type FormsPart } from '../../module.ts'

const ROLES = ['anon', 'user', 'service_role'] as const

async function inspector(context: DashboardContext, ref: string, { body }: CallInput): Promise<[number, unknown]> {
  const project = await getProject(context.controlPlane, ref)
  const input = (body ?? {}) as { role?: unknown; user?: unknown }
  const role = ROLES.find((r) => r === input.role)
  if (role === undefined) return [400, { code: 'invalid_argument', message: 'Choose anon, a user or service_role to join as', field: 'role' }]
  const user = typeof input.user === 'string' ? input.user.trim() : ''
  if (role === 'user' && user === '') return [400, { code: 'invalid_argument', message: "Give the user's email or id to join as", field: 'user' }]
  const base = keysView(project, context.addressing).base_url
  const url = `${base.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${encodeURIComponent(project.anonKey)}&vsn=1.0.0`
  try {
    const token =
      role === 'service_role' ? project.serviceRoleKey : role === 'user' ? await authUserToken(context.controlPlane, project.ref, await findAuthUser(context.controlPlane, project.ref, user, context), USER_TOKEN_SECONDS, context) : undefined
    return [200, { url, ...(token ? { token } : {}) }]
  } catch (error) {
    const e = error as { code?: string; message?: string; status?: number }
    if (typeof e.code === 'string' && typeof e.status === 'number' && e.status < 500) return [e.status, { code: e.code, message: e.message, field: 'user' }]
    throw error
  }
}

export function realtimeForms(context: DashboardContext): FormsPart {
  return { calls: [projectCall('POST', '/realtime/inspector', (ref, input) => inspector(context, ref, input))] }
}
