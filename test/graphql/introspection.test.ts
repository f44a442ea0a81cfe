// Introspection, when a schema comment switches it on, lists what pg_graphql
// 1.6 lists: every type sorted by name (built-in scalars, every filter type
// with the list filters, the introspection types), its descriptions word for
// word, fields in its order, relation nullability as it decides it, and the
// tables and columns whose names it keeps.
import { GraphQLString } from 'graphql'
import t from 'tap'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { resolve } from '../../workers/graphql/index.ts'
import { graphqlProject } from './helpers.ts'

const ON = `comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';`

/** The types every schema lists, whatever its tables. */
const BUILT_IN_TYPES = [
  'BigFloat', 'BigFloatFilter', 'BigFloatListFilter', 'BigInt', 'BigIntFilter', 'BigIntListFilter',
  'Boolean', 'BooleanFilter', 'BooleanListFilter', 'Cursor', 'Date', 'DateFilter', 'DateListFilter',
  'Datetime', 'DatetimeFilter', 'DatetimeListFilter', 'FilterIs', 'Float', 'FloatFilter', 'FloatListFilter',
  'ID', 'IDFilter', 'Int', 'IntFilter', 'IntListFilter', 'JSON', 'Node', 'Opaque', 'OpaqueFilter',
  'OrderByDirection', 'PageInfo', 'Query', 'String', 'StringFilter', 'StringListFilter', 'Time', 'TimeFilter',
  'TimeListFilter', 'UUID', 'UUIDFilter', 'UUIDListFilter', '__Directive', '__DirectiveLocation', '__EnumValue',
  '__Field', '__InputValue', '__Schema', '__Type', '__TypeKind',
]

const tableTypes = (base: string) => ['', 'Connection', 'DeleteResponse', 'Edge', 'Filter', 'InsertInput', 'InsertResponse', 'OrderBy', 'UpdateInput', 'UpdateResponse'].map((s) => base + s)

const named = (kind: string, name: string) => ({ kind, name, ofType: null })
const nonNull = (name: string) => ({ kind: 'NON_NULL', name: null, ofType: { name } })

const connectionArgs = [
  { name: 'first', description: 'Query the first `n` records in the collection', defaultValue: null },
  { name: 'last', description: 'Query the last `n` records in the collection', defaultValue: null },
  { name: 'before', description: 'Query values in the collection before the provided cursor', defaultValue: null },
  { name: 'after', description: 'Query values in the collection after the provided cursor', defaultValue: null },
  { name: 'offset', description: 'Skip n values from the after cursor. Alternative to cursor pagination. Backward pagination not supported.', defaultValue: null },
  { name: 'filter', description: 'Filters to apply to the results set when querying from the collection', defaultValue: null },
  { name: 'orderBy', description: 'Sort order to apply to the collection', defaultValue: null },
]

t.test('introspection', async (t) => {
  const p = await graphqlProject(t, `
    ${ON}
    create type status as enum ('draft', 'live');
    create table account (id serial primary key, email text not null, tags text[], status status);
    comment on table account is e'@graphql({"description": "People who sign in"})';
    comment on column account.email is e'@graphql({"description": "Where mail goes"})';
    create table address (id int primary key, account_id int not null unique references account (id));
    create table post (id serial primary key, account_id int references account (id), title text);
    create function _initials(rec account) returns text stable language sql as $$ select upper(left(rec.email, 1)) $$;
    comment on function _initials(account) is e'@graphql({"description": "Initials of the email"})';
  `)

  t.test('__schema lists every type, sorted by name', async (t) => {
    const names = [...BUILT_IN_TYPES, ...tableTypes('Account'), ...tableTypes('Address'), ...tableTypes('Post'), 'Mutation', 'Status', 'StatusFilter']
    t.same(await p.gql('{ __schema { types { name } } }'), {
      data: { __schema: { types: names.sort((a, b) => (a < b ? -1 : 1)).map((name) => ({ name })) } },
    })
    // Spelled out once, so the sort above is not the only witness of the order.
    const types = ((await p.gql('{ __schema { types { name } } }')).data as { __schema: { types: { name: string }[] } }).__schema.types
    t.same(types.slice(0, 14).map((x) => x.name), [
      'Account', 'AccountConnection', 'AccountDeleteResponse', 'AccountEdge', 'AccountFilter', 'AccountInsertInput', 'AccountInsertResponse',
      'AccountOrderBy', 'AccountUpdateInput', 'AccountUpdateResponse', 'Address', 'AddressConnection', 'AddressDeleteResponse', 'AddressEdge',
    ])
    t.same(types.slice(-10).map((x) => x.name), [
      'UUIDFilter', 'UUIDListFilter', '__Directive', '__DirectiveLocation', '__EnumValue', '__Field', '__InputValue', '__Schema', '__Type', '__TypeKind',
    ])
  })

  t.test('descriptions of the scalars, built-in ones included', async (t) => {
    const query = ['ID', 'Int', 'Float', 'String', 'Boolean', 'BigInt', 'BigFloat', 'Date', 'Time', 'Datetime', 'UUID', 'JSON', 'Cursor', 'Opaque']
      .map((n) => `${n}: __type(name: "${n}") { kind description }`).join(' ')
    const scalar = (description: string) => ({ kind: 'SCALAR', description })
    t.same(await p.gql(`{ ${query} }`), {
      data: {
        ID: scalar('A globally unique identifier for a given record'),
        Int: scalar('A scalar integer up to 32 bits'),
        Float: scalar('A scalar floating point value up to 32 bits'),
        String: scalar('A string'),
        Boolean: scalar('A value that is true or false'),
        BigInt: scalar('An arbitrary size integer represented as a string'),
        BigFloat: scalar('A high precision floating point value represented as a string'),
        Date: scalar('A date without time information'),
        Time: scalar('A time without date information'),
        Datetime: scalar('A date and time'),
        UUID: scalar('A universally unique identifier'),
        JSON: scalar('A Javascript Object Notation value serialized as a string'),
        Cursor: scalar('An opaque string using for tracking a position in results during pagination'),
        Opaque: scalar('Any type not handled by the type system'),
      },
    })
  })

  t.test('graphql-js keeps its own descriptions outside an introspection', async (t) => {
    const own = GraphQLString.description
    await p.gql('{ __type(name: "String") { description } }')
    t.equal(GraphQLString.description, own)
    t.not(own, 'A string')
  })

  t.test('a table filter: a field per filterable column, then nodeId, and, or, not', async (t) => {
    t.same(await p.gql('{ __type(name: "AccountFilter") { kind description inputFields { name description type { name kind ofType { name } } } } }'), {
      data: {
        __type: {
          kind: 'INPUT_OBJECT',
          description: null,
          inputFields: [
            { name: 'id', description: null, type: { name: 'IntFilter', kind: 'INPUT_OBJECT', ofType: null } },
            { name: 'email', description: null, type: { name: 'StringFilter', kind: 'INPUT_OBJECT', ofType: null } },
            { name: 'tags', description: null, type: { name: 'StringListFilter', kind: 'INPUT_OBJECT', ofType: null } },
            { name: 'status', description: null, type: { name: 'StatusFilter', kind: 'INPUT_OBJECT', ofType: null } },
            { name: 'nodeId', description: null, type: { name: 'IDFilter', kind: 'INPUT_OBJECT', ofType: null } },
            { name: 'and', description: 'Returns true only if all its inner filters are true, otherwise returns false', type: { name: null, kind: 'LIST', ofType: { name: null } } },
            { name: 'or', description: 'Returns true if at least one of its inner filters is true, otherwise returns false', type: { name: null, kind: 'LIST', ofType: { name: null } } },
            { name: 'not', description: 'Negates a filter', type: { name: 'AccountFilter', kind: 'INPUT_OBJECT', ofType: null } },
          ],
        },
      },
    })
  })

  t.test('scalar, list and enum filters: the type described, its operators not, in name order', async (t) => {
    const fields = (names: string[]) => names.map((name) => ({ name, description: null }))
    t.same(await p.gql(`{
      s: __type(name: "StringFilter") { description inputFields { name description } }
      l: __type(name: "IntListFilter") { description inputFields { name description } }
      e: __type(name: "StatusFilter") { description inputFields { name description } }
      i: __type(name: "IDFilter") { description inputFields { name description } }
      is: __type(name: "FilterIs") { description enumValues { name description } }
    }`), {
      data: {
        s: { description: 'Boolean expression comparing fields on type "String"', inputFields: fields(['eq', 'gt', 'gte', 'ilike', 'in', 'iregex', 'is', 'like', 'lt', 'lte', 'neq', 'regex', 'startsWith']) },
        l: { description: 'Boolean expression comparing fields on type "IntList"', inputFields: fields(['containedBy', 'contains', 'eq', 'is', 'overlaps']) },
        e: { description: 'Boolean expression comparing fields on type "Status"', inputFields: fields(['eq', 'in', 'is', 'neq']) },
        i: { description: 'Boolean expression comparing fields on type "ID"', inputFields: fields(['eq']) },
        is: { description: null, enumValues: [{ name: 'NULL', description: null }, { name: 'NOT_NULL', description: null }] },
      },
    })
  })

  t.test('a table type: nodeId, columns, relations, computed fields, with their descriptions', async (t) => {
    t.same(await p.gql('{ __type(name: "Account") { description interfaces { name } fields { name description type { kind name ofType { name } } } } }'), {
      data: {
        __type: {
          description: 'People who sign in',
          interfaces: [{ name: 'Node' }],
          fields: [
            { name: 'nodeId', description: 'Globally Unique Record Identifier', type: nonNull('ID') },
            { name: 'id', description: null, type: nonNull('Int') },
            { name: 'email', description: 'Where mail goes', type: nonNull('String') },
            { name: 'tags', description: null, type: { kind: 'LIST', name: null, ofType: { name: 'String' } } },
            { name: 'status', description: null, type: named('ENUM', 'Status') },
            { name: 'address', description: null, type: named('OBJECT', 'Address') },
            { name: 'postCollection', description: null, type: named('OBJECT', 'PostConnection') },
            { name: 'initials', description: 'Initials of the email', type: named('SCALAR', 'String') },
          ],
        },
      },
    })
  })

  t.test('to-one relations: non-null over not-null columns to a table without row level security', async (t) => {
    const relation = `{ __type(name: "Address") { fields { name type { kind name ofType { name } } } } p: __type(name: "Post") { fields { name type { kind name } } } }`
    t.same(await p.gql(relation), {
      data: {
        __type: {
          fields: [
            { name: 'nodeId', type: nonNull('ID') },
            { name: 'id', type: nonNull('Int') },
            { name: 'accountId', type: nonNull('Int') },
            { name: 'account', type: nonNull('Account') },
          ],
        },
        p: {
          fields: [
            { name: 'nodeId', type: { kind: 'NON_NULL', name: null } },
            { name: 'id', type: { kind: 'NON_NULL', name: null } },
            { name: 'accountId', type: { kind: 'SCALAR', name: 'Int' } },
            { name: 'title', type: { kind: 'SCALAR', name: 'String' } },
            { name: 'account', type: { kind: 'OBJECT', name: 'Account' } },
          ],
        },
      },
    })
    await p.sql('alter table account enable row level security')
    t.same(await p.gql('{ __type(name: "Address") { fields { name type { kind name } } } }'), {
      data: {
        __type: {
          fields: [
            { name: 'nodeId', type: { kind: 'NON_NULL', name: null } },
            { name: 'id', type: { kind: 'NON_NULL', name: null } },
            { name: 'accountId', type: { kind: 'NON_NULL', name: null } },
            { name: 'account', type: { kind: 'OBJECT', name: 'Account' } },
          ],
        },
      },
    })
    await p.sql('alter table account disable row level security')
  })

  t.test("a type's relations over its own keys come before those over keys referencing it", async (t) => {
    // comment sorts before post, so its key is met first: the order is not the order keys are met in.
    await p.sql('create table comment (id serial primary key, post_id int references post (id))')
    t.same(await p.gql('{ __type(name: "Post") { fields { name } } }'), {
      data: { __type: { fields: ['nodeId', 'id', 'accountId', 'title', 'account', 'commentCollection'].map((name) => ({ name })) } },
    })
    await p.sql('drop table comment')
  })

  t.test('Query: fields by name, with descriptions and arguments', async (t) => {
    const byPk = (base: string) => ({
      name: `${base[0]!.toLowerCase()}${base.slice(1)}ByPk`,
      description: `Retrieve a record of type \`${base}\` by its primary key`,
      args: [{ name: 'id', description: null, defaultValue: null }],
      type: named('OBJECT', base),
    })
    const collection = (base: string) => ({
      name: `${base[0]!.toLowerCase()}${base.slice(1)}Collection`,
      description: `A pagable collection of type \`${base}\``,
      args: connectionArgs,
      type: nonNull(`${base}Connection`),
    })
    t.same(await p.gql('{ __schema { queryType { name description fields { name description args { name description defaultValue } type { kind name ofType { name } } } } } }'), {
      data: {
        __schema: {
          queryType: {
            name: 'Query',
            description: 'The root type for querying data',
            fields: [
              byPk('Account'), collection('Account'), byPk('Address'), collection('Address'),
              { name: 'node', description: 'Retrieve a record by its `ID`', args: [{ name: 'nodeId', description: "The record's `ID`", defaultValue: null }], type: named('INTERFACE', 'Node') },
              byPk('Post'), collection('Post'),
            ],
          },
        },
      },
    })
  })

  t.test('Mutation: fields by name, with descriptions and arguments', async (t) => {
    const filter = { name: 'filter', description: "Restricts the mutation's impact to records matching the criteria", defaultValue: null }
    const atMost = { name: 'atMost', description: 'The maximum number of records in the collection permitted to be affected', defaultValue: '1' }
    const deleteFrom = (base: string) => ({ name: `deleteFrom${base}Collection`, description: `Deletes zero or more records from the \`${base}\` collection`, args: [filter, atMost] })
    const insertInto = (base: string) => ({ name: `insertInto${base}Collection`, description: `Adds one or more \`${base}\` records to the collection`, args: [{ name: 'objects', description: null, defaultValue: null }] })
    const update = (base: string) => ({
      name: `update${base}Collection`,
      description: `Updates zero or more records in the \`${base}\` collection`,
      args: [{ name: 'set', description: 'Fields that are set will be updated for all records matching the `filter`', defaultValue: null }, filter, atMost],
    })
    t.same(await p.gql('{ __schema { mutationType { name description fields { name description args { name description defaultValue } } } } }'), {
      data: {
        __schema: {
          mutationType: {
            name: 'Mutation',
            description: 'The root type for creating and mutating data',
            fields: [
              deleteFrom('Account'), deleteFrom('Address'), deleteFrom('Post'),
              insertInto('Account'), insertInto('Address'), insertInto('Post'),
              update('Account'), update('Address'), update('Post'),
            ],
          },
        },
      },
    })
  })

  t.test('the directives pg_graphql knows, the Node implementations by name', async (t) => {
    t.same(await p.gql('{ __schema { directives { name description locations args { name description } } } __type(name: "Node") { fields { name description } possibleTypes { name } } }'), {
      data: {
        __schema: {
          directives: [
            {
              name: 'include', description: 'This field or fragment will be included only when the `if` argument is true.',
              locations: ['FIELD', 'FRAGMENT_SPREAD', 'INLINE_FRAGMENT'], args: [{ name: 'if', description: 'Included when true' }],
            },
            {
              name: 'skip', description: 'This field or fragment will be skipped when the `if` argument is true.',
              locations: ['FIELD', 'FRAGMENT_SPREAD', 'INLINE_FRAGMENT'], args: [{ name: 'if', description: 'Skipped when true' }],
            },
          ],
        },
        __type: { fields: [{ name: 'nodeId', description: 'Retrieves a record by `ID`' }], possibleTypes: [{ name: 'Account' }, { name: 'Address' }, { name: 'Post' }] },
      },
    })
  })

  t.test('OrderByDirection and the connection types', async (t) => {
    t.same(await p.gql(`{
      o: __type(name: "OrderByDirection") { description enumValues { name description } }
      c: __type(name: "AccountConnection") { description fields { name description type { kind name ofType { name } } } }
      e: __type(name: "AccountEdge") { description fields { name description type { kind name ofType { name } } } }
      p: __type(name: "PageInfo") { description fields { name description } }
    }`), {
      data: {
        o: {
          description: 'Defines a per-field sorting order',
          enumValues: [
            { name: 'AscNullsFirst', description: 'Ascending order, nulls first' },
            { name: 'AscNullsLast', description: 'Ascending order, nulls last' },
            { name: 'DescNullsFirst', description: 'Descending order, nulls first' },
            { name: 'DescNullsLast', description: 'Descending order, nulls last' },
          ],
        },
        c: {
          description: null,
          fields: [
            { name: 'edges', description: null, type: { kind: 'NON_NULL', name: null, ofType: { name: null } } },
            { name: 'pageInfo', description: null, type: nonNull('PageInfo') },
          ],
        },
        e: {
          description: null,
          fields: [
            { name: 'cursor', description: null, type: nonNull('String') },
            { name: 'node', description: null, type: nonNull('Account') },
          ],
        },
        p: {
          description: null,
          fields: ['endCursor', 'hasNextPage', 'hasPreviousPage', 'startCursor'].map((name) => ({ name, description: null })),
        },
      },
    })
  })

  t.test('variables and directives still meet the built-in scalars they are declared with', async (t) => {
    t.same(await p.gql('query($n: String!, $b: Boolean!) { __type(name: $n) { name } accountCollection { edges { cursor @skip(if: $b) } } }', { variables: { n: 'Account', b: true } }), {
      data: { __type: { name: 'Account' }, accountCollection: { edges: [] } },
    })
  })

  t.test('unknown types are null; a directive pg_graphql does not know is refused', async (t) => {
    t.same(await p.gql('{ __type(name: "Nope") { name } }'), { data: { __type: null } })
    t.same(await p.gql('{ accountCollection { edges { cursor @deprecated } } }'), { data: null, errors: [{ message: 'Unknown directive "@deprecated".' }] })
  })
})

t.test('names pg_graphql keeps and leaves out', async (t) => {
  const p = await graphqlProject(t, `${ON} create table "@xyz" (id int primary key);`)

  t.test('a table whose name is no GraphQL name is left out', async (t) => {
    t.same(await p.gql('{ __schema { types { name } mutationType { name } } }'), {
      data: { __schema: { types: BUILT_IN_TYPES.map((name) => ({ name })), mutationType: null } },
    })
  })

  t.test('a key column whose name is no GraphQL name keeps its table, behind nodeId only', async (t) => {
    await p.sql(`
      create table xyz ("! q" int primary key); insert into xyz values (7);
      create table abc ("! k" int primary key, name text); insert into abc values (3, 'c');
    `)
    t.same(await p.gql('{ x: __type(name: "Xyz") { fields { name } } a: __type(name: "Abc") { fields { name } } }'), {
      data: { x: { fields: [{ name: 'nodeId' }] }, a: { fields: [{ name: 'nodeId' }, { name: 'name' }] } },
    })
    t.same(await p.gql('{ xyzCollection { edges { cursor node { nodeId } } } abcCollection(orderBy: [{name: DescNullsLast}]) { edges { cursor node { nodeId name } } } }'), {
      data: {
        xyzCollection: { edges: [{ cursor: 'Wzdd', node: { nodeId: 'WyJwdWJsaWMiLCAieHl6IiwgN10=' } }] },
        abcCollection: { edges: [{ cursor: 'WyJjIiwgM10=', node: { nodeId: 'WyJwdWJsaWMiLCAiYWJjIiwgM10=', name: 'c' } }] },
      },
    })
    t.same(await p.gql('{ node(nodeId: "WyJwdWJsaWMiLCAiYWJjIiwgM10=") { nodeId ... on Abc { name } } }'), {
      data: { node: { nodeId: 'WyJwdWJsaWMiLCAiYWJjIiwgM10=', name: 'c' } },
    })
  })

  t.test('what graphql-js cannot hold is left out: empty input types, key arguments without a name', async (t) => {
    t.same(await p.gql('{ __type(name: "Query") { fields { name args { name } } } }'), {
      data: {
        __type: {
          fields: [
            { name: 'abcCollection', args: connectionArgs.map(({ name }) => ({ name })) },
            { name: 'node', args: [{ name: 'nodeId' }] },
            { name: 'xyzCollection', args: connectionArgs.filter(({ name }) => name !== 'orderBy').map(({ name }) => ({ name })) },
          ],
        },
      },
    })
    t.same(await p.gql('{ xyzCollection(orderBy: []) { edges { cursor } } xyzByPk(id: 7) { nodeId } }'), {
      data: null,
      errors: [{ message: 'Unknown argument "orderBy" on field "Query.xyzCollection".' }, { message: 'Cannot query field "xyzByPk" on type "Query".' }],
    })
  })
})

t.test('introspection on in one served schema and off in another shows the first one only', async (t) => {
  const p = await graphqlProject(t, `
    create schema private;
    comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
    comment on schema private is e'@graphql({"inflect_names": true, "introspection": false})';
    create table public.blog (id serial primary key, content text not null);
    create table private.account (id serial primary key, email text not null);
    create type private.mood as enum ('calm');
    create table private.diary (id serial primary key, mood private.mood);
    insert into public.blog (content) values ('hello, world');
    insert into private.account (email) values ('alice@example.com');
    grant usage on schema private to service_role;
    grant all on all tables in schema private to service_role;
    grant all on all sequences in schema private to service_role;
  `)
  const gql = (query: string, variables?: Record<string, unknown>) =>
    withRequestTransaction(p.pool, { role: 'service_role', claims: { role: 'service_role' } }, p.project.roleTimeouts, async (client) => {
      await client.query('set local search_path = public, private')
      return resolve(client, { query, variables }, { cache: p.cache })
    })

  t.same(await gql('{ blog: __type(name: "Blog") { kind name } account: __type(name: "Account") { kind name } user: __type(name: "User") { name } }'), {
    data: { blog: { kind: 'OBJECT', name: 'Blog' }, account: null, user: null },
  })
  const names = [...BUILT_IN_TYPES, ...tableTypes('Blog'), 'Mutation'].sort((a, b) => (a < b ? -1 : 1))
  t.same(await gql('{ __schema { types { name } mutationType { fields { name } } } }'), {
    data: {
      __schema: {
        types: names.map((name) => ({ name })),
        mutationType: { fields: [{ name: 'deleteFromBlogCollection' }, { name: 'insertIntoBlogCollection' }, { name: 'updateBlogCollection' }] },
      },
    },
  })
  t.same(await gql('query($f: AccountFilter) { __schema { queryType { fields { name } } } accountCollection(filter: $f) { edges { node { email } } } }', { f: { id: { eq: 1 } } }), {
    data: {
      __schema: { queryType: { fields: [{ name: 'blogByPk' }, { name: 'blogCollection' }, { name: 'node' }] } },
      accountCollection: { edges: [{ node: { email: 'alice@example.com' } }] },
    },
  })
  // Validation knows the whole schema: only introspection is partial.
  t.same(await gql('{ accountCollection { edges { node { nope } } } }'), { data: null, errors: [{ message: 'Cannot query field "nope" on type "Account".' }] })
})
