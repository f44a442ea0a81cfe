// What a project's data API (`{base_url}/rest/v1`) can be asked for, for the
// dashboard's REST tab to suggest: the tables and views (a path `/<name>`)
// and the functions (`/rpc/<name>`) of its exposed schemas (rest-settings.ts). Read with the
// platform's rights from the catalogue GraphQL's tab reads too
// (graphql-schema.ts readProjectCatalog), so it is the catalogue's view: a
// role may still be refused one by its grants, and row-level security still
// decides the rows. Trigger functions are left out: `/rpc` cannot call them.
import type { CatalogFunction, CatalogTable } from '../lib/pg-catalog/catalog.ts'
import type { ControlPlane } from './control-plane.ts'
import { readProjectCatalog } from './graphql-schema.ts'
import { getProject } from './projects.ts'

export interface RestRelation {
  schema: string
  name: string
  /** table, view, materialized view, partitioned table, foreign table */
  kind: string
  columns: Array<{ name: string; type: string }>
  primaryKey: string[]
  rls: boolean
}

export interface RestFunction {
  schema: string
  name: string
  /** The named input arguments, `optional` when the function has a default for it. */
  args: Array<{ name: string; type: string; optional: boolean }>
  returns: string
  returnsSet: boolean
  /** PostgREST answers GET only for these (stable or immutable); the others run on POST. */
  readOnly: boolean
}

export interface RestSchemaView {
  ref: string
  /** The exposed schemas, the default first, as the data API serves them (also those not created yet). */
  schemas: string[]
  relations: RestRelation[]
  functions: RestFunction[]
}

const KINDS: Record<string, string> = { r: 'table', p: 'partitioned table', v: 'view', m: 'materialized view', f: 'foreign table' }
/** Argument modes a caller passes: in, inout, variadic. */
const INPUT_MODES = new Set(['i', 'b', 'v'])
const NOT_CALLABLE = new Set(['trigger', 'event_trigger'])

function relationOf(table: CatalogTable): RestRelation {
  return {
    schema: table.schema,
    name: table.name,
    kind: KINDS[table.kind] ?? 'table',
    columns: table.columns.map((c) => ({ name: c.name, type: c.typeName })),
    primaryKey: table.primaryKey ?? [],
    rls: table.rls,
  }
}

function functionOf(fn: CatalogFunction): RestFunction {
  const inputs = fn.args.filter((a) => INPUT_MODES.has(a.mode))
  // The last nDefaults input arguments have defaults (pg_proc.pronargdefaults).
  const firstOptional = inputs.length - fn.nDefaults
  return {
    schema: fn.schema,
    name: fn.name,
    args: inputs.map((a, i) => ({ name: a.name ?? '', type: a.typeName, optional: i >= firstOptional })),
    returns: fn.returnType.typeName,
    returnsSet: fn.returnsSet,
    readOnly: fn.volatility !== 'v',
  }
}

/** The served schemas' tables, views and callable functions, read as the server's admin role. */
export async function restSchema(controlPlane: ControlPlane, ref: string): Promise<RestSchemaView> {
  const { restSchemas } = await getProject(controlPlane, ref)
  const catalog = await readProjectCatalog(controlPlane, ref, restSchemas)
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name)
  return {
    ref,
    schemas: restSchemas,
    relations: catalog.tables.map(relationOf).sort(byName),
    functions: catalog.functions.filter((fn) => !NOT_CALLABLE.has(fn.returnType.typeName)).map(functionOf).sort(byName),
  }
}
