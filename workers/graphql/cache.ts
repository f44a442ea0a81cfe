// Built schemas, cached by lib/pg-catalog/schema-version.ts's key (server,
// database, schema version, role and search path). A failed build (a bad
// comment directive) is cached like a good one, as pg_graphql does, so every
// request fails with it until the comment changes.
import type { GraphQLSchema } from 'graphql'
import type pg from 'pg'
import { readCatalog } from '../../lib/pg-catalog/catalog.ts'
import { VersionedCache } from '../../lib/pg-catalog/schema-version.ts'
import { DocumentCache } from './document.ts'
import { GraphqlError } from './errors.ts'
import { PlanCache } from './plan-cache.ts'
import { buildModel, type Model } from './model/index.ts'
import { buildSchema } from './schema/index.ts'

export { metaColumns, PROBE_SQL, type Meta, type Probe } from '../../lib/pg-catalog/schema-version.ts'

export interface SchemaEntry {
  model: Model
  schema: GraphQLSchema
  documents: DocumentCache
  /** Queries planned on this schema, by document, operation and variables (plan-cache.ts). */
  plans: PlanCache
}

export type BuiltSchema = SchemaEntry | { error: GraphqlError }

export async function buildFrom(client: pg.ClientBase): Promise<BuiltSchema> {
  try {
    const model = buildModel(await readCatalog(client))
    return { model, schema: buildSchema(model), documents: new DocumentCache(), plans: new PlanCache() }
  } catch (error) {
    if (GraphqlError.is(error)) return { error }
    throw error
  }
}

export class SchemaCache extends VersionedCache<BuiltSchema> {
  constructor(max = 200) {
    super(buildFrom, max)
  }
}
