// What a project's GraphQL schema is made of, read with the platform's own
// rights, and its introspection switch (issue 28 item 7), for the dashboard's
// GraphQL tab. pg_graphql serves no `__schema` unless a served schema's
// comment turns introspection on (its default, and ours), so a new project's
// anon key cannot list its types; the operator still may: `schemaTypes` reads
// the database's catalogue (lib/pg-catalog, the reading GraphQL itself uses)
// as the server's admin role and names the tables, views and enums as
// pg_graphql names their types. It is the catalogue's view, not the built
// schema: column types are PostgreSQL's, and the roles' privileges are not
// applied (GraphQL's face offers no schema build outside a request).
//
// `setIntrospection` changes only the `introspection` key of the directive in
// the comment on schema `public`, keeping the rest of the comment; COMMENT is
// DDL, so the schema version moves and every node builds the schema again.
import { readCatalog, type Catalog, type CatalogTable } from '../lib/pg-catalog/catalog.ts'
import { baseTypeName, columnFieldName, lowerFirst } from '../lib/pg-catalog/names.ts'
import { platformErrors } from '../lib/errors.ts'
import type { ControlPlane } from './control-plane.ts'
import { getProject } from './projects.ts'
import { runInProjectDatabase } from './project-database.ts'
import * as db from './db/graphql-schema.ts'

/** The schema the dashboard turns introspection on for (where tables are made unless a developer says otherwise). */
export const INTROSPECTED_SCHEMA = 'public'

/** pg_graphql's directive in a comment: the greedy `@graphql\((.+)\)` across lines. */
const DIRECTIVE = /@graphql\((.+)\)/s

type Directive = Record<string, unknown>

/** The comment's directive object; `{}` without one; undefined when it is not a JSON object (pg_graphql refuses every request then). */
function directiveOf(comment: string | null): Directive | undefined {
  const match = comment ? DIRECTIVE.exec(comment) : null
  if (!match) return {}
  try {
    const value: unknown = JSON.parse(match[1]!)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Directive) : undefined
  } catch {
    return undefined
  }
}

/** A type as graphql's introspection shapes it, so the explorer draws both alike. */
export interface SchemaType {
  name: string
  kind: 'OBJECT' | 'ENUM'
  description: string
  fields?: Array<{ name: string; type: TypeRef }>
  enumValues?: Array<{ name: string }>
}

type TypeRef = { kind: 'SCALAR'; name: string } | { kind: 'NON_NULL'; ofType: TypeRef }

export interface SchemaTypesView {
  ref: string
  /** The schemas on the search path, as GraphQL serves them. */
  schemas: string[]
  /** Whether a served schema's comment turns introspection on. */
  introspection: boolean
  types: SchemaType[]
}

const KIND_WORDS: Record<string, string> = { r: 'table', p: 'partitioned table', v: 'view', m: 'materialized view', f: 'foreign table' }

function tableType(table: CatalogTable, inflect: boolean): SchemaType {
  const name = baseTypeName(table.name, undefined, inflect)
  return {
    name,
    kind: 'OBJECT',
    description: `${KIND_WORDS[table.kind] ?? 'table'} ${table.schema}.${table.name}; read through the Query field ${lowerFirst(name)}Collection. Column types are PostgreSQL's.`,
    fields: table.columns.map((column) => {
      const scalar: TypeRef = { kind: 'SCALAR', name: column.typeName }
      return { name: columnFieldName(column.name, undefined, inflect), type: column.notNull ? { kind: 'NON_NULL', ofType: scalar } : scalar }
    }),
  }
}

/**
 * The served schemas' catalogue (lib/pg-catalog, what GraphQL and the data
 * API read per request), read as the server's admin role: every table, view
 * and function, whatever the API roles may use. The dashboard's GraphQL and
 * REST tabs name what a project holds from it; the REST tab's of the
 * project's exposed `schemas` (the search path's when not given).
 */
export async function readProjectCatalog(controlPlane: ControlPlane, ref: string, schemas?: readonly string[]): Promise<Catalog> {
  const project = await getProject(controlPlane, ref)
  return runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, (client) => readCatalog(client, schemas))
}

/** The served schemas' tables, views and enums as types, read as the server's admin role, whatever introspection says. */
export async function schemaTypes(controlPlane: ControlPlane, ref: string): Promise<SchemaTypesView> {
  const catalog = await readProjectCatalog(controlPlane, ref)
  const directives = new Map(catalog.schemas.map((schema) => [schema.oid, directiveOf(schema.comment) ?? {}]))
  const inflect = (schemaOid: number) => directives.get(schemaOid)?.inflect_names === true
  const types: SchemaType[] = [
    ...catalog.tables.map((table) => tableType(table, inflect(table.schemaOid))),
    ...catalog.enums.map((e): SchemaType => ({
      name: baseTypeName(e.name, undefined, inflect(e.schemaOid)),
      kind: 'ENUM',
      description: `enum ${e.schema}.${e.name}`,
      enumValues: e.labels.map((label) => ({ name: label })),
    })),
  ]
  return {
    ref,
    schemas: catalog.schemas.map((schema) => schema.name),
    introspection: [...directives.values()].some((d) => d.introspection === true),
    types: types.sort((a, b) => a.name.localeCompare(b.name)),
  }
}

/** Whether the comment on schema public turns introspection on. */
export async function introspectionOn(controlPlane: ControlPlane, ref: string): Promise<boolean> {
  const project = await getProject(controlPlane, ref)
  const comment = await runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, (client) => db.schemaComment(client, INTROSPECTED_SCHEMA))
  return directiveOf(comment ?? null)?.introspection === true
}

/**
 * Turns introspection on or off for schema public: the directive's
 * `introspection` key only, the rest of the comment (a description, other
 * keys) kept. Refused when the directive there is not a JSON object.
 */
export async function setIntrospection(controlPlane: ControlPlane, ref: string, on: boolean): Promise<void> {
  const project = await getProject(controlPlane, ref)
  await runInProjectDatabase(await controlPlane.serverUrl(project.dbServer), project.dbName, async (client) => {
    const comment = await db.schemaComment(client, INTROSPECTED_SCHEMA)
    if (comment === undefined) throw platformErrors.invalidArgument(`Project ${ref} has no schema ${INTROSPECTED_SCHEMA}`)
    const directive = directiveOf(comment)
    if (directive === undefined) {
      throw platformErrors.invalidArgument(`The comment on schema ${INTROSPECTED_SCHEMA} has a @graphql(...) directive that is not a JSON object; fix it in SQL first`)
    }
    if (on) directive.introspection = true
    else delete directive.introspection
    const rest = (comment ?? '').replace(DIRECTIVE, '').trim()
    const written = Object.keys(directive).length === 0 ? null : `@graphql(${JSON.stringify(directive)})`
    const next = [rest, written].filter((part) => part !== null && part !== '').join('\n')
    await db.setSchemaComment(client, INTROSPECTED_SCHEMA, next === '' ? null : next)
  })
}
