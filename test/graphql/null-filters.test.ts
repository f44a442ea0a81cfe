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
