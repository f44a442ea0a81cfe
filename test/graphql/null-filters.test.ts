// A filter operand written as null (issue 13 item 5): SQL's comparison with
// null matches nothing, so `{id: {lt: null}}` answers no row, alone or beside
// other conditions, as a literal or a variable; leaving the operator out (or
// the variable unset) filters nothing; `is` asks for nulls.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const SETUP = `
  create table item (id int primary key, label text);
  insert into item values (1, 'one'), (2, null), (3, 'three');
`

const ids = (rows: number[]) => ({ data: { itemCollection: { edges: rows.map((id) => ({ node: { id } })) } } })

t.test('null operands match no row', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const page = (filter: string) => `{ itemCollection(filter: ${filter}) { edges { node { id } } } }`
  t.strictSame(await p.gql(page('{id: {lt: null}}')), ids([]), 'lt: null')
  t.strictSame(await p.gql(page('{id: {eq: null}}')), ids([]), 'eq: null')
  t.strictSame(await p.gql(page('{id: {in: null}}')), ids([]), 'in: null')
  t.strictSame(await p.gql(page('{label: {like: null}}')), ids([]), 'like: null')
  t.strictSame(await p.gql(page('{id: {gt: 1, lt: null}}')), ids([]), 'beside another operator')
  t.strictSame(await p.gql(page('{or: [{id: {eq: null}}, {id: {eq: 3}}]}')), ids([3]), 'inside or')
  t.strictSame(await p.gql(page('{not: {id: {eq: null}}}')), ids([]), 'not of a comparison with null is still not true')
  t.strictSame(await p.gql(page('{label: {is: NULL}}')), ids([2]), 'is: NULL asks for nulls')
  t.strictSame(await p.gql(page('{id: {}}')), ids([1, 2, 3]), 'no operator filters nothing')

  const byVariable = 'query ($max: Int) { itemCollection(filter: {id: {lt: $max}}) { edges { node { id } } } }'
  t.strictSame(await p.gql(byVariable, { variables: { max: null } }), ids([]), 'a variable set to null')
  t.strictSame(await p.gql(byVariable, { variables: {} }), ids([1, 2, 3]), 'a variable left unset')
})

// `is` (issue 13 item 5b): only NULL and NOT_NULL. An explicit null has no SQL
// (`x is null` is what NULL asks) and pg_graphql refuses it with its
// transpiler's words; an unset variable leaves the operator out. A literal or a
// FilterIs variable outside the enum is refused by graphql-js (SPEC: documents
// and variables are checked as the spec says); a value that slips past (a
// String variable with validation off) gets pg_graphql's refusal.
const TAGGED = `
  create table item (id int primary key, label text, tags text[]);
  insert into item values (1, 'one', '{a}'), (2, null, null), (3, 'three', '{}');
`
const IS_NULL_REFUSED = { data: null, errors: [{ message: 'Error transpiling Is filter value type' }] }

t.test('is: NULL and NOT_NULL, alone and inside and/or/not', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  const page = (filter: string) => `{ itemCollection(filter: ${filter}) { edges { node { id } } } }`
  t.strictSame(await p.gql(page('{label: {is: NULL}}')), ids([2]))
  t.strictSame(await p.gql(page('{label: {is: NOT_NULL}}')), ids([1, 3]))
  t.strictSame(await p.gql(page('{tags: {is: NULL}}')), ids([2]), 'on an array column')
  t.strictSame(await p.gql(page('{tags: {is: NOT_NULL}}')), ids([1, 3]), 'an empty array is not null')
  t.strictSame(await p.gql(page('{or: [{label: {is: NULL}}, {id: {eq: 3}}]}')), ids([2, 3]), 'inside or')
  t.strictSame(await p.gql(page('{and: [{label: {is: NOT_NULL}}, {not: {id: {eq: 1}}}]}')), ids([3]), 'inside and, beside not')
  t.strictSame(await p.gql(page('{not: {label: {is: NULL}}}')), ids([1, 3]), 'under not')
  t.strictSame(await p.gql(page('{label: {is: NOT_NULL, eq: "one"}}')), ids([1]), 'beside another operator')
})

t.test('is: null is refused, wherever it is written', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  const page = (filter: string) => `{ itemCollection(filter: ${filter}) { edges { node { id } } } }`
  t.strictSame(await p.gql(page('{label: {is: null}}')), IS_NULL_REFUSED, 'a literal null')
  t.strictSame(await p.gql(page('{or: [{id: {eq: 1}}, {label: {is: null}}]}')), IS_NULL_REFUSED, 'inside or')
  t.strictSame(await p.gql(page('{not: {and: [{label: {is: null}}]}}')), IS_NULL_REFUSED, 'under not and and')
  t.strictSame(await p.gql(`mutation { deleteFromitemCollection(filter: {label: {is: null}}) { affectedCount } }`), IS_NULL_REFUSED, 'in a mutation')
  t.strictSame(await p.gql(page('{id: {eq: 1}}')), ids([1]), 'and nothing was deleted')
})

t.test('is: $v, a FilterIs variable', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  const byIs = 'query ($v: FilterIs) { itemCollection(filter: {label: {is: $v}}) { edges { node { id } } } }'
  t.strictSame(await p.gql(byIs, { variables: { v: 'NULL' } }), ids([2]))
  t.strictSame(await p.gql(byIs, { variables: { v: 'NOT_NULL' } }), ids([1, 3]))
  t.strictSame(await p.gql(byIs, { variables: {} }), ids([1, 2, 3]), 'unset: no condition')
  t.strictSame(await p.gql(byIs, { variables: { v: null } }), IS_NULL_REFUSED, 'null')
  t.strictSame(await p.gql(byIs, { variables: { v: 'FOO' } }), {
    data: null,
    errors: [{ message: 'Variable "$v" got invalid value "FOO"; Value "FOO" does not exist in "FilterIs" enum.' }],
  }, 'a value outside the enum')
  const inList = 'query ($f: [itemFilter!]) { itemCollection(filter: {or: $f}) { edges { node { id } } } }'
  t.strictSame(await p.gql(inList, { variables: { f: [{ label: { is: 'NULL' } }, { id: { eq: 1 } }] } }), ids([1, 2]), 'inside a list variable')
  t.strictSame(await p.gql(inList, { variables: { f: [{ label: { is: null } }] } }), IS_NULL_REFUSED, 'null inside a list variable')
})

t.test('is: anything else', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  const page = (filter: string) => `{ itemCollection(filter: ${filter}) { edges { node { id } } } }`
  t.strictSame(await p.gql(page('{label: {is: FOO}}')), {
    data: null,
    errors: [{ message: 'Value "FOO" does not exist in "FilterIs" enum.' }],
  }, 'a literal outside the enum fails validation')

  await p.sql(`comment on schema public is e'@graphql({"validation": {"enabled": false}})'`)
  const byString = 'query ($v: String) { itemCollection(filter: {label: {is: $v}}) { edges { node { id } } } }'
  const refused = { data: null, errors: [{ message: 'Invalid input for FilterIs type' }] }
  t.strictSame(await p.gql(byString, { variables: { v: 'FOO' } }), refused, 'validation off: a string outside the enum')
  t.strictSame(await p.gql(byString, { variables: { v: 'null' } }), refused, 'validation off: the enum is case sensitive')
  t.strictSame(await p.gql(byString, { variables: { v: 'NULL' } }), ids([2]), 'validation off: a string naming a value')
  const byInt = 'query ($v: Int) { itemCollection(filter: {label: {is: $v}}) { edges { node { id } } } }'
  t.strictSame(await p.gql(byInt, { variables: { v: 1 } }), refused, 'validation off: not a string')
})

// Entries with no condition count for nothing (pg_graphql's
// compound_filters_empty_entries): they are left out of and/or, and an
// and/or/not left empty is no condition.
t.test('empty entries inside and/or/not', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  const page = (filter: string) => `{ itemCollection(filter: ${filter}) { edges { node { id } } } }`
  t.strictSame(await p.gql(page('{or: [{}]}')), ids([1, 2, 3]), 'or of one empty entry')
  t.strictSame(await p.gql(page('{and: [{}]}')), ids([1, 2, 3]), 'and of one empty entry')
  t.strictSame(await p.gql(page('{or: [{}, {id: {eq: 2}}]}')), ids([2]), 'an empty entry beside a real one')
  t.strictSame(await p.gql(page('{or: [{label: {}}, {id: {eq: 2}}]}')), ids([2]), 'an entry whose column has no operator')
  t.strictSame(await p.gql(page('{not: {or: [{}]}}')), ids([1, 2, 3]), 'not around an or of empty entries')
  t.strictSame(await p.gql(page('{not: {}}')), ids([1, 2, 3]), 'not of nothing')
  t.strictSame(await p.gql(page('{or: []}')), ids([1, 2, 3]), 'an empty or')
  const unsetInOr = 'query ($label: String) { itemCollection(filter: {or: [{label: {eq: $label}}, {id: {eq: 3}}]}) { edges { node { id } } } }'
  t.strictSame(await p.gql(unsetInOr, { variables: {} }), ids([3]), 'an entry made empty by an unset variable')
  t.strictSame(await p.gql(`mutation { updateitemCollection(set: {label: "x"}, filter: {or: [{}]}, atMost: 10) { affectedCount } }`), {
    data: { updateitemCollection: { affectedCount: 3 } },
  }, 'in a mutation: every row is touched')
})

t.test('nodeId: {eq: null} is refused', async (t) => {
  const p = await graphqlProject(t, TAGGED)
  t.strictSame(await p.gql('{ itemCollection(filter: {nodeId: {eq: null}}) { edges { node { id } } } }'), {
    data: null,
    errors: [{ message: 'Invalid value passed to nodeId argument, Error 1' }],
  })
})
