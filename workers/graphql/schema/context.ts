// What one schema build shares: the model, which schemas it shows, and every
// named type made so far. graphql-js requires one instance per type name, so
// each part (values.ts, filters.ts, nodes.ts, ...) makes a type once and
// keeps it here.
import type { GraphQLEnumType, GraphQLInputObjectType, GraphQLObjectType } from 'graphql'
import type { FunctionModel, Model, TableModel } from '../model/index.ts'

/** Every named type made for a model, by name. */
export class SchemaBuild {
  readonly model: Model
  readonly enums = new Map<string, GraphQLEnumType>()
  readonly enumFilters = new Map<string, GraphQLInputObjectType>()
  /** `enumArrays`' `<Enum>ListFilter`s, made when a table first needs one. */
  readonly enumListFilters = new Map<string, GraphQLInputObjectType>()
  /** `composites`' object, input and filter types, by composite type name. */
  readonly compositeObjects = new Map<string, GraphQLObjectType>()
  readonly compositeInputs = new Map<string, GraphQLInputObjectType>()
  readonly compositeFilters = new Map<string, GraphQLInputObjectType | null>()
  readonly nodes = new Map<TableModel, GraphQLObjectType>()
  readonly connections = new Map<TableModel, GraphQLObjectType>()
  readonly filters = new Map<TableModel, GraphQLInputObjectType>()
  readonly listRelationFilters = new Map<TableModel, GraphQLInputObjectType>()
  readonly orderBys = new Map<TableModel, GraphQLInputObjectType>()
  readonly aggregateOrderBys = new Map<TableModel, GraphQLInputObjectType>()
  readonly distinctOnFields = new Map<TableModel, GraphQLEnumType>()
  /** Whether the objects of a schema (by name) are part of this build. */
  readonly shows: (schema: string) => boolean

  constructor(model: Model, shows: (schema: string) => boolean) {
    this.model = model
    this.shows = shows
  }

  showsTable(table: TableModel): boolean {
    return this.shows(table.schema)
  }

  /** Whether a function's result type is part of this build. */
  showsResult(f: FunctionModel): boolean {
    return f.returns.kind === 'scalar' || this.showsTable(f.returns.table)
  }
}

/** The type kept in `types` under `key`, made by `make` the first time it is asked for. */
export function madeOnce<K, T>(types: Map<K, T>, key: K, make: () => T): T {
  let t = types.get(key)
  if (t === undefined) {
    t = make()
    types.set(key, t)
  }
  return t
}
