// pg_graphql's descriptions of the built-in scalars. graphql-js's own
// introspection types (which validation reads) refer to its single instances
// of String and Boolean, so a schema cannot hold other scalars of those
// names; introspection (introspection/resolve.ts) describes them with these
// instead, and graphql-js's instances keep their own descriptions.
import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, type GraphQLNamedType, GraphQLString } from 'graphql'

/** pg_graphql's descriptions of the scalars graphql-js defines itself. */
const BUILT_IN_SCALAR_DESCRIPTIONS: ReadonlyMap<GraphQLNamedType, string> = new Map<GraphQLNamedType, string>([
  [GraphQLID, 'A globally unique identifier for a given record'],
  [GraphQLInt, 'A scalar integer up to 32 bits'],
  [GraphQLFloat, 'A scalar floating point value up to 32 bits'],
  [GraphQLString, 'A string'],
  [GraphQLBoolean, 'A value that is true or false'],
])

/** A named type's description as pg_graphql gives it. */
export function pgGraphqlDescriptionOf(type: GraphQLNamedType): string | null {
  return BUILT_IN_SCALAR_DESCRIPTIONS.get(type) ?? type.description ?? null
}
