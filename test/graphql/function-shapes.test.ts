// SPEC 2.4 `functionShapes` (issue 14 item 9): overloads told apart by a
// `name` comment, unnamed arguments as `arg<n>`, enum arguments and results,
// computed fields with arguments, and computed fields in `<Type>Filter`;
// with the key off, pg_graphql's rules for which functions are served.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { type RequestIdentity } from '../../lib/roles.ts'
import { resolve, SchemaCache, type GraphqlRequest } from '../../workers/graphql/index.ts'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const ON = `comment on schema public is e'@graphql({"introspection": true, "functionShapes": {"enabled": true}})'`
const OFF = `comment on schema public is e'@graphql({"introspection": true})'`

const SETUP = `
  ${ON};
  create type mood as enum ('happy', 'sad', 'so_so');
  comment on type mood is e'@graphql({"mappings": {"so_so": "SO_SO"}})';
  create table account (id int primary key, owner uuid, first text not null, last text not null, mood mood not null);
  alter table account enable row level security;
  create policy read on account for select using (owner is null or owner = auth.uid());
  create policy edit on account for update to authenticated using (owner = auth.uid());
  grant select, update on account to anon, authenticated;
  insert into account values (1, null, 'Ann', 'Lee', 'happy'), (2, '${ANN}', 'Bob', 'Ray', 'so_so'), (3, '${BOB}', 'Cy', 'Orr', 'sad');

  -- Overloads: each one named by its comment is served; the unnamed one stays out.
  create function find(id int) returns account language sql stable as $$ select * from account a where a.id = find.id $$;
  comment on function find(int) is e'@graphql({"name": "findById"})';
  create function find(prefix text) returns setof account language sql stable as $$ select * from account a where a.first like prefix || '%' $$;
  comment on function find(text) is e'@graphql({"name": "findByFirst"})';
  create function find(id int, extra int) returns int language sql stable as 'select id + extra';

  -- Unnamed arguments.
  create function times(int, int default 2) returns int language sql immutable as 'select $1 * $2';
  create function suffixed(int, suffix text default '!') returns text language sql immutable as $$ select $1::text || suffix $$;
  create function added(a int default 1, int default 2) returns int language sql immutable as 'select a + $2';
  create function clash(int, arg1 int) returns int language sql immutable as 'select 1';

  -- Enum arguments and results.
  create function mood_of(who int) returns mood language sql stable as $$ select mood from account where id = who $$;
  create function count_mood(m mood) returns int language sql stable as $$ select count(*)::int from account where mood = m $$;
  create function echo_moods(ms mood[]) returns mood[] language sql immutable as 'select ms';
  create function set_mood(who int, m mood) returns mood language plpgsql volatile as $$
    begin
      if m = 'sad' then raise exception 'no sad moods'; end if;
      update account set mood = m where id = who;
      return (select mood from account where id = who);
    end $$;

  -- Computed fields: with arguments, unnamed, enum-valued, returning a connection.
  create function greeting(rec account, salutation text default 'Hello') returns text language sql stable as $$ select salutation || ', ' || rec.first $$;
  create function initials(account) returns text language sql stable as $$ select left($1.first, 1) || left($1.last, 1) $$;
  create function scaled(rec account, int) returns int language sql stable as 'select rec.id * $2';
  create function feeling(rec account) returns mood language sql stable as 'select rec.mood';
  create function others(rec account, above int) returns setof account language sql stable as $$ select * from account a where a.id > above and a.id <> rec.id $$;
`

/** An introspected type reference as `{ kind name ofType { kind name } }` asks for it. */
function ref(text: string): Record<string, unknown> {
  if (text.endsWith('!')) return { kind: 'NON_NULL', name: null, ofType: ref1(text.slice(0, -1)) }
  return { kind: kindOf(text), name: text, ofType: null }
}
function ref1(text: string): Record<string, unknown> {
  return text.startsWith('[') ? { kind: 'LIST', name: null } : { kind: kindOf(text), name: text }
}
const kindOf = (name: string) => (name === 'mood' ? 'ENUM' : /Filter$/.test(name) ? 'INPUT_OBJECT' : /^(account)/.test(name) ? 'OBJECT' : 'SCALAR')

const args = (...pairs: [string, string][]) => pairs.map(([name, type]) => ({ name, type: ref(type) }))

t.test('functionShapes', async (t) => {
  const p = await graphqlProject(t, SETUP)

  t.test('on: the served functions and their arguments', async (t) => {
    const fields = `{ __type(name: "Query") { fields { name args { name type { kind name ofType { kind name } } } } } }`
    const response = await p.gql(fields)
    const shaped = ['added', 'count_mood', 'echo_moods', 'findByFirst', 'findById', 'mood_of', 'suffixed', 'times']
    const query = (response.data as { __type: { fields: { name: string }[] } }).__type.fields.filter((f) => shaped.includes(f.name) || f.name.startsWith('find') || f.name === 'clash')
    t.same(query, [
      { name: 'added', args: args(['a', 'Int!'], ['arg2', 'Int']) },
      { name: 'count_mood', args: args(['m', 'mood!']) },
      { name: 'echo_moods', args: [{ name: 'ms', type: { kind: 'NON_NULL', name: null, ofType: { kind: 'LIST', name: null } } }] },
      {
        name: 'findByFirst',
        args: args(['prefix', 'String!'], ['first', 'Int'], ['last', 'Int'], ['before', 'Cursor'], ['after', 'Cursor'], ['offset', 'Int'], ['filter', 'accountFilter'])
          .concat([{ name: 'orderBy', type: { kind: 'LIST', name: null, ofType: { kind: 'NON_NULL', name: null } } }]),
      },
      { name: 'findById', args: args(['id', 'Int!']) },
      { name: 'mood_of', args: args(['who', 'Int!']) },
      { name: 'suffixed', args: args(['arg1', 'Int!'], ['suffix', 'String']) },
      { name: 'times', args: args(['arg1', 'Int!'], ['arg2', 'Int']) },
    ], 'an unnamed overload and an argument name clashing with arg<n> stay out')

    const account = `{ __type(name: "account") { fields { name args { name type { kind name ofType { kind name } } } } } }`
    const computed = ((await p.gql(account)).data as { __type: { fields: { name: string }[] } }).__type.fields
      .filter((f) => ['greeting', 'initials', 'scaled', 'feeling', 'others'].includes(f.name))
    t.same(computed, [
      { name: 'feeling', args: [] },
      { name: 'greeting', args: args(['salutation', 'String']) },
      { name: 'initials', args: [] },
      {
        name: 'others',
        args: args(['above', 'Int!'], ['first', 'Int'], ['last', 'Int'], ['before', 'Cursor'], ['after', 'Cursor'], ['offset', 'Int'], ['filter', 'accountFilter'])
          .concat([{ name: 'orderBy', type: { kind: 'LIST', name: null, ofType: { kind: 'NON_NULL', name: null } } }]),
      },
      { name: 'scaled', args: args(['arg2', 'Int!']) },
    ])

    const filter = `{ __type(name: "accountFilter") { inputFields { name type { name } } } }`
    t.same(await p.gql(filter), {
      data: {
        __type: {
          inputFields: [
            { name: 'id', type: { name: 'IntFilter' } }, { name: 'owner', type: { name: 'UUIDFilter' } },
            { name: 'first', type: { name: 'StringFilter' } }, { name: 'last', type: { name: 'StringFilter' } },
            { name: 'mood', type: { name: 'moodFilter' } }, { name: 'nodeId', type: { name: 'IDFilter' } },
            { name: 'and', type: { name: null } }, { name: 'or', type: { name: null } }, { name: 'not', type: { name: 'accountFilter' } },
            { name: 'feeling', type: { name: 'moodFilter' } }, { name: 'greeting', type: { name: 'StringFilter' } },
            { name: 'initials', type: { name: 'StringFilter' } },
          ],
        },
      },
    }, 'scalar computed fields callable with the row alone; scaled (a required argument) and others (a connection) are not')
  })

  t.test('on: overloads, unnamed arguments, enums', async (t) => {
    t.same(await p.gql(`{ findById(id: 2) { id first } none: findById(id: 99) { id } findByFirst(prefix: "B") { edges { node { id } } } }`), {
      data: { findById: { id: 2, first: 'Bob' }, none: null, findByFirst: { edges: [{ node: { id: 2 } }] } },
    })
    t.same(await p.gql(`{ t1: times(arg1: 3) t2: times(arg1: 3, arg2: 5) s1: suffixed(arg1: 5) s2: suffixed(arg1: 5, suffix: "?") a1: added(a: 10) a2: added(a: 10, arg2: 5) }`), {
      data: { t1: 6, t2: 15, s1: '5!', s2: '5?', a1: 12, a2: 15 },
    })
    t.same(await p.gql(`{ mood_of(who: 2) happy: mood_of(who: 1) count_mood(m: SO_SO) echo_moods(ms: [SO_SO, sad]) }`), {
      data: { mood_of: 'SO_SO', happy: 'happy', count_mood: 1, echo_moods: ['SO_SO', 'sad'] },
    }, 'enum values mapped both ways')
    t.same(await p.gql(`query($m: mood!) { count_mood(m: $m) }`, { variables: { m: 'sad' } }), { data: { count_mood: 1 } })
  })

  t.test('on: computed fields with arguments', async (t) => {
    t.same(await p.gql(`{ accountByPk(id: 2) { greeting hi: greeting(salutation: "Hi") initials scaled(arg2: 10) feeling others(above: 0, first: 5) { edges { node { id } } } } }`), {
      data: {
        accountByPk: {
          greeting: 'Hello, Bob', hi: 'Hi, Bob', initials: 'BR', scaled: 20, feeling: 'SO_SO',
          others: { edges: [{ node: { id: 1 } }, { node: { id: 3 } }] },
        },
      },
    })
    // The same field with other arguments on each row of a collection, and through a mutation's records.
    t.same(await p.gql(`{ accountCollection(first: 2) { edges { node { id scaled(arg2: 3) greeting(salutation: "Yo") } } } }`), {
      data: { accountCollection: { edges: [{ node: { id: 1, scaled: 3, greeting: 'Yo, Ann' } }, { node: { id: 2, scaled: 6, greeting: 'Yo, Bob' } }] } },
    })
  })

  t.test('on: computed fields in filters', async (t) => {
    const ids = (filter: string) => p.gql(`{ accountCollection(filter: ${filter}) { edges { node { id } } } }`)
    t.same(await ids(`{greeting: {eq: "Hello, Cy"}}`), { data: { accountCollection: { edges: [{ node: { id: 3 } }] } } }, 'called with its defaults')
    t.same(await ids(`{initials: {in: ["AL", "CO"]}}`), { data: { accountCollection: { edges: [{ node: { id: 1 } }, { node: { id: 3 } }] } } })
    t.same(await ids(`{or: [{feeling: {eq: SO_SO}}, {initials: {startsWith: "A"}}]}`), { data: { accountCollection: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }] } } })
    t.same(await ids(`{not: {feeling: {in: [happy, sad]}}, initials: {is: NOT_NULL}}`), { data: { accountCollection: { edges: [{ node: { id: 2 } }] } } })
    t.same(await p.gql(`query($i: String) { accountCollection(filter: {initials: {eq: $i}}) { edges { node { id } } } }`, { variables: { i: 'BR' } }), {
      data: { accountCollection: { edges: [{ node: { id: 2 } }] } },
    })
  })

  t.test('on: refusals', async (t) => {
    t.same(await p.gql(`{ find(id: 1) }`), { data: null, errors: [{ message: 'Cannot query field "find" on type "Query".' }] })
    t.same(await p.gql(`{ clash(arg1: 1) }`), { data: null, errors: [{ message: 'Cannot query field "clash" on type "Query".' }] })
    t.same(await p.gql(`{ times }`), { data: null, errors: [{ message: 'Field "times" argument "arg1" of type "Int!" is required, but it was not provided.' }] })
    t.same(await p.gql(`{ added(arg2: 1) }`), { data: null, errors: [{ message: 'Field "added" argument "a" of type "Int!" is required, but it was not provided.' }] })
    t.same(await p.gql(`{ count_mood(m: so_so) }`), { data: null, errors: [{ message: 'Value "so_so" does not exist in "mood" enum. Did you mean the enum value "SO_SO"?' }] })
    t.same(await p.gql(`{ count_mood(m: "sad") }`), { data: null, errors: [{ message: 'Enum "mood" cannot represent non-enum value: "sad". Did you mean the enum value "sad"?' }] })
    t.same(await p.gql(`{ accountByPk(id: 1) { scaled } }`), { data: null, errors: [{ message: 'Field "scaled" argument "arg2" of type "Int!" is required, but it was not provided.' }] })
    t.same(await p.gql(`{ accountCollection(filter: {scaled: {eq: 1}}) { edges { node { id } } } }`), {
      data: null, errors: [{ message: 'Field "scaled" is not defined by type "accountFilter".' }],
    })
    t.same(await p.gql(`{ accountCollection(filter: {initials: {eq: 1}}) { edges { node { id } } } }`), {
      data: null, errors: [{ message: 'String cannot represent a non string value: 1' }],
    })
    t.same(await p.gql(`mutation { set_mood(who: 1, m: sad) }`), { data: null, errors: [{ message: 'no sad moods' }] })
    t.same((await p.sql(`select mood::text from account where id = 1`)).rows, [{ mood: 'happy' }], 'the refused call wrote nothing')
  })

  t.test('on: under RLS', async (t) => {
    const asAnon = { role: 'anon' }
    const asAnn = { role: 'authenticated', sub: ANN }
    const asBob = { role: 'authenticated', sub: BOB }
    const doc = `{ count_mood(m: SO_SO) findById(id: 2) { first } accountCollection(filter: {initials: {neq: "XX"}}) { edges { node { id greeting(salutation: "Hey") } } } }`
    t.same(await p.gql(doc, asAnon), {
      data: { count_mood: 0, findById: null, accountCollection: { edges: [{ node: { id: 1, greeting: 'Hey, Ann' } }] } },
    })
    t.same(await p.gql(doc, asAnn), {
      data: { count_mood: 1, findById: { first: 'Bob' }, accountCollection: { edges: [{ node: { id: 1, greeting: 'Hey, Ann' } }, { node: { id: 2, greeting: 'Hey, Bob' } }] } },
    })
    t.same(await p.gql(`{ accountByPk(id: 1) { others(above: 0) { edges { node { id } } } } }`, asBob), {
      data: { accountByPk: { others: { edges: [{ node: { id: 3 } }] } } },
    }, 'a computed connection reads only rows the caller may see')
    // A filter on a computed field limits an update; RLS still decides which rows it may touch.
    const update = `mutation { updateaccountCollection(set: {last: "New"}, filter: {initials: {in: ["BR", "CO"]}}, atMost: 5) { affectedCount records { id initials scaled(arg2: 2) } } }`
    t.same(await p.gql(update, asAnn), { data: { updateaccountCollection: { affectedCount: 1, records: [{ id: 2, initials: 'BN', scaled: 4 }] } } })
    t.same(await p.gql(`mutation { set_mood(who: 3, m: happy) }`, asAnn), { data: { set_mood: null } }, "Bob's row is not Ann's to change or see")
    t.same(await p.gql(`mutation { set_mood(who: 2, m: happy) }`, asAnn), { data: { set_mood: 'happy' } })
    t.same((await p.sql(`select id, last, mood::text from account order by id`)).rows, [
      { id: 1, last: 'Lee', mood: 'happy' }, { id: 2, last: 'New', mood: 'happy' }, { id: 3, last: 'Orr', mood: 'sad' },
    ])
    await p.sql(`update account set last = 'Ray', mood = 'so_so' where id = 2`)
  })

  t.test('on: prepared statements, one per shape', async (t) => {
    const db = apiDatabaseOf(p.project)
    const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
    await client.connect()
    t.teardown(() => client.end())
    const cache = new SchemaCache()
    const who: RequestIdentity = { role: 'service_role', claims: { role: 'service_role' } }
    const ask = (request: GraphqlRequest) =>
      resolve(client, request, { cache, transaction: 'none', setup: identityStatement(who, p.project.roleTimeouts), speculationKey: who.role })
    const prepared = async () =>
      (await client.query<{ n: number }>(`select count(*)::int as n from pg_prepared_statements where name like 'baseplane\\_q\\_%' and statement like '%"public"."times"(%'`)).rows
    const query = `query($n: Int!, $s: String, $m: mood!) { times(arg1: $n) count_mood(m: $m) accountCollection(filter: {greeting: {eq: $s}}) { edges { node { scaled(arg2: $n) } } } }`
    t.same(await ask({ query, variables: { n: 2, s: 'Hello, Ann', m: 'happy' } }), { data: { times: 4, count_mood: 1, accountCollection: { edges: [{ node: { scaled: 2 } }] } } })
    t.same(await ask({ query, variables: { n: 3, s: 'Hello, Cy', m: 'sad' } }), { data: { times: 6, count_mood: 1, accountCollection: { edges: [{ node: { scaled: 9 } }] } } })
    const before = await prepared()
    t.same(await ask({ query, variables: { n: 4, s: 'Hello, Bob', m: 'SO_SO' } }), { data: { times: 8, count_mood: 1, accountCollection: { edges: [{ node: { scaled: 8 } }] } } })
    t.same(await prepared(), before, 'other values, the same statement')
    t.same(before, [{ n: 2 }], 'the first request prepares the data statement alone, later ones the one that also reads the schema key')
  })

  t.test('off: pg_graphql rules', async (t) => {
    await p.sql(OFF)
    const unknown = (field: string, type = 'Query', hint = '') => ({ data: null, errors: [{ message: `Cannot query field "${field}" on type "${type}".${hint}` }] })
    t.same(await p.gql(`{ findById(id: 1) { id } }`), unknown('findById'))
    t.same(await p.gql(`{ times(arg1: 1) }`), unknown('times'))
    t.same(await p.gql(`{ mood_of(who: 1) }`), unknown('mood_of'))
    t.same(await p.gql(`{ count_mood(m: happy) }`), unknown('count_mood'))
    t.same(await p.gql(`{ accountByPk(id: 1) { greeting } }`), unknown('greeting', 'account'))
    t.same(await p.gql(`{ accountByPk(id: 1) { feeling } }`), unknown('feeling', 'account'))
    t.same(await p.gql(`{ accountByPk(id: 1) { initials } }`), { data: { accountByPk: { initials: 'AL' } } }, 'a computed field of the row alone is served as before')
    t.same(await p.gql(`{ accountCollection(filter: {initials: {eq: "AL"}}) { edges { node { id } } } }`), {
      data: null, errors: [{ message: 'Field "initials" is not defined by type "accountFilter".' }],
    })
    t.same(await p.gql(`mutation { set_mood(who: 1, m: happy) }`), { data: null, errors: [{ message: 'Cannot query field "set_mood" on type "Mutation".' }] })
    const fields = ((await p.gql(`{ __type(name: "Query") { fields { name } } }`)).data as { __type: { fields: { name: string }[] } }).__type.fields.map((f) => f.name)
    t.same(fields, ['accountByPk', 'accountCollection', 'node'], 'only what pg_graphql serves')
  })
})
