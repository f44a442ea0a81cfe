// The connections this node's Postgres Changes use to a project's database:
// validating a join's bindings and checking which subscribers may see each
// change. The project's API login role (what REST runs as: it can only become
// the API roles), a pool of two, opened while the project has channels here
// and closed with its last one. Statements are bounded: a check that hangs
// delays that project's changes, never the node.
import pg from 'pg'
import type { ProjectRecord } from '../../../lib/catalogue.ts'

const STATEMENT_TIMEOUT_MS = 5000

export function checkPool(project: ProjectRecord): pg.Pool {
  const pool = new pg.Pool({
    host: project.dbHost,
    port: project.dbPort,
    database: project.dbName,
    user: project.dbApiRole,
    password: project.dbApiPassword,
    max: 2,
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: 5000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS + 1000,
    application_name: 'baseplane-realtime-changes',
  })
  pool.on('error', () => {})
  return pool
}
