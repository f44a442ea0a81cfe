// SQL of the data API's per-project settings on the catalogue: the exposed
// schemas (sql/catalogue/0017_rest_schemas.sql), on the project's row so a
// change bumps its version and every node serves it from its next request.
import type { Queryable } from './queryable.ts'

/** Saves the list as given (checked by the caller); false when no such project. */
export async function writeRestSchemas(db: Queryable, ref: string, schemas: readonly string[]): Promise<boolean> {
  const result = await db.query('update baseplane.projects set rest_schemas = $2::text[] where ref = $1', [ref, schemas])
  return (result.rowCount ?? 0) > 0
}
