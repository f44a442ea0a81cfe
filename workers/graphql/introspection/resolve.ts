// Answers `__schema` and `__type(name:)` as pg_graphql 1.6 answers them,
// from the graphql-js schema of the caller's role, with pg_graphql's
// introspection types (meta-types.ts) in place of graphql-js's: its field
// order, descriptions and directives, `__schema { description }`, and `[]`
// rather than null for `enumValues` and `interfaces` where they do not apply
// (pg_graphql answers so, and GraphiQL relies on it).
//
// Two answers follow the GraphQL specification where pg_graphql departs
// from it: `__typename` inside an introspection object is that object's
// type (`__Type`, `__Field`, ...; pg_graphql gives the described type's or
// field's name), and `specifiedByURL` is null (pg_graphql lists the field but
// fails when it is selected). graphql-js has already validated the document
// against its own introspection types, which pg_graphql's mirror but for
// `isOneOf`: selecting that fails here, in pg_graphql's words.
import {
  astFromValue, getArgumentValues, isEnumType, isInputObjectType, isInterfaceType, isListType, isNonNullType, isObjectType,
  isScalarType, isUnionType, print, TypeMetaFieldDef,
  type FieldNode, type FragmentDefinitionNode, type GraphQLArgument, type GraphQLDirective, type GraphQLEnumValue, type GraphQLField,
  type GraphQLInputField, type GraphQLNamedType, type GraphQLSchema, type GraphQLType, type SelectionSetNode,
} from 'graphql'
import { collectFieldNodes } from '../collect-fields.ts'
import { graphqlErrors } from '../errors.ts'
import { pgGraphqlDescriptionOf } from '../schema/scalar-descriptions.ts'
import { DIRECTIVES, META_TYPES, SCHEMA_DESCRIPTION } from './meta-types.ts'

/** What one introspection field is answered from: the schema shown, the document's fragments, the coerced variables. */
export interface IntrospectionScope {
  schema: GraphQLSchema
  fragments: ReadonlyMap<string, FragmentDefinitionNode>
  variables: Record<string, unknown>
}

/** The answer of a root `__schema` or `__type` field (its merged nodes). */
export function introspectionAnswer(scope: IntrospectionScope, name: '__schema' | '__type', nodes: readonly FieldNode[]): unknown {
  const sets = nodes.map((n) => n.selectionSet)
  if (name === '__schema') return objectOf(scope, '__Schema', sets, scope.schema, SCHEMA_FIELDS)
  const typeName = getArgumentValues(TypeMetaFieldDef, nodes[0]!, scope.variables).name as string
  const type = namedType(scope.schema, typeName)
  return type ? objectOf(scope, '__Type', sets, type, TYPE_FIELDS) : null
}

type Sets = readonly (SelectionSetNode | undefined)[]
type Resolver<T> = (scope: IntrospectionScope, value: T, sets: Sets) => unknown
type Resolvers<T> = Readonly<Record<string, Resolver<T>>>

/**
 * One introspection object: its selected fields by response key, in the
 * document's order, fragments spread (a fragment on another type is none of
 * its fields) and @skip/@include applied.
 */
function objectOf<T>(scope: IntrospectionScope, typeName: string, sets: Sets, value: T, fields: Resolvers<T>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const collected = collectFieldNodes(sets, typeName, scope.fragments, scope.variables, (condition, current) =>
    condition === undefined || condition === current ? current : undefined,
  )
  for (const [key, { nodes }] of collected) {
    const name = nodes[0]!.name.value
    if (name === '__typename') {
      out[key] = typeName
      continue
    }
    const resolve = fields[name]
    if (!resolve) throw graphqlErrors.unknownIntrospectionField(typeName, name)
    out[key] = resolve(scope, value, nodes.map((n) => n.selectionSet))
  }
  return out
}

/** A type by name, pg_graphql's introspection types standing in for graphql-js's. */
function namedType(schema: GraphQLSchema, name: string): GraphQLNamedType | undefined {
  return META_TYPES.get(name) ?? schema.getType(name) ?? undefined
}

const typeOf = (scope: IntrospectionScope, type: GraphQLType, sets: Sets) => objectOf(scope, '__Type', sets, type, TYPE_FIELDS)
const typesOf = (scope: IntrospectionScope, types: readonly GraphQLType[], sets: Sets) => types.map((t) => typeOf(scope, t, sets))
const nullable = <T>(value: T | null | undefined): T | null => value ?? null

const SCHEMA_FIELDS: Resolvers<GraphQLSchema> = {
  description: () => SCHEMA_DESCRIPTION,
  // The schema lists its types by name (schema/index.ts), graphql-js's introspection types among them.
  types: (scope, schema, sets) => typesOf(scope, Object.values(schema.getTypeMap()).map((t) => META_TYPES.get(t.name) ?? t), sets),
  queryType: (scope, schema, sets) => typeOf(scope, schema.getQueryType()!, sets),
  mutationType: (scope, schema, sets) => {
    const mutation = schema.getMutationType()
    return mutation ? typeOf(scope, mutation, sets) : null
  },
  subscriptionType: () => null,
  directives: (scope, _schema, sets) => DIRECTIVES.map((d) => objectOf(scope, '__Directive', sets, d, DIRECTIVE_FIELDS)),
}

function kindOf(type: GraphQLType): string {
  if (isScalarType(type)) return 'SCALAR'
  if (isObjectType(type)) return 'OBJECT'
  if (isInterfaceType(type)) return 'INTERFACE'
  if (isUnionType(type)) return 'UNION'
  if (isEnumType(type)) return 'ENUM'
  if (isInputObjectType(type)) return 'INPUT_OBJECT'
  if (isListType(type)) return 'LIST'
  return 'NON_NULL'
}

const isWrapper = (type: GraphQLType) => isListType(type) || isNonNullType(type)

const TYPE_FIELDS: Resolvers<GraphQLType> = {
  kind: (_scope, type) => kindOf(type),
  name: (_scope, type) => (isWrapper(type) ? null : (type as GraphQLNamedType).name),
  description: (_scope, type) => (isWrapper(type) ? null : pgGraphqlDescriptionOf(type as GraphQLNamedType)),
  specifiedByURL: () => null,
  fields: (scope, type, sets) =>
    isObjectType(type) || isInterfaceType(type)
      ? Object.values(type.getFields()).map((f) => objectOf(scope, '__Field', sets, f, FIELD_FIELDS))
      : null,
  interfaces: (scope, type, sets) => (isObjectType(type) || isInterfaceType(type) ? typesOf(scope, type.getInterfaces(), sets) : []),
  possibleTypes: (scope, type, sets) => (isInterfaceType(type) || isUnionType(type) ? typesOf(scope, scope.schema.getPossibleTypes(type), sets) : null),
  enumValues: (scope, type, sets) => (isEnumType(type) ? type.getValues().map((v) => objectOf(scope, '__EnumValue', sets, v, ENUM_VALUE_FIELDS)) : []),
  inputFields: (scope, type, sets) =>
    isInputObjectType(type) ? Object.values(type.getFields()).map((f) => objectOf(scope, '__InputValue', sets, f, INPUT_VALUE_FIELDS)) : null,
  ofType: (scope, type, sets) => (isListType(type) || isNonNullType(type) ? typeOf(scope, type.ofType, sets) : null),
}

const FIELD_FIELDS: Resolvers<GraphQLField<unknown, unknown>> = {
  name: (_scope, f) => f.name,
  description: (_scope, f) => nullable(f.description),
  args: (scope, f, sets) => f.args.map((a) => objectOf(scope, '__InputValue', sets, a, INPUT_VALUE_FIELDS)),
  type: (scope, f, sets) => typeOf(scope, f.type, sets),
  isDeprecated: (_scope, f) => f.deprecationReason != null,
  deprecationReason: (_scope, f) => nullable(f.deprecationReason),
}

const INPUT_VALUE_FIELDS: Resolvers<GraphQLArgument | GraphQLInputField> = {
  name: (_scope, v) => v.name,
  description: (_scope, v) => nullable(v.description),
  type: (scope, v, sets) => typeOf(scope, v.type, sets),
  // As graphql-js writes it: the default as a GraphQL literal.
  defaultValue: (_scope, v) => {
    const ast = v.defaultValue === undefined ? undefined : astFromValue(v.defaultValue, v.type)
    return ast ? print(ast) : null
  },
  isDeprecated: (_scope, v) => v.deprecationReason != null,
  deprecationReason: (_scope, v) => nullable(v.deprecationReason),
}

const ENUM_VALUE_FIELDS: Resolvers<GraphQLEnumValue> = {
  name: (_scope, v) => v.name,
  description: (_scope, v) => nullable(v.description),
  isDeprecated: (_scope, v) => v.deprecationReason != null,
  deprecationReason: (_scope, v) => nullable(v.deprecationReason),
}

const DIRECTIVE_FIELDS: Resolvers<GraphQLDirective> = {
  name: (_scope, d) => d.name,
  description: (_scope, d) => nullable(d.description),
  locations: (_scope, d) => [...d.locations],
  args: (scope, d, sets) => d.args.map((a) => objectOf(scope, '__InputValue', sets, a, INPUT_VALUE_FIELDS)),
  isRepeatable: (_scope, d) => d.isRepeatable,
}
