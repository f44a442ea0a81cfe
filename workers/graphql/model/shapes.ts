// The reflected model's shapes: which tables, columns, relations and
// functions of the catalogue the caller's role gets in its GraphQL schema,
// under which names (pg_graphql v1.6's rules, SPEC 2.3 and 2.4). Both the
// graphql-js schema (validation, introspection) and the SQL planner read them.
import type { Allowlist, DocumentLimits } from '../directives.ts'
import type { EnumModel, ValueType } from '../types.ts'

export const DEFAULT_MAX_ROWS = 30

/**
 * SPEC 2.4's optional additions that a table turns on or off for itself with
 * `{"<name>": {"enabled": true|false}}`, else inherits from its schema's comment.
 */
export const TABLE_FEATURES = ['relationFilters', 'orderByRelated', 'upsert', 'distinctOn', 'enumArrays'] as const
export type TableFeature = (typeof TABLE_FEATURES)[number]

/** The optional additions only a schema's comment turns on: they apply to everything served from it. */
export const SCHEMA_FEATURES = ['domains', 'composites', 'functionShapes', 'postgis', 'explain', 'schemaReport'] as const
export type SchemaFeature = (typeof SCHEMA_FEATURES)[number]

export interface ColumnModel {
  name: string
  field: string
  type: ValueType
  notNull: boolean
  insertable: boolean
  updatable: boolean
  description: string | undefined
  /**
   * A computed field has the column's field name and answers under it
   * (model/field-names.ts): the column is no field of the row type, but is
   * still in its filter, ordering and inputs.
   */
  shadowed?: true
}

export interface RelationModel {
  field: string
  /** 'one': a single row of `target`; 'many': a collection of `target`. */
  kind: 'one' | 'many'
  target: TableModel
  /** Columns of the table holding the field, matched pairwise with `targetColumns`. */
  columns: string[]
  targetColumns: string[]
  nonNull: boolean
  /** A constraint guarantees at most one target row per parent row (a real foreign key between tables). */
  unique: boolean
}

export interface FunctionArgModel {
  name: string
  field: string
  type: ValueType
  required: boolean
  defaultValue: string | undefined
  /** An unnamed argument (`functionShapes`): passed by position, as only its position names it. */
  positional?: boolean
}

export type FunctionReturn =
  | { kind: 'scalar'; type: ValueType }
  | { kind: 'row'; table: TableModel }
  | { kind: 'connection'; table: TableModel }

export interface FunctionModel {
  oid: number
  schema: string
  name: string
  field: string
  description: string | undefined
  volatile: boolean
  args: FunctionArgModel[]
  returns: FunctionReturn
  /** A computed field in its table's `<Type>Filter` (`functionShapes`: a scalar result, every argument optional). */
  filterable?: boolean
}

export interface TableModel {
  oid: number
  schema: string
  name: string
  /** Base type name (`Blog`, or the `name` directive). */
  typeName: string
  description: string | undefined
  /** `<typeName>` lower-first: prefix of its root fields. */
  fieldBase: string
  /** The columns that are fields (valid GraphQL names), in table order. */
  columns: ColumnModel[]
  /** The columns a row read selects: the fields' and any primary key column that is not a field. */
  readColumns: ColumnModel[]
  columnByField: Map<string, ColumnModel>
  primaryKey: ColumnModel[]
  relations: RelationModel[]
  computed: FunctionModel[]
  maxRows: number
  totalCount: boolean
  aggregate: boolean
  /** The optional additions on for this table (its comment, else its schema's). */
  features: ReadonlySet<TableFeature>
  /** False when the table's comment says `{"root": {"enabled": false}}`: no Query fields of its own. */
  root: boolean
  /**
   * The primary key and unique constraints an upsert may name (`<Type>Constraint`
   * values): those whose name is a GraphQL enum value, in name order.
   */
  conflictConstraints: string[]
  /** Set when `upsert` is on but left out: one of its type names is another type's (withoutClashingUpserts). */
  upsertClash?: true
  canInsert: boolean
  canUpdate: boolean
  canDelete: boolean
  rls: boolean
  isTable: boolean
  /**
   * A view without a key, served only as the object type a computed field
   * returns one row of (model/tables.ts keylessViewsOf): no nodeId, no Node,
   * no collection, no mutations, and not among the model's `tables`.
   */
  keyless?: true
}

export interface Model {
  tables: TableModel[]
  tableByTypeName: Map<string, TableModel>
  /** By `schema\0table`, for nodeId lookups. */
  tableBySqlName: Map<string, TableModel>
  enums: EnumModel[]
  queryFunctions: FunctionModel[]
  mutationFunctions: FunctionModel[]
  /** Whether any served schema switches introspection on. */
  introspection: boolean
  /** The served schemas (by name) whose comment switches introspection on: only their part is introspected. */
  introspectedSchemas: ReadonlySet<string>
  validation: boolean
  /** The schema-only additions on, per served schema (by name). */
  schemaFeatures: ReadonlyMap<string, ReadonlySet<SchemaFeature>>
  /** The document limits: the smallest each served schema sets. */
  limits: DocumentLimits | undefined
  /** The first served schema's allowlist (in search path order). */
  allowlist: Allowlist | undefined
}
