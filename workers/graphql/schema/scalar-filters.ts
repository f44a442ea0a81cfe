// `<Scalar>Filter` and `<Scalar>ListFilter` input types, one field per
// operator of filter-operators.ts; the scalar ones are made once per process.
import { GraphQLEnumType, type GraphQLInputFieldConfigMap, GraphQLInputObjectType, type GraphQLInputType, type GraphQLScalarType } from 'graphql'
import { FILTERED_SCALARS, type FilterFamily, LIST_FILTER_SCALARS, type OperandShape, operatorsOf } from '../filter-operators.ts'
import { FilterIs, GeoJSONDWithinInput, list, nn, SCALARS } from './common.ts'

/**
 * A `<Type>Filter` input type: one field per operator of `family`, over the
 * filtered type `t`. pg_graphql describes the type, not its operators.
 */
export function filterInput(name: string, about: string, family: FilterFamily, t: GraphQLScalarType | GraphQLEnumType): GraphQLInputObjectType {
  const operand = (shape: OperandShape): GraphQLInputType =>
    shape === 'is' ? FilterIs : shape === 'dWithin' ? GeoJSONDWithinInput : shape === 'values' || family === 'List' ? list(nn(t)) : t
  const fields: GraphQLInputFieldConfigMap = {}
  for (const op of operatorsOf(family)) fields[op.name] = { type: operand(op.operand) }
  return new GraphQLInputObjectType({ name, description: `Boolean expression comparing fields on type "${about}"`, fields })
}

export const SCALAR_FILTERS = new Map(FILTERED_SCALARS.map((s) => [`${s}Filter`, filterInput(`${s}Filter`, s, s, SCALARS[s])]))
for (const s of LIST_FILTER_SCALARS) SCALAR_FILTERS.set(`${s}ListFilter`, filterInput(`${s}ListFilter`, `${s}List`, 'List', SCALARS[s]))
