// The platform admin HTTP API (`/platform/v1/...`), guarded by the platform
// admin token. It offers the same operations as the CLI, through the same
// ControlPlane methods, operation modules (control-plane/*.ts) and views.
// One file per family of routes; this one lists them (adminRoutes) and serves
// them (adminApi): the token, the router, the platform's error shapes, 503 when
// a database does not answer, the unacknowledged nodes' header.
import { StreamedBody, type OutgoingResponse, type PlatformRoutes, type ResponseBody } from '../../lib/http.ts'
import { incidents, unavailableAs } from '../../lib/db/database-errors.ts'
import { BaseplaneError, platformErrors } from '../../lib/errors.ts'
import { platformErrorResponse } from '../../lib/http/errors.ts'
import { Router } from '../../lib/http/router.ts'
import { actorOf, allows, OPERATOR, type Caller } from '../access.ts'
import type { ControlPlane } from '../control-plane.ts'
import type { MailDelivery } from '../auth-users.ts'
import { appendEvent, withActor } from '../events.ts'
import { memberErrors, TOKEN_PREFIX, tokenCaller } from '../members.ts'
import type { PushAdminOptions } from '../push-admin.ts'
import { UNACKNOWLEDGED_HEADER, withUnacknowledged } from '../unacknowledged.ts'
import type { Addressing } from '../views.ts'
import { authAdminRoutes } from './auth.ts'
import { anonymousUserRoutes } from './auth-users.ts'
import { keyRoutes, productRoutes, projectRoutes } from './projects.ts'
import { pushAdminRoutes } from './push.ts'
import { quotaRoutes } from './quotas.ts'
import { projectRoleRoutes } from './roles.ts'
import { restSettingsRoutes } from './rest.ts'
import { ADMIN_PREFIX, adminBody, adminTokenMatches, StreamedAnswer, type AdminRoute } from './route.ts'
import { serverRoutes } from './servers.ts'
import { storageAdminRoutes } from './storage.ts'
import { suspensionRoutes } from './suspension.ts'
import { tableEditorRoutes } from './tables.ts'
import { eventRoutes } from './events.ts'
import { developerToolRoutes } from './developer-tools.ts'
import { memberRoutes } from './members.ts'
import { signingKeyRoutes } from './signing-keys.ts'
import { sqlEditorRoutes } from './sql.ts'
import { roleTimeoutRoutes } from './timeouts.ts'
import { usageRoutes } from './usage.ts'
import { usageChartRoutes } from './usage-charts.ts'

export { ADMIN_PREFIX, adminTokenMatches, type AdminRoute } from './route.ts'

/** The source of the admin API's database incidents (one log line when they begin, one when they end). */
const DATABASE = "the admin API's database"

export interface AdminApiOptions {
  /** How Push's credentials are checked (the FCM token endpoint). */
  push?: PushAdminOptions
  /** Routes of other parts of the platform under the same guard (the server's recent figures). */
  extraRoutes?: AdminRoute[]
  /** How this process sends the members' invitation and reset mail (config SMTP_URL, BASEPLANE_MAIL_FROM); absent: the catalogue's outbox. */
  mail?: MailDelivery
}

/** Every route of the admin API, family by family. */
export function adminRoutes(controlPlane: ControlPlane, addressing: Addressing, options: AdminApiOptions = {}): AdminRoute[] {
  return [
    ...projectRoutes(controlPlane, addressing),
    ...keyRoutes(controlPlane, addressing),
    ...productRoutes(controlPlane, addressing),
    ...serverRoutes(controlPlane),
    ...(options.extraRoutes ?? []),
    ...authAdminRoutes(controlPlane, addressing),
    ...roleTimeoutRoutes(controlPlane),
    ...projectRoleRoutes(controlPlane),
    ...pushAdminRoutes(controlPlane, options.push ?? {}),
    ...storageAdminRoutes(controlPlane),
    ...signingKeyRoutes(controlPlane),
    ...anonymousUserRoutes(controlPlane),
    ...usageRoutes(controlPlane),
    ...quotaRoutes(controlPlane),
    ...restSettingsRoutes(controlPlane),
    ...usageChartRoutes(controlPlane),
    ...tableEditorRoutes(controlPlane),
    ...suspensionRoutes(controlPlane, addressing),
    ...eventRoutes(controlPlane),
    ...developerToolRoutes(controlPlane),
    ...memberRoutes(controlPlane, { mail: options.mail ?? { smtpUrl: undefined, from: 'Baseplane <noreply@localhost>' }, addressing }),
    ...sqlEditorRoutes(controlPlane, addressing),
  ]
}

/**
 * Who calls: the admin token's holder (the operator), or the member whose
 * personal access token (`bp_pat_...`) is the Bearer; anything else is 401.
 */
async function callerOf(controlPlane: ControlPlane, authorization: string | undefined, adminToken: string): Promise<Caller> {
  if (adminTokenMatches(authorization, adminToken)) return OPERATOR
  const bearer = authorization ? /^bearer\s+(\S+)$/i.exec(authorization)?.[1] : undefined
  if (bearer?.startsWith(TOKEN_PREFIX)) return tokenCaller(controlPlane, bearer)
  throw platformErrors.unauthorizedAdmin()
}

/**
 * Whether a member may call the route: one without `access` is the
 * operator's; one with a project in its path asks the member's role on it
 * (a project they do not belong to is refused whether or not it exists, so
 * nothing of it shows); one without lets every member in (the handler
 * answers for the caller alone).
 */
function checkAccess(caller: Caller, route: AdminRoute, ref: string | undefined): void {
  if (caller.kind === 'operator') return
  if (route.access === undefined) throw memberErrors.operatorOnly()
  if (ref === undefined) return
  const role = caller.roles.get(ref)
  if (role === undefined) throw memberErrors.notAMember(ref)
  if (!allows(caller, ref, route.access)) throw memberErrors.insufficientRole(ref, role)
}

function respond(status: number, body: unknown): OutgoingResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: status === 204 ? '' : JSON.stringify(body) }
}

export function adminApi(controlPlane: ControlPlane, addressing: Addressing, adminToken: string, options: AdminApiOptions = {}): PlatformRoutes {
  const router = new Router(adminRoutes(controlPlane, addressing, options))
  return async (request) => {
    if (!request.path.startsWith(`${ADMIN_PREFIX}/`)) return undefined
    try {
      const caller = await callerOf(controlPlane, request.headers.authorization, adminToken)
      const match = router.match(request.method, request.path.slice(ADMIN_PREFIX.length))
      if (match.kind === 'not_found') throw platformErrors.notFound(request.path)
      if (match.kind === 'method_not_allowed') throw new BaseplaneError('method_not_allowed', `${request.method} is not allowed on ${request.path}`, 405)
      const ref = match.params.ref
      checkAccess(caller, match.route, ref)
      const { result, unacknowledged } = await withUnacknowledged(() =>
        withActor(actorOf(caller), () =>
          match.route.handler({ caller, params: match.params, body: () => adminBody(request), query: new URLSearchParams(request.query), headers: request.headers }),
        ),
      )
      // A member's change that reports no event of its own still says who made it (issue 42: every change a member makes).
      if (caller.kind === 'member' && ref !== undefined && request.method !== 'GET' && !match.route.ownEvents && !(result instanceof StreamedAnswer) && result[0] < 300) {
        await appendEvent(controlPlane.catalogue, 'project.changed', ref, { method: request.method, path: request.path }, actorOf(caller))
      }
      incidents.recovered(DATABASE)
      const response: OutgoingResponse<ResponseBody> =
        result instanceof StreamedAnswer
          ? { status: 200, headers: { 'content-type': result.contentType }, body: new StreamedBody(result.chunks) }
          : respond(result[0], result[1])
      // Done, but those nodes may serve the old state until they hear from the catalogue again or are taken out (issue 24 item 3).
      if (unacknowledged.length > 0) response.headers[UNACKNOWLEDGED_HEADER] = unacknowledged.join(', ')
      return response
    } catch (error) {
      if (BaseplaneError.is(error)) return platformErrorResponse(error)
      // The catalogue or a project's database did not answer (the error does not say which): 503, logged once per incident.
      const unavailable = unavailableAs(error, platformErrors.someDatabaseUnavailable)
      if (unavailable === undefined) throw error
      incidents.failed(DATABASE, error, { path: request.path })
      return platformErrorResponse(unavailable)
    }
  }
}
