// Filters: a table's `<Type>Filter` (columns, nodeId, and/or/not, filterable
// computed fields, `relationFilters`' relations), `<Type>ListRelationFilter`,
// and the filter of any value type.
import { type GraphQLInputFieldConfigMap, GraphQLInputObjectType } from 'graphql'
import { filterTypeOf } from '../filter-operators.ts'
import type { TableModel } from '../model/index.ts'
import type { CompositeModel, ValueType } from '../types.ts'
import { list, nn } from './common.ts'
import { madeOnce, type SchemaBuild } from './context.ts'
import { filterInput, SCALAR_FILTERS } from './scalar-filters.ts'
import { enumType } from './values.ts'

/**
 * `<Composite>Filter`: a filter per filterable attribute; null when no
 * attribute is (graphql-js refuses an input type without fields). Enum
 * arrays inside a composite are not filterable: `enumArrays` is a table's.
 */
export function compositeFilter(b: SchemaBuild, c: CompositeModel): GraphQLInputObjectType | null {
  return madeOnce(b.compositeFilters, c.name, () => {
    const fields: GraphQLInputFieldConfigMap = {}
    for (const a of c.attributes) {
      const ft = filterOf(b, a.type, false)
      if (ft) fields[a.field] = { type: ft, description: a.description }
    }
    return Object.keys(fields).length === 0
      ? null
      : new GraphQLInputObjectType({ name: `${c.name}Filter`, description: `Boolean expression comparing fields on type "${c.name}"`, fields })
  })
}

/** The filter input type of a value of `type`; undefined when it is not filterable. */
export function filterOf(b: SchemaBuild, type: ValueType, enumArrays: boolean): GraphQLInputObjectType | undefined {
  const name = filterTypeOf(type, enumArrays)
  if (!name) return undefined
  if (type.composite) return compositeFilter(b, type.composite) ?? undefined
  if (type.enum && type.list) {
    const item = type.enum
    return madeOnce(b.enumListFilters, name, () => filterInput(name, `${item.name}List`, 'List', enumType(b, item)))
  }
  if (type.enum) return (enumType(b, type.enum), b.enumFilters.get(type.enum.name))
  return SCALAR_FILTERS.get(name)
}

export function filterType(b: SchemaBuild, table: TableModel): GraphQLInputObjectType {
  return madeOnce(b.filters, table, () => {
    const self: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${table.typeName}Filter`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {}
        for (const c of table.columns) {
          const ft = filterOf(b, c.type, table.features.has('enumArrays'))
          if (ft) fields[c.field] = { type: ft }
        }
        fields.nodeId ??= { type: SCALAR_FILTERS.get('IDFilter')! }
        fields.and ??= { type: list(nn(self)), description: 'Returns true only if all its inner filters are true, otherwise returns false' }
        fields.or ??= { type: list(nn(self)), description: 'Returns true if at least one of its inner filters is true, otherwise returns false' }
        fields.not ??= { type: self, description: 'Negates a filter' }
        // functionShapes: a scalar computed field callable with the row alone filters as a column of its type.
        for (const f of table.computed) {
          if (!f.filterable || f.returns.kind !== 'scalar' || f.field in fields) continue
          const ft = filterOf(b, f.returns.type, table.features.has('enumArrays'))
          if (ft) fields[f.field] = { type: ft }
        }
        // After and/or/not, so a relation named like one of them never hides it (plan/filter.ts reads keys in that order).
        if (table.features.has('relationFilters')) {
          for (const r of table.relations) {
            if (!b.showsTable(r.target) || r.field in fields) continue
            fields[r.field] = { type: r.kind === 'one' ? filterType(b, r.target) : listRelationFilter(b, r.target) }
          }
        }
        return fields
      },
    })
    return self
  })
}

/** `relationFilters`' quantifiers over a collection of `table`'s rows (Prisma's `<Type>ListRelationFilter`). */
export function listRelationFilter(b: SchemaBuild, table: TableModel): GraphQLInputObjectType {
  return madeOnce(b.listRelationFilters, table, () =>
    new GraphQLInputObjectType({
      name: `${table.typeName}ListRelationFilter`,
      description: `Conditions on the related records of type "${table.typeName}"`,
      fields: () => ({
        every: { type: filterType(b, table), description: 'True when every related record matches the filter (also when there is none)' },
        none: { type: filterType(b, table), description: 'True when no related record matches the filter' },
        some: { type: filterType(b, table), description: 'True when at least one related record matches the filter' },
      }),
    }),
  )
}
