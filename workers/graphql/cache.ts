// Built schemas, cached per database, schema version, role and search path
// (issue 4 item 6). The version is graphql.schema_version() of
// sql/project/0020: it moves, transactionally, on every DDL, GRANT, REVOKE and
// COMMENT; temporary objects and REFRESH MATERIALIZED VIEW leave it alone. A
// failed build (a bad comment directive) is cached like a good one, as
// pg_graphql does, so every request fails with it until the comment changes.
// Concurrent misses for one key share a single build.
import type { GraphQLSchema } from 'graphql'
import { LRUCache } from 'lru-cache'
import type pg from 'pg'
import { readCatalog } from './catalog.ts'
import { DocumentCache } from './document.ts'
import { GraphqlError } from './errors.ts'
import { buildModel, type Model } from './model.ts'
import { buildSchema } from './schema.ts'

export interface SchemaEntry {
  model: Model
  schema: GraphQLSchema
  documents: DocumentCache
}

export type BuiltSchema = SchemaEntry | { error: GraphqlError }

/**
 * What each request reads about its connection: with the database (read once
 * per connection, see PROBE_SQL), everything the cache key needs.
 */
export function metaColumns(versioned: boolean): string {
  return `current_user as role, pg_catalog.current_schemas(false)::text as search_path, ${versioned ? 'graphql.schema_version()::text' : 'null::text'} as version`
}

/** Once per connection: whether the database has sql/project/0020's version function, and which database it is. */
export const PROBE_SQL = `select pg_catalog.to_regprocedure('graphql.schema_version()') is not null as versioned,
  (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database())::text as db`

export interface Probe {
  versioned: boolean
  db: string
}

export interface Meta {
  role: string
  search_path: string
  db: string
  version: string | null
}

export async function buildFrom(client: pg.ClientBase): Promise<BuiltSchema> {
  try {
    const model = buildModel(await readCatalog(client))
    return { model, schema: buildSchema(model), documents: new DocumentCache() }
  } catch (error) {
    if (GraphqlError.is(error)) return { error }
    throw error
  }
}

export class SchemaCache {
  readonly #entries: LRUCache<string, BuiltSchema>
  readonly #building = new Map<string, Promise<BuiltSchema>>()
  /** Builds done so far (for tests and metrics: a steady request adds none). */
  builds = 0

  constructor(max = 200) {
    this.#entries = new LRUCache({ max })
  }

  /**
   * The schema for `meta` on this connection; built through `client` on a
   * miss. `server` names the database server (host and port) the client is on.
   */
  /** The schema already built for `meta`, if any (never builds). */
  peek(server: string, meta: Meta): BuiltSchema | undefined {
    if (meta.version === null) return undefined
    return this.#entries.get(`${server}\0${meta.db}\0${meta.version}\0${meta.role}\0${meta.search_path}`)
  }

  async get(client: pg.ClientBase, server: string, meta: Meta): Promise<BuiltSchema> {
    if (meta.version === null) {
      // No version to trust (a database without sql/project/0020): build every time.
      this.builds += 1
      return buildFrom(client)
    }
    const key = `${server}\0${meta.db}\0${meta.version}\0${meta.role}\0${meta.search_path}`
    const hit = this.#entries.get(key)
    if (hit) return hit
    let pending = this.#building.get(key)
    if (!pending) {
      this.builds += 1
      pending = buildFrom(client).finally(() => this.#building.delete(key))
      this.#building.set(key, pending)
      const built = await pending
      this.#entries.set(key, built)
      return built
    }
    return pending
  }
}

