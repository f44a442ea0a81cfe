// The spec's error table for GraphQL, each with its exact text: validation
// with graphql-js's sentences before any SQL (every problem listed), limits,
// comment directives, and the response shape of a failure.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('errors', async (t) => {
  const p = await graphqlProject(t, `
    create table account (id serial primary key, email text);
    create table audit (id serial primary key, note text);
    create function log_select() returns trigger language plpgsql as $$ begin insert into audit (note) values ('x'); return new; end $$;
  `)
  const fails = (messages: string[]) => ({ data: null, errors: messages.map((message) => ({ message })) })

  t.test('validation sentences, every problem listed, nothing run', async (t) => {
    t.strictSame(
      await p.gql(`query($f: Int) { accountCollection(first: $f, orderBy: [{id: "AscNullsFirst"}]) { edges { node { id nope @skip(if: true) } } } x: accountCollection(first: $undeclared) { edges { cursor } } }
        fragment unused on account { id }`),
      fails([
        'Enum "OrderByDirection" cannot represent non-enum value: "AscNullsFirst". Did you mean the enum value "AscNullsFirst", "DescNullsFirst", "AscNullsLast", or "DescNullsLast"?',
        'Cannot query field "nope" on type "account".',
        'Variable "$undeclared" is not defined.',
        'Fragment "unused" is never used.',
      ]),
    )
    t.strictSame(await p.gql(`query($o: accountOrderBy) { accountCollection(orderBy: $o) { edges { cursor } } }`), fails([
      'Variable "$o" of type "accountOrderBy" used in position expecting type "[accountOrderBy!]".',
    ]))
    t.strictSame(await p.gql(`query($f: Int) { accountCollection(first: $f) { edges { cursor } } }`, { variables: { f: 'ten' } }), fails([
      'Variable "$f" got invalid value "ten"; Int cannot represent non-integer value: "ten"',
    ]))
    t.strictSame(await p.gql(`{ account }`), fails(['Cannot query field "account" on type "Query".']))
    t.strictSame(await p.gql(`{ accountCollection { edges { node { id } }`), fails(['Syntax Error: Expected Name, found <EOF>.']))
    t.strictSame(await p.gql(`query a { __typename } query b { __typename }`), fails(['Must provide operation name if query contains multiple operations.']))
    t.strictSame(await p.gql(`query a { __typename }`, { operationName: 'c' }), fails(['Unknown operation named "c".']))
    t.strictSame(await p.gql(`query a { __typename } query b { x: __typename }`, { operationName: 'b' }), { data: { x: 'Query' } })
    t.strictSame(await p.gql(`{ __schema { queryType { name } } }`), fails(['Cannot query field "__schema" on type "Query".']))
    t.strictSame(await p.gql(``), fails(['Must provide query string.']))
  })

  t.test('limits: depth 32, fragment cycles, one million selections', async (t) => {
    let depth33 = 'nodeId'
    for (let i = 0; i < 32; i++) depth33 = `node(nodeId: "x") { ... on account { ${depth33} } }`
    t.strictSame(await p.gql(`{ ${depth33} }`), fails(['Query is too deep: selections nest more than 32 levels']))
    t.strictSame(await p.gql(`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`), fails(['Cannot spread fragment "A" within itself.']))
    // Each fragment spreads the previous one ten times: 10^7 selections from a few lines.
    const frags = ['fragment F0 on Query { __typename }']
    for (let i = 1; i <= 7; i++) frags.push(`fragment F${i} on Query { ${Array.from({ length: 10 }, (_, j) => `a${j}: __typename ...F${i - 1}`).join(' ')} }`)
    const started = Date.now()
    t.strictSame(await p.gql(`{ ...F7 } ${frags.join(' ')}`), fails(['Query is too large: it expands to more than 1000000 selections once fragments are spread']))
    t.ok(Date.now() - started < 5000, 'refused without being expanded')
  })

  t.test('comment directives: invalid JSON fails every request until fixed', async (t) => {
    await p.sql(`comment on table account is e'@graphql({"name": bad})'`)
    t.strictSame(await p.gql(`{ __typename }`), fails(['invalid input syntax for type json']))
    t.strictSame(await p.gql(`{ auditCollection { edges { cursor } } }`), fails(['invalid input syntax for type json']))
    await p.sql(`comment on table account is e'@graphql({"max_rows": -1})'`)
    t.strictSame(await p.gql(`{ __typename }`), fails(['Error while loading schema, check comment directives. invalid value: integer `-1`, expected u64']))
    await p.sql(`comment on table account is e'@graphql({"primary_key_columns": "id"})'`)
    t.strictSame(await p.gql(`{ __typename }`), fails(['Error while loading schema, check comment directives. invalid type: string "id", expected a sequence']))
    await p.sql(`comment on table account is null`)
    t.strictSame(await p.gql(`{ __typename }`), { data: { __typename: 'Query' } })
  })

  t.test('validation can be switched off by schema comment', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"validation": {"enabled": false}})'`)
    t.strictSame(await p.gql(`{ accountCollection { edges { cursor } } } fragment unused on account { id }`), { data: { accountCollection: { edges: [] } } })
    t.strictSame(await p.gql(`{ nope }`), fails(['Unknown field "nope" on type Query']))
    await p.sql(`comment on schema public is null`)
  })

  t.test('introspection can be switched on by schema comment', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"introspection": true})'`)
    t.strictSame(await p.gql(`{ __type(name: "account") { kind name fields { name } } n: __typename }`), {
      data: {
        __type: { kind: 'OBJECT', name: 'account', fields: [{ name: 'nodeId' }, { name: 'id' }, { name: 'email' }] },
        n: 'Query',
      },
    })
    await p.sql(`comment on schema public is null`)
  })
})
