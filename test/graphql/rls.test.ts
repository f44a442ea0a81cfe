// Row-level security and grants: the request runs as anon or as the user of
// the token, so policies decide rows, and the schema shows only what the
// role may use.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

t.test('rls and role-limited schema', async (t) => {
  const p = await graphqlProject(t, `
    create table note (id serial primary key, owner uuid not null default auth.uid(), body text not null, public boolean not null default false);
    alter table note enable row level security;
    create policy read_public on note for select using (public or owner = auth.uid());
    create policy write_own on note for insert to authenticated with check (owner = auth.uid());
    create policy update_own on note for update to authenticated using (owner = auth.uid());
    create policy delete_own on note for delete to authenticated using (owner = auth.uid());
    insert into note (owner, body, public) values ('${ANN}', 'ann public', true), ('${ANN}', 'ann private', false), ('${BOB}', 'bob private', false);
    create table secret (id int primary key, v text);
    revoke all on secret from anon, authenticated;
  `)
  const bodies = `{ noteCollection { edges { node { body } } } }`
  t.strictSame(await p.gql(bodies, { role: 'anon' }), { data: { noteCollection: { edges: [{ node: { body: 'ann public' } }] } } })
  t.strictSame(await p.gql(bodies, { role: 'authenticated', sub: ANN }), {
    data: { noteCollection: { edges: [{ node: { body: 'ann public' } }, { node: { body: 'ann private' } }] } },
  })
  t.strictSame(await p.gql(bodies, { role: 'authenticated', sub: BOB }), {
    data: { noteCollection: { edges: [{ node: { body: 'ann public' } }, { node: { body: 'bob private' } }] } },
  })

  t.strictSame(await p.gql(`mutation { insertIntonoteCollection(objects: [{body: "by bob"}]) { records { body } } }`, { role: 'authenticated', sub: BOB }), {
    data: { insertIntonoteCollection: { records: [{ body: 'by bob' }] } },
  })
  t.strictSame(await p.gql(`mutation { insertIntonoteCollection(objects: [{body: "as ann", owner: "${ANN}"}]) { affectedCount } }`, { role: 'authenticated', sub: BOB }), {
    data: null,
    errors: [{ message: 'new row violates row-level security policy for table "note"' }],
  })
  t.strictSame(await p.gql(`mutation { deleteFromnoteCollection(filter: {body: {eq: "ann private"}}) { affectedCount } }`, { role: 'authenticated', sub: BOB }), {
    data: { deleteFromnoteCollection: { affectedCount: 0 } },
  }, 'rows hidden by RLS are not matched')
  t.strictSame(await p.gql(`mutation { updatenoteCollection(set: {body: "edited"}, filter: {body: {eq: "ann private"}}) { affectedCount records { body } } }`, { role: 'authenticated', sub: ANN }), {
    data: { updatenoteCollection: { affectedCount: 1, records: [{ body: 'edited' }] } },
  })

  t.test('a to-one relation to a row hidden by RLS is null', async (t) => {
    await p.sql(`create table reply (id int primary key, note_id int not null references note(id), body text not null);
      insert into reply values (1, 1, 'on ann public'), (2, 2, 'on ann private'), (3, 3, 'on bob private');
      grant select on reply to anon, authenticated`)
    const replies = `{ replyCollection { edges { node { body note { body } } } } }`
    t.strictSame(await p.gql(replies, { role: 'authenticated', sub: BOB }), {
      data: { replyCollection: { edges: [
        { node: { body: 'on ann public', note: { body: 'ann public' } } },
        { node: { body: 'on ann private', note: null } },
        { node: { body: 'on bob private', note: { body: 'bob private' } } },
      ] } },
    })
    t.strictSame(await p.gql(replies, { role: 'anon' }), {
      data: { replyCollection: { edges: [
        { node: { body: 'on ann public', note: { body: 'ann public' } } },
        { node: { body: 'on ann private', note: null } },
        { node: { body: 'on bob private', note: null } },
      ] } },
    })
    await p.sql(`drop table reply`)
  })

  t.test('the schema shows only what the role may use', async (t) => {
    t.strictSame(await p.gql(`{ secretCollection { edges { node { id } } } }`, { role: 'anon' }), {
      data: null,
      errors: [{ message: 'Cannot query field "secretCollection" on type "Query". Did you mean "noteCollection"?' }],
    })
    t.strictSame(await p.gql(`{ secretCollection { edges { node { id } } } }`), { data: { secretCollection: { edges: [] } } })
    await p.sql(`revoke insert, update, delete on note from anon`)
    t.strictSame(await p.gql(`mutation { deleteFromnoteCollection { affectedCount } }`, { role: 'anon' }), {
      data: null,
      errors: [{ message: 'Schema is not configured to execute mutation operation.' }],
    })
    await p.sql(`revoke select (body) on note from authenticated; revoke select on note from authenticated; grant select (id) on note to authenticated`)
    t.strictSame(await p.gql(`{ noteCollection(first: 1) { edges { node { id body } } } }`, { role: 'authenticated', sub: ANN }), {
      data: null,
      errors: [{ message: 'Cannot query field "body" on type "note".' }],
    })
  })
})
