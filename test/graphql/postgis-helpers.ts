// Fixtures of the PostGIS tests. The embedded PostgreSQL has no PostGIS, so
// these tests run on another server that has it: BASEPLANE_TEST_POSTGIS_URL,
// else the machine's PostgreSQL at 127.0.0.1:5432 (Debian's
// postgresql-15-postgis-3, which .ci/run installs). The catalogue database is
// made on that server, so the control plane places the project there (its
// default server). PostGIS goes into schema `extensions`, as on Supabase: the
// engine calls its functions qualified, whatever the search path.
import crypto from 'node:crypto'
import pg from 'pg'
import { escapeIdentifier } from 'pg'
import { ControlPlane } from '../../control-plane/control-plane.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { adminQuery, withDatabase } from '../helpers/db.ts'
import { projectFixture, type GraphqlProject } from './helpers.ts'

export const DEFAULT_POSTGIS_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

interface Teardown {
  teardown(fn: () => unknown): void
}

/** The server to run on, or why there is none (the tests then skip with that reason). */
export async function postgisServer(): Promise<{ url: string } | { skip: string }> {
  const url = process.env.BASEPLANE_TEST_POSTGIS_URL || DEFAULT_POSTGIS_URL
  const address = new URL(url).host
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
  } catch (error) {
    return { skip: `no PostgreSQL with PostGIS reachable at ${address} (${(error as Error).message}); set BASEPLANE_TEST_POSTGIS_URL` }
  }
  try {
    const { rowCount } = await client.query(`select 1 from pg_available_extensions where name = 'postgis'`)
    if (!rowCount) return { skip: `the PostgreSQL at ${address} has no PostGIS extension available (apt-get install postgresql-15-postgis-3)` }
    return { url }
  } finally {
    await client.end()
  }
}

/**
 * A project on the PostGIS server with the extension in schema `extensions`
 * (usable by the API roles and the owner), then `setup` run as the project's owner; as
 * graphqlProject, `gql` answers as the HTTP service does.
 */
export async function postgisProject(t: Teardown, serverUrl: string, setup?: string): Promise<GraphqlProject> {
  const catalogueName = `bpgis_${crypto.randomBytes(6).toString('hex')}`
  await adminQuery(serverUrl, `create database ${escapeIdentifier(catalogueName)}`)
  const dropCatalogue = () => adminQuery(serverUrl, `drop database if exists ${escapeIdentifier(catalogueName)} with (force)`)
  let controlPlane: ControlPlane
  try {
    controlPlane = await ControlPlane.open(withDatabase(serverUrl, catalogueName))
  } catch (error) {
    await dropCatalogue()
    throw error
  }
  // PostGIS is not trusted: the server's admin installs it, in the schema every project database has (sql/project/0060).
  const installPostgis = (project: ProjectRecord) =>
    adminQuery(withDatabase(serverUrl, project.dbName), `create extension postgis with schema extensions`)
  return projectFixture(t, controlPlane, 'postgis test', setup, { prepare: installPostgis, afterClose: dropCatalogue })
}
