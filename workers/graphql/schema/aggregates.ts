// `aggregate` (a table's comment turns it on): `<Type>Aggregate` and its
// sum, avg, min and max result types.
import { type GraphQLFieldConfigMap, GraphQLInt, GraphQLObjectType, type GraphQLScalarType } from 'graphql'
import type { TableModel } from '../model/index.ts'
import { BigFloatScalar, BigIntScalar } from '../scalars.ts'
import { isComparable, isNumeric } from '../types.ts'
import { nn, SCALARS } from './common.ts'
import type { SchemaBuild } from './context.ts'

export function aggregateType(b: SchemaBuild, table: TableModel): GraphQLObjectType {
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
