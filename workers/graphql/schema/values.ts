// The types of values: scalars, enums (with their filters) and, under
// `composites`, a composite's object and input types.
import { GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLObjectType, type GraphQLScalarType } from 'graphql'
import type { CompositeModel, EnumModel, ValueType } from '../types.ts'
import { list, SCALARS } from './common.ts'
import { madeOnce, type SchemaBuild } from './context.ts'
import { filterInput } from './scalar-filters.ts'

export function enumType(b: SchemaBuild, e: EnumModel): GraphQLEnumType {
  return madeOnce(b.enums, e.name, () => {
    const t = new GraphQLEnumType({
      name: e.name,
      description: e.description,
      // A shadowed label's name is the mapped label's value (model/enums.ts enumsOf).
      values: Object.fromEntries(e.values.filter((v) => !v.shadowed).map((v) => [v.name, { value: v.db }])),
    })
    b.enumFilters.set(e.name, filterInput(`${e.name}Filter`, e.name, 'Enum', t))
    return t
  })
}

/** The type of a value read (a column, a function's result): a composite's is its object type. */
export function valueType(b: SchemaBuild, v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLObjectType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
  return v.composite ? compositeObject(b, v.composite) : plainType(b, v)
}

/** The type of a value given (an argument, a mutation's input): a composite's is its `<name>Input`. */
export function inputType(b: SchemaBuild, v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLInputObjectType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
  return v.composite ? compositeInput(b, v.composite) : plainType(b, v)
}

export function plainType(b: SchemaBuild, v: ValueType): GraphQLScalarType | GraphQLEnumType | GraphQLList<GraphQLScalarType | GraphQLEnumType> {
  const base = v.enum ? enumType(b, v.enum) : SCALARS[v.scalar!]
  return v.list ? list(base) : base
}

export function compositeObject(b: SchemaBuild, c: CompositeModel): GraphQLObjectType {
  return madeOnce(b.compositeObjects, c.name, () =>
    new GraphQLObjectType({
      name: c.name,
      description: c.description,
      fields: () => Object.fromEntries(c.attributes.map((a) => [a.field, { type: valueType(b, a.type), description: a.description }])),
    }),
  )
}

export function compositeInput(b: SchemaBuild, c: CompositeModel): GraphQLInputObjectType {
  return madeOnce(b.compositeInputs, c.name, () =>
    new GraphQLInputObjectType({
      name: `${c.name}Input`,
      description: `A value of type "${c.name}": attributes left out are null`,
      fields: () => Object.fromEntries(c.attributes.map((a) => [a.field, { type: inputType(b, a.type), description: a.description }])),
    }),
  )
}
