// lib/sql-statements.ts, the SQL editor's cut of a text into statements:
// semicolons inside quotes, dollar quotes, comments and BEGIN ATOMIC bodies
// do not cut; blanks and comments alone are no statement; the words that say
// what a statement is; which statements would end a transaction; positions.
import t from 'tap'
import { charactersBefore, comparableSql, controlsTransaction, lineAndColumn, splitStatements } from '../../lib/sql-statements.ts'

const texts = (sql: string) => splitStatements(sql).map((s) => s.text.trim())

t.test('cuts at semicolons outside quotes, dollar quotes and comments', async (t) => {
  t.same(texts('select 1; select 2;select 3'), ['select 1', 'select 2', 'select 3'])
  t.same(texts("select 'a;b', \"c;d\", E'e\\';f', 'g'';h'; select 2"), ["select 'a;b', \"c;d\", E'e\\';f', 'g'';h'", 'select 2'])
  t.same(texts("select 'a\\'; select 2"), ["select 'a\\'", 'select 2'], 'a plain string takes no backslash escape')
  t.same(texts('select $$a;b$$, $x$ $$;$$ $x$, $1; select 2'), ['select $$a;b$$, $x$ $$;$$ $x$, $1', 'select 2'])
  t.same(texts('select 1 -- a; comment\n; /* one /* nested; */ still; */ select 2'), ['select 1 -- a; comment', '/* one /* nested; */ still; */ select 2'])
  t.same(texts('  ;; -- nothing\n ; /* none */'), [], 'blanks and comments are no statement')
})

t.test('a BEGIN ATOMIC body is one statement, CASE counted against END as psql counts', async (t) => {
  const sql = 'create or replace function f(x int) returns int language sql begin atomic select case when x > 0 then 1 else 0 end; select 2; end; select f(1)'
  t.same(texts(sql), ['create or replace function f(x int) returns int language sql begin atomic select case when x > 0 then 1 else 0 end; select 2; end', 'select f(1)'])
  t.same(texts('create procedure p() language sql begin atomic insert into t values (1); end; call p()').length, 2)
  t.same(texts('select case when true then 1 end; select 2').length, 2, 'CASE elsewhere does not hold the cut')
})

t.test('the first words, and the statements that end a transaction', async (t) => {
  t.same(splitStatements('/* c */ -- d\n  Rollback To Savepoint s').map((s) => s.words), [['rollback', 'to', 'savepoint', 's']])
  for (const sql of ['begin', 'BEGIN ISOLATION LEVEL SERIALIZABLE', 'start transaction', 'commit', 'commit prepared \'x\'', 'end', 'rollback', 'rollback and chain', 'abort', 'prepare transaction \'x\'']) {
    t.ok(controlsTransaction(splitStatements(sql)[0]!.words), sql)
  }
  for (const sql of ['rollback to s', 'rollback work to savepoint s', 'savepoint s', 'release s', 'prepare q as select 1', 'select 1', 'start_x()']) {
    t.notOk(controlsTransaction(splitStatements(sql)[0]!.words), sql)
  }
})

t.test('where a statement starts, in characters, and a position as line and column', async (t) => {
  const sql = "select 'é😀';\n  selec 2"
  const second = splitStatements(sql)[1]!
  t.equal(sql.slice(second.start), '\n  selec 2')
  t.equal(charactersBefore(sql, second.start), 12, 'the emoji is one character, as PostgreSQL counts')
  t.same(lineAndColumn(sql, 16), { line: 2, column: 3 })
  t.same(lineAndColumn('select', 1), { line: 1, column: 1 })
})

// A migration's file as the ledger records it (control-plane/migrations.ts: each statement trimmed), and the form two migrations are compared in.
t.test('a migration file: split at the semicolons outside quotes, comments and bodies', async (t) => {
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
    statements.map((s) => s.text.trim()),
    [
      "-- a comment; with a semicolon\ncreate table a (id int, note text default 'x;y')",
      "/* nested /* comment; */ still ; inside */\ncreate function f() returns text language sql as $$ select ';' $$",
      "create function g() returns text language plpgsql as $body$ begin return 'a'; end $body$",
      'create function h() returns int language sql begin atomic select case when true then 1 end; select 2; end',
      "insert into a (note) values (E'it\\'s; here'), ('it''s; here')",
      'select "odd;name" from a',
    ],
  )
  const third = statements[2]!
  const offset = third.start + (third.text.length - third.text.trimStart().length)
  t.same(lineAndColumn(sql, charactersBefore(sql, offset) + 1), { line: 5, column: 1 }, 'each statement knows where it starts')
  t.same(splitStatements('-- nothing here\n/* at all */\n;\n'), [], 'comments only: no statement')
})

t.test('two migrations compared without comments, whitespace and semicolons', async (t) => {
  const before = splitStatements("create table a (id int);\ninsert into a values (1);").map((s) => s.text.trim())
  const reformatted = splitStatements("-- the table\ncreate table a (\n  id int\n);\n\ninsert into a values (1) -- one row\n").map((s) => s.text.trim())
  const changed = splitStatements('create table a (id bigint);\ninsert into a values (1);').map((s) => s.text.trim())
  const added = splitStatements('create table a (id int);\ninsert into a values (1);\ninsert into a values (2);').map((s) => s.text.trim())
  t.equal(comparableSql(reformatted), comparableSql(before))
  t.not(comparableSql(changed), comparableSql(before))
  t.not(comparableSql(added), comparableSql(before))
})
