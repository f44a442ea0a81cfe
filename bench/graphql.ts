// `npm run bench:graphql`: Baseplane's GraphQL engine against PostGraphile v5
// (with postgraphile-plugin-connection-filter), same database, same queries,
// same process, one after the other. Both run in-process (no HTTP) on a pg
// pool of the project's API login role, each request one transaction as
// the caller (role + request.jwt.claims), so RLS applies to both.
// A third side, plain pg, replays with `pg` alone the round trips Baseplane
// sends to PostgreSQL for the case (captured on the wire: identity set-up and
// prepared statement, lib/statement-replay.ts): the bound where PostgreSQL,
// not the engine, limits a case.
// Prints requests/s, p50/p99 latency and memory, and the ratios per case.
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { ControlPlane } from '../control-plane/control-plane.ts'
import { createProject, deleteProject } from '../control-plane/projects.ts'
import { apiDatabaseOf, ownerUrlOf } from '../lib/catalogue.ts'
import { identityStatement } from '../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../lib/roles.ts'
import { planLimits } from '../lib/plans.ts'
import { resolve, SchemaCache } from '../workers/graphql/index.ts'
import { dropCatalogue } from '../dev/db.ts'
import { importPeer } from './lib/peers.ts'
import { reportCase } from './lib/report.ts'
import { benchCatalogue, benchServer } from './lib/platform.ts'
import { captureRequest, replay } from './lib/statement-replay.ts'

// PostGraphile v5 needs Promise.withResolvers, which Node 20 lacks.
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

const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 5) * 1000
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
/** `BENCH_CASES=nested,orderedByRelatedCount` runs those cases only. */
const CASES = process.env.BENCH_CASES?.split(',').map((c) => c.trim())
const USER = '11111111-1111-1111-1111-111111111111'
// Three pools of CONCURRENCY connections (Baseplane, PostGraphile, plain pg) and one capturing
// connection, all as the project's API login role: the plan's CONNECTION LIMIT must hold them,
// or a side's requests fail with "too many connections for role".
const PLAN = 'business'
if (!(Number.isInteger(CONCURRENCY) && CONCURRENCY > 0 && 3 * CONCURRENCY + 1 <= planLimits(PLAN).apiConnections)) {
  throw new Error(`BENCH_CONCURRENCY must be a whole number from 1 to ${Math.floor((planLimits(PLAN).apiConnections - 1) / 3)} (three pools of it on the ${PLAN} plan's ${planLimits(PLAN).apiConnections} API connections)`)
}

const SETUP = `
  create table author (id serial primary key, name text not null);
  create table post (id serial primary key, author_id int not null references author(id), title text not null, score int not null, owner uuid);
  create index on post (author_id);
  create index on post (owner);
  create index on post (score);
  insert into author (name) select 'author ' || g from generate_series(1, 200) g;
  insert into post (author_id, title, score, owner)
    select 1 + g % 200, 'post ' || g, g % 100, case when g % 3 = 0 then '${USER}'::uuid end from generate_series(1, 20000) g;
  comment on table post is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
  comment on table author is e'@graphql({"relationFilters": {"enabled": true}})';
  -- orderByRelated for Baseplane; PostGraphile orders by a related count through a computed column marked orderable
  -- (an inlinable SQL function: its count subquery lands in PostGraphile's ORDER BY as it does in Baseplane's).
  comment on schema public is e'@graphql({"orderByRelated": {"enabled": true}})';
  create function author_post_count(a author) returns bigint stable language sql as $$ select (select count(*) from post p where p.author_id = a.id) $$;
  comment on function author_post_count(author) is e'@behavior +orderBy';
  alter table post enable row level security;
  create policy visible on post for select using (owner is null or owner = auth.uid());
  analyze;
`

const QUERIES = {
  filteredPage: {
    baseplane: `{ postCollection(first: 30, filter: {score: {gt: 50}}, orderBy: [{id: AscNullsLast}]) { edges { node { id title score } } } }`,
    postgraphile: `{ allPosts(first: 30, filter: {score: {greaterThan: 50}}, orderBy: PRIMARY_KEY_ASC) { edges { node { id title score } } } }`,
  },
  nested: {
    baseplane: `{ postCollection(first: 20, orderBy: [{id: AscNullsLast}]) { edges { node { id title author { id name postCollection(first: 3) { edges { node { id title } } } } } } } }`,
    postgraphile: `{ allPosts(first: 20, orderBy: PRIMARY_KEY_ASC) { edges { node { id title authorByAuthorId { id name postsByAuthorId(first: 3, orderBy: PRIMARY_KEY_ASC) { edges { node { id title } } } } } } } }`,
  },
  // PostGraphile has no aggregates without a plugin: it answers totalCount and the page only.
  // Authors with a post scoring 85 or more (30 of 200): an EXISTS over each author's posts, under the posts' RLS.
  relationFilteredPage: {
    baseplane: `{ authorCollection(first: 30, filter: {postCollection: {some: {score: {gte: 85}}}}, orderBy: [{id: AscNullsLast}]) { edges { node { id name } } } }`,
    postgraphile: `{ allAuthors(first: 30, filter: {postsByAuthorId: {some: {score: {greaterThanOrEqualTo: 85}}}}, orderBy: PRIMARY_KEY_ASC) { edges { node { id name } } } }`,
  },
  'counts (+aggregate on bp only)': {
    baseplane: `{ postCollection(first: 30, filter: {score: {gt: 50}}, orderBy: [{id: AscNullsLast}]) { totalCount aggregate { count sum { score } avg { score } max { score } } edges { node { id title score } } } }`,
    postgraphile: `{ allPosts(first: 30, filter: {score: {greaterThan: 50}}, orderBy: PRIMARY_KEY_ASC) { totalCount edges { node { id title score } } } }`,
  },
  // Authors by their number of visible posts (a count per author, all 200 counted before the page is cut), key for ties.
  orderedByRelatedCount: {
    baseplane: `{ authorCollection(first: 30, orderBy: [{postCollection: {count: DescNullsLast}}]) { edges { node { id name } } } }`,
    postgraphile: `{ allAuthors(first: 30, orderBy: [POST_COUNT_DESC, PRIMARY_KEY_ASC]) { edges { node { id name } } } }`,
  },
}

interface Result {
  rps: number
  p50: number
  p99: number
  rssMb: number
}

const figuresOf = (r: Result) => ({ requestsPerSecond: r.rps, p50Ms: r.p50, p99Ms: r.p99, rssMb: r.rssMb })

/** Rounds per case; the sides alternate, so drift on the machine hits them alike. */
const ROUNDS = 3

async function round(run: () => Promise<unknown>, ms: number, latencies: number[]): Promise<{ count: number; seconds: number }> {
  let count = 0
  const end = performance.now() + ms
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now()
      await run()
      latencies.push(performance.now() - start)
      count++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { count, seconds: (performance.now() - started) / 1000 }
}

async function measureSides(runs: (() => Promise<unknown>)[]): Promise<Result[]> {
  for (let i = 0; i < 200; i++) {
    for (const run of runs) await run() // warm up
  }
  const sides = runs.map(() => ({ latencies: [] as number[], count: 0, seconds: 0, rss: 0 }))
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, run] of runs.entries()) {
      const side = sides[i]!
      const done = await round(run, DURATION_MS / ROUNDS, side.latencies)
      side.count += done.count
      side.seconds += done.seconds
      side.rss = Math.max(side.rss, process.memoryUsage().rss / 1048576)
    }
  }
  return sides.map((side) => {
    side.latencies.sort((x, y) => x - y)
    return {
      rps: side.count / side.seconds,
      p50: side.latencies[Math.floor(side.latencies.length * 0.5)]!,
      p99: side.latencies[Math.floor(side.latencies.length * 0.99)]!,
      rssMb: side.rss,
    }
  })
}

function check(name: string, result: unknown): void {
  const r = result as { errors?: unknown[] }
  if (r.errors && r.errors.length > 0) throw new Error(`${name}: ${JSON.stringify(r.errors)}`)
}

/** `run`, failing on an answer with errors: a measured side counts answers, never errors. */
function checked(name: string, run: () => Promise<unknown>): () => Promise<unknown> {
  return async () => {
    const result = await run()
    check(name, result)
    return result
  }
}

const database = await benchServer()
const catalogueUrl = await benchCatalogue(database.url)
const controlPlane = await ControlPlane.open(catalogueUrl)
const project = await createProject(controlPlane, { name: 'graphql bench', plan: PLAN })
try {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project) })
  await owner.connect()
  await owner.query(SETUP)
  await owner.end()

  const db = apiDatabaseOf(project)
  const apiUrl = `postgres://${encodeURIComponent(db.user)}:${encodeURIComponent(db.password)}@${db.host}:${db.port}/${db.database}`
  const identities: Record<string, RequestIdentity> = {
    anon: { role: 'anon', claims: { role: 'anon' } },
    user: { role: 'authenticated', claims: { role: 'authenticated', sub: USER } },
  }

  const pool = new pg.Pool({ connectionString: apiUrl, max: CONCURRENCY })
  pool.on('error', () => {})
  const cache = new SchemaCache()
  // Exactly what the HTTP service's worker does (workers/graphql/worker.ts).
  const answer = (client: pg.ClientBase, query: string, who: RequestIdentity) =>
    resolve(client, { query }, { cache, transaction: 'none', setup: identityStatement(who, project.roleTimeouts), speculationKey: who.role })
  const baseplane = (query: string, who: RequestIdentity) => async () => {
    const client = await pool.connect()
    try {
      return await answer(client, query, who)
    } finally {
      client.release()
    }
  }

  // What Baseplane sends for the document, taken on the wire from the same call, replayed on a pool of its own of the same size.
  const plainPool = new pg.Pool({ connectionString: apiUrl, max: CONCURRENCY })
  plainPool.on('error', () => {})
  const plainPg = async (name: string, query: string, who: RequestIdentity) =>
    replay(plainPool, await captureRequest(apiUrl, async (client) => check(`baseplane ${name} (captured)`, await answer(client, query, who))))

  const pgPool = new pg.Pool({ connectionString: apiUrl, max: CONCURRENCY })
  pgPool.on('error', () => {})
  const { postgraphile } = await importPeer<{ postgraphile(preset: unknown): { getSchemaResult(): Promise<{ schema: unknown; resolvedPreset: unknown }>; release(): Promise<void> } }>('postgraphile')
  const { PostGraphileAmberPreset } = await importPeer<{ PostGraphileAmberPreset: unknown }>('postgraphile/presets/amber')
  const { makePgService } = await importPeer<{ makePgService(options: unknown): unknown }>('postgraphile/adaptors/pg')
  const { grafast } = await importPeer<{ grafast(args: Record<string, unknown>): Promise<unknown> }>('postgraphile/grafast')
  const { PostGraphileConnectionFilterPreset } = await importPeer<{ PostGraphileConnectionFilterPreset: unknown }>('postgraphile-plugin-connection-filter')
  const preset = {
    extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
    pgServices: [makePgService({ pool: pgPool, schemas: ['public'] } as never)],
    grafast: {
      // JWT claims mapped to role and request.jwt.claims, as Baseplane's request transaction does.
      context(requestContext: { who?: RequestIdentity }) {
        const who = requestContext.who!
        return { pgSettings: { role: who.role, 'request.jwt.claims': JSON.stringify(who.claims) } }
      },
    },
    schema: { pgForbidSetofFunctionsToReturnNull: false, connectionFilterRelations: true },
  }
  const pgl = postgraphile(preset as never)
  const { schema, resolvedPreset } = await pgl.getSchemaResult()
  const pgraphile = (query: string, who: RequestIdentity) => async () =>
    grafast({ schema, source: query, resolvedPreset, requestContext: { who } as never })

  console.log(`GraphQL benchmark: ${DURATION_MS / 1000}s per engine and case in ${ROUNDS} alternating rounds, concurrency ${CONCURRENCY}, in-process, same database`)
  console.log(`plain pg: Baseplane's round trips for the case replayed with pg alone (identity set-up and prepared statement, one transaction each)`)
  console.log(`${'case'.padEnd(40)} engine        req/s     p50 ms   p99 ms   rss MB`)
  const ratios: number[] = []
  const plainRatios: number[] = []
  for (const [name, q] of Object.entries(QUERIES).filter(([name]) => CASES === undefined || CASES.includes(name))) {
    for (const [whoName, who] of Object.entries(identities)) {
      check(`baseplane ${name}`, await baseplane(q.baseplane, who)())
      check(`postgraphile ${name}`, await pgraphile(q.postgraphile, who)())
      const [b, g, p] = (await measureSides([
        checked(`baseplane ${name}`, baseplane(q.baseplane, who)),
        checked(`postgraphile ${name}`, pgraphile(q.postgraphile, who)),
        await plainPg(name, q.baseplane, who),
      ])) as [Result, Result, Result]
      const label = `${name} as ${whoName}`.padEnd(40)
      const row = (engine: string, r: Result) =>
        console.log(`${label} ${engine.padEnd(12)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(8)} ${r.rssMb.toFixed(0).padStart(8)}`)
      row('baseplane', b)
      row('postgraphile', g)
      row('plain pg', p)
      ratios.push(b.rps / g.rps)
      plainRatios.push(b.rps / p.rps)
      console.log(`${label} ratio        ${(b.rps / g.rps).toFixed(2)}x (goal >= 1.5x), to plain pg ${(b.rps / p.rps).toFixed(2)}x (goal >= 0.85x)`)
      const report = { suite: 'graphql', figures: figuresOf(b), what: 'req/s' }
      reportCase({ ...report, case: `${name} as ${whoName} / PostGraphile`, peer: 'PostGraphile v5 with connection-filter', peerFigures: figuresOf(g), ratio: b.rps / g.rps, goal: { atLeast: 1.5 } })
      reportCase({ ...report, case: `${name} as ${whoName} / plain pg`, peer: "plain pg replaying Baseplane's round trips", peerFigures: figuresOf(p), ratio: b.rps / p.rps, goal: { atLeast: 0.85 } })
    }
  }
  console.log(`lowest ratio: ${Math.min(...ratios).toFixed(2)}x`)
  console.log(`lowest ratio to plain pg: ${Math.min(...plainRatios).toFixed(2)}x (goal >= 0.85x)`)
  await pgl.release()
  await plainPool.end()
  await pgPool.end()
  await pool.end()
} finally {
  await deleteProject(controlPlane, project.ref)
  await controlPlane.close()
  await dropCatalogue(database.url, catalogueUrl)
  await database.stop()
}
