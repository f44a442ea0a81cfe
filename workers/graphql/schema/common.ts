// The fixed parts of every schema pg_graphql generates: scalars by name, the
// `FilterIs` and `OrderByDirection` enums, `PageInfo`, the `Node` interface
// and a collection's paging arguments, made once per process.
import {
  GraphQLBoolean, GraphQLEnumType, type GraphQLFieldConfigArgumentMap, GraphQLFloat, GraphQLID, GraphQLInputObjectType, type GraphQLInputType, GraphQLInt, GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType, type GraphQLOutputType, type GraphQLScalarType, GraphQLString,
} from 'graphql'
import {
  BigFloatScalar, BigIntScalar, CursorScalar, DateScalar, DatetimeScalar, GeoJSONScalar, JSONScalar, OpaqueScalar, TimeScalar, UUIDScalar,
} from '../scalars.ts'
import type { ScalarName } from '../types.ts'

export const SCALARS: Record<ScalarName, GraphQLScalarType> = {
  ID: GraphQLID, Int: GraphQLInt, Float: GraphQLFloat, String: GraphQLString, Boolean: GraphQLBoolean,
  BigInt: BigIntScalar, BigFloat: BigFloatScalar, Date: DateScalar, Time: TimeScalar, Datetime: DatetimeScalar,
  UUID: UUIDScalar, JSON: JSONScalar, Cursor: CursorScalar, Opaque: OpaqueScalar, GeoJSON: GeoJSONScalar,
}

export const nn = <T extends GraphQLOutputType | GraphQLInputType>(t: T) => new GraphQLNonNull(t)
export const list = <T extends GraphQLOutputType | GraphQLInputType>(t: T) => new GraphQLList(t)

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
export const GeoJSONDWithinInput = new GraphQLInputObjectType({
  name: 'GeoJSONDWithinInput',
  description: 'A geometry and a distance from it: units of the SRID for geometry, metres for geography',
  fields: { geometry: { type: new GraphQLNonNull(GeoJSONScalar) }, distance: { type: new GraphQLNonNull(GraphQLFloat) } },
})

export const PageInfo = new GraphQLObjectType({
  name: 'PageInfo',
  fields: {
    endCursor: { type: GraphQLString },
    hasNextPage: { type: nn(GraphQLBoolean) },
    hasPreviousPage: { type: nn(GraphQLBoolean) },
    startCursor: { type: GraphQLString },
  },
})

export const NodeInterface = new GraphQLInterfaceType({
  name: 'Node',
  fields: { nodeId: { type: nn(GraphQLID), description: 'Retrieves a record by `ID`' } },
})

export const PAGING_ARGS = (): GraphQLFieldConfigArgumentMap => ({
  first: { type: GraphQLInt, description: 'Query the first `n` records in the collection' },
  last: { type: GraphQLInt, description: 'Query the last `n` records in the collection' },
  before: { type: CursorScalar, description: 'Query values in the collection before the provided cursor' },
  after: { type: CursorScalar, description: 'Query values in the collection after the provided cursor' },
  offset: { type: GraphQLInt, description: 'Skip n values from the after cursor. Alternative to cursor pagination. Backward pagination not supported.' },
})


export const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
