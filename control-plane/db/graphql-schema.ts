// SQL of a project's GraphQL schema settings (control-plane/graphql-schema.ts):
// a schema's comment, where pg_graphql reads its `@graphql(...)` directive,
// read and written in the project's database as the server's admin role.
import { escapeIdentifier, escapeLiteral } from 'pg'
import type { Queryable } from './queryable.ts'

/** The schema's comment (null without one); undefined when there is no such schema. */
export async function schemaComment(db: Queryable, schema: string): Promise<string | null | undefined> {
  const { rows } = await db.query<{ comment: string | null }>(
    `select pg_catalog.obj_description(n.oid, 'pg_namespace') as comment from pg_catalog.pg_namespace n where n.nspname = $1`,
    [schema],
  )
  return rows.length === 0 ? undefined : rows[0]!.comment
}

/** Replaces the schema's comment (null removes it). COMMENT takes no parameters, hence the quoting. */
export async function setSchemaComment(db: Queryable, schema: string, comment: string | null): Promise<void> {
  await db.query(`comment on schema ${escapeIdentifier(schema)} is ${comment === null ? 'null' : escapeLiteral(comment)}`)
}
