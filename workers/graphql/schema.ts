// Builds the graphql-js schema of a model: the types, fields and arguments
// pg_graphql (v1.6) generates, so documents validate and introspect exactly
// against them. Execution does not go through graphql-js resolvers: the
// planner turns the validated document into SQL (plan/).
import {
  GraphQLBoolean, GraphQLEnumType, GraphQLFloat, GraphQLID, GraphQLIncludeDirective, GraphQLInputObjectType, GraphQLInt,
  GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLSkipDirective, GraphQLString,
  type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, type GraphQLInputFieldConfigMap, type GraphQLInputType,
  type GraphQLNamedType, type GraphQLOutputType, type GraphQLScalarType, type GraphQLSchemaConfig,
} from 'graphql'
import type { FunctionModel, Model, TableModel } from './model.ts'
import {
  BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, GeoJSONScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar,
} from './scalars.ts'
import { FILTERED_SCALARS, filterTypeOf, LIST_FILTER_SCALARS, operatorsOf, OPTIONAL_SCALARS, type FilterFamily, type OperandShape } from './filter-operators.ts'
import { isComparable, isNumeric, isOrderable, type CompositeModel, type EnumModel, type ScalarName, type ValueType } from './types.ts'

const SCALARS: Record<ScalarName, GraphQLScalarType> = {
  ID: GraphQLID, Int: GraphQLInt, Float: GraphQLFloat, String: GraphQLString, Boolean: GraphQLBoolean,
  BigInt: BigIntScalar, BigFloat: BigFloatScalar, Date: DateScalar, Time: TimeScalar, Datetime: DatetimeScalar,
  UUID: UUIDScalar, JSON: JSONScalar, Cursor: CursorScalar, Opaque: OpaqueScalar, GeoJSON: GeoJSONScalar,
}

const nn = <T extends GraphQLOutputType | GraphQLInputType>(t: T) => new GraphQLNonNull(t)
const list = <T extends GraphQLOutputType | GraphQLInputType>(t: T) => new GraphQLList(t)

export const FilterIs = new GraphQLEnumType({ name: 'FilterIs', values: { NULL: { value: 'NULL' }, NOT_NULL: { value: 'NOT_NULL' } } })

export const OrderByDirection = new GraphQLEnumType({
  name: 'OrderByDirection',
  description: 'Defines a per-field sorting order',
  values: {
    AscNullsFirst: { value: 'AscNullsFirst', description: 'Ascending order, nulls first' },
    AscNullsLast: { value: 'AscNullsLast', description: 'Ascending order, nulls last' },
    DescNullsFirst: { value: 'DescNullsFirst', description: 'Descending order, nulls first' },
    DescNullsLast: { value: 'DescNullsLast', description: 'Descending order, nulls last' },
  },
})

/** `dWithin`'s operand (schema `postgis`). */
const GeoJSONDWithinInput = new GraphQLInputObjectType({
  name: 'GeoJSONDWithinInput',
  description: 'A geometry and a distance from it: units of the SRID for geometry, metres for geography',
  fields: { geometry: { type: new GraphQLNonNull(GeoJSONScalar) }, distance: { type: new GraphQLNonNull(GraphQLFloat) } },
})

const PageInfo = new GraphQLObjectType({
  name: 'PageInfo',
  fields: {
    endCursor: { type: GraphQLString },
    hasNextPage: { type: nn(GraphQLBoolean) },
    hasPreviousPage: { type: nn(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
  },
})

const NodeInterface = new GraphQLInterfaceType({
  name: 'Node',
  fields: { nodeId: { type: nn(GraphQLID), description: 'Retrieves a record by `ID`' } },
})

/**
 * A `<Type>Filter` input type: one field per operator of `family`, over the
 * filtered type `t`. pg_graphql describes the type, not its operators.
 */
function filterInput(name: string, about: string, family: FilterFamily, t: GraphQLScalarType | GraphQLEnumType): GraphQLInputObjectType {
  const operand = (shape: OperandShape): GraphQLInputType =>
    shape === 'is' ? FilterIs : shape === 'dWithin' ? GeoJSONDWithinInput : shape === 'values' || family === 'List' ? list(nn(t)) : t
  const fields: GraphQLInputFieldConfigMap = {}
  for (const op of operatorsOf(family)) fields[op.name] = { type: operand(op.operand) }
  return new GraphQLInputObjectType({ name, description: `Boolean expression comparing fields on type "${about}"`, fields })
}

const SCALAR_FILTERS = new Map(FILTERED_SCALARS.map((s) => [`${s}Filter`, filterInput(`${s}Filter`, s, s, SCALARS[s])]))
for (const s of LIST_FILTER_SCALARS) SCALAR_FILTERS.set(`${s}ListFilter`, filterInput(`${s}ListFilter`, `${s}List`, 'List', SCALARS[s]))

const PAGING_ARGS = (): GraphQLFieldConfigArgumentMap => ({
  first: { type: GraphQLInt, description: 'Query the first `n` records in the collection' },
  last: { type: GraphQLInt, description: 'Query the last `n` records in the collection' },
  before: { type: CursorScalar, description: 'Query values in the collection before the provided cursor' },
  after: { type: CursorScalar, description: 'Query values in the collection after the provided cursor' },
  offset: { type: GraphQLInt, description: 'Skip n values from the after cursor. Alternative to cursor pagination. Backward pagination not supported.' },
})

/** Every named type made for a model, by name. */
class Builder {
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
    for (const e of model.enums) if (shows(e.schema)) this.enumType(e)
  }

  showsTable(table: TableModel): boolean {
    return this.shows(table.schema)
  }

  /** Whether a function's result type is part of this build. */
  showsResult(f: FunctionModel): boolean {
    return f.returns.kind === 'scalar' || this.showsTable(f.returns.table)
  }

  enumType(e: EnumModel): GraphQLEnumType {
    let t = this.enums.get(e.name)
    if (!t) {
      t = new GraphQLEnumType({
        name: e.name,
        description: e.description,
        // A shadowed label's name is the mapped label's value (model.ts enumsOf).
        values: Object.fromEntries(e.values.filter((v) => !v.shadowed).map((v) => [v.name, { value: v.db }])),
      })
      this.enums.set(e.name, t)
      this.enumFilters.set(e.name, filterInput(`${e.name}Filter`, e.name, 'Enum', t))
    }
    return t
  }

  /** The type of a value read (a column, a function's result): a composite's is its object type. */
  valueType(v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLObjectType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
    return v.composite ? this.compositeObject(v.composite) : this.plainType(v)
  }

  /** The type of a value given (an argument, a mutation's input): a composite's is its `<name>Input`. */
  inputType(v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLInputObjectType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
    return v.composite ? this.compositeInput(v.composite) : this.plainType(v)
  }

  plainType(v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
    const base = v.enum ? this.enumType(v.enum) : SCALARS[v.scalar!]
    return v.list ? list(base) : base
  }

  compositeObject(c: CompositeModel): GraphQLObjectType {
    let t = this.compositeObjects.get(c.name)
    if (!t) {
      t = new GraphQLObjectType({
        name: c.name,
        description: c.description,
        fields: () => Object.fromEntries(c.attributes.map((a) => [a.field, { type: this.valueType(a.type), description: a.description }])),
      })
      this.compositeObjects.set(c.name, t)
    }
    return t
  }

  compositeInput(c: CompositeModel): GraphQLInputObjectType {
    let t = this.compositeInputs.get(c.name)
    if (!t) {
      t = new GraphQLInputObjectType({
        name: `${c.name}Input`,
        description: `A value of type "${c.name}": attributes left out are null`,
        fields: () => Object.fromEntries(c.attributes.map((a) => [a.field, { type: this.inputType(a.type), description: a.description }])),
      })
      this.compositeInputs.set(c.name, t)
    }
    return t
  }

  /**
   * `<Composite>Filter`: a filter per filterable attribute; null when no
   * attribute is (graphql-js refuses an input type without fields). Enum
   * arrays inside a composite are not filterable: `enumArrays` is a table's.
   */
  compositeFilter(c: CompositeModel): GraphQLInputObjectType | null {
    let t = this.compositeFilters.get(c.name)
    if (t === undefined) {
      const fields: GraphQLInputFieldConfigMap = {}
      for (const a of c.attributes) {
        const ft = this.filterOf(a.type, false)
        if (ft) fields[a.field] = { type: ft, description: a.description }
      }
      t = Object.keys(fields).length === 0
        ? null
        : new GraphQLInputObjectType({ name: `${c.name}Filter`, description: `Boolean expression comparing fields on type "${c.name}"`, fields })
      this.compositeFilters.set(c.name, t)
    }
    return t
  }

  /** The filter input type of a value of `type`; undefined when it is not filterable. */
  filterOf(type: ValueType, enumArrays: boolean): GraphQLInputObjectType | undefined {
    const name = filterTypeOf(type, enumArrays)
    if (!name) return undefined
    if (type.composite) return this.compositeFilter(type.composite) ?? undefined
    if (type.enum && type.list) {
      let t = this.enumListFilters.get(name)
      if (!t) {
        t = filterInput(name, `${type.enum.name}List`, 'List', this.enumType(type.enum))
        this.enumListFilters.set(name, t)
      }
      return t
    }
    if (type.enum) return (this.enumType(type.enum), this.enumFilters.get(type.enum.name))
    return SCALAR_FILTERS.get(name)
  }

  connectionArgs(table: TableModel): GraphQLFieldConfigArgumentMap {
    const args: GraphQLFieldConfigArgumentMap = {
      ...PAGING_ARGS(),
      filter: { type: this.filter(table), description: 'Filters to apply to the results set when querying from the collection' },
    }
    // graphql-js refuses an input type without fields, which pg_graphql would give a table with no orderable field.
    if (table.columns.some((c) => isOrderable(c.type))) {
      args.orderBy = { type: list(nn(this.orderBy(table))), description: 'Sort order to apply to the collection' }
    }
    if (table.features.has('distinctOn') && table.columns.some(isDistinctOnColumn)) {
      args.distinctOn = { type: list(nn(this.distinctOnField(table))), description: 'Keeps one record per value of these fields: the first in the collection\'s order' }
    }
    return args
  }

  node(table: TableModel): GraphQLObjectType {
    let t = this.nodes.get(table)
    if (t) return t
    t = new GraphQLObjectType({
      name: table.typeName,
      description: table.description,
      interfaces: [NodeInterface],
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {
          nodeId: { type: nn(GraphQLID), description: 'Globally Unique Record Identifier' },
        }
        for (const c of table.columns) {
          const type = this.valueType(c.type)
          fields[c.field] = { type: c.notNull && table.isTable ? nn(type) : type, description: c.description }
        }
        for (const r of table.relations) {
          if (!this.showsTable(r.target)) continue
          fields[r.field] =
            r.kind === 'one'
              ? { type: r.nonNull ? nn(this.node(r.target)) : this.node(r.target) }
              : { type: this.connection(r.target), args: this.connectionArgs(r.target) }
        }
        for (const f of table.computed) if (this.showsResult(f)) fields[f.field] = this.functionField(f, f.args.length > 0)
        return fields
      },
    })
    this.nodes.set(table, t)
    return t
  }

  connection(table: TableModel): GraphQLObjectType {
    let t = this.connections.get(table)
    if (t) return t
    const edge = new GraphQLObjectType({
      name: `${table.typeName}Edge`,
      fields: () => ({ cursor: { type: nn(GraphQLString) }, node: { type: nn(this.node(table)) } }),
    })
    t = new GraphQLObjectType({
      name: `${table.typeName}Connection`,
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {
          edges: { type: nn(list(nn(edge))) },
          pageInfo: { type: nn(PageInfo) },
        }
        if (table.totalCount) fields.totalCount = { type: nn(GraphQLInt), description: 'The total number of records matching the `filter` criteria' }
        if (table.aggregate) fields.aggregate = { type: this.aggregate(table), description: 'Aggregate functions calculated on the collection of `' + table.typeName + '`' }
        return fields
      },
    })
    this.connections.set(table, t)
    return t
  }

  aggregate(table: TableModel): GraphQLObjectType {
    const numeric = table.columns.filter((c) => isNumeric(c.type))
    const comparable = table.columns.filter((c) => isComparable(c.type))
    const result = (kind: string, cols: typeof numeric, typeOf: (c: (typeof numeric)[number]) => GraphQLScalarType) =>
      new GraphQLObjectType({
        name: `${table.typeName}${kind}AggregateResult`,
        fields: Object.fromEntries(cols.map((c) => [c.field, { type: typeOf(c) }])),
      })
    const fields: GraphQLFieldConfigMap<unknown, unknown> = {
      count: { type: nn(GraphQLInt), description: 'The number of records matching the query' },
    }
    if (numeric.length > 0) {
      fields.sum = { type: result('Sum', numeric, (c) => (c.type.scalar === 'Int' || c.type.scalar === 'BigInt' ? BigIntScalar : BigFloatScalar)), description: 'Summation aggregates for `' + table.typeName + '`' }
      fields.avg = { type: result('Avg', numeric, () => BigFloatScalar), description: 'Average aggregates for `' + table.typeName + '`' }
    }
    if (comparable.length > 0) {
      fields.min = { type: result('Min', comparable, (c) => SCALARS[c.type.scalar!]), description: 'Minimum aggregates for comparable fields' }
      fields.max = { type: result('Max', comparable, (c) => SCALARS[c.type.scalar!]), description: 'Maximum aggregates for comparable fields' }
    }
    return new GraphQLObjectType({ name: `${table.typeName}Aggregate`, fields })
  }

  filter(table: TableModel): GraphQLInputObjectType {
    let t = this.filters.get(table)
    if (t) return t
    const self: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${table.typeName}Filter`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {}
        for (const c of table.columns) {
          const ft = this.filterOf(c.type, table.features.has('enumArrays'))
          if (ft) fields[c.field] = { type: ft }
        }
        fields.nodeId ??= { type: SCALAR_FILTERS.get('IDFilter')! }
        fields.and ??= { type: list(nn(self)), description: 'Returns true only if all its inner filters are true, otherwise returns false' }
        fields.or ??= { type: list(nn(self)), description: 'Returns true if at least one of its inner filters is true, otherwise returns false' }
        fields.not ??= { type: self, description: 'Negates a filter' }
        // functionShapes: a scalar computed field callable with the row alone filters as a column of its type.
        for (const f of table.computed) {
          if (!f.filterable || f.returns.kind !== 'scalar' || f.field in fields) continue
          const ft = this.filterOf(f.returns.type, table.features.has('enumArrays'))
          if (ft) fields[f.field] = { type: ft }
        }
        // After and/or/not, so a relation named like one of them never hides it (plan/filter.ts reads keys in that order).
        if (table.features.has('relationFilters')) {
          for (const r of table.relations) {
            if (!this.showsTable(r.target) || r.field in fields) continue
            fields[r.field] = { type: r.kind === 'one' ? this.filter(r.target) : this.listRelationFilter(r.target) }
          }
        }
        return fields
      },
    })
    this.filters.set(table, self)
    return self
  }

  /** `relationFilters`' quantifiers over a collection of `table`'s rows (Prisma's `<Type>ListRelationFilter`). */
  listRelationFilter(table: TableModel): GraphQLInputObjectType {
    let t = this.listRelationFilters.get(table)
    if (t) return t
    t = new GraphQLInputObjectType({
      name: `${table.typeName}ListRelationFilter`,
      description: `Conditions on the related records of type "${table.typeName}"`,
      fields: () => ({
        every: { type: this.filter(table), description: 'True when every related record matches the filter (also when there is none)' },
        none: { type: this.filter(table), description: 'True when no related record matches the filter' },
        some: { type: this.filter(table), description: 'True when at least one related record matches the filter' },
      }),
    })
    this.listRelationFilters.set(table, t)
    return t
  }

  orderBy(table: TableModel): GraphQLInputObjectType {
    let t = this.orderBys.get(table)
    if (t) return t
    t = new GraphQLInputObjectType({
      name: `${table.typeName}OrderBy`,
      // A thunk: with orderByRelated, order types refer to each other (a book's author, an author's books).
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = Object.fromEntries(table.columns.filter((c) => isOrderable(c.type)).map((c) => [c.field, { type: OrderByDirection }]))
        if (!table.features.has('orderByRelated')) return fields
        for (const r of table.relations) {
          if (!this.showsTable(r.target)) continue
          if (r.kind === 'many') fields[r.field] = { type: this.aggregateOrderBy(r.target), description: `Orders by the related \`${r.target.typeName}\` records` }
          else if (r.target.columns.some((c) => isOrderable(c.type))) fields[r.field] = { type: this.orderBy(r.target), description: `Orders by the related \`${r.target.typeName}\` record's fields` }
        }
        return fields
      },
    })
    this.orderBys.set(table, t)
    return t
  }

  /** orderByRelated over a to-many relation: `{count: <direction>}`, the number of related rows the caller sees. */
  aggregateOrderBy(table: TableModel): GraphQLInputObjectType {
    let t = this.aggregateOrderBys.get(table)
    if (t) return t
    t = new GraphQLInputObjectType({
      name: `${table.typeName}AggregateOrderBy`,
      fields: { count: { type: OrderByDirection, description: `The number of related \`${table.typeName}\` records` } },
    })
    this.aggregateOrderBys.set(table, t)
    return t
  }

  /** distinctOn's values: the columns that compare for equality; each value is the column's SQL name. */
  distinctOnField(table: TableModel): GraphQLEnumType {
    let t = this.distinctOnFields.get(table)
    if (t) return t
    t = new GraphQLEnumType({
      name: `${table.typeName}DistinctOnField`,
      values: Object.fromEntries(table.columns.filter(isDistinctOnColumn).map((c) => [c.field, { value: c.name }])),
    })
    this.distinctOnFields.set(table, t)
    return t
  }

  functionField(f: FunctionModel, withArgs: boolean) {
    const args: GraphQLFieldConfigArgumentMap = {}
    if (withArgs) {
      for (const a of f.args) {
        const type = this.inputType(a.type)
        args[a.field] = { type: a.required ? nn(type) : type, ...(a.defaultValue !== undefined ? { defaultValue: JSON.parse(a.defaultValue) } : {}) }
      }
    }
    const r = f.returns
    if (r.kind === 'scalar') return { type: this.valueType(r.type), args, description: f.description }
    if (r.kind === 'row') return { type: this.node(r.table), args, description: f.description }
    return { type: this.connection(r.table), args: { ...args, ...this.connectionArgs(r.table) }, description: f.description }
  }

  /**
   * The insert's `onConflict` argument when the table turns `upsert` on and
   * has a constraint to name. `updateFields` and `filter` exist only when the
   * role may update a column: without them the upsert can only leave rows be.
   */
  onConflictArgs(table: TableModel): GraphQLFieldConfigArgumentMap {
    if (!table.features.has('upsert') || table.conflictConstraints.length === 0) return {}
    const constraint = new GraphQLEnumType({
      name: `${table.typeName}Constraint`,
      description: `A primary key or unique constraint of \`${table.typeName}\``,
      values: Object.fromEntries(table.conflictConstraints.map((n) => [n, { value: n }])),
    })
    const fields: GraphQLInputFieldConfigMap = {
      constraint: { type: nn(constraint), description: 'The constraint whose conflict turns the insert into an update' },
    }
    const updatable = table.columns.filter((c) => c.updatable && table.canUpdate && !['true', 'false', 'null'].includes(c.field))
    if (updatable.length > 0) {
      const field = new GraphQLEnumType({
        name: `${table.typeName}UpdateField`,
        description: `A field of \`${table.typeName}\` an upsert may update`,
        values: Object.fromEntries(updatable.map((c) => [c.field, { value: c.field }])),
      })
      fields.updateFields = {
        type: list(nn(field)),
        description: 'Fields of the existing record set from the inserted one; without them the existing record is left as it is',
      }
      fields.filter = { type: this.filter(table), description: 'Restricts the update to existing records matching the criteria' }
    }
    const input = new GraphQLInputObjectType({ name: `${table.typeName}OnConflict`, fields })
    return { onConflict: { type: input, description: 'Updates or keeps the existing record where a new one conflicts with it' } }
  }

  mutationTypes(table: TableModel) {
    const node = this.node(table)
    const response = (kind: string) =>
      new GraphQLObjectType({
        name: `${table.typeName}${kind}Response`,
        fields: {
          affectedCount: { type: nn(GraphQLInt), description: 'Count of the records impacted by the mutation' },
          records: { type: nn(list(nn(node))), description: 'Array of records impacted by the mutation' },
        },
      })
    const input = (kind: string, pick: (c: TableModel['columns'][number]) => boolean) =>
      new GraphQLInputObjectType({
        name: `${table.typeName}${kind}Input`,
        fields: Object.fromEntries(table.columns.filter(pick).map((c) => [c.field, { type: this.inputType(c.type) }])),
      })
    return {
      insertable: table.canInsert && table.columns.some((c) => c.insertable),
      updatable: table.canUpdate && table.columns.some((c) => c.updatable),
      deletable: table.canDelete,
      insertInput: () => input('Insert', (c) => c.insertable),
      updateInput: () => input('Update', (c) => c.updatable),
      response,
    }
  }
}

/**
 * The schemas introspection answers from when only some served schemas
 * switch it on: their part alone, as pg_graphql shows it (other schemas'
 * types are neither listed nor found by `__type`).
 */
const introspectedParts = new WeakMap<GraphQLSchema, GraphQLSchema>()

export function buildSchema(model: Model): GraphQLSchema {
  const schema = schemaOf(model, () => true)
  const shown = model.introspectedSchemas
  const outside = (o: { schema: string }) => !shown.has(o.schema)
  if (model.introspection && [model.tables, model.enums, model.queryFunctions, model.mutationFunctions].some((all) => all.some(outside))) {
    introspectedParts.set(schema, schemaOf(model, (name) => shown.has(name)))
  }
  return schema
}

/** The schema `__schema` and `__type` answer from. */
export function introspectedSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  return introspectedParts.get(schema) ?? schema
}

/** The graphql-js schema of the model's objects in the schemas `shows` accepts. */
function schemaOf(model: Model, shows: (schema: string) => boolean): GraphQLSchema {
  const b = new Builder(model, shows)
  const query: GraphQLFieldConfigMap<unknown, unknown> = {
    node: {
      type: NodeInterface,
      args: { nodeId: { type: nn(GraphQLID), description: "The record's `ID`" } },
      description: 'Retrieve a record by its `ID`',
    },
  }
  const mutation: GraphQLFieldConfigMap<unknown, unknown> = {}
  for (const table of model.tables) {
    if (!b.showsTable(table)) continue
    // `root: false` drops only these two: the type stays (relations, node, mutations reach it).
    if (table.root) query[`${table.fieldBase}Collection`] = {
      type: nn(b.connection(table)),
      args: b.connectionArgs(table),
      description: `A pagable collection of type \`${table.typeName}\``,
    }
    if (table.root && table.primaryKey.every((c) => isByPkArgument(table, c))) {
      query[`${table.fieldBase}ByPk`] = {
        type: b.node(table),
        args: Object.fromEntries(table.primaryKey.map((c) => [c.field, { type: nn(b.inputType(c.type)) }])),
        description: `Retrieve a record of type \`${table.typeName}\` by its primary key`,
      }
    }
    const m = b.mutationTypes(table)
    if (m.insertable) {
      mutation[`insertInto${table.typeName}Collection`] = {
        type: m.response('Insert'),
        args: { objects: { type: nn(list(nn(m.insertInput()))) }, ...b.onConflictArgs(table) },
        description: `Adds one or more \`${table.typeName}\` records to the collection`,
      }
    }
    if (m.updatable) {
      mutation[`update${table.typeName}Collection`] = {
        type: nn(m.response('Update')),
        args: {
          set: { type: nn(m.updateInput()), description: 'Fields that are set will be updated for all records matching the `filter`' },
          filter: { type: b.filter(table), description: "Restricts the mutation's impact to records matching the criteria" },
          atMost: { type: nn(GraphQLInt), defaultValue: 1, description: AT_MOST },
        },
        description: `Updates zero or more records in the \`${table.typeName}\` collection`,
      }
    }
    if (m.deletable) {
      mutation[`deleteFrom${table.typeName}Collection`] = {
        type: nn(m.response('Delete')),
        args: {
          filter: { type: b.filter(table), description: "Restricts the mutation's impact to records matching the criteria" },
          atMost: { type: nn(GraphQLInt), defaultValue: 1, description: AT_MOST },
        },
        description: `Deletes zero or more records from the \`${table.typeName}\` collection`,
      }
    }
  }
  const shown = (f: FunctionModel) => b.shows(f.schema) && b.showsResult(f)
  for (const f of model.queryFunctions) if (!(f.field in query) && shown(f)) query[f.field] = b.functionField(f, true)
  for (const f of model.mutationFunctions) if (!(f.field in mutation) && shown(f)) mutation[f.field] = b.functionField(f, true)

  const sorted = (fields: GraphQLFieldConfigMap<unknown, unknown>) =>
    Object.fromEntries(Object.entries(fields).sort(([a], [b2]) => byCodePoint(a, b2)))
  const types = [
    ...[...SCALAR_FILTERS.values()].filter((f) => !OPTIONAL_SCALARS.has(f.name.slice(0, -'Filter'.length) as ScalarName)), ...b.enums.values(), ...b.enumFilters.values(), FilterIs, OrderByDirection, PageInfo,
    BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar,
    ...model.tables.filter((t) => b.showsTable(t)).map((t) => b.node(t)),
  ]
  return schemaListedByName({
    query: new GraphQLObjectType({ name: 'Query', description: 'The root type for querying data', fields: sorted(query) }),
    mutation: Object.keys(mutation).length > 0
      ? new GraphQLObjectType({ name: 'Mutation', description: 'The root type for creating and mutating data', fields: sorted(mutation) })
      : undefined,
    types,
    // The two pg_graphql knows (and lists).
    directives: [GraphQLIncludeDirective, GraphQLSkipDirective],
  })
}

/** A column distinctOn can name: orderable (DISTINCT ON sorts) and a name graphql-js accepts as an enum value. */
const isDistinctOnColumn = (c: TableModel['columns'][number]) => isOrderable(c.type) && !['true', 'false', 'null'].includes(c.field)

const AT_MOST = 'The maximum number of records in the collection permitted to be affected'

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** A `<table>ByPk` argument: a primary key column of a type pg_graphql takes there, that is a field. */
function isByPkArgument(table: TableModel, c: TableModel['columns'][number]): boolean {
  return !c.type.list && ['Int', 'BigInt', 'String', 'UUID'].includes(c.type.scalar ?? '') && table.columnByField.get(c.field) === c
}

/**
 * The schema with its types in name order, as pg_graphql lists `__schema {
 * types }` (and `possibleTypes`). graphql-js keeps the order it meets types
 * in, so the draft's complete list is given back to it sorted. Once per
 * schema build, never per request.
 */
function schemaListedByName(config: GraphQLSchemaConfig): GraphQLSchema {
  const draft = new GraphQLSchema(config)
  const types: GraphQLNamedType[] = Object.values(draft.getTypeMap()).sort((a, b) => byCodePoint(a.name, b.name))
  return new GraphQLSchema({ ...config, types })
}

/** pg_graphql's descriptions of the scalars graphql-js defines itself. */
const BUILT_IN_SCALAR_DESCRIPTIONS: ReadonlyMap<GraphQLScalarType<unknown, unknown>, string> = new Map<GraphQLScalarType<unknown, unknown>, string>([
  [GraphQLID, 'A globally unique identifier for a given record'],
  [GraphQLInt, 'A scalar integer up to 32 bits'],
  [GraphQLFloat, 'A scalar floating point value up to 32 bits'],
  [GraphQLString, 'A string'],
  [GraphQLBoolean, 'A value that is true or false'],
])

/**
 * Runs `introspect` (a synchronous graphql-js execution) with pg_graphql's
 * descriptions on ID, Int, Float, String and Boolean. graphql-js's own
 * introspection types refer to its single instances of String and Boolean, so
 * a schema cannot hold other scalars of those names; the instances are lent
 * pg_graphql's descriptions for the run and given theirs back, so no other
 * schema in the process ever sees them.
 */
export function withPgGraphqlScalarDescriptions<T>(introspect: () => T): T {
  const own = new Map([...BUILT_IN_SCALAR_DESCRIPTIONS.keys()].map((t) => [t, t.description]))
  for (const [t, description] of BUILT_IN_SCALAR_DESCRIPTIONS) t.description = description
  try {
    return introspect()
  } finally {
    for (const [t, description] of own) t.description = description
  }
}
