// Fixtures of the GraphQL tests: a real project database (made by the control
// plane on a fresh catalogue), an owner connection for DDL, and `gql`, which
// answers a document through the library exactly as the HTTP service does:
// one transaction as the API role with request.jwt.claims set.
import pg from 'pg'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import { createProject, deleteProject } from '../../control-plane/projects.ts'
import { apiDatabaseOf, ownerUrlOf, type ProjectRecord } from '../../lib/catalogue.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { resolve, SchemaCache, type GraphqlResponse } from '../../workers/graphql/index.ts'
import { freshDatabase } from '../helpers/db.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

export interface GqlOptions {
  role?: string
  sub?: string
  variables?: Record<string, unknown>
  operationName?: string
  extensions?: Record<string, unknown>
}

export interface GraphqlProject {
  project: ProjectRecord
  controlPlane: ControlPlane
  /** Runs SQL as the project's owner role (its developers). */
  sql: (text: string, values?: unknown[]) => Promise<pg.QueryResult>
  /** Answers a document as `role` (service_role by default). */
  gql: (query: string, options?: GqlOptions) => Promise<GraphqlResponse>
  pool: pg.Pool
  cache: SchemaCache
}

export async function graphqlProject(t: Teardown, setup?: string): Promise<GraphqlProject> {
  return projectFixture(t, await ControlPlane.open(await freshDatabase(t, 'bpgql')), 'graphql test', setup)
}

export interface FixtureHooks {
  /** Runs before `setup`, once the project exists (e.g. extensions its admin installs). */
  prepare?: (project: ProjectRecord) => Promise<unknown>
  /** Runs at teardown after the control plane is closed. */
  afterClose?: () => Promise<unknown>
}

/** A project of `controlPlane` (which the fixture closes) with `setup` run as its owner. */
export async function projectFixture(t: Teardown, controlPlane: ControlPlane, name: string, setup?: string, hooks: FixtureHooks = {}): Promise<GraphqlProject> {
  const project = await createProject(controlPlane, { name })
  const owner = new pg.Pool({ connectionString: ownerUrlOf(project), max: 2 })
  const db = apiDatabaseOf(project)
  const pool = new pg.Pool({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password, max: 4 })
  const cache = new SchemaCache()
  // Deleting the project at teardown terminates its database's sessions; a connection the pools still hold
  // then reports it, which is the teardown's own doing, not a failure of the test.
  owner.on('error', () => {})
  pool.on('error', () => {})
  t.teardown(async () => {
    await owner.end()
    await pool.end()
    await deleteProject(controlPlane, project.ref)
    await controlPlane.close()
    await hooks.afterClose?.()
  })
  await hooks.prepare?.(project)
  if (setup) await owner.query(setup)
  return {
    project,
    controlPlane,
    pool,
    cache,
    sql: (text, values) => owner.query(text, values),
    gql: (query, options = {}) => {
      const role = options.role ?? 'service_role'
      const claims: Record<string, unknown> = { role, ...(options.sub ? { sub: options.sub } : {}) }
      return withRequestTransaction(pool, { role, claims }, project.roleTimeouts, (client) =>
        resolve(client, { query, variables: options.variables, operationName: options.operationName, extensions: options.extensions }, { cache }),
      )
    },
  }
}
