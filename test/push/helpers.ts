// Fixtures of the push tests: a catalogue of its own with push-enabled
// projects, the push handler called directly (as the data plane would after
// verifying keys), actor hosts pointed at the local peers.
import crypto from 'node:crypto'
import pg from 'pg'
import type { Plan, ProjectRecord } from '../../lib/catalogue.ts'
import { apiDatabaseOf, platformDatabaseOf } from '../../lib/catalogue.ts'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { ServiceRequest, ServiceResponse } from '../../lib/service.ts'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, setProjectPlan, setProjectProduct } from '../../control-plane/projects.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { catalogueDatabase, dropCatalogue } from '../helpers/platform.ts'
import { serverUrl } from '../helpers/db.ts'
import { createPushHandler } from '../../workers/push/worker.ts'
import { startPushActorHost, type PushActorHost, type PushActorHostOptions } from '../../workers/push/actor-host.ts'

interface T {
  teardown(fn: () => unknown): void
}

export type Caller = { kind: 'service' } | { kind: 'user'; sub: string } | { kind: 'anon' }

export const service: Caller = { kind: 'service' }
export const user = (sub: string): Caller => ({ kind: 'user', sub })

/**
 * What the push API answers, by the members tests read: an error, a device, a
 * message with its deliveries, or the credentials. A body has only the members
 * of its kind.
 */
export interface PushBody {
  code: string
  message: string
  hint?: string
  id: string
  user_id: string | null
  deliveries: Array<{ device_id: string; status: string; reason: string | null; [member: string]: unknown }>
  [member: string]: unknown
}

export interface PushFixture {
  controlPlane: ControlPlane
  catalogueUrl: string
  server: string
  project: ProjectRecord
  /** The project's pool as the data plane's login role. */
  pool: pg.Pool
  /** Admin (superuser) queries in the project's database. */
  admin(sql: string, values?: unknown[]): Promise<pg.QueryResult>
  /** Queries as the project's owner role (the developers). */
  owner(sql: string, values?: unknown[]): Promise<pg.QueryResult>
  /** The push handler's answer, its body read as `T` (the test asserts the members it reads). */
  call<T = PushBody>(caller: Caller, method: string, path: string, body?: unknown): Promise<ServiceResponse & { json: T }>
  startHost(options?: Partial<PushActorHostOptions>): Promise<PushActorHost>
  newProject(plan?: Plan): Promise<ProjectRecord>
  /** Changes the project's plan in the catalogue (the handler and actors follow). */
  setPlan(plan: Plan): Promise<ProjectRecord>
}

export interface FixtureOptions {
  plan?: Plan
  fcmTokenUrl?: string
  endpoints?: PushActorHostOptions['endpoints']
}

function identityOf(caller: Caller): { identity: RequestIdentity | undefined; apikeyRole: ServiceRequest['apikeyRole'] } {
  if (caller.kind === 'service') return { identity: { role: 'service_role', claims: { role: 'service_role' } }, apikeyRole: 'service_role' }
  if (caller.kind === 'user') return { identity: { role: 'authenticated', claims: { role: 'authenticated', sub: caller.sub, aal: 'aal1' } }, apikeyRole: 'anon' }
  return { identity: { role: 'anon', claims: { role: 'anon' } }, apikeyRole: 'anon' }
}

export async function pushFixture(t: T, options: FixtureOptions = {}): Promise<PushFixture> {
  const catalogueUrl = await catalogueDatabase(t)
  const server = await serverUrl()
  const controlPlane = await ControlPlane.open(catalogueUrl)
  const pools: pg.Pool[] = []
  const hosts: PushActorHost[] = []
  t.teardown(async () => {
    for (const host of hosts) await host.stop()
    for (const pool of pools) await pool.end().catch(() => {})
    await controlPlane.close()
    await dropCatalogue(catalogueUrl)
  })
  const newProject = async (plan: Plan = options.plan ?? 'free') => {
    const created = await createProject(controlPlane, { name: 'push test', plan })
    return setProjectProduct(controlPlane, created.ref, 'push', true)
  }
  let project = await newProject()
  const db = apiDatabaseOf(project)
  const pool = new pg.Pool({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password, max: 4 })
  pool.on('error', () => {})
  pools.push(pool)
  // The platform's login role, as the data plane gives the push worker (lib/db/platform-logins.ts).
  const platformDb = platformDatabaseOf(project, 'platform')
  const platformPool = new pg.Pool({ host: platformDb.host, port: platformDb.port, database: platformDb.database, user: platformDb.user, password: platformDb.password, max: 4 })
  platformPool.on('error', () => {})
  pools.push(platformPool)
  const handler = createPushHandler({
    poolFor: () => pool,
    platformPoolFor: () => platformPool,
    fcmTokenUrl: options.fcmTokenUrl,
    allowInsecureWebPushEndpoints: true,
    logError: (err) => console.error(err),
  })
  const run = async (url: string, sql: string, values?: unknown[]) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await client.query(sql, values)
    } finally {
      await client.end()
    }
  }
  const ownerUrl = new URL(adminUrlFor(server, project.dbName))
  ownerUrl.username = project.dbOwnerRole
  ownerUrl.password = project.dbOwnerPassword
  return {
    controlPlane,
    catalogueUrl,
    server,
    get project() {
      return project
    },
    async setPlan(plan: Plan) {
      project = await setProjectPlan(controlPlane, project.ref, plan)
      return project
    },
    pool,
    admin: (sql, values) => run(adminUrlFor(server, project.dbName), sql, values),
    owner: (sql, values) => run(ownerUrl.toString(), sql, values),
    async call(caller, method, path, body) {
      const { identity, apikeyRole } = identityOf(caller)
      const response = await handler({
        concern: 'push',
        method,
        path,
        query: '',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
        clientAddress: '127.0.0.1',
        project: {
          ref: project.ref,
          plan: project.plan,
          version: project.version,
          database: db,
          roleTimeouts: project.roleTimeouts,
          caps: {},
          readOnly: false,
        },
        identity,
        apikeyRole,
      })
      return { ...response, json: response.body ? JSON.parse(response.body) : undefined }
    },
    async startHost(hostOptions = {}) {
      const host = await startPushActorHost({
        catalogueUrl,
        defaultServerUrl: server,
        endpoints: options.endpoints,
        claimRetryMs: 300,
        pollIntervalMs: 1000,
        retryDelayScale: 0.01,
        ...hostOptions,
      })
      hosts.push(host)
      return host
    },
    newProject,
  }
}

export const newUserId = () => crypto.randomUUID()

/** Polls until `check` returns a truthy value (or throws after `ms`). */
export async function eventually<V>(check: () => Promise<V | undefined | false> | V | undefined | false, ms = 10000, what = 'condition'): Promise<V> {
  const deadline = Date.now() + ms
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await check()
      if (value) return value
    } catch (err) {
      last = err
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
}
