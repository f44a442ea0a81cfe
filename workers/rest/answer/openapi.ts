// The OpenAPI description PostgREST answers at `GET /` (shared/reference/
// postgrest.md section 7): Swagger 2.0 built from the same model as the
// requests (model.ts, cached per schema version and role), so it follows the
// caller's privileges as PostgREST's `openapi-mode = follow-privileges`: the
// tables and views the role may read, with POST, PATCH and DELETE where it
// may write, and the functions it may execute. The shape follows PostgREST's
// OpenAPI module: `definitions` per table, `parameters` shared by reference,
// `rowFilter.<table>.<column>` and `body.<table>`.
import type { CatalogColumn, CatalogFunction, CatalogTable } from '../../../lib/pg-catalog/catalog.ts'
import type { RestModel } from '../schema/model.ts'

/** The version `info` names: the PostgREST this API answers as. */
const POSTGREST_VERSION = '13'

const MEDIA = ['application/json', 'application/vnd.pgrst.object+json;nulls=stripped', 'application/vnd.pgrst.object+json', 'text/csv']
const RPC_MEDIA = MEDIA.slice(0, 3)

type Json = Record<string, unknown>

const preference = (values: string[]): Json => ({ name: 'Prefer', description: 'Preference', required: false, enum: values, in: 'header', type: 'string' })
const query = (name: string, description: string): Json => ({ name, description, required: false, in: 'query', type: 'string' })

const COMMON_PARAMETERS: Json = {
  preferParams: preference(['params=single-object']),
  preferReturn: preference(['return=representation', 'return=minimal', 'return=none']),
  preferCount: preference(['count=none']),
  preferPost: preference(['return=representation', 'return=minimal', 'return=none', 'resolution=ignore-duplicates', 'resolution=merge-duplicates']),
  select: query('select', 'Filtering Columns'),
  on_conflict: query('on_conflict', 'On Conflict'),
  order: query('order', 'Ordering'),
  range: { name: 'Range', description: 'Limiting and Pagination', required: false, in: 'header', type: 'string' },
  rangeUnit: { name: 'Range-Unit', description: 'Limiting and Pagination', required: false, default: 'items', in: 'header', type: 'string' },
  offset: query('offset', 'Limiting and Pagination'),
  limit: query('limit', 'Limiting and Pagination'),
}

const ref = (name: string) => ({ $ref: `#/parameters/${name}` })

/** A type's name without its modifiers: `character varying(20)` is `character varying`. */
const bareType = (typeName: string) => typeName.replace(/\(\d+(?:,\d+)?\)/g, '')

/** PostgREST's toSwaggerType: JSON has no type, arrays are arrays, the rest strings unless numeric or boolean. */
function swaggerType(typeName: string): string | undefined {
  switch (typeName) {
    case 'boolean':
      return 'boolean'
    case 'smallint':
    case 'integer':
    case 'bigint':
      return 'integer'
    case 'numeric':
    case 'real':
    case 'double precision':
      return 'number'
    case 'json':
    case 'jsonb':
      return undefined
  }
  return typeName.endsWith('[]') ? 'array' : 'string'
}

function typed(typeName: string, typtype?: string, enums?: string[]): Json {
  const format = bareType(typeName)
  const type = swaggerType(format)
  const out: Json = {}
  if (typtype === 'e' && enums) out.enum = enums
  out.format = format
  if (type !== undefined) out.type = type
  if (type === 'array') {
    const element = swaggerType(format.slice(0, -2))
    out.items = element === undefined ? {} : { type: element }
  }
  return out
}

/** The first line of a comment, and the rest: PostgREST's summary and description. */
function splitComment(comment: string | null): { summary?: string; description?: string } {
  if (!comment) return {}
  const at = comment.indexOf('\n')
  if (at < 0) return { summary: comment }
  const description = comment.slice(at + 1).trim()
  return description ? { summary: comment.slice(0, at), description } : { summary: comment.slice(0, at) }
}

/**
 * PostgREST's foreign key note: a many-to-one or one-to-one relationship of
 * the table or view on this one column, to a relation of the same schema
 * (tables before views), so a view's column shown from its base table's key
 * has it too. Computed relationships have none.
 */
function foreignKeyNote(model: RestModel, table: CatalogTable, column: CatalogColumn): string | undefined {
  const isView = (t: CatalogTable) => t.kind === 'v' || t.kind === 'm'
  const rel = (model.relationships.get(table.oid) ?? [])
    .filter((r) => r.referencing !== undefined && r.foreign.schema === table.schema && r.columns.length === 1 && r.columns[0]![0] === column.name)
    .sort((a, b) => Number(isView(a.foreign)) - Number(isView(b.foreign)) || (a.foreign.name < b.foreign.name ? -1 : a.foreign.name > b.foreign.name ? 1 : 0))[0]
  if (rel === undefined) return undefined
  const [target, to] = [rel.foreign.name, rel.columns[0]![1]]
  return `This is a Foreign Key to \`${target}.${to}\`.<fk table='${target}' column='${to}'/>`
}

/**
 * A column's default as PostgREST's description shows it: for a column
 * described as a string, the expression without its cast to the column's
 * type and its quotes, as a string (`'draft'::text` is "draft", `now()` is
 * "now()"); otherwise the expression itself when it is a JSON value (`0`,
 * `false`, `1.5`). Anything else (`nextval(...)`, a JSON column's
 * `'{}'::jsonb`) shows none.
 */
function defaultOf(column: CatalogColumn): unknown {
  const expr = column.defaultExpr
  if (expr === null) return undefined
  const format = bareType(column.typeName)
  let text = expr
  if (swaggerType(format) === 'string') {
    const cast = `::${format}`
    text = JSON.stringify(expr.endsWith(cast) ? expr.slice(0, -cast.length).replace(/^'+|'+$/g, '') : expr)
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function property(model: RestModel, table: CatalogTable, column: CatalogColumn): Json {
  const notes = ['Note:']
  if (table.primaryKey?.includes(column.name)) notes.push('This is a Primary Key.<pk/>')
  const fk = foreignKeyNote(model, table, column)
  if (fk !== undefined) notes.push(fk)
  const out: Json = {}
  const fallback = defaultOf(column)
  if (fallback !== undefined) out.default = fallback
  const description = notes.length > 1 ? `${column.comment ? `${column.comment}\n\n` : ''}${notes.join('\n')}` : column.comment
  if (description) out.description = description
  Object.assign(out, typed(column.typeName, column.typtype, model.enums.get(column.oid)))
  if (column.maxChars !== null) out.maxLength = column.maxChars
  return out
}

function definition(model: RestModel, table: CatalogTable): Json {
  const columns = table.columns.filter((c) => c.canSelect)
  // PostgREST's required: not null and no default (a generated or identity column has one).
  const required = columns.filter((c) => c.notNull && !c.hasDefault && !c.generated && !c.serial).map((c) => c.name)
  const out: Json = {}
  if (table.comment) out.description = table.comment
  if (required.length > 0) out.required = required
  out.properties = Object.fromEntries(columns.map((c) => [c.name, property(model, table, c)]))
  out.type = 'object'
  return out
}

function tablePaths(table: CatalogTable): Json {
  const name = table.name
  const tags = [name]
  const filters = table.columns.filter((c) => c.canSelect).map((c) => ref(`rowFilter.${name}.${c.name}`))
  const text = splitComment(table.comment)
  const item: Json = {
    get: {
      tags,
      ...text,
      parameters: [...filters, ref('select'), ref('order'), ref('range'), ref('rangeUnit'), ref('offset'), ref('limit'), ref('preferCount')],
      responses: { 200: { description: 'OK', schema: { items: { $ref: `#/definitions/${name}` }, type: 'array' } }, 206: { description: 'Partial Content' } },
    },
  }
  if (table.canInsert) item.post = { tags, ...text, parameters: [ref(`body.${name}`), ref('select'), ref('preferPost')], responses: { 201: { description: 'Created' } } }
  if (table.canDelete) item.delete = { tags, ...text, parameters: [...filters, ref('preferReturn')], responses: { 204: { description: 'No Content' } } }
  if (table.canUpdate) item.patch = { tags, ...text, parameters: [...filters, ref(`body.${name}`), ref('preferReturn')], responses: { 204: { description: 'No Content' } } }
  return item
}

const inputs = (fn: CatalogFunction) => fn.args.filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v')

function functionPaths(fn: CatalogFunction): Json {
  const tags = [`(rpc) ${fn.name}`]
  const text = splitComment(fn.comment)
  const args = inputs(fn).filter((a) => a.name !== null)
  // The last nDefaults inputs have defaults; the others are required.
  const required = args.slice(0, Math.max(0, inputs(fn).length - fn.nDefaults)).map((a) => a.name!)
  const properties = Object.fromEntries(args.map((a) => [a.name!, typed(a.typeName, a.typtype)]))
  const body: Json = { type: 'object', properties }
  if (required.length > 0) body.required = required
  const item: Json = {
    post: {
      tags,
      ...text,
      produces: RPC_MEDIA,
      parameters: [{ in: 'body', name: 'args', required: true, schema: body }, ref('preferParams')],
      responses: { 200: { description: 'OK' } },
    },
  }
  // GET runs read-only (a volatile function that writes fails there): offered for stable and immutable ones.
  if (fn.volatility !== 'v') {
    item.get = {
      tags,
      ...text,
      produces: RPC_MEDIA,
      parameters: args.map((a) => ({ in: 'query', name: a.name, required: required.includes(a.name!), ...typed(a.typeName, a.typtype) })),
      responses: { 200: { description: 'OK' } },
    }
  }
  return item
}

/**
 * The description of `schema` as the model's role sees it, served at
 * `baseUrl` + `/rest/v1`.
 */
export function openApiDocument(model: RestModel, schema: string, baseUrl: string): string {
  const url = new URL(baseUrl)
  // Without USAGE on the schema the role may use nothing in it, whatever its grants on the tables say.
  const usable = model.usable.has(schema)
  const tables = [...model.tables.values()].filter((t) => usable && t.schema === schema && t.canSelect).sort((a, b) => (a.name < b.name ? -1 : 1))
  const functions = [...model.functions.values()]
    .map((overloads) => overloads.find((f) => f.canExecute))
    .filter((f): f is CatalogFunction => usable && f !== undefined && f.schema === schema && f.returnType.typeName !== 'trigger' && f.returnType.typeName !== 'event_trigger')
    .sort((a, b) => (a.name < b.name ? -1 : 1))

  const paths: Json = {
    '/': {
      get: { tags: ['Introspection'], summary: 'OpenAPI description (this document)', produces: ['application/openapi+json', 'application/json'], responses: { 200: { description: 'OK' } } },
    },
  }
  const definitions: Json = {}
  const parameters: Json = { ...COMMON_PARAMETERS }
  for (const table of tables) {
    paths[`/${table.name}`] = tablePaths(table)
    definitions[table.name] = definition(model, table)
    parameters[`body.${table.name}`] = { name: table.name, description: table.name, required: false, in: 'body', schema: { $ref: `#/definitions/${table.name}` } }
    for (const column of table.columns.filter((c) => c.canSelect)) {
      parameters[`rowFilter.${table.name}.${column.name}`] = { name: column.name, required: false, in: 'query', type: 'string', format: bareType(column.typeName) }
    }
  }
  for (const fn of functions) paths[`/rpc/${fn.name}`] = functionPaths(fn)

  const comment = model.schemaComments.get(schema) ?? null
  const text = splitComment(comment)
  return JSON.stringify({
    swagger: '2.0',
    info: { description: text.description ?? (comment ? '' : 'This is a dynamic API generated by PostgREST'), title: text.summary ?? 'PostgREST API', version: POSTGREST_VERSION },
    host: url.host,
    basePath: `${url.pathname.replace(/\/+$/, '')}/rest/v1`,
    schemes: [url.protocol.slice(0, -1)],
    consumes: MEDIA,
    produces: MEDIA,
    paths,
    definitions,
    parameters,
    externalDocs: { description: 'PostgREST Documentation', url: 'https://postgrest.org/en/v13/references/api.html' },
  })
}
