// The PostGraphile side of bench:rest, run in a child process of its own
// (bench/lib/rest-postgraphile.ts starts it) so its one event loop does not
// share the platform's main thread: PostGraphile v5 (Amber preset) served
// over node:http by grafserv, in production form (no GraphiQL, no watch, no
// explain), on a pg pool of the project's API login role.
//
// Each request is one transaction as the caller, set as Baseplane's request
// transaction sets it (lib/db/request-transaction.ts identityStatement): the
// bearer JWT is verified with the project's secret (HS256, as the data plane's
// gate does) and its role, claims, single claims and the role's timeouts become
// PostGraphile's pgSettings, so the same RLS policies run with the same inputs.
//
// Reads its settings from BENCH_REST_POSTGRAPHILE (JSON, PeerSettings), prints
// `listening <port>` once it serves, and exits when its standard input closes
// (the parent ended, however it ended).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { jwtVerify } from 'jose'
import pg from 'pg'
import { isApiRole } from '../../lib/roles.ts'
import type { RoleTimeouts } from '../../lib/plans.ts'
import { importPeer } from './peers.ts'

export interface PeerSettings {
  /** The project's API login role's connection string. */
  databaseUrl: string
  /** The project's JWT secret (the anon key and the user's token are HS256 with it). */
  jwtSecret: string
  timeouts: RoleTimeouts
  /** Connections of PostGraphile's pool: as many as the requests the platform runs at once for the project. */
  poolMax: number
}

// PostGraphile v5 needs Promise.withResolvers, which Node 20 lacks (as in bench/graphql.ts).
const P = Promise as unknown as { withResolvers?: () => unknown }
P.withResolvers ??= () => {
  let resolveFn!: (v: unknown) => void
  let rejectFn!: (e: unknown) => void
  const promise = new Promise((res, rej) => {
    resolveFn = res
    rejectFn = rej
  })
  return { promise, resolve: resolveFn, reject: rejectFn }
}

/** identityStatement's settings, as pgSettings (PostGraphile sets each with set_config(name, value, true) in the request's transaction). */
function pgSettingsOf(claims: Record<string, unknown>, timeouts: RoleTimeouts): Record<string, string> {
  const role = claims.role
  if (typeof role !== 'string' || role === '' || role === 'none') throw new Error('the token names no role')
  const settings: Record<string, string> = { role, 'request.jwt.claims': JSON.stringify(claims) }
  for (const name of ['sub', 'role', 'email']) {
    const value = claims[name]
    if (typeof value === 'string') settings[`request.jwt.claim.${name}`] = value
  }
  settings.statement_timeout = String(timeouts.statementTimeoutMs[isApiRole(role) ? role : 'authenticated'])
  settings.idle_in_transaction_session_timeout = String(timeouts.idleInTransactionTimeoutMs)
  return settings
}

async function main(): Promise<void> {
  const settings = JSON.parse(process.env.BENCH_REST_POSTGRAPHILE ?? '') as PeerSettings
  const key = new TextEncoder().encode(settings.jwtSecret)
  const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.poolMax })
  pool.on('error', () => {})

  const { postgraphile } = await importPeer<{ postgraphile(preset: unknown): { createServ(grafserv: unknown): { addTo(server: http.Server): Promise<void> } } }>('postgraphile')
  const { PostGraphileAmberPreset } = await importPeer<{ PostGraphileAmberPreset: unknown }>('postgraphile/presets/amber')
  const { makePgService } = await importPeer<{ makePgService(options: unknown): unknown }>('postgraphile/adaptors/pg')
  const { grafserv } = await importPeer<{ grafserv: unknown }>('postgraphile/grafserv/node')
  const preset = {
    extends: [PostGraphileAmberPreset],
    // By default v5 offers a condition only on indexed columns; posts.published has no index of its own (for any side).
    disablePlugins: ['PgIndexBehaviorsPlugin'],
    pgServices: [makePgService({ pool, schemas: ['public'] })],
    grafserv: { graphiql: false, watch: false, graphqlPath: '/graphql' },
    grafast: {
      explain: false,
      async context(requestContext: { node?: { req: http.IncomingMessage } }) {
        const header = requestContext.node?.req.headers.authorization ?? ''
        const token = /^Bearer (.+)$/i.exec(header)?.[1]
        if (token === undefined) throw new Error('no bearer token')
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] })
        return { pgSettings: pgSettingsOf(payload as Record<string, unknown>, settings.timeouts) }
      },
    },
  }
  const serv = postgraphile(preset).createServ(grafserv)
  const server = http.createServer()
  await serv.addTo(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`)
  process.stdin.resume()
  process.stdin.on('close', () => process.exit(0))
}

await main()
