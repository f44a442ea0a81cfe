// pg_graphql's descriptions of the built-in scalars, lent to graphql-js's
// single instances for the length of an introspection.
import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, type GraphQLScalarType, GraphQLString } from 'graphql'

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
