// Grants and shapes pg_graphql exposes: the insert (update) mutation offered
// to a role with only column-level INSERT (UPDATE) privileges, its input
// limited to the granted columns (pg_graphql's is_any_column_insertable and
// its InsertInput of insertable columns); overloads of one function name that
// each take a different table's row are a computed field of each table (its
// issue 334); a computed field returning one row of a view without a key
// gives the view an object type (no collection) and is a nullable object.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('column-level grants', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"introspection": true})';
    create table note (id int primary key, title text, body text, secret text);
    insert into note values (1, 'a', 'b', 'c');
    revoke all on note from authenticated;
    grant select on note to authenticated;
    grant insert (id, title) on note to authenticated;
    grant update (body) on note to authenticated;
  `)
  const as = { role: 'authenticated', sub: '00000000-0000-0000-0000-000000000001' }

  t.test('insert and update are offered, their inputs the granted columns only; delete is not', async (t) => {
    const answer = await p.gql(`{
      m: __type(name: "Mutation") { fields { name } }
      i: __type(name: "noteInsertInput") { inputFields { name } }
      u: __type(name: "noteUpdateInput") { inputFields { name } }
    }`, as)
    t.notOk('errors' in answer, 'no errors')
    t.strictSame(answer.data, {
      m: { fields: [{ name: 'insertIntonoteCollection' }, { name: 'updatenoteCollection' }] },
      i: { inputFields: [{ name: 'id' }, { name: 'title' }] },
      u: { inputFields: [{ name: 'body' }] },
    })
  })

  t.test('the granted columns are written', async (t) => {
    const insert = await p.gql(`mutation { insertIntonoteCollection(objects: [{id: 2, title: "t"}]) { affectedCount records { id title body } } }`, as)
    t.strictSame(insert, { data: { insertIntonoteCollection: { affectedCount: 1, records: [{ id: 2, title: 't', body: null }] } } })
    const update = await p.gql(`mutation { updatenoteCollection(set: {body: "x"}, filter: {id: {eq: 2}}) { records { id body } } }`, as)
    t.strictSame(update, { data: { updatenoteCollection: { records: [{ id: 2, body: 'x' }] } } })
  })

  t.test('a column without the grant is no input field', async (t) => {
    t.strictSame(await p.gql(`mutation { insertIntonoteCollection(objects: [{id: 3, secret: "s"}]) { affectedCount } }`, as), {
      data: null,
      errors: [{ message: 'Field "secret" is not defined by type "noteInsertInput".' }],
    })
    t.strictSame(await p.gql(`mutation { updatenoteCollection(set: {title: "s"}) { affectedCount } }`, as), {
      data: null,
      errors: [{ message: 'Field "title" is not defined by type "noteUpdateInput".' }],
    })
  })

  t.test('without any insert or update grant, neither is offered', async (t) => {
    await p.sql('revoke insert, update on note from authenticated')
    t.strictSame(await p.gql(`{ __schema { mutationType { name } } }`, as), { data: { __schema: { mutationType: null } } })
  })
})

t.test('overloads taking different tables\' rows are a computed field of each table (issue 334)', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true, "schemaReport": {"enabled": true}})';
    create table public.recipe_ingredient (id int primary key);
    create table public.recipe (id int primary key);
    insert into public.recipe (id) values (1);
    insert into public.recipe_ingredient (id) values (7);
    create function _calories(rec public.recipe_ingredient) returns smallint stable language sql as $$ select 10::smallint $$;
    create function _calories(rec public.recipe) returns smallint stable language sql as $$ select 1::smallint $$;
    create function _label(rec public.recipe) returns text stable language sql as $$ select 'one' $$;
    create function _label(rec public.recipe, n int) returns text stable language sql as $$ select 'two' $$;
  `)
  // pg_graphql's issue_334 answer.
  t.strictSame(await p.gql(`{ recipeCollection { edges { node { id calories } } } }`), {
    data: { recipeCollection: { edges: [{ node: { id: 1, calories: 1 } }] } },
  })
  t.strictSame(await p.gql(`{ recipeIngredientCollection { edges { node { id calories } } } }`), {
    data: { recipeIngredientCollection: { edges: [{ node: { id: 7, calories: 10 } }] } },
  })
  // Two overloads on one table still clash: neither is served.
  const report = await p.gql(`{ __typename }`, { extensions: { schemaReport: true } })
  t.notOk('errors' in report, 'no errors')
  const functions = (report as { extensions?: { schemaReport?: { functions: { name: string; signature: string; inSchema: boolean; reason?: string; on?: string }[] } } })
    .extensions!.schemaReport!.functions.map(({ signature, inSchema, reason, on }) => ({ signature, inSchema, ...(reason ? { reason } : {}), ...(on ? { on } : {}) }))
  t.strictSame(functions.sort((a, b) => (a.signature < b.signature ? -1 : 1)), [
    { signature: '_calories(rec recipe)', inSchema: true, on: 'Recipe' },
    { signature: '_calories(rec recipe_ingredient)', inSchema: true, on: 'RecipeIngredient' },
    { signature: '_label(rec recipe)', inSchema: false, reason: 'overloaded function' },
    { signature: '_label(rec recipe, n integer)', inSchema: false, reason: 'overloaded function' },
  ])
})

t.test('a computed field returning one row of a view without a key: an object type, no collection, a nullable field', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true, "introspection": true, "schemaReport": {"enabled": true}})';
    create table person (id int primary key, name text, phone text);
    create view person_card as select name, phone from person;
    create table post (id int primary key, person_id int references person (id), title text);
    create function _author(rec post) returns person_card stable language sql as $$ select name, phone from person_card c where c.name = (select name from person where id = rec.person_id) $$;
    create function _first_card(rec post) returns setof person_card rows 1 stable language sql as $$ select * from person_card limit 1 $$;
    create function _cards(rec post) returns setof person_card stable language sql as $$ select * from person_card $$;
    create function top_card() returns person_card stable language sql as $$ select * from person_card limit 1 $$;
    insert into person values (1, 'Ann', null), (2, null, null);
    insert into post values (10, 1, 'hello'), (11, 2, 'empty'), (12, null, 'nobody');
  `)
  const answer = await p.gql(`{
    card: __type(name: "PersonCard") { kind interfaces { name } fields { name type { kind name } } }
    post: __type(name: "Post") { fields { name type { kind name } } }
    query: __type(name: "Query") { fields { name } }
  }`)
  t.notOk('errors' in answer, 'no errors')
  t.strictSame(answer.data, {
    card: { kind: 'OBJECT', interfaces: [], fields: [{ name: 'name', type: { kind: 'SCALAR', name: 'String' } }, { name: 'phone', type: { kind: 'SCALAR', name: 'String' } }] },
    post: {
      fields: [
        { name: 'nodeId', type: { kind: 'NON_NULL', name: null } },
        { name: 'id', type: { kind: 'NON_NULL', name: null } },
        { name: 'personId', type: { kind: 'SCALAR', name: 'Int' } },
        { name: 'title', type: { kind: 'SCALAR', name: 'String' } },
        { name: 'person', type: { kind: 'OBJECT', name: 'Person' } },
        { name: 'author', type: { kind: 'OBJECT', name: 'PersonCard' } },
        { name: 'firstCard', type: { kind: 'OBJECT', name: 'PersonCard' } },
      ],
    },
    // No collection of the view, and a root function returning it stays hidden (pg_graphql's function_return_view_has_pkey).
    query: { fields: [{ name: 'node' }, { name: 'personByPk' }, { name: 'personCollection' }, { name: 'postByPk' }, { name: 'postCollection' }] },
  })
  // A row whose columns are all null is no row, as for any function returning a row.
  t.strictSame(await p.gql(`{ postCollection { edges { node { id author { name phone __typename } firstCard { name } } } } }`), {
    data: {
      postCollection: {
        edges: [
          { node: { id: 10, author: { name: 'Ann', phone: null, __typename: 'PersonCard' }, firstCard: { name: 'Ann' } } },
          { node: { id: 11, author: null, firstCard: { name: 'Ann' } } },
          { node: { id: 12, author: null, firstCard: { name: 'Ann' } } },
        ],
      },
    },
  })
  t.strictSame(await p.gql(`{ personCardCollection { edges { node { name } } } }`), {
    data: null,
    errors: [{ message: 'Cannot query field "personCardCollection" on type "Query". Did you mean "personCollection" or "postCollection"?' }],
  })
  const report = await p.gql(`{ __typename }`, { extensions: { schemaReport: true } })
  const tables = (report as { extensions?: { schemaReport?: { tables: { name: string }[] } } }).extensions!.schemaReport!.tables
  t.strictSame(tables.find((x) => x.name === 'person_card'), {
    schema: 'public', name: 'person_card', kind: 'view', inSchema: true, type: 'PersonCard',
    reason: 'no primary key: only the type of a computed field returning one of its rows, without a collection',
  })
})
