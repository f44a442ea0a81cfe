// Introspection shaped as pg_graphql 1.6 shapes it (its resolve___schema and
// issue_581_missing_desc_on_schema outputs), so GraphiQL, codegen and Apollo
// tools read the same schema from both: `__schema { description }`, the
// fields of the `__` types in its order (by name) with its descriptions, its
// directive texts, `[]` for `enumValues` and `interfaces` where they do not
// apply. Where pg_graphql departs from the GraphQL specification (`__typename`
// inside introspection, a null for a non-null variable, `specifiedByURL`), the
// specification is followed.
import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from 'graphql'
import t, { type Test } from 'tap'
import { graphqlProject } from './helpers.ts'

interface TypeRef { kind: string; name: string | null; ofType: TypeRef | null }

/** A type reference in SDL (`[__Type!]!`), to compare field types line by line. */
const sdl = (t: TypeRef): string => (t.kind === 'NON_NULL' ? `${sdl(t.ofType!)}!` : t.kind === 'LIST' ? `[${sdl(t.ofType!)}]` : t.name!)

const TYPE_REF = 'kind name ofType { kind name ofType { kind name ofType { kind name } } }'

/** pg_graphql's meta types: each field as `name: Type` (with its arguments), in its order, and the descriptions it gives. */
const META: Record<string, { description: string; fields: [string, string, string | null][] }> = {
  __Schema: {
    description: 'A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations.',
    fields: [
      ['description', 'String', null],
      ['directives(includeDeprecated: Boolean = false)', '[__Directive!]!', 'A list of all directives supported by this server.'],
      ['mutationType', '__Type', 'If this server supports mutation, the type that mutation operations will be rooted at.'],
      ['queryType', '__Type!', 'The type that query operations will be rooted at.'],
      ['subscriptionType', '__Type', 'If this server support subscription, the type that subscription operations will be rooted at.'],
      ['types', '[__Type!]!', 'A list of all types supported by this server.'],
    ],
  },
  __Type: {
    description: 'The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\\n\\nDepending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types ',
    fields: [
      ['description', 'String', null],
      ['enumValues(includeDeprecated: Boolean = false)', '[__EnumValue!]', null],
      ['fields(includeDeprecated: Boolean = false)', '[__Field!]', null],
      ['inputFields(includeDeprecated: Boolean = false)', '[__InputValue!]', null],
      ['interfaces', '[__Type!]', null],
      ['kind', '__TypeKind!', null],
      ['name', 'String', null],
      ['ofType', '__Type', null],
      ['possibleTypes', '[__Type!]', null],
      ['specifiedByURL', 'String', null],
    ],
  },
  __Field: {
    description: 'Object and Interface types are described by a list of Fields, each of which has a name, potentially a list of arguments, and a return type.',
    fields: [
      ['args(includeDeprecated: Boolean = false)', '[__InputValue!]!', null],
      ['deprecationReason', 'String', null],
      ['description', 'String', null],
      ['isDeprecated', 'Boolean!', null],
      ['name', 'String!', null],
      ['type', '__Type!', null],
    ],
  },
  __InputValue: {
    description: 'Arguments provided to Fields or Directives and the input fields of an InputObject are represented as Input Values which describe their type and optionally a default value.',
    fields: [
      ['defaultValue', 'String', 'A GraphQL-formatted string representing the default value for this input value.'],
      ['deprecationReason', 'String', null],
      ['description', 'String', null],
      ['isDeprecated', 'Boolean!', null],
      ['name', 'String!', null],
      ['type', '__Type!', null],
    ],
  },
  __EnumValue: {
    description: 'One possible value for a given Enum. Enum values are unique values, not a placeholder for a string or numeric value. However an Enum value is returned in a JSON response as a string.',
    fields: [
      ['deprecationReason', 'String', null],
      ['description', 'String', null],
      ['isDeprecated', 'Boolean!', null],
      ['name', 'String!', null],
    ],
  },
  __Directive: {
    description: 'A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\\n\\nIn some cases, you need to provide options to alter GraphQL execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor.',
    fields: [
      ['args(includeDeprecated: Boolean = false)', '[__InputValue!]!', null],
      ['description', 'String', null],
      ['isRepeatable', 'Boolean!', null],
      ['locations', '[__DirectiveLocation!]!', null],
      ['name', 'String!', null],
    ],
  },
}

const LOCATIONS: [string, string][] = [
  ['QUERY', 'a query operation'], ['MUTATION', 'a mutation operation'], ['SUBSCRIPTION', 'a subscription operation'], ['FIELD', 'a field'],
  ['FRAGMENT_DEFINITION', 'a fragment definition'], ['FRAGMENT_SPREAD', 'a fragment spread'], ['INLINE_FRAGMENT', 'an inline fragment'],
  ['VARIABLE_DEFINITION', 'a variable definition'], ['SCHEMA', 'a schema definition'], ['SCALAR', 'a scalar definition'],
  ['OBJECT', 'an object type definition'], ['FIELD_DEFINITION', 'a field definition'], ['ARGUMENT_DEFINITION', 'an argument definition'],
  ['INTERFACE', 'an interface definition'], ['UNION', 'a union definition'], ['ENUM', 'an enum definition'], ['ENUM_VALUE', 'an enum value definition'],
  ['INPUT_OBJECT', 'an input object type definition'], ['INPUT_FIELD_DEFINITION', 'an input object field definition'],
]

t.test('introspection shaped as pg_graphql shapes it', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
    create type mood as enum ('calm', 'busy');
    create table account (id serial primary key, email text not null, mood mood);
  `)
  /** The answer's data, asserting (on the running test `t`) that it has no errors. */
  const ok = async (t: Test, query: string, variables?: Record<string, unknown>) => {
    const answer = await p.gql(query, { variables })
    t.notOk('errors' in answer, `no errors: ${JSON.stringify('errors' in answer ? answer.errors : [])}`)
    return answer.data as Record<string, any>
  }

  t.test('__schema { description }, the root types and no subscription', async (t) => {
    t.strictSame(await ok(t, '{ __schema { description queryType { name } mutationType { name } subscriptionType { name } } }'), {
      __schema: { description: 'Represents the GraphQL schema of the database', queryType: { name: 'Query' }, mutationType: { name: 'Mutation' }, subscriptionType: null },
    })
  })

  t.test('the fields of each __ type in pg_graphql\'s order, with its types and descriptions', async (t) => {
    for (const [name, expected] of Object.entries(META)) {
      const data = await ok(t, `{ __type(name: "${name}") { kind name description fields { name description args { name defaultValue type { ${TYPE_REF} } } type { ${TYPE_REF} } isDeprecated deprecationReason } } }`)
      const type = data.__type
      t.equal(type.kind, 'OBJECT', name)
      t.equal(type.description, expected.description, `${name}'s description`)
      const fields = (type.fields as { name: string; description: string | null; args: { name: string; defaultValue: string | null; type: TypeRef }[]; type: TypeRef; isDeprecated: boolean; deprecationReason: null }[])
        .map((f) => {
          const args = f.args.map((a) => `${a.name}: ${sdl(a.type)}${a.defaultValue === null ? '' : ` = ${a.defaultValue}`}`)
          t.equal(f.isDeprecated, false)
          t.equal(f.deprecationReason, null)
          return [`${f.name}${args.length > 0 ? `(${args.join(', ')})` : ''}`, sdl(f.type), f.description]
        })
      t.strictSame(fields, expected.fields, `${name}'s fields`)
    }
  })

  t.test('__TypeKind and __DirectiveLocation: values in pg_graphql\'s order, its descriptions', async (t) => {
    const data = await ok(t, `{
      kind: __type(name: "__TypeKind") { kind description enumValues { name description } }
      location: __type(name: "__DirectiveLocation") { kind description enumValues { name description } }
    }`)
    t.strictSame(data.kind, {
      kind: 'ENUM',
      description: 'An enum describing what kind of type a given `__Type` is.',
      enumValues: ['SCALAR', 'OBJECT', 'INTERFACE', 'UNION', 'ENUM', 'INPUT_OBJECT', 'LIST', 'NON_NULL'].map((name) => ({ name, description: null })),
    })
    t.strictSame(data.location, {
      kind: 'ENUM',
      description: 'A Directive can be adjacent to many parts of the GraphQL language, a __DirectiveLocation describes one such possible adjacencies.',
      enumValues: LOCATIONS.map(([name, where]) => ({ name, description: `Location adjacent to ${where}.` })),
    })
  })

  t.test('the directives pg_graphql declares, with its texts', async (t) => {
    const arg = (description: string) => ({ name: 'if', description, type: { kind: 'NON_NULL', name: null, ofType: { kind: 'SCALAR', name: 'Boolean' } }, defaultValue: null })
    t.strictSame(await ok(t, '{ __schema { directives { name description locations isRepeatable args { name description type { kind name ofType { kind name } } defaultValue } } } }'), {
      __schema: {
        directives: [
          { name: 'include', description: 'This field or fragment will be included only when the `if` argument is true.', locations: ['FIELD', 'FRAGMENT_SPREAD', 'INLINE_FRAGMENT'], isRepeatable: false, args: [arg('Included when true')] },
          { name: 'skip', description: 'This field or fragment will be skipped when the `if` argument is true.', locations: ['FIELD', 'FRAGMENT_SPREAD', 'INLINE_FRAGMENT'], isRepeatable: false, args: [arg('Skipped when true')] },
        ],
      },
    })
  })

  t.test('[] rather than null for enumValues and interfaces that do not apply; null for the other lists', async (t) => {
    const q = (name: string) => `${name}: __type(name: "${name}") { kind fields { name } inputFields { name } interfaces { name } enumValues { name } possibleTypes { name } }`
    t.strictSame(await ok(t, `{ ${['String', 'AccountFilter', 'Account', 'Node', 'Mood', 'OrderByDirection'].map(q).join(' ')} }`), {
      String: { kind: 'SCALAR', fields: null, inputFields: null, interfaces: [], enumValues: [], possibleTypes: null },
      AccountFilter: {
        kind: 'INPUT_OBJECT', fields: null, inputFields: ['id', 'email', 'mood', 'nodeId', 'and', 'or', 'not'].map((name) => ({ name })),
        interfaces: [], enumValues: [], possibleTypes: null,
      },
      Account: { kind: 'OBJECT', fields: ['nodeId', 'id', 'email', 'mood'].map((name) => ({ name })), inputFields: null, interfaces: [{ name: 'Node' }], enumValues: [], possibleTypes: null },
      Node: { kind: 'INTERFACE', fields: [{ name: 'nodeId' }], inputFields: null, interfaces: [], enumValues: [], possibleTypes: [{ name: 'Account' }] },
      Mood: { kind: 'ENUM', fields: null, inputFields: null, interfaces: [], enumValues: [{ name: 'calm' }, { name: 'busy' }], possibleTypes: null },
      OrderByDirection: {
        kind: 'ENUM', fields: null, inputFields: null, interfaces: [],
        enumValues: ['AscNullsFirst', 'AscNullsLast', 'DescNullsFirst', 'DescNullsLast'].map((name) => ({ name })), possibleTypes: null,
      },
    })
    // The same in __schema's list, wrapped types included.
    const data = await ok(t, '{ __schema { types { name interfaces { name } enumValues { name } } } }')
    for (const type of data.__schema.types as { name: string; interfaces: unknown; enumValues: unknown }[]) {
      t.ok(Array.isArray(type.interfaces) && Array.isArray(type.enumValues), type.name)
    }
  })

  t.test('__schema lists pg_graphql\'s __ types, not graphql-js\'s', async (t) => {
    const data = await ok(t, '{ __schema { types { name description fields { name } } } }')
    const types = new Map((data.__schema.types as { name: string; description: string; fields: { name: string }[] | null }[]).map((x) => [x.name, x]))
    for (const [name, expected] of Object.entries(META)) {
      t.equal(types.get(name)!.description, expected.description, name)
      t.strictSame(types.get(name)!.fields!.map((f) => f.name), expected.fields.map(([f]) => f.replace(/\(.*/, '')), name)
    }
    t.equal(types.get('String')!.description, 'A string')
  })

  t.test('fragments, aliases, directives and variables inside introspection', async (t) => {
    t.strictSame(await ok(t, `query($name: String!, $no: Boolean!) {
      t: __type(name: $name) { ...Named kind @skip(if: $no) ... on __Type { description @include(if: $no) } }
    }
    fragment Named on __Type { n: name }`, { name: 'Account', no: true }), { t: { n: 'Account', description: null } })
  })

  t.test('the specification over pg_graphql: __typename is the introspection type', async (t) => {
    // pg_graphql answers the described type's name (`Account`), a field's or an input value's name.
    t.strictSame(await ok(t, `{
      __schema { __typename queryType { __typename } directives { __typename } }
      __type(name: "Account") { __typename fields { __typename args { __typename } } enumValues { __typename } }
      mood: __type(name: "Mood") { enumValues { __typename } }
    }`), {
      __schema: { __typename: '__Schema', queryType: { __typename: '__Type' }, directives: [{ __typename: '__Directive' }, { __typename: '__Directive' }] },
      __type: { __typename: '__Type', fields: Array(4).fill({ __typename: '__Field', args: [] }), enumValues: [] },
      mood: { enumValues: [{ __typename: '__EnumValue' }, { __typename: '__EnumValue' }] },
    })
  })

  t.test('the specification over pg_graphql: specifiedByURL is null (pg_graphql fails when it is selected)', async (t) => {
    t.strictSame(await ok(t, '{ __type(name: "UUID") { name specifiedByURL } }'), { __type: { name: 'UUID', specifiedByURL: null } })
  })

  t.test('the specification over pg_graphql: a null for a non-null variable is refused', async (t) => {
    t.strictSame(await p.gql('query($name: String!) { __type(name: $name) { name } }', { variables: { name: null } }), {
      data: null,
      errors: [{ message: 'Variable "$name" of non-null type "String!" must not be null.' }],
    })
    t.strictSame(await p.gql('query($id: Int!) { accountByPk(id: $id) { id } }', { variables: { id: null } }), {
      data: null,
      errors: [{ message: 'Variable "$id" of non-null type "Int!" must not be null.' }],
    })
  })

  t.test('a field graphql-js knows and pg_graphql does not: pg_graphql\'s error', async (t) => {
    t.strictSame(await p.gql('{ __type(name: "AccountFilter") { isOneOf } }'), { data: null, errors: [{ message: 'unknown field on __Type: isOneOf' }] })
  })

  t.test('the full introspection query of GraphiQL and codegen builds a client schema', async (t) => {
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true })
    const data = (await ok(t, query)) as unknown as IntrospectionQuery
    const schema = buildClientSchema(data)
    t.equal(schema.description, 'Represents the GraphQL schema of the database')
    t.match(printSchema(schema), /type Account implements Node \{/)
    t.strictSame(schema.getDirectives().map((d) => d.name), ['include', 'skip'])
  })
})
