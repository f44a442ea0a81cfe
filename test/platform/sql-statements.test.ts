// How a migration's file is split into the statements the ledger records
// (lib/sql-statements.ts), and the form two migrations are compared in.
import t from 'tap'
import { comparableSql, lineAndColumn, splitStatements } from '../../lib/sql-statements.ts'

t.test('splits at the semicolons outside quotes, comments and bodies', async (t) => {
  const sql = [
    '-- a comment; with a semicolon',
    'create table a (id int, note text default \'x;y\');',
    '/* nested /* comment; */ still ; inside */',
    'create function f() returns text language sql as $$ select \';\' $$;',
    'create function g() returns text language plpgsql as $body$ begin return \'a\'; end $body$;',
    'create function h() returns int language sql begin atomic select case when true then 1 end; select 2; end;',
    "insert into a (note) values (E'it\\'s; here'), ('it''s; here');",
    'select "odd;name" from a;',
    '-- only a comment at the end;',
  ].join('\n')
  const statements = splitStatements(sql)
  t.same(
    statements.map((s) => s.text),
    [
      "-- a comment; with a semicolon\ncreate table a (id int, note text default 'x;y')",
      "/* nested /* comment; */ still ; inside */\ncreate function f() returns text language sql as $$ select ';' $$",
      "create function g() returns text language plpgsql as $body$ begin return 'a'; end $body$",
      'create function h() returns int language sql begin atomic select case when true then 1 end; select 2; end',
      "insert into a (note) values (E'it\\'s; here'), ('it''s; here')",
      'select "odd;name" from a',
    ],
  )
  t.same(lineAndColumn(sql, statements[2]!.offset), { line: 5, column: 1 }, 'each statement knows where it starts')
  t.same(splitStatements('-- nothing here\n/* at all */\n;\n'), [], 'comments only: no statement')
})

t.test('compares without comments, whitespace and semicolons', async (t) => {
  const before = splitStatements("create table a (id int);\ninsert into a values (1);").map((s) => s.text)
  const reformatted = splitStatements("-- the table\ncreate table a (\n  id int\n);\n\ninsert into a values (1) -- one row\n").map((s) => s.text)
  const changed = splitStatements('create table a (id bigint);\ninsert into a values (1);').map((s) => s.text)
  const added = splitStatements('create table a (id int);\ninsert into a values (1);\ninsert into a values (2);').map((s) => s.text)
  t.equal(comparableSql(reformatted), comparableSql(before))
  t.not(comparableSql(changed), comparableSql(before))
  t.not(comparableSql(added), comparableSql(before))
})
