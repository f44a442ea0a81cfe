// Functions (stable/immutable on Query, volatile on Mutation), computed
// fields, functions returning rows and sets, and views with a key by comment.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('functions and views', async (t) => {
  const p = await graphqlProject(t, `
    create table account (id serial primary key, first text not null, last text not null);
    insert into account (first, last) values ('Ann', 'Lee'), ('Bob', 'Ray');
    create function full_name(rec account) returns text language sql stable as $$ select rec.first || ' ' || rec.last $$;
    create function add(a int, b int default 10) returns int language sql immutable as 'select a + b';
    create function accounts_named(prefix text) returns setof account language sql stable as $$ select * from account where first like prefix || '%' $$;
    create function first_account() returns account language sql stable as $$ select * from account order by id limit 1 $$;
    create function bump(n int) returns int language plpgsql volatile as $$ begin update account set last = last || '!' where id = n; return n; end $$;
    create function overloaded(a int) returns int language sql immutable as 'select a';
    create function overloaded(a text) returns text language sql immutable as 'select a';
    create view account_view as select id, first from account;
    comment on view account_view is e'@graphql({"primary_key_columns": ["id"], "totalCount": {"enabled": true}, "foreign_keys": [{"local_name": "viewRows", "local_columns": ["id"], "foreign_name": "base", "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["id"]}]})';
    create view no_key as select 1 as x;
    create table note (id int primary key, account_id int references account(id));
    insert into note values (1, 2), (2, null);
  `)
  // A computed field of a row reached through a foreign key (a joined row, not a subquery).
  t.strictSame(await p.gql(`{ noteCollection { edges { node { id account { id full_name } } } } }`), {
    data: { noteCollection: { edges: [{ node: { id: 1, account: { id: 2, full_name: 'Bob Ray' } } }, { node: { id: 2, account: null } }] } },
  })
  await p.sql(`drop table note`)
  t.strictSame(await p.gql(`{ add(a: 1) two: add(a: 1, b: 1) accountByPk(id: 1) { full_name } first_account { id } }`), {
    data: { add: 11, two: 2, accountByPk: { full_name: 'Ann Lee' }, first_account: { id: 1 } },
  })
  t.strictSame(await p.gql(`{ accounts_named(prefix: "B") { edges { node { id full_name } } } }`), {
    data: { accounts_named: { edges: [{ node: { id: 2, full_name: 'Bob Ray' } }] } },
  })
  t.strictSame(await p.gql(`mutation { bump(n: 2) }`), { data: { bump: 2 } })
  t.strictSame(await p.gql(`{ bump(n: 2) }`), { data: null, errors: [{ message: 'Cannot query field "bump" on type "Query".' }] })
  t.strictSame(await p.gql(`{ overloaded(a: 1) }`), { data: null, errors: [{ message: 'Cannot query field "overloaded" on type "Query".' }] })
  t.strictSame(await p.gql(`{ account_viewCollection { totalCount edges { node { id first base { last } } } } accountByPk(id: 2) { viewRows { first } } }`), {
    data: {
      account_viewCollection: { totalCount: 2, edges: [{ node: { id: 1, first: 'Ann', base: { last: 'Lee' } } }, { node: { id: 2, first: 'Bob', base: { last: 'Ray!' } } }] },
      accountByPk: { viewRows: { first: 'Bob' } },
    },
  })
  t.strictSame(await p.gql(`{ no_keyCollection { totalCount } }`), { data: null, errors: [{ message: 'Cannot query field "no_keyCollection" on type "Query". Did you mean "accountCollection"?' }] })
})
