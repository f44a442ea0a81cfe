// What an API built from the catalogue (catalog.ts) is cached by: database,
// schema version, role and search path (issue 4 item 6). The version is
// graphql.schema_version() of sql/project/0020: it moves, transactionally, on
// every DDL, GRANT, REVOKE and COMMENT; temporary objects and REFRESH
// MATERIALIZED VIEW leave it alone. In lib/ so that every concern reading the
// catalogue keys its cache the same way; each concern says what it builds.
import { LRUCache } from 'lru-cache'
import type pg from 'pg'
import { escapeLiteral } from 'pg'

/**
 * What each request reads about its connection: with the database (read once
 * per connection, see PROBE_SQL), everything the cache key needs. A concern
 * that names the schemas it serves (REST: the project's exposed schemas, with
 * a search path set per request) gives them as `served`: they stand in the
 * key for the search path, as `Meta.search_path` (a JSON array).
 */
export function metaColumns(versioned: boolean, served?: readonly string[]): string {
  const schemas = served === undefined ? 'pg_catalog.current_schemas(false)::text' : `${escapeLiteral(JSON.stringify(served))}::text`
  return `current_user as role, ${schemas} as search_path, ${versioned ? 'graphql.schema_version()::text' : 'null::text'} as version`
}

/**
 * A condition that holds while the key is still `meta` (as metaColumns reads
 * it, with the same `served`), its values through `bind`: what a statement
 * guards on when it must not run on a schema other than the one it was
 * planned for. Served schemas are the caller's to compare, not the database's.
 */
export function metaStillIs(meta: Pick<Meta, 'role' | 'search_path' | 'version'>, served: readonly string[] | undefined, bind: (value: string) => string): string {
  const path = served === undefined ? `pg_catalog.current_schemas(false)::text = ${bind(meta.search_path)}` : String(JSON.stringify(served) === meta.search_path)
  return `current_user = ${bind(meta.role)} and ${path} and graphql.schema_version()::text = ${bind(meta.version ?? '')}`
}

/**
 * A select item of a concern's setup (returned after its settings are made)
 * that fails (division by zero) unless the schema key is still the one a
 * message was planned against. A write sent with no result to check before
 * its commit runs in one implicit transaction behind it: planned on a schema
 * that moved, it writes nothing, and the request goes the ordinary way.
 * Part of the setup rather than a statement of its own, it costs the write
 * no statement. REST's writes and GraphQL's mutations use it.
 */
export function keyGuard(meta: Pick<Meta, 'role' | 'search_path' | 'version'>, served: readonly string[] | undefined, bind: (value: string) => string): string {
  return `1 / (coalesce(${metaStillIs(meta, served, bind)}, false))::int as key_guard`
}

/** The failure keyGuard raises when the key moved (division_by_zero). */
export const GUARD_FAILURE = '22012'

/** Once per connection: whether the database has sql/project/0020's version function, and which database it is. */
export const PROBE_SQL = `select pg_catalog.to_regprocedure('graphql.schema_version()') is not null as versioned,
  (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database())::text as db`

export interface Probe {
  versioned: boolean
  db: string
}

export interface Meta {
  role: string
  /** current_schemas(false) as text, or the schemas a concern serves (metaColumns' `served`). */
  search_path: string
  db: string
  version: string | null
}

/**
 * Whatever `build` makes of a connection's catalogue, per server, database,
 * schema version, role and search path. A result is cached whatever it is
 * (a concern caches a failed build too when it should fail every request
 * alike). Concurrent misses for one key share a single build.
 */
export class VersionedCache<T extends {}> {
  readonly #build: (client: pg.ClientBase, meta: Meta) => Promise<T>
  readonly #entries: LRUCache<string, T>
  readonly #building = new Map<string, Promise<T>>()
  /** Builds done so far (for tests and metrics: a steady request adds none). */
  builds = 0

  /** `build` is given the key it builds for (what a concern that names its schemas reads them from). */
  constructor(build: (client: pg.ClientBase, meta: Meta) => Promise<T>, max = 200) {
    this.#build = build
    this.#entries = new LRUCache({ max })
  }

  /** What is already built for `meta`, if anything (never builds). `server` names the database server (host and port). */
  peek(server: string, meta: Meta): T | undefined {
    if (meta.version === null) return undefined
    return this.#entries.get(`${server}\0${meta.db}\0${meta.version}\0${meta.role}\0${meta.search_path}`)
  }

  /** What is built for `meta` on this connection; built through `client` on a miss. */
  async get(client: pg.ClientBase, server: string, meta: Meta): Promise<T> {
    if (meta.version === null) {
      // No version to trust (a database without sql/project/0020): build every time.
      this.builds += 1
      return this.#build(client, meta)
    }
    const key = `${server}\0${meta.db}\0${meta.version}\0${meta.role}\0${meta.search_path}`
    const hit = this.#entries.get(key)
    if (hit) return hit
    let pending = this.#building.get(key)
    if (!pending) {
      this.builds += 1
      pending = this.#build(client, meta).finally(() => this.#building.delete(key))
      this.#building.set(key, pending)
      const built = await pending
      this.#entries.set(key, built)
      return built
    }
    return pending
  }
}
