// What the data plane does with a request, independent of the HTTP server
// carrying it (uWebSockets.js in production; node:http in the benchmark peer):
// resolve the project, refuse throttled addresses, check the key and token,
// and hand the request to its concern's worker pool.
import { performance } from 'node:perf_hooks'
import { apiDatabaseOf, baseUrlOf, platformDatabaseOf, type ProjectRecord } from '../lib/catalogue.ts'
import type { PlatformConfig } from '../lib/config.ts'
import { incidents, unavailableAs } from '../lib/db/database-errors.ts'
import { ProjectDatabaseProbe } from '../lib/db/project-pool-probe.ts'
import type { ProjectDatabase } from '../lib/db/project-pools.ts'
import { BaseplaneError, platformErrors, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../lib/errors.ts'
import { unservedService } from './unserved.ts'
import { log } from '../lib/log.ts'
import type { RequestLogEntry } from '../lib/request-log.ts'
import { OTHER_SERVICE, serviceIndexOf, type ProjectFigures } from '../lib/metrics/project-figures.ts'
import { effectiveQuotas, quotaCaps } from '../lib/plans.ts'
import type { AuthProjectContext, Concern, ProjectContext, RestProjectContext, ServiceRequest, ServiceUsage, StorageProjectContext } from '../lib/service.ts'
import type { ActiveUsers } from '../lib/metrics/active-users.ts'
import type { Dispatcher } from './dispatcher.ts'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { StreamedBody, type IncomingRequest, type OutgoingResponse, type PlatformRoutes, type ResponseBody } from '../lib/http.ts'
import { receiveFromPort, sendToPort } from '../lib/port-stream.ts'
import { TrustedProxies } from '../lib/http/client-address.ts'
import { platformErrorResponse, refusalResponse } from '../lib/http/errors.ts'
import { countsForThrottle, type ConcernManifest, type ConcernRoute } from '../lib/http/manifest.ts'
import { Router } from '../lib/http/router.ts'
import { authManifest } from '../workers/auth/manifest.ts'
import { graphqlManifest } from '../workers/graphql/manifest.ts'
import { pushManifest } from '../workers/push/manifest.ts'
import { restManifest } from '../workers/rest/manifest.ts'
import { storageManifest } from '../workers/storage/manifest.ts'
import type { Gate } from './gate.ts'
import type { PlatformHealth } from './platform-health.ts'
import { liveResponse, readyResponse } from './node-probes.ts'
import type { ProjectDirectory } from './project-directory.ts'
import type { Throttle } from './throttle.ts'
import { LifecycleGate, type Waker } from './lifecycle-gate.ts'
import { projectCall, type ProjectCall } from './project-call.ts'
import type { RequestActivity } from './request-activity.ts'
import type { RequestIdentity } from '../lib/roles.ts'
import { REALTIME_SOCKET_PATH } from './realtime-socket.ts'
import { RealtimeHub } from './realtime/hub.ts'
import { realtimeApi } from './realtime/http-api.ts'

/**
 * A streamed request's two ports (lib/port-stream.ts): its body sent to the
 * worker as it arrives, and the worker's streamed answer read back. Closed
 * when the answer is not streamed or the worker never ran, so neither side
 * waits on a port nobody reads.
 */
class BodyStreams {
  readonly bodyPort: MessagePort | undefined
  readonly replyPort: MessagePort | undefined
  readonly #body: MessageChannel | undefined
  readonly #reply: MessageChannel | undefined

  constructor(body: AsyncIterable<Uint8Array> | undefined, reply: boolean) {
    if (body !== undefined) {
      this.#body = new MessageChannel()
      this.bodyPort = this.#body.port2
      void sendToPort(body, this.#body.port1)
    }
    if (reply) {
      this.#reply = new MessageChannel()
      this.replyPort = this.#reply.port2
    }
  }

  answer(length: number | undefined): StreamedBody {
    return new StreamedBody(receiveFromPort(this.#reply!.port1), length)
  }

  close(): void {
    this.#body?.port1.close()
    this.#reply?.port1.close()
  }
}

/** Realtime's HTTP API, served on this thread: a broadcast is published by this node's hub. */
const REALTIME_API_PATH = '/realtime/v1/api/'


export interface DataPlaneDeps {
  config: Pick<PlatformConfig, 'publicUrl' | 'baseDomain' | 'trustedProxies'>
  directory: ProjectDirectory
  gate: Gate
  throttle: Throttle
  dispatcher: Dispatcher
  platformRoutes?: PlatformRoutes
  version: string
  /** Answers the platform's GET /health from the catalogue's state; without it, /health says ok. */
  health?: PlatformHealth
  /** Counts each project request's answer (status class, latency) for the metrics. */
  figures?: ProjectFigures
  /**
   * Given when the node counts usage (BASEPLANE_USAGE, on by default): then
   * `figures` also counts each answer's body bytes and the workers' reported
   * sessions and mail, and the users who became active land here
   * (data-plane/usage-recorder.ts writes both to the catalogue each minute).
   */
  activeUsers?: ActiveUsers
  /** Answers whether a project's database is up, for `{base_url}/health` (one of its own when absent). */
  databaseProbe?: ProjectDatabaseProbe
  /** Told of every request let through to a project, for the pause of idle ones (request-activity.ts). */
  activity?: Pick<RequestActivity, 'seen'>
  /** Given when a paused project's request may wake it (BASEPLANE_WAKE_ON_REQUEST); without it, paused projects are refused. */
  waker?: Waker
  /** Writes a line per answered request (BASEPLANE_REQUEST_LOG, lib/request-log.ts); absent when the log is off. */
  requestLog?: (entry: RequestLogEntry) => void
  /** This node's Realtime (its sockets, channels and presence); one of its own, on no bus, when absent. */
  realtime?: RealtimeHub
}

/** The source of the data plane's catalogue incidents (one log line when they begin, one when they end). */
const CATALOGUE = 'the catalogue'

const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers':
    'authorization, apikey, content-type, x-client-info, x-supabase-api-version, accept-profile, content-profile, prefer, range, range-unit, x-upsert, x-retry-count, traceparent, tracestate, baggage',
  // The data API's counts, locations and applied preferences are read by browser clients (as PostgREST exposes them).
  'access-control-expose-headers': 'x-sb-error-code, x-supabase-api-version, retry-after, content-range, location, preference-applied, content-profile',
  'access-control-max-age': '86400',
}

function withCors<R extends OutgoingResponse<ResponseBody>>(response: R, request: IncomingRequest): R {
  // Only browsers need these, and a browser's cross-origin request always carries Origin.
  if (request.headers.origin !== undefined) Object.assign(response.headers, CORS_HEADERS)
  return response
}

/** The concerns the data plane serves, each described by its own manifest. */
const MANIFESTS: readonly ConcernManifest[] = [authManifest, graphqlManifest, pushManifest, restManifest, storageManifest]

interface ConcernEntry {
  manifest: ConcernManifest
  /** Routes a browser opens without an apikey (an emailed link, a provider redirect). */
  open: Router<ConcernRoute>
  /** All its routes, to tell which requests are attempts the throttle counts (as the worker's router matches them). */
  routes: Router<ConcernRoute>
  /** Its index among the metrics' services. */
  service: number
}

/** A project request's state (project-call.ts), with this plane's concern entries. */
type Call = ProjectCall<ConcernEntry>

const CONCERNS: readonly ConcernEntry[] = MANIFESTS.map((manifest) => ({
  manifest,
  open: new Router(manifest.routes.filter((route) => route.open === true)),
  routes: new Router(manifest.routes),
  service: serviceIndexOf(manifest.concern),
}))

/** #route's answer to an admitted socket upgrade (admitSocket reads the call, not this). */
const SOCKET_ADMITTED: OutgoingResponse = { status: 101, headers: {}, body: '' }

/** A Realtime socket to open: the project, and the caller its apikey names. */
export interface SocketAdmission {
  project: ProjectRecord
  identity: RequestIdentity
}

/** The throttle's key for the platform's own routes: no project ref has parentheses. */
export const PLATFORM_THROTTLE_REF = '(platform)'

/** A refused admin token: the admin API's and /metrics' 401 `unauthorized`, or a failed dashboard sign-in. */
function refusedAdminToken(request: IncomingRequest, answer: OutgoingResponse<ResponseBody>): boolean {
  if (answer.status !== 401) return false
  return answer.headers['x-sb-error-code'] === 'unauthorized' || (request.method === 'POST' && request.path === '/dashboard/login')
}

/** 429 over_request_rate_limit in the concern's shape, with how long to wait. */
function throttledResponse(wait: number, concern: ConcernEntry | undefined, request: IncomingRequest): OutgoingResponse {
  const refused = refusalResponse(platformErrors.throttled(), concern?.manifest.refusals, request.headers)
  refused.headers['retry-after'] = String(wait)
  return refused
}

/** The bytes of an answer's body as written (a streamed body is the platform's own, never a project's answer). */
function bodyBytes(body: ResponseBody): number {
  // A streamed answer counts the length it announced (a stored object's); one of unknown length counts nothing.
  return typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.byteLength : (body.length ?? 0)
}

/** What a project serves, as the refusal of a service Baseplane does not offer names it. */
const SERVED: readonly { concern: string; prefix: string }[] = [
  ...CONCERNS.map((entry) => entry.manifest),
  // Served on the data plane's own thread rather than by a concern's workers.
  { concern: 'realtime', prefix: '/realtime/v1' },
].sort((a, b) => a.concern.localeCompare(b.concern))

function concernOf(path: string): ConcernEntry | undefined {
  for (const entry of CONCERNS) {
    const prefix = entry.manifest.prefix
    if (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47)) return entry
  }
  return undefined
}

export class DataPlane {
  /** This node's Realtime: the HTTP engine attaches its sockets to it. */
  readonly realtime: RealtimeHub
  readonly #deps: DataPlaneDeps
  readonly #domains: string[]
  readonly #contexts = new WeakMap<ProjectRecord, Map<Concern, ProjectContext>>()
  readonly #health = new WeakMap<ProjectRecord, { database: ProjectDatabase; up: string; down: string }>()
  readonly #probe: ProjectDatabaseProbe
  readonly #lifecycle: LifecycleGate
  readonly #proxies: TrustedProxies

  constructor(deps: DataPlaneDeps) {
    this.#deps = deps
    this.realtime = deps.realtime ?? new RealtimeHub({ nodeId: deps.directory.nodeId })
    this.#proxies = new TrustedProxies(deps.config.trustedProxies)
    this.#probe = deps.databaseProbe ?? new ProjectDatabaseProbe()
    this.#lifecycle = new LifecycleGate((ref) => deps.directory.reload(ref), deps.waker)
    this.#domains = [deps.config.baseDomain, 'localhost'].filter((d): d is string => Boolean(d)).map((d) => `.${d.toLowerCase()}`)
  }

  /** The project ref and the path below it, from a /project/<ref>/ prefix or the Host's first label. */
  resolve(request: IncomingRequest): { ref: string; path: string } | undefined {
    if (request.path.startsWith('/project/')) {
      const end = request.path.indexOf('/', 9)
      const ref = end === -1 ? request.path.slice(9) : request.path.slice(9, end)
      return { ref, path: end === -1 ? '/' : request.path.slice(end) }
    }
    const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
    for (const domain of this.#domains) {
      if (host.endsWith(domain)) {
        const label = host.slice(0, -domain.length)
        if (label.length > 0 && !label.includes('.')) return { ref: label, path: request.path }
      }
    }
    return undefined
  }

  /** The address every throttle counts: X-Forwarded-For only as far as BASEPLANE_TRUSTED_PROXIES vouch for it. */
  clientAddress(request: IncomingRequest): string {
    return this.#proxies.clientOf(request.peerAddress(), request.headers['x-forwarded-for'])
  }

  /** What a concern's worker gets of a project: only what that concern reads (lib/service.ts). */
  contextOf(project: ProjectRecord, concern: Concern): ProjectContext {
    let contexts = this.#contexts.get(project)
    if (contexts === undefined) this.#contexts.set(project, (contexts = new Map()))
    let context = contexts.get(concern)
    if (context === undefined) {
      // A project's pool in a thread needs no more connections than the
      // requests its fair share lets run there at once.
      const limits = { serverBudget: project.dbServerBudget, poolMax: this.#deps.dispatcher.limitsOf(project.plan).concurrentRequests }
      const common: ProjectContext = {
        ref: project.ref,
        plan: project.plan,
        version: project.version,
        // Auth's statements run on a login role of their own, never on the API's, where owner code can run.
        database: concern === 'auth' ? platformDatabaseOf(project, 'auth', limits) : apiDatabaseOf(project, limits),
        // The platform role's password crosses only to the threads that use it.
        ...(concern === 'auth' || concern === 'push' || concern === 'storage' ? { platformDatabase: platformDatabaseOf(project, 'platform', limits) } : {}),
        roleTimeouts: project.roleTimeouts,
        caps: quotaCaps(effectiveQuotas(project.plan, project.quotaOverrides)),
        readOnly: project.readOnly,
      }
      const auth: AuthProjectContext | undefined =
        concern === 'auth'
          ? {
              ...common,
              baseUrl: baseUrlOf(project.ref, this.#deps.config.publicUrl, this.#deps.config.baseDomain),
              jwtSecret: project.jwtSecret,
              signingKeys: project.signingKeys,
              authSettings: project.authSettings,
              projectRoles: project.projectRoles,
              projectName: project.name,
            }
          : undefined
      const rest: RestProjectContext | undefined =
        concern === 'rest'
          ? {
              ...common,
              baseUrl: baseUrlOf(project.ref, this.#deps.config.publicUrl, this.#deps.config.baseDomain),
              schemas: project.restSchemas,
              maxRows: project.restMaxRows,
              preRequest: project.restPreRequest,
              txEnd: project.restTxEnd,
              plans: project.restPlans,
            }
          : undefined
      const storage: StorageProjectContext | undefined =
        concern === 'storage'
          ? { ...common, baseUrl: baseUrlOf(project.ref, this.#deps.config.publicUrl, this.#deps.config.baseDomain), jwtSecret: project.jwtSecret, egressCapped: project.storageEgressCapped }
          : undefined
      context = auth ?? rest ?? storage ?? common
      contexts.set(concern, context)
    }
    return context
  }

  /**
   * Answers synchronously when everything it needs is cached (the common
   * case), so the hot path costs no promise; otherwise returns a promise.
   */
  handle(request: IncomingRequest): OutgoingResponse<ResponseBody> | Promise<OutgoingResponse<ResponseBody>> {
    if (request.method === 'OPTIONS') return { status: 204, headers: { ...CORS_HEADERS }, body: '' }
    const target = this.resolve(request)
    if (target === undefined) {
      const answer = this.#platform(request).catch((error: unknown) => this.#failure(error, undefined, request))
      if (this.#deps.requestLog === undefined) return answer
      const arrived = performance.now()
      return answer.then((response) => this.#logged(request, null, 'platform', response, arrived, bodyBytes(response.body)))
    }
    const concern = concernOf(target.path)
    const started = performance.now()
    try {
      const cached = this.#deps.directory.peek(target.ref)
      const answer = cached
        ? this.#serve(projectCall(request, cached, target.path, concern))
        : this.#deps.directory.get(target.ref).then((project) => {
            incidents.recovered(CATALOGUE)
            if (project === undefined) throw platformErrors.unknownProject(target.ref)
            return this.#serve(projectCall(request, project, target.path, concern))
          })
      if (answer instanceof Promise) {
        return answer.then(
          (response) => this.#counted(request, withCors(response, request), target.ref, concern, started),
          (error: unknown) => this.#counted(request, this.#failure(error, concern, request), target.ref, concern, started),
        )
      }
      return this.#counted(request, withCors(answer, request), target.ref, concern, started)
    } catch (error) {
      return this.#counted(request, this.#failure(error, concern, request), target.ref, concern, started)
    }
  }

  /** Counts a project request's answer where it leaves for the server to write (the metrics' one hot-path cost). */
  #counted(request: IncomingRequest, response: OutgoingResponse<ResponseBody>, ref: string, concern: ConcernEntry | undefined, started: number): OutgoingResponse<ResponseBody> {
    const bytes = this.#deps.activeUsers === undefined && this.#deps.requestLog === undefined ? 0 : bodyBytes(response.body)
    const service = concern ? concern.service : OTHER_SERVICE
    this.#deps.figures?.answered(ref, service, response.status, performance.now() - started, bytes)
    if (this.#deps.requestLog !== undefined) this.#logged(request, ref, concern ? concern.manifest.concern : 'other', response, started, bytes)
    return response
  }

  #logged<R extends OutgoingResponse<ResponseBody>>(request: IncomingRequest, ref: string | null, service: string, response: R, started: number, bytes: number): R {
    this.#deps.requestLog?.({
      ref,
      service,
      method: request.method,
      path: request.path,
      status: response.status,
      ms: performance.now() - started,
      bytes,
      address: this.clientAddress(request),
    })
    return response
  }

  #failure(error: unknown, concern: ConcernEntry | undefined, request: IncomingRequest): OutgoingResponse {
    let known = BaseplaneError.is(error) ? error : undefined
    if (known === undefined) {
      // A database failure met here is the catalogue's (the directory's reads; the
      // workers answer their own databases' failures): 503, logged once per incident.
      known = unavailableAs(error, platformErrors.catalogueUnavailable)
      if (known !== undefined) incidents.failed(CATALOGUE, error)
      else log.error('request failed', error, { path: request.path })
    }
    known ??= platformErrors.internal()
    return withCors(refusalResponse(known, concern?.manifest.refusals, request.headers), request)
  }

  async #platform(request: IncomingRequest): Promise<OutgoingResponse<ResponseBody>> {
    if (request.path === '/health' && request.method === 'GET') {
      if (this.#deps.health) return this.#deps.health.response()
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'ok', version: this.#deps.version }) }
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && (request.path === '/live' || request.path === '/ready')) {
      if (request.path === '/live') return liveResponse()
      const { dispatcher, directory, health } = this.#deps
      return readyResponse({ health, threadsUp: () => dispatcher.threadsUp(), projectsLoaded: () => directory.projectsLoaded })
    }
    // The admin API and the dashboard change state: they wait, as a dispatch does, until the request may run.
    await request.body()
    const answer = await this.#deps.platformRoutes?.(request)
    if (answer === undefined) throw platformErrors.noProject()
    if (!refusedAdminToken(request, answer)) return answer
    // Wrong admin tokens are counted per address like wrong passwords, across the fleet (the throttle's
    // shared counts). Only the wrong ones are refused: the right token (or a signed-in session) from a
    // blocked address is served, since behind a proxy that address may be everyone's, and anyone's
    // wrong guesses must not lock the operator out. Guessing stays hopeless by the token's length.
    const address = this.clientAddress(request)
    const wait = this.#deps.throttle.retryAfter(PLATFORM_THROTTLE_REF, address)
    if (wait > 0) {
      const refused = platformErrorResponse(platformErrors.throttled())
      refused.headers['retry-after'] = String(wait)
      return refused
    }
    this.#deps.throttle.recordFailure(PLATFORM_THROTTLE_REF, address)
    return answer
  }

  #serve(call: Call): OutgoingResponse<ResponseBody> | Promise<OutgoingResponse<ResponseBody>> {
    const { request, project, concern, subPath } = call
    const ref = project.ref
    if (this.#deps.throttle.watching(ref)) {
      const wait = this.#deps.throttle.retryAfter(ref, this.clientAddress(request))
      if (wait > 0) return throttledResponse(wait, concern, request)
    }
    const apikey = request.headers.apikey || (request.query ? new URLSearchParams(request.query).get('apikey') : null) || undefined
    if (!apikey) {
      if (concern?.open.match(request.method, subPath).kind !== 'found') throw platformErrors.noApiKey()
      // A route opened without a key may still say who calls it by a Bearer token (tus-js-client's resumable uploads do).
      const bearer = request.headers.authorization
      if (bearer === undefined || bearer === '') return this.#route(call)
      return this.#deps.gate.identify(project, '', bearer).then((verified) => {
        call.identity = verified
        return this.#route(call)
      })
    }
    const keyRole = this.#deps.gate.keyRole(project, apikey)
    if (keyRole === undefined) {
      // Keys may have been rotated a moment ago: read the catalogue once before refusing, once per key and record version.
      if (call.reloaded || this.#deps.gate.refusedBefore(project, apikey)) {
        this.#deps.gate.refuse(project, apikey)
        throw platformErrors.invalidApiKey()
      }
      return this.#deps.directory.reload(ref).then((fresh) => {
        incidents.recovered(CATALOGUE)
        if (fresh === undefined) throw platformErrors.unknownProject(ref)
        call.project = fresh
        call.reloaded = true
        return this.#serve(call)
      })
    }
    call.keyRole = keyRole
    const authorization = request.headers.authorization
    const identity = this.#deps.gate.cachedIdentity(project, apikey, authorization)
    if (identity === undefined) {
      return this.#deps.gate.identify(project, apikey, authorization).then((verified) => {
        call.identity = verified
        return this.#route(call)
      })
    }
    call.identity = identity
    return this.#route(call)
  }

  #route(call: Call): OutgoingResponse<ResponseBody> | Promise<OutgoingResponse<ResponseBody>> {
    const { request, project, path, concern } = call
    // Suspended or paused (lifecycle-gate.ts): refused, or served once woken.
    if (project.state !== 'active') {
      return this.#lifecycle.admit(project).then((woken) => {
        call.project = woken
        return this.#route(call)
      })
    }
    this.#deps.activity?.seen(project.ref)
    if (path === '/health' && request.method === 'GET') return this.#projectHealth(project)
    if (call.socket) {
      if (path !== REALTIME_SOCKET_PATH) throw platformErrors.notFound(path)
      call.admitted = true
      return SOCKET_ADMITTED
    }
    if (path === REALTIME_SOCKET_PATH) throw platformErrors.upgradeRequired(path)
    if (path.startsWith(REALTIME_API_PATH) && call.identity) {
      const { identity } = call
      return realtimeApi(this.realtime, { project, identity, method: request.method, path: path.slice(REALTIME_API_PATH.length - 1), query: request.query, headers: request.headers, body: () => request.body() })
    }
    if (concern === undefined) throw unservedService(path, SERVED) ?? platformErrors.notFound(path)
    const { concern: name, enabledBy } = concern.manifest
    if (enabledBy !== undefined && !project[enabledBy]) throw platformErrors.productDisabled(name, project.ref)
    return this.#dispatch(call, concern)
  }

  async #dispatch(call: Call, concern: ConcernEntry): Promise<OutgoingResponse<ResponseBody>> {
    const { request, project, subPath } = call
    const address = this.clientAddress(request)
    const match = concern.routes.match(request.method, subPath)
    const streamsBody = match.kind === 'found' && match.route.streamsBody === true && request.bodyChunks !== undefined
    const serviceRequest: ServiceRequest = {
      concern: concern.manifest.concern,
      method: request.method,
      ...(request.head ? { head: true } : {}),
      path: subPath,
      query: request.query,
      headers: request.headers,
      body: streamsBody ? '' : await request.body(),
      clientAddress: address,
      project: this.contextOf(project, concern.manifest.concern),
      identity: call.identity,
      apikeyRole: call.keyRole,
    }
    // An attempt the throttle counts is counted before it is checked (throttle.ts), so concurrent ones cannot all pass.
    const attempt = countsForThrottle(match.kind === 'found' ? match.route : undefined, serviceRequest) ? await this.#deps.throttle.begin(project.ref, address) : undefined
    if (typeof attempt === 'number') return throttledResponse(attempt, concern, request)
    const streams = streamsBody || concern.manifest.streamsAnswers === true ? new BodyStreams(streamsBody ? request.bodyChunks!() : undefined, concern.manifest.streamsAnswers === true) : undefined
    if (streams !== undefined) {
      serviceRequest.bodyPort = streams.bodyPort
      serviceRequest.replyPort = streams.replyPort
    }
    const response = await this.#deps.dispatcher.run(serviceRequest).catch((error: unknown) => {
      attempt?.settle(false)
      streams?.close()
      throw error
    })
    // Kept as a failure, or released.
    if (attempt !== undefined) attempt.settle(response.throttleFailure === true)
    else if (response.throttleFailure) this.#deps.throttle.recordFailure(project.ref, address)
    if (response.usage !== undefined) this.#used(project.ref, response.usage)
    if (response.streamed !== undefined && streams !== undefined) {
      return { status: response.status, headers: response.headers, body: streams.answer(response.streamed.length), setCookies: response.setCookies }
    }
    streams?.close()
    return { status: response.status, headers: response.headers, body: response.body, setCookies: response.setCookies }
  }

  /** A worker's report of what the request counts for (sessions, mail, an active user), counted only with usage on. */
  #used(ref: string, usage: ServiceUsage): void {
    const activeUsers = this.#deps.activeUsers
    if (activeUsers === undefined) return
    this.#deps.figures?.used(ref, usage)
    if (usage.session !== undefined && usage.user !== undefined) activeUsers.seen(ref, usage.user.id, usage.user.anonymous, Date.now())
  }

  /**
   * Realtime's socket (`{base_url}/realtime/v1/websocket`): its upgrade request
   * checked as any request of the project is (the throttle, the apikey, the
   * project's state, waking a paused one); the project and the key's caller
   * to open it for, or the answer that refuses it (realtime-socket.ts closes
   * the socket with what that answer says).
   */
  async admitSocket(request: IncomingRequest): Promise<SocketAdmission | OutgoingResponse<ResponseBody>> {
    const target = this.resolve(request)
    try {
      if (target === undefined) throw platformErrors.noProject()
      const project = this.#deps.directory.peek(target.ref) ?? (await this.#deps.directory.get(target.ref))
      if (project === undefined) throw platformErrors.unknownProject(target.ref)
      const call: Call = { ...projectCall<ConcernEntry>(request, project, target.path, undefined), socket: true }
      const answer = await this.#serve(call)
      if (call.admitted && call.identity) return { project: call.project, identity: call.identity }
      return answer
    } catch (error) {
      return this.#failure(error, undefined, request)
    }
  }

  /** The project's `{base_url}/health`: its settings, and whether its database answers (probed at most once a second). */
  #projectHealth(project: ProjectRecord): OutgoingResponse | Promise<OutgoingResponse> {
    let health = this.#health.get(project)
    if (health === undefined) {
      const services = { auth: project.authEnabled, graphql: true, push: project.pushEnabled, rest: true, storage: true }
      health = {
        database: apiDatabaseOf(project),
        up: JSON.stringify({ status: 'ok', ref: project.ref, plan: project.plan, services, database: 'up' }),
        down: JSON.stringify({ status: 'unavailable', ref: project.ref, database: 'down' }),
      }
      this.#health.set(project, health)
    }
    const { up, down } = health
    const answer = (isUp: boolean): OutgoingResponse =>
      isUp
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: up }
        : { status: 503, headers: { 'content-type': 'application/json', 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }, body: down }
    const probed = this.#probe.up(health.database)
    return typeof probed === 'boolean' ? answer(probed) : probed.then(answer)
  }

  /** Closes the health probes' connections. */
  async close(): Promise<void> {
    await this.#probe.close()
  }
}
