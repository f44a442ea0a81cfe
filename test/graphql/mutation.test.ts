// Mutations: insert, update and delete with records and affectedCount,
// atMost (default 1) failing with nothing kept, several mutation fields in
// one transaction, and database errors passing through.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('mutations', async (t) => {
  const p = await graphqlProject(t, `
    create table account (id serial primary key, email text not null check (email like '%@%'), note text default 'none');
    insert into account (email) values ('a@x'), ('b@x'), ('c@x');
  `)
  const emails = async () => (await p.sql('select id, email, note from account order by id')).rows

  t.test('insert returns the rows it made; a missing key takes the default, null overrides it', async (t) => {
    t.strictSame(
      await p.gql(`mutation($objs: [accountInsertInput!]!) { insertIntoaccountCollection(objects: $objs) { affectedCount records { id email note } } }`, {
        variables: { objs: [{ email: 'd@x' }, { email: 'e@x', note: null }] },
      }),
      { data: { insertIntoaccountCollection: { affectedCount: 2, records: [{ id: 4, email: 'd@x', note: 'none' }, { id: 5, email: 'e@x', note: null }] } } },
    )
    t.strictSame(await p.gql(`mutation { insertIntoaccountCollection(objects: []) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'At least one record must be provided to objects' }],
    })
  })

  t.test('update and delete touch at most atMost rows (default 1)', async (t) => {
    t.strictSame(await p.gql(`mutation { updateaccountCollection(set: {note: "x"}, filter: {id: {eq: 1}}) { affectedCount records { id note } } }`), {
      data: { updateaccountCollection: { affectedCount: 1, records: [{ id: 1, note: 'x' }] } },
    })
    const before = await emails()
    t.strictSame(await p.gql(`mutation { updateaccountCollection(set: {note: "y"}, filter: {id: {gt: 1}}) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'update impacts too many records' }],
    })
    t.strictSame(await p.gql(`mutation { deleteFromaccountCollection(filter: {id: {gt: 1}}, atMost: 2) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'delete impacts too many records' }],
    })
    t.strictSame(await emails(), before, 'nothing kept')
    t.strictSame(await p.gql(`mutation { updateaccountCollection(set: {note: "y"}, filter: {id: {in: [2, 3]}}, atMost: 2) { affectedCount records { id note } } }`), {
      data: { updateaccountCollection: { affectedCount: 2, records: [{ id: 2, note: 'y' }, { id: 3, note: 'y' }] } },
    })
    t.strictSame(await p.gql(`mutation { deleteFromaccountCollection(filter: {id: {eq: 5}}) { affectedCount records { email } } }`), {
      data: { deleteFromaccountCollection: { affectedCount: 1, records: [{ email: 'e@x' }] } },
    })
    t.strictSame(await p.gql(`mutation { updateaccountCollection(set: {}) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'At least one mapping must be provided to set argument' }],
    })
  })

  t.test('one transaction: a later failure undoes earlier fields; database errors pass through', async (t) => {
    const before = await emails()
    t.strictSame(
      await p.gql(`mutation {
        a: insertIntoaccountCollection(objects: [{email: "z@x"}]) { affectedCount }
        b: insertIntoaccountCollection(objects: [{email: "no-at-sign"}]) { affectedCount }
      }`),
      { data: null, errors: [{ message: 'new row for relation "account" violates check constraint "account_email_check"' }] },
    )
    t.strictSame(await emails(), before, 'nothing kept')
    t.strictSame(await p.gql(`mutation { insertIntoaccountCollection(objects: [{email: null}]) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'null value in column "email" of relation "account" violates not-null constraint' }],
    })
    t.strictSame(
      await p.gql(`mutation { a: insertIntoaccountCollection(objects: [{email: "q@x"}]) { affectedCount } __typename }`),
      { data: { a: { affectedCount: 1 }, __typename: 'Mutation' } },
    )
  })
})
