// The introspection types and directives as pg_graphql 1.6 declares them
// (its src/graphql.rs, as its resolve___schema and issue_581 outputs show
// them): each type's fields sorted by name, its descriptions word for word
// (a literal `\n` where pg_graphql's Rust source escaped one twice, and
// __Type's cut short after "compose other types "), `includeDeprecated` on
// every list of fields, arguments and directives, and pg_graphql's own texts
// for @include and @skip. No `isOneOf`: pg_graphql has none.
//
// They describe; they never execute. graphql-js keeps its own introspection
// types in every schema (validation reads them); introspection/resolve.ts
// answers `__schema` and `__type` with these in their place. They are
// graphql-js objects so that the resolver reads them like any other type.
import {
  DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  type GraphQLFieldConfigArgumentMap, type GraphQLNamedType, type GraphQLOutputType,
} from 'graphql'

const nn = <T extends GraphQLOutputType>(t: T) => new GraphQLNonNull(t)
const listOf = <T extends GraphQLOutputType>(t: T) => new GraphQLList(nn(t))

/** pg_graphql's `includeDeprecated: Boolean = false` (it shows every field either way: none is deprecated). */
const INCLUDE_DEPRECATED = (): GraphQLFieldConfigArgumentMap => ({ includeDeprecated: { type: GraphQLBoolean, defaultValue: false } })

export const TypeKindType = new GraphQLEnumType({
  name: '__TypeKind',
  description: 'An enum describing what kind of type a given `__Type` is.',
  values: Object.fromEntries(['SCALAR', 'OBJECT', 'INTERFACE', 'UNION', 'ENUM', 'INPUT_OBJECT', 'LIST', 'NON_NULL'].map((k) => [k, { value: k }])),
})

/** The locations in pg_graphql's order, each with its description. */
const LOCATIONS: [DirectiveLocation, string][] = [
  [DirectiveLocation.QUERY, 'Location adjacent to a query operation.'],
  [DirectiveLocation.MUTATION, 'Location adjacent to a mutation operation.'],
  [DirectiveLocation.SUBSCRIPTION, 'Location adjacent to a subscription operation.'],
  [DirectiveLocation.FIELD, 'Location adjacent to a field.'],
  [DirectiveLocation.FRAGMENT_DEFINITION, 'Location adjacent to a fragment definition.'],
  [DirectiveLocation.FRAGMENT_SPREAD, 'Location adjacent to a fragment spread.'],
  [DirectiveLocation.INLINE_FRAGMENT, 'Location adjacent to an inline fragment.'],
  [DirectiveLocation.VARIABLE_DEFINITION, 'Location adjacent to a variable definition.'],
  [DirectiveLocation.SCHEMA, 'Location adjacent to a schema definition.'],
  [DirectiveLocation.SCALAR, 'Location adjacent to a scalar definition.'],
  [DirectiveLocation.OBJECT, 'Location adjacent to an object type definition.'],
  [DirectiveLocation.FIELD_DEFINITION, 'Location adjacent to a field definition.'],
  [DirectiveLocation.ARGUMENT_DEFINITION, 'Location adjacent to an argument definition.'],
  [DirectiveLocation.INTERFACE, 'Location adjacent to an interface definition.'],
  [DirectiveLocation.UNION, 'Location adjacent to a union definition.'],
  [DirectiveLocation.ENUM, 'Location adjacent to an enum definition.'],
  [DirectiveLocation.ENUM_VALUE, 'Location adjacent to an enum value definition.'],
  [DirectiveLocation.INPUT_OBJECT, 'Location adjacent to an input object type definition.'],
  [DirectiveLocation.INPUT_FIELD_DEFINITION, 'Location adjacent to an input object field definition.'],
]

export const DirectiveLocationType = new GraphQLEnumType({
  name: '__DirectiveLocation',
  description: 'A Directive can be adjacent to many parts of the GraphQL language, a __DirectiveLocation describes one such possible adjacencies.',
  values: Object.fromEntries(LOCATIONS.map(([value, description]) => [value, { value, description }])),
})

export const TypeType: GraphQLObjectType = new GraphQLObjectType({
  name: '__Type',
  description:
    'The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\\n\\n' +
    'Depending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types ',
  fields: () => ({
    description: { type: GraphQLString },
    enumValues: { type: listOf(EnumValueType), args: INCLUDE_DEPRECATED() },
    fields: { type: listOf(FieldType), args: INCLUDE_DEPRECATED() },
    inputFields: { type: listOf(InputValueType), args: INCLUDE_DEPRECATED() },
    interfaces: { type: listOf(TypeType) },
    kind: { type: nn(TypeKindType) },
    name: { type: GraphQLString },
    ofType: { type: TypeType },
    possibleTypes: { type: listOf(TypeType) },
    specifiedByURL: { type: GraphQLString },
  }),
})

export const FieldType: GraphQLObjectType = new GraphQLObjectType({
  name: '__Field',
  description: 'Object and Interface types are described by a list of Fields, each of which has a name, potentially a list of arguments, and a return type.',
  fields: () => ({
    args: { type: nn(listOf(InputValueType)), args: INCLUDE_DEPRECATED() },
    deprecationReason: { type: GraphQLString },
    description: { type: GraphQLString },
    isDeprecated: { type: nn(GraphQLBoolean) },
    name: { type: nn(GraphQLString) },
    type: { type: nn(TypeType) },
  }),
})

export const InputValueType: GraphQLObjectType = new GraphQLObjectType({
  name: '__InputValue',
  description:
    'Arguments provided to Fields or Directives and the input fields of an InputObject are represented as Input Values which describe their type and optionally a default value.',
  fields: () => ({
    defaultValue: { type: GraphQLString, description: 'A GraphQL-formatted string representing the default value for this input value.' },
    deprecationReason: { type: GraphQLString },
    description: { type: GraphQLString },
    isDeprecated: { type: nn(GraphQLBoolean) },
    name: { type: nn(GraphQLString) },
    type: { type: nn(TypeType) },
  }),
})

export const EnumValueType = new GraphQLObjectType({
  name: '__EnumValue',
  description:
    'One possible value for a given Enum. Enum values are unique values, not a placeholder for a string or numeric value. However an Enum value is returned in a JSON response as a string.',
  fields: () => ({
    deprecationReason: { type: GraphQLString },
    description: { type: GraphQLString },
    isDeprecated: { type: nn(GraphQLBoolean) },
    name: { type: nn(GraphQLString) },
  }),
})

export const DirectiveType = new GraphQLObjectType({
  name: '__Directive',
  description:
    'A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\\n\\n' +
    'In some cases, you need to provide options to alter GraphQL execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor.',
  fields: () => ({
    args: { type: nn(listOf(InputValueType)), args: INCLUDE_DEPRECATED() },
    description: { type: GraphQLString },
    isRepeatable: { type: nn(GraphQLBoolean) },
    locations: { type: nn(listOf(DirectiveLocationType)) },
    name: { type: nn(GraphQLString) },
  }),
})

export const SchemaType = new GraphQLObjectType({
  name: '__Schema',
  description:
    'A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations.',
  fields: () => ({
    description: { type: GraphQLString },
    directives: { type: nn(listOf(DirectiveType)), args: INCLUDE_DEPRECATED(), description: 'A list of all directives supported by this server.' },
    mutationType: { type: TypeType, description: 'If this server supports mutation, the type that mutation operations will be rooted at.' },
    queryType: { type: nn(TypeType), description: 'The type that query operations will be rooted at.' },
    subscriptionType: { type: TypeType, description: 'If this server support subscription, the type that subscription operations will be rooted at.' },
    types: { type: nn(listOf(TypeType)), description: 'A list of all types supported by this server.' },
  }),
})

/** pg_graphql's `__schema { description }`. */
export const SCHEMA_DESCRIPTION = 'Represents the GraphQL schema of the database'

/** The meta types by name: they stand in for graphql-js's own wherever introspection meets one. */
export const META_TYPES: ReadonlyMap<string, GraphQLNamedType> = new Map<string, GraphQLNamedType>(
  [SchemaType, TypeType, TypeKindType, FieldType, InputValueType, EnumValueType, DirectiveType, DirectiveLocationType].map((t) => [t.name, t]),
)

const onFieldsAndFragments = [DirectiveLocation.FIELD, DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT]

/** The directives pg_graphql declares, in its order, with its texts (validation uses graphql-js's own, which mean the same). */
export const DIRECTIVES: readonly GraphQLDirective[] = [
  new GraphQLDirective({
    name: 'include',
    description: 'This field or fragment will be included only when the `if` argument is true.',
    locations: onFieldsAndFragments,
    args: { if: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Included when true' } },
  }),
  new GraphQLDirective({
    name: 'skip',
    description: 'This field or fragment will be skipped when the `if` argument is true.',
    locations: onFieldsAndFragments,
    args: { if: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Skipped when true' } },
  }),
]
