// Functions (stable/immutable on Query, volatile on Mutation), computed
// fields, functions returning rows and sets, and views with a key by comment.
import t from 'tap'
import { adminQuery, serverUrl } from '../helpers/db.ts'
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

// Which functions pg_graphql serves and how their arguments look (its
// function_calls, function_calls_default_args and function_calls_unsupported
// tests): defaults read from pg_get_expr's text, Opaque for types without a
// scalar (timetz), out arguments shaping the result; enums, records, void,
// unnamed and variadic arguments, overloads and row arguments leave a function out.
const SIGNATURES = `
  comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
  create type algorithm as enum ('aead-ietf');
  create table account (id int primary key);
  create function both_args_optional(a smallint default null, b integer default null) returns text language sql immutable
    as $$ select case when a is null and b is null then 'both null' when a is null then 'b = ' || b when b is null then 'a = ' || a else 'a = ' || a || ', b = ' || b end $$;
  create function func_with_null_defaults(
    a smallint default null, b int default null, c bigint default null, d real default null, e double precision default null,
    f numeric default null, g bool default null, h uuid default null, i text default null, j date default null, k time default null,
    l time with time zone default null, m timestamp default null, n timestamptz default null, o json default null, p jsonb default null,
    q char(2) default null, r varchar(2) default null
  ) returns text language sql immutable as $$
    select coalesce(nullif(concat_ws(', ', a, b, c, d, e, f, g::text, h, i, j, k, l, m, n, o, p, q, r), ''), 'all args null') $$;
  create function defaul_null_mixed_case(a smallint default null, b integer default NULL, c integer default NuLl) returns text language sql immutable as $$ select 'mixed case' $$;
  create function shown_defaults(a int default 5, b bool default true, c float8 default 1.5, d text default 'it''s', e int2 default 3,
    f int default -2, g date default current_date, h varchar default 'v') returns text language sql stable
    as $$ select concat_ws(',', a, b, c, d, e, f, g is not null, h) $$;
  create function array_default(arr smallint[] = '{4, 2}') returns smallint[] language sql stable as 'select arr';
  create function comma_default(a int default 1, b text default 'x,y') returns text language sql stable as $$ select a || b $$;
  create function next_hour_with_timezone(t time with time zone) returns time with time zone language sql immutable as $$ select t + interval '1 hour' $$;
  create function concat_chars(a char(2), b char(3)) returns char(5) language sql stable as $$ select (a::char(2) || b::char(3))::char(5) $$;
  create function doubled(a int, out twice int) language sql stable as 'select a * 2';
  create function bumped(inout n int) language sql stable as 'select n + 1';
  create function returns_record() returns record language sql stable as 'select 1, 2';
  create function two_outs(a int, out x int, out y int) language sql stable as 'select a, a';
  create function accepts_row_and_int(rec account, x int) returns int language sql stable as 'select x';
  create function an_overloaded_function() returns int language sql stable as 'select 1';
  create function an_overloaded_function(a int) returns int language sql stable as 'select 2';
  create function no_arg_name(int) returns int language sql immutable as 'select 42';
  create function variadic_func(variadic a int[]) returns int language sql immutable as 'select 42';
  create function void_returning_func() returns void language sql immutable as '';
  create function returns_setof_int() returns setof int language sql stable as 'select 1';
  create function return_algorithm() returns algorithm language sql stable as $$ select 'aead-ietf'::algorithm $$;
  create function accept_algorithm(e algorithm) returns int language sql stable as 'select 0';
  create function return_algorithm_array() returns algorithm[] language sql stable as $$ select array['aead-ietf']::algorithm[] $$;
  create function accept_algorithm_array(e algorithm[]) returns int language sql stable as 'select 0';
`

/** An introspected type reference, three levels deep as the query asks. */
function typeRef(text: string, depth = 3): Record<string, unknown> {
  const level = (kind: string, name: string | null, inner: string | undefined) =>
    depth === 1 ? { kind, name } : { kind, name, ofType: inner === undefined ? null : typeRef(inner, depth - 1) }
  if (text.endsWith('!')) return level('NON_NULL', null, text.slice(0, -1))
  if (text.startsWith('[')) return level('LIST', null, text.slice(1, -1))
  return level(/(Filter|OrderBy)$/.test(text) ? 'INPUT_OBJECT' : 'SCALAR', text, undefined)
}

const arg = (name: string, type: string, defaultValue: string | null = null) => ({ name, defaultValue, type: typeRef(type) })
const nullDefaults = (names: string, type: string) => names.split('').map((n) => arg(n, type))

t.test('function signatures', async (t) => {
  const p = await graphqlProject(t, SIGNATURES)
  await adminQuery(await serverUrl(), `alter database "${p.project.dbName}" set timezone to 'Asia/Kolkata'`)
  const functionFields = `{ __type(name: "Query") { fields { name args { name defaultValue type { kind name ofType { kind name ofType { kind name } } } } } } }`
  const paging = [arg('first', 'Int'), arg('last', 'Int'), arg('before', 'Cursor'), arg('after', 'Cursor'), arg('offset', 'Int')]
  t.same(
    await p.gql(functionFields),
    {
      data: {
        __type: {
          fields: [
            { name: 'accountByPk', args: [arg('id', 'Int!')] },
            { name: 'accountCollection', args: [...paging, arg('filter', 'AccountFilter'), arg('orderBy', '[AccountOrderBy!]')] },
            { name: 'arrayDefault', args: [arg('arr', '[Int]!')] },
            { name: 'bothArgsOptional', args: [arg('a', 'Int'), arg('b', 'Int')] },
            { name: 'bumped', args: [arg('n', 'Int!')] },
            { name: 'commaDefault', args: [arg('a', 'Int!'), arg('b', 'String!')] },
            { name: 'concatChars', args: [arg('a', 'String!'), arg('b', 'String!')] },
            { name: 'defaulNullMixedCase', args: nullDefaults('abc', 'Int') },
            { name: 'doubled', args: [arg('a', 'Int!')] },
            {
              name: 'funcWithNullDefaults',
              args: [
                ...nullDefaults('ab', 'Int'), arg('c', 'BigInt'), ...nullDefaults('de', 'Float'), arg('f', 'BigFloat'), arg('g', 'Boolean'),
                arg('h', 'UUID'), arg('i', 'String'), arg('j', 'Date'), arg('k', 'Time'), arg('l', 'Opaque'), ...nullDefaults('mn', 'Datetime'),
                ...nullDefaults('op', 'JSON'), ...nullDefaults('qr', 'String'),
              ],
            },
            { name: 'nextHourWithTimezone', args: [arg('t', 'Opaque!')] },
            { name: 'node', args: [arg('nodeId', 'ID!')] },
            {
              name: 'shownDefaults',
              args: [arg('a', 'Int', '5'), arg('b', 'Boolean', 'true'), arg('c', 'Float', '1.5'), arg('d', 'String', `"it''s"`), arg('e', 'Int', '3'), arg('f', 'Int'), arg('g', 'Date'), arg('h', 'String')],
            },
          ],
        },
      },
    },
    'served functions and their arguments; the others are left out',
  )

  t.same(await p.gql(`{ none: bothArgsOptional a: bothArgsOptional(a: 1) b: bothArgsOptional(b: 2) ab: bothArgsOptional(a: 1, b: 2) }`), {
    data: { none: 'both null', a: 'a = 1', b: 'b = 2', ab: 'a = 1, b = 2' },
  })
  t.same(await p.gql(`{ funcWithNullDefaults defaulNullMixedCase }`), { data: { funcWithNullDefaults: 'all args null', defaulNullMixedCase: 'mixed case' } })
  t.same(
    await p.gql(`{ funcWithNullDefaults(a: 1, b: 2, c: 3, d: 1.1, e: 2.3, f: "3.4", g: false, h: "8871277a-de9c-4156-b31f-5b4060001081", i: "text",
      j: "2023-07-28", k: "10:20", l: "10:20+05:30", m: "2023-07-28 12:39:05", n: "2023-07-28 12:39:05Z", o: "{\\"a\\": {\\"b\\": \\"foo\\"}}",
      p: "{\\"a\\": {\\"b\\": \\"foo\\"}}", q: "hi", r: "ho") }`),
    {
      data: {
        funcWithNullDefaults: '1, 2, 3, 1.1, 2.3, 3.4, false, 8871277a-de9c-4156-b31f-5b4060001081, text, 2023-07-28, 10:20:00, 10:20:00+05:30, ' +
          '2023-07-28 12:39:05, 2023-07-28 18:09:05+05:30, {"a": {"b": "foo"}}, {"a": {"b": "foo"}}, hi, ho',
      },
    },
  )
  // An omitted argument takes the function's own default; an explicit null is passed as null.
  t.same(await p.gql(`query($a: Int) { omitted: shownDefaults unset: shownDefaults(a: $a) nulled: shownDefaults(a: null) }`, { variables: {} }), {
    data: { omitted: "5,t,1.5,it's,3,-2,t,v", unset: "5,t,1.5,it's,3,-2,t,v", nulled: "t,1.5,it's,3,-2,t,v" },
  })
  t.same(await p.gql(`{ arrayDefault }`), {
    data: null,
    errors: [{ message: 'Field "arrayDefault" argument "arr" of type "[Int]!" is required, but it was not provided.' }],
  })
  t.same(await p.gql(`{ arrayDefault(arr: [1, null]) commaDefault(a: 1, b: "z") }`), { data: { arrayDefault: [1, null], commaDefault: '1z' } })
  t.same(await p.gql(`{ nextHourWithTimezone(t: "10:20+05:30") concatChars(a: "He", b: "llo") doubled(a: 2) bumped(n: 1) }`), {
    data: { nextHourWithTimezone: '11:20:00+05:30', concatChars: 'Hello', doubled: 4, bumped: 2 },
  })
  t.same(await p.gql(`{ acceptAlgorithm(e: "aead-ietf") }`), { data: null, errors: [{ message: 'Cannot query field "acceptAlgorithm" on type "Query".' }] })
})
