// SPEC 2.4 `domains` (schema): a domain-typed column, function argument or
// result has its base type (through domains over domains; a domain over an
// array, or an array of a domain, is a list of the base) instead of Opaque,
// and a write that breaks a domain's check is refused with PostgreSQL's text
// and writes nothing.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const ON = `comment on schema public is e'@graphql({"domains": {"enabled": true}})'`

const SETUP = `
  ${ON};
  create domain posint as int check (value > 0);
  create domain small as posint check (value < 100);
  create domain email as text check (value like '%@%');
  create domain short as varchar(5);
  create domain tags as text[] check (cardinality(value) <= 2);
  create type mood as enum ('happy', 'sad');
  create domain feeling as mood;
  create table person (
    id int primary key, age small, mail email not null, nick short, tags tags, scores posint[], feeling feeling,
    owner uuid default auth.uid()
  );
  insert into person values
    (1, 30, 'ann@x', 'ann', '{a,b}', '{1,2}', 'happy', '${ANN}'),
    (2, 50, 'bob@y', null, '{b}', '{3}', 'sad', '${BOB}'),
    (3, null, 'pub@z', 'pub', null, null, null, null);
  alter table person enable row level security;
  create policy read on person for select using (owner is null or owner = auth.uid());
  create policy add on person for insert to authenticated with check (owner = auth.uid());
  create policy edit on person for update to authenticated using (owner = auth.uid());
  create function next_age(a small) returns small language sql immutable as 'select a + 1';
  create function tag_pair(a text, b text) returns tags language sql immutable as 'select array[a, b]';
  create function add_person(id int, age small, mail email) returns int language sql volatile
    as 'insert into person (id, age, mail, owner) values (id, age, mail, null) returning id';
`

t.test('domains', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const people = (args: string, options = {}) => p.gql(`{ personCollection${args} { edges { node { id age mail nick tags scores feeling } } } }`, options)
  const ids = (...list: number[]) => ({ data: { personCollection: { edges: list.map((id) => ({ node: { id } })) } } })
  const idsWhere = (filter: string, options = {}) => p.gql(`{ personCollection(filter: ${filter}) { edges { node { id } } } }`, options)
  const ann = { id: 1, age: 30, mail: 'ann@x', nick: 'ann', tags: ['a', 'b'], scores: [1, 2], feeling: 'happy' }
  const bob = { id: 2, age: 50, mail: 'bob@y', nick: null, tags: ['b'], scores: [3], feeling: 'sad' }
  const pub = { id: 3, age: null, mail: 'pub@z', nick: 'pub', tags: null, scores: null, feeling: null }

  t.test('columns read as their base types', async (t) => {
    t.same(await people(''), { data: { personCollection: { edges: [{ node: ann }, { node: bob }, { node: pub }] } } })
  })

  t.test('and filter as their base types', async (t) => {
    t.same(await idsWhere(`{age: {gt: 40}}`), ids(2))
    t.same(await idsWhere(`{age: {in: [30, 50]}, mail: {like: "%@y"}}`), ids(2))
    t.same(await idsWhere(`{nick: {startsWith: "a"}}`), ids(1))
    t.same(await idsWhere(`{tags: {contains: ["b"]}}`), ids(1, 2))
    t.same(await idsWhere(`{scores: {overlaps: [2, 3]}}`), ids(1, 2))
    t.same(await idsWhere(`{feeling: {eq: sad}}`), ids(2))
    t.same(await idsWhere(`{age: {eq: -1}}`), ids(), 'a value outside the domain matches nothing')
    const query = `query ($a: Int) { personCollection(filter: {age: {lt: $a}}) { edges { node { id } } } }`
    t.same(await p.gql(query, { variables: { a: 40 } }), ids(1))
    t.same(await p.gql(query, { variables: { a: 60 } }), ids(1, 2))
  })

  t.test('cursors page through an order by a domain (over an enum too)', async (t) => {
    // As the signed-in Ann: rows 1 and 3 (Bob's row is his). Keys compare as the base type.
    const as = { role: 'authenticated', sub: ANN }
    for (const [orderBy, expected] of [
      ['[{feeling: DescNullsFirst}]', [3, 1]],
      ['[{feeling: AscNullsLast}]', [1, 3]],
      ['[{age: DescNullsLast}]', [1, 3]],
    ] as const) {
      const first = await p.gql(`{ personCollection(first: 1, orderBy: ${orderBy}) { edges { node { id } } pageInfo { endCursor hasNextPage } } }`, as)
      const page = (first.data as { personCollection: { edges: { node: { id: number } }[]; pageInfo: { endCursor: string; hasNextPage: boolean } } }).personCollection
      t.same(page.edges.map((e) => e.node.id), [expected[0]], `${orderBy}: first page`)
      t.equal(page.pageInfo.hasNextPage, true, `${orderBy}: more to come`)
      const next = await p.gql(`query($c: Cursor) { personCollection(first: 1, after: $c, orderBy: ${orderBy}) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } }`, { ...as, variables: { c: page.pageInfo.endCursor } })
      t.same(next, { data: { personCollection: { edges: [{ node: { id: expected[1] } }], pageInfo: { hasNextPage: false, hasPreviousPage: true } } } }, `${orderBy}: second page`)
    }
  })

  t.test('function arguments and results', async (t) => {
    t.same(await p.gql(`{ next_age(a: 41) tag_pair(a: "x", b: "y") }`), { data: { next_age: 42, tag_pair: ['x', 'y'] } })
    t.same(await p.gql(`{ next_age(a: 0) }`), { data: null, errors: [{ message: 'value for domain small violates check constraint "posint_check"' }] })
    t.same(await p.gql(`{ next_age(a: 99) }`), { data: null, errors: [{ message: 'value for domain small violates check constraint "small_check"' }] })
    t.same(await p.gql(`{ next_age(a: "1") }`), { data: null, errors: [{ message: 'Int cannot represent non-integer value: "1"' }] })
    t.same(await p.gql(`mutation { add_person(id: 9, age: 0, mail: "n@n") }`), {
      data: null,
      errors: [{ message: 'value for domain small violates check constraint "posint_check"' }],
    })
    t.same(await p.gql(`mutation { add_person(id: 9, age: 5, mail: "none") }`), {
      data: null,
      errors: [{ message: 'value for domain email violates check constraint "email_check"' }],
    })
    t.same(await idsWhere(`{id: {eq: 9}}`), ids(), 'nothing was written')
    t.same(await p.gql(`mutation { add_person(id: 9, age: 5, mail: "n@n") }`), { data: { add_person: 9 } })
    await p.sql(`delete from person where id = 9`)
  })

  t.test('writes that break a check are refused and write nothing', async (t) => {
    const insert = (objects: string) => p.gql(`mutation { insertIntopersonCollection(objects: ${objects}) { affectedCount records { id age tags } } }`)
    t.same(await insert(`[{id: 4, age: 7, mail: "d@d", tags: ["x"], scores: [4]}]`), {
      data: { insertIntopersonCollection: { affectedCount: 1, records: [{ id: 4, age: 7, tags: ['x'] }] } },
    })
    t.same(await insert(`[{id: 5, age: 8, mail: "e@e"}, {id: 6, age: 100, mail: "f@f"}]`), {
      data: null,
      errors: [{ message: 'value for domain small violates check constraint "small_check"' }],
    })
    t.same(await insert(`[{id: 5, mail: "no at sign"}]`), { data: null, errors: [{ message: 'value for domain email violates check constraint "email_check"' }] })
    t.same(await insert(`[{id: 5, mail: "e@e", tags: ["a", "b", "c"]}]`), { data: null, errors: [{ message: 'value for domain tags violates check constraint "tags_check"' }] })
    t.same(await insert(`[{id: 5, mail: "e@e", scores: [1, -1]}]`), { data: null, errors: [{ message: 'value for domain posint violates check constraint "posint_check"' }] })
    t.same(await insert(`[{id: 5, mail: "e@e", nick: "toolong"}]`), { data: null, errors: [{ message: 'Invalid input for String type. Maximum character length 5' }] })
    t.same(await p.gql(`mutation { updatepersonCollection(set: {age: 0}, filter: {id: {eq: 4}}) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'value for domain small violates check constraint "posint_check"' }],
    })
    t.same(await p.gql(`{ personCollection(filter: {id: {gte: 4}}) { edges { node { id age } } } }`), {
      data: { personCollection: { edges: [{ node: { id: 4, age: 7 } }] } },
    }, 'only the first insert was kept')
    await p.sql(`delete from person where id = 4`)
  })

  t.test('row level security: anon and a signed-in user', async (t) => {
    t.same(await idsWhere(`{age: {gt: 0}}`, { role: 'anon' }), ids())
    t.same(await idsWhere(`{age: {gt: 0}}`, { role: 'authenticated', sub: ANN }), ids(1))
    t.same(await idsWhere(`{tags: {contains: ["b"]}}`, { role: 'authenticated', sub: BOB }), ids(2))
    const edit = (age: number) => `mutation { updatepersonCollection(set: {age: ${age}}, filter: {id: {eq: 1}}) { affectedCount records { age } } }`
    t.same(await p.gql(edit(31), { role: 'authenticated', sub: BOB }), { data: { updatepersonCollection: { affectedCount: 0, records: [] } } })
    t.same(await p.gql(edit(0), { role: 'authenticated', sub: ANN }), {
      data: null,
      errors: [{ message: 'value for domain small violates check constraint "posint_check"' }],
    })
    t.same(await p.gql(edit(31), { role: 'authenticated', sub: ANN }), { data: { updatepersonCollection: { affectedCount: 1, records: [{ age: 31 }] } } })
    const add = `mutation { insertIntopersonCollection(objects: [{id: 7, age: 20, mail: "g@g"}]) { records { id age owner } } }`
    t.same(await p.gql(add, { role: 'authenticated', sub: BOB }), { data: { insertIntopersonCollection: { records: [{ id: 7, age: 20, owner: BOB }] } } })
    await p.sql(`delete from person where id = 7; update person set age = 30 where id = 1`)
  })

  t.test('off: domains are Opaque, as before', async (t) => {
    await p.sql(`comment on schema public is null`)
    t.same(await people(''), { data: { personCollection: { edges: [{ node: ann }, { node: bob }, { node: pub }] } } })
    t.same(await idsWhere(`{age: {gt: 40}}`), { data: null, errors: [{ message: 'Field "gt" is not defined by type "OpaqueFilter".' }] })
    t.same(await idsWhere(`{age: {eq: 50}}`), ids(2))
    t.same(await p.gql(`{ next_age(a: "41") }`), { data: { next_age: 42 } })
    await p.sql(ON)
  })
})
