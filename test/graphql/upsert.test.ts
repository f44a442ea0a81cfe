// SPEC 2.4 `upsert`: `onConflict: {constraint, updateFields, filter}` on the
// insert. Off unless a comment turns it on (table, or schema unless the table
// says otherwise); without updateFields a conflicting row is left and not
// returned; filter limits which existing rows are updated; row-level security
// holds for both the insert and the update, as anon and as a signed-in user.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

t.test('upsert', async (t) => {
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"introspection": true})';
    create table tag (id serial primary key, label text not null unique, uses int not null default 0, note text, code text, "true" int);
    create unique index tag_code_partial on tag (code) where code is not null;
    alter table tag add constraint "bad-name" unique (uses, label);
    comment on table tag is e'@graphql({"upsert": {"enabled": true}})';
    insert into tag (label, uses, note) values ('a', 1, 'first'), ('b', 2, null);
    create table plain (id int primary key, v text);
    insert into plain values (1, 'one');
  `)
  const tags = async () => (await p.sql('select label, uses, note from tag order by id')).rows
  const upsert = (objects: string, onConflict: string, select = 'affectedCount records { label uses note }') =>
    p.gql(`mutation { insertIntotagCollection(objects: ${objects}, onConflict: ${onConflict}) { ${select} } }`)

  t.test('schema: the constraints by name, the updatable fields, the filter; nothing on a table without it', async (t) => {
    t.strictSame(
      await p.gql(`{
        c: __type(name: "tagConstraint") { kind enumValues { name } }
        u: __type(name: "tagUpdateField") { enumValues { name } }
        o: __type(name: "tagOnConflict") { inputFields { name type { kind name ofType { name } } } }
        m: __type(name: "Mutation") { fields { name args { name type { name } } } }
      }`),
      {
        data: {
          // The partial unique index is no constraint; "bad-name" is no GraphQL name.
          c: { kind: 'ENUM', enumValues: [{ name: 'tag_label_key' }, { name: 'tag_pkey' }] },
          // id is serial (not updatable); "true" is no enum value.
          u: { enumValues: [{ name: 'label' }, { name: 'uses' }, { name: 'note' }, { name: 'code' }] },
          o: {
            inputFields: [
              { name: 'constraint', type: { kind: 'NON_NULL', name: null, ofType: { name: 'tagConstraint' } } },
              { name: 'updateFields', type: { kind: 'LIST', name: null, ofType: { name: null } } },
              { name: 'filter', type: { kind: 'INPUT_OBJECT', name: 'tagFilter', ofType: null } },
            ],
          },
          m: {
            fields: [
              { name: 'deleteFromplainCollection', args: [{ name: 'filter', type: { name: 'plainFilter' } }, { name: 'atMost', type: { name: null } }] },
              { name: 'deleteFromtagCollection', args: [{ name: 'filter', type: { name: 'tagFilter' } }, { name: 'atMost', type: { name: null } }] },
              { name: 'insertIntoplainCollection', args: [{ name: 'objects', type: { name: null } }] },
              { name: 'insertIntotagCollection', args: [{ name: 'objects', type: { name: null } }, { name: 'onConflict', type: { name: 'tagOnConflict' } }] },
              { name: 'updateplainCollection', args: [{ name: 'set', type: { name: null } }, { name: 'filter', type: { name: 'plainFilter' } }, { name: 'atMost', type: { name: null } }] },
              { name: 'updatetagCollection', args: [{ name: 'set', type: { name: null } }, { name: 'filter', type: { name: 'tagFilter' } }, { name: 'atMost', type: { name: null } }] },
            ],
          },
        },
      },
    )
    t.strictSame(await p.gql(`mutation { insertIntoplainCollection(objects: [{id: 1, v: "x"}], onConflict: {constraint: plain_pkey}) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'Unknown argument "onConflict" on field "Mutation.insertIntoplainCollection".' }],
    })
    t.strictSame((await p.sql('select v from plain')).rows, [{ v: 'one' }])
  })

  t.test('without updateFields a conflicting row is left as it is and not returned', async (t) => {
    t.strictSame(await upsert(`[{label: "a", uses: 5}, {label: "c", uses: 3}]`, `{constraint: tag_label_key}`), {
      data: { insertIntotagCollection: { affectedCount: 1, records: [{ label: 'c', uses: 3, note: null }] } },
    })
    t.strictSame(await upsert(`[{label: "a", uses: 6}]`, `{constraint: tag_label_key, updateFields: []}`), {
      data: { insertIntotagCollection: { affectedCount: 0, records: [] } },
    }, 'an empty list is no update')
    t.strictSame(await tags(), [{ label: 'a', uses: 1, note: 'first' }, { label: 'b', uses: 2, note: null }, { label: 'c', uses: 3, note: null }])
  })

  t.test('updateFields: inserted and updated rows, each field taking the inserted value (its default when not given)', async (t) => {
    t.strictSame(await upsert(`[{label: "a", uses: 10}, {label: "d"}]`, `{constraint: tag_label_key, updateFields: [uses, uses]}`), {
      data: { insertIntotagCollection: { affectedCount: 2, records: [{ label: 'a', uses: 10, note: 'first' }, { label: 'd', uses: 0, note: null }] } },
    })
    t.strictSame(
      await p.gql(`mutation($objs: [tagInsertInput!]!, $c: tagOnConflict) { insertIntotagCollection(objects: $objs, onConflict: $c) { affectedCount records { label uses note } } }`, {
        variables: { objs: [{ label: 'a', uses: 11 }], c: { constraint: 'tag_label_key', updateFields: ['note'] } },
      }),
      { data: { insertIntotagCollection: { affectedCount: 1, records: [{ label: 'a', uses: 10, note: null }] } } },
      'note is not given, so it takes its default (null); uses is not updated',
    )
    t.strictSame(await tags(), [
      { label: 'a', uses: 10, note: null }, { label: 'b', uses: 2, note: null }, { label: 'c', uses: 3, note: null }, { label: 'd', uses: 0, note: null },
    ])
  })

  t.test('filter: only existing rows it matches are updated (and returned)', async (t) => {
    t.strictSame(
      await upsert(`[{label: "a", uses: 20}, {label: "c", uses: 20}, {label: "e", uses: 20}]`, `{constraint: tag_label_key, updateFields: [uses], filter: {uses: {lt: 5}}}`),
      { data: { insertIntotagCollection: { affectedCount: 2, records: [{ label: 'c', uses: 20, note: null }, { label: 'e', uses: 20, note: null }] } } },
    )
    t.strictSame(
      await upsert(`[{label: "a", uses: 30}]`, `{constraint: tag_label_key, updateFields: [uses], filter: {or: [{label: {eq: "zz"}}, {not: {uses: {lt: 5}}}]}}`),
      { data: { insertIntotagCollection: { affectedCount: 1, records: [{ label: 'a', uses: 30, note: null }] } } },
    )
    t.strictSame((await p.sql(`select label, uses from tag where label in ('a', 'c', 'e') order by label`)).rows, [
      { label: 'a', uses: 30 }, { label: 'c', uses: 20 }, { label: 'e', uses: 20 },
    ])
  })

  t.test('refusals: clear errors, nothing written', async (t) => {
    const before = await tags()
    t.strictSame(await upsert(`[{label: "new1"}]`, `{constraint: tag_label_key, filter: {uses: {lt: 5}}}`), {
      data: null,
      errors: [{ message: 'onConflict.filter needs updateFields: without them an existing record is left as it is, so there is nothing to filter' }],
    })
    t.strictSame(await upsert(`[{label: "new1"}]`, `{constraint: "tag_label_key"}`), {
      data: null,
      errors: [{ message: 'Enum "tagConstraint" cannot represent non-enum value: "tag_label_key". Did you mean the enum value "tag_label_key"?' }],
    })
    t.strictSame(await upsert(`[{label: "new1"}]`, `{constraint: tag_code_partial}`), {
      data: null,
      errors: [{ message: 'Value "tag_code_partial" does not exist in "tagConstraint" enum.' }],
    })
    t.strictSame(await upsert(`[{label: "new1"}]`, `{updateFields: [uses]}`), {
      data: null,
      errors: [{ message: 'Field "tagOnConflict.constraint" of required type "tagConstraint!" was not provided.' }],
    })
    t.strictSame(await upsert(`[{label: "new1"}]`, `{constraint: tag_label_key, updateFields: [id]}`), {
      data: null,
      errors: [{ message: 'Value "id" does not exist in "tagUpdateField" enum.' }],
    })
    t.strictSame(await upsert(`[{label: "a", uses: 1}, {label: "a", uses: 2}]`, `{constraint: tag_label_key, updateFields: [uses]}`), {
      data: null,
      errors: [{ message: 'ON CONFLICT DO UPDATE command cannot affect row a second time' }],
    }, 'PostgreSQL refuses two rows of one batch on the same key')
    t.strictSame(await upsert(`[{label: "new1", uses: 1}, {label: "b", uses: 2}]`, `{constraint: tag_pkey, updateFields: [uses]}`), {
      data: null,
      errors: [{ message: 'duplicate key value violates unique constraint "tag_label_key"' }],
    }, 'a conflict on another constraint than the one named is an error')
    t.strictSame(await tags(), before)
  })

  t.test('with validation off the planner refuses what the schema would', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"validation": {"enabled": false}})'`)
    t.teardown(() => p.sql(`comment on schema public is e'@graphql({"introspection": true})'`))
    const before = await tags()
    t.strictSame(await upsert(`[{label: "new2"}]`, `{constraint: tag_label_key, filter: {uses: {eq: 1}}}`), {
      data: null,
      errors: [{ message: 'onConflict.filter needs updateFields: without them an existing record is left as it is, so there is nothing to filter' }],
    })
    t.strictSame(await upsert(`[{label: "a"}]`, `{constraint: tag_label_key}`), { data: { insertIntotagCollection: { affectedCount: 0, records: [] } } })
    t.strictSame(await tags(), before)
  })

  t.test('on the schema: every table, unless its own comment turns it off', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"upsert": {"enabled": true}})';
      comment on table tag is e'@graphql({"upsert": {"enabled": false}})'`)
    t.teardown(() => p.sql(`comment on schema public is e'@graphql({"introspection": true})';
      comment on table tag is e'@graphql({"upsert": {"enabled": true}})'`))
    t.strictSame(await p.gql(`mutation { insertIntoplainCollection(objects: [{id: 1, v: "uno"}], onConflict: {constraint: plain_pkey, updateFields: [v]}) { affectedCount records { id v } } }`), {
      data: { insertIntoplainCollection: { affectedCount: 1, records: [{ id: 1, v: 'uno' }] } },
    })
    t.strictSame(await upsert(`[{label: "a"}]`, `{constraint: tag_label_key}`), {
      data: null,
      errors: [{ message: 'Unknown argument "onConflict" on field "Mutation.insertIntotagCollection".' }],
    })
  })
})

t.test('upsert under row-level security', async (t) => {
  const p = await graphqlProject(t, `
    create table note (id int primary key, owner uuid default auth.uid(), body text not null);
    comment on table note is e'@graphql({"upsert": {"enabled": true}})';
    alter table note enable row level security;
    create policy read on note for select using (true);
    create policy insert_own on note for insert to authenticated with check (owner = auth.uid());
    create policy update_own on note for update to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
    create policy insert_anon on note for insert to anon with check (owner is null);
    insert into note values (1, '${ANN}', 'ann'), (2, '${BOB}', 'bob'), (3, null, 'nobody');
  `)
  const notes = async () => (await p.sql('select id, owner, body from note order by id')).rows
  const upsert = (objects: string, onConflict: string, sub?: string) =>
    p.gql(`mutation { insertIntonoteCollection(objects: ${objects}, onConflict: ${onConflict}) { affectedCount records { id body } } }`,
      sub ? { role: 'authenticated', sub } : { role: 'anon' })

  t.test('a signed-in user updates own rows and inserts new ones', async (t) => {
    t.strictSame(await upsert(`[{id: 2, body: "bob 2"}, {id: 4, body: "bob new"}]`, `{constraint: note_pkey, updateFields: [body]}`, BOB), {
      data: { insertIntonoteCollection: { affectedCount: 2, records: [{ id: 2, body: 'bob 2' }, { id: 4, body: 'bob new' }] } },
    })
  })

  t.test("another's row: the update policy's error passes through, nothing kept", async (t) => {
    const before = await notes()
    t.strictSame(await upsert(`[{id: 5, body: "bob five"}, {id: 1, body: "taken by bob"}]`, `{constraint: note_pkey, updateFields: [body]}`, BOB), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy (USING expression) for table "note"' }],
    })
    t.strictSame(await notes(), before)
    t.strictSame(await upsert(`[{id: 1, body: "taken by bob"}]`, `{constraint: note_pkey}`, BOB), {
      data: { insertIntonoteCollection: { affectedCount: 0, records: [] } },
    }, 'left as it is, nothing to check')
    t.strictSame(await upsert(`[{id: 1, body: "taken by bob"}]`, `{constraint: note_pkey, updateFields: [body], filter: {body: {eq: "other"}}}`, BOB), {
      data: { insertIntonoteCollection: { affectedCount: 0, records: [] } },
    }, 'the filter is applied before the policy: a row it rejects is not checked')
    t.strictSame(await notes(), before)
  })

  t.test('anon: the insert policy holds for new rows; with no update policy, no update', async (t) => {
    const before = await notes()
    t.strictSame(await upsert(`[{id: 6, body: "anon six"}]`, `{constraint: note_pkey, updateFields: [body]}`), {
      data: { insertIntonoteCollection: { affectedCount: 1, records: [{ id: 6, body: 'anon six' }] } },
    })
    t.strictSame(await upsert(`[{id: 3, body: "anon takes three"}]`, `{constraint: note_pkey, updateFields: [body]}`), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy (USING expression) for table "note"' }],
    })
    t.strictSame(await upsert(`[{id: 7, body: "as ann", owner: "${ANN}"}]`, `{constraint: note_pkey}`), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy for table "note"' }],
    })
    t.strictSame(await notes(), [...before, { id: 6, owner: null, body: 'anon six' }])
  })
})

t.test('a table whose upsert types would take another type\'s name goes without onConflict', async (t) => {
  // `tag_constraint`'s type is TagConstraint, the name tag's constraint enum would take: the schema still builds,
  // tag's insert has no onConflict, and the schema report says why.
  const p = await graphqlProject(t, `
    comment on schema public is e'@graphql({"inflect_names": true, "upsert": {"enabled": true}, "schemaReport": {"enabled": true}})';
    create table tag (id serial primary key, label text unique not null);
    create table tag_constraint (id int primary key, note text);
    create table plain (id int primary key, v text);
  `)
  t.strictSame(await p.gql(`mutation { insertIntoTagCollection(objects: [{label: "a"}], onConflict: {constraint: tag_label_key}) { affectedCount } }`), {
    data: null,
    errors: [{ message: 'Unknown argument "onConflict" on field "Mutation.insertIntoTagCollection".' }],
  })
  t.strictSame(await p.gql(`mutation { insertIntoTagConstraintCollection(objects: [{id: 1, note: "n"}]) { records { id note } } }`), {
    data: { insertIntoTagConstraintCollection: { records: [{ id: 1, note: 'n' }] } },
  }, 'the clashing table is served as before')
  t.strictSame(await p.gql(`mutation { insertIntoPlainCollection(objects: [{id: 1, v: "one"}], onConflict: {constraint: plain_pkey, updateFields: [v]}) { affectedCount } }`), {
    data: { insertIntoPlainCollection: { affectedCount: 1 } },
  }, 'other tables keep their upsert')
  const report = await p.gql(`{ __typename }`, { extensions: { schemaReport: true } })
  const tables = ((report as { extensions?: unknown }).extensions as { schemaReport: { tables: { name: string; upsert?: string }[] } }).schemaReport.tables
  t.strictSame(tables.map((x) => [x.name, x.upsert ?? null]), [
    ['plain', null],
    ['tag', 'upsert left out: a type name it needs (<Type>Constraint, <Type>UpdateField or <Type>OnConflict) is taken by another type'],
    ['tag_constraint', null],
  ])
})
