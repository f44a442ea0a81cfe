// Every scalar pg_graphql (v1.6) maps, read and written as a column, filtered
// with `eq`, and passed to and returned from functions (query and mutation
// fields, scalars and arrays), in pg_graphql's encodings: bigint and numeric
// as strings, json as its text, dates and times as PostgreSQL writes them in
// JSON (in the session's time zone, whatever the Node process's is).
import t from 'tap'
import { adminQuery, serverUrl } from '../helpers/db.ts'
import { graphqlProject } from './helpers.ts'

interface Kind {
  column: string
  sqlType: string
  /** The column's GraphQL type (of a variable holding its value). */
  graphqlType: string
  /** The value as SQL writes it (row 1), and a different one (row 3). */
  sql: string
  otherSql: string
  /** The same value as a GraphQL variable (row 2, function arguments). */
  value: unknown
  /** How pg_graphql writes it in a response. */
  out: unknown
  /** A function returning its argument writes it differently (a bpchar loses its column's padding). */
  functionOut?: unknown
  /** Enums: readable, writable and filterable columns, never function arguments or results. */
  noFunctions?: boolean
  noFilter?: boolean
}

const json = '{"b" : 1, "a": [1,2]}'
const KINDS: Kind[] = [
  { column: 'i2', sqlType: 'int2', graphqlType: 'Int', sql: '1', otherSql: '2', value: 1, out: 1 },
  { column: 'i4', sqlType: 'int4', graphqlType: 'Int', sql: '2147483647', otherSql: '2', value: 2147483647, out: 2147483647 },
  { column: 'i8', sqlType: 'int8', graphqlType: 'BigInt', sql: '9007199254740993', otherSql: '2', value: '9007199254740993', out: '9007199254740993' },
  { column: 'f4', sqlType: 'float4', graphqlType: 'Float', sql: '1.1', otherSql: '2', value: 1.1, out: 1.1 },
  { column: 'f8', sqlType: 'float8', graphqlType: 'Float', sql: '3.14159', otherSql: '2', value: 3.14159, out: 3.14159 },
  { column: 'num', sqlType: 'numeric', graphqlType: 'BigFloat', sql: '12345678901234567890.12300', otherSql: '2', value: '12345678901234567890.12300', out: '12345678901234567890.12300' },
  { column: 'b', sqlType: 'bool', graphqlType: 'Boolean', sql: 'true', otherSql: 'false', value: true, out: true },
  { column: 't', sqlType: 'text', graphqlType: 'String', sql: `'héllo "world"'`, otherSql: `'x'`, value: 'héllo "world"', out: 'héllo "world"' },
  { column: 'vc', sqlType: 'varchar(4)', graphqlType: 'String', sql: `'abcd'`, otherSql: `'x'`, value: 'abcd', out: 'abcd' },
  { column: 'ch', sqlType: 'char(4)', graphqlType: 'String', sql: `'ab'`, otherSql: `'x'`, value: 'ab', out: 'ab  ', functionOut: 'ab' },
  { column: 'd', sqlType: 'date', graphqlType: 'Date', sql: `'2023-07-29'`, otherSql: `'2023-07-30'`, value: '2023-07-29', out: '2023-07-29' },
  { column: 'tm', sqlType: 'time', graphqlType: 'Time', sql: `'10:20:30.5'`, otherSql: `'10:00'`, value: '10:20:30.5', out: '10:20:30.5' },
  { column: 'ttz', sqlType: 'timetz', graphqlType: 'Opaque', sql: `'10:20:30+05:30'`, otherSql: `'10:20:30+01'`, value: '10:20:30+05:30', out: '10:20:30+05:30' },
  { column: 'ts', sqlType: 'timestamp', graphqlType: 'Datetime', sql: `'2023-07-28 12:39:05.123456'`, otherSql: `'2023-07-28'`, value: '2023-07-28 12:39:05.123456', out: '2023-07-28T12:39:05.123456' },
  // The database's time zone is Asia/Kolkata (below), as in pg_graphql's own function tests.
  { column: 'tstz', sqlType: 'timestamptz', graphqlType: 'Datetime', sql: `'2023-07-28 12:39:05Z'`, otherSql: `'2023-07-28 12:39:06Z'`, value: '2023-07-28T12:39:05Z', out: '2023-07-28T18:09:05+05:30' },
  { column: 'iv', sqlType: 'interval', graphqlType: 'Opaque', sql: `'1 day 2 hours'`, otherSql: `'1 day'`, value: '1 day 2 hours', out: '1 day 02:00:00' },
  { column: 'j', sqlType: 'json', graphqlType: 'JSON', sql: `'${json}'`, otherSql: `'1'`, value: json, out: json, noFilter: true },
  { column: 'jb', sqlType: 'jsonb', graphqlType: 'JSON', sql: `'${json}'`, otherSql: `'1'`, value: json, out: '{"a": [1, 2], "b": 1}', noFilter: true },
  { column: 'u', sqlType: 'uuid', graphqlType: 'UUID', sql: `'d3ef3a8c-2c72-11ee-b094-776acede7221'`, otherSql: `'e8dc3a9a-2c72-11ee-b094-776acede6790'`, value: 'd3ef3a8c-2c72-11ee-b094-776acede7221', out: 'd3ef3a8c-2c72-11ee-b094-776acede7221' },
  { column: 'm', sqlType: 'mood', graphqlType: 'mood', sql: `'sad'`, otherSql: `'happy'`, value: 'sad', out: 'sad', noFunctions: true },
  { column: 'i4a', sqlType: 'int4[]', graphqlType: '[Int]', sql: `'{1,NULL,3}'`, otherSql: `'{2}'`, value: [1, null, 3], out: [1, null, 3], noFilter: true },
  { column: 'i8a', sqlType: 'int8[]', graphqlType: '[BigInt]', sql: `'{1,9007199254740993}'`, otherSql: `'{2}'`, value: ['1', '9007199254740993'], out: ['1', '9007199254740993'] },
  { column: 'f8a', sqlType: 'float8[]', graphqlType: '[Float]', sql: `'{1.5,-2}'`, otherSql: `'{2}'`, value: [1.5, -2], out: [1.5, -2] },
  { column: 'na', sqlType: 'numeric[]', graphqlType: '[BigFloat]', sql: `'{1.50,2}'`, otherSql: `'{2}'`, value: ['1.50', '2'], out: ['1.50', '2'] },
  { column: 'ba', sqlType: 'bool[]', graphqlType: '[Boolean]', sql: `'{true,false}'`, otherSql: `'{false}'`, value: [true, false], out: [true, false] },
  { column: 'ta', sqlType: 'text[]', graphqlType: '[String]', sql: `array['a', 'b,c', '"q"', 'back\\slash']`, otherSql: `'{x}'`, value: ['a', 'b,c', '"q"', 'back\\slash'], out: ['a', 'b,c', '"q"', 'back\\slash'] },
  { column: 'da', sqlType: 'date[]', graphqlType: '[Date]', sql: `'{2023-01-01,2023-01-02}'`, otherSql: `'{2023-01-03}'`, value: ['2023-01-01', '2023-01-02'], out: ['2023-01-01', '2023-01-02'] },
  { column: 'tma', sqlType: 'time[]', graphqlType: '[Time]', sql: `'{05:05}'`, otherSql: `'{05:06}'`, value: ['05:05'], out: ['05:05:00'] },
  { column: 'tsa', sqlType: 'timestamptz[]', graphqlType: '[Datetime]', sql: `'{2023-07-28 12:39:05Z}'`, otherSql: `'{2023-07-28 12:39:06Z}'`, value: ['2023-07-28 12:39:05Z'], out: ['2023-07-28T18:09:05+05:30'] },
  { column: 'ja', sqlType: 'json[]', graphqlType: '[JSON]', sql: `array['${json}'::json]`, otherSql: `array['1'::json]`, value: [json], out: [json], noFilter: true },
  { column: 'jba', sqlType: 'jsonb[]', graphqlType: '[JSON]', sql: `array['${json}'::jsonb]`, otherSql: `array['1'::jsonb]`, value: [json], out: ['{"a": [1, 2], "b": 1}'], noFilter: true },
  { column: 'ua', sqlType: 'uuid[]', graphqlType: '[UUID]', sql: `'{d3ef3a8c-2c72-11ee-b094-776acede7221}'`, otherSql: `'{e8dc3a9a-2c72-11ee-b094-776acede6790}'`, value: ['d3ef3a8c-2c72-11ee-b094-776acede7221'], out: ['d3ef3a8c-2c72-11ee-b094-776acede7221'] },
  { column: 'ma', sqlType: 'mood[]', graphqlType: '[mood]', sql: `'{happy,sad}'`, otherSql: `'{sad}'`, value: ['happy', 'sad'], out: ['happy', 'sad'], noFunctions: true, noFilter: true },
]

const columns = KINDS.map((k) => k.column).join(' ')
const functionKinds = KINDS.filter((k) => !k.noFunctions)
const SETUP = `
  create type mood as enum ('happy', 'sad');
  create table kinds (id int primary key, ${KINDS.map((k) => `${k.column} ${k.sqlType}`).join(', ')});
  insert into kinds (id, ${KINDS.map((k) => k.column).join(', ')}) values
    (1, ${KINDS.map((k) => k.sql).join(', ')}),
    (3, ${KINDS.map((k) => k.otherSql).join(', ')});
  insert into kinds (id) values (4);
  ${functionKinds.map((k) => `
    create function q_${k.column}(v ${k.sqlType}) returns ${k.sqlType} language sql stable as 'select v';
    create function m_${k.column}(v ${k.sqlType}) returns ${k.sqlType} language sql volatile as 'select v';`).join('')}
`

const row = (id: number, pick: (k: Kind) => unknown = (k) => k.out) => ({ id, ...Object.fromEntries(KINDS.map((k) => [k.column, pick(k)])) })
const variablesOf = (kinds: Kind[]) => Object.fromEntries(kinds.map((k) => [k.column, k.value]))
const declarations = (kinds: Kind[], required: boolean) => kinds.map((k) => `$${k.column}: ${k.graphqlType}${required ? '!' : ''}`).join(', ')

t.test('scalars', async (t) => {
  const p = await graphqlProject(t, SETUP)
  // Set before the first request opens a connection: every session of the API role has it.
  await adminQuery(await serverUrl(), `alter database "${p.project.dbName}" set timezone to 'Asia/Kolkata'`)

  t.test('a column of each type reads in pg_graphql encoding', async (t) => {
    t.same(await p.gql(`{ kindsByPk(id: 1) { id ${columns} } }`), { data: { kindsByPk: row(1) } })
    t.same(await p.gql(`{ kindsByPk(id: 4) { id ${columns} } }`), { data: { kindsByPk: row(4, () => null) } })
  })

  t.test('insert and update take every type and answer the stored values', async (t) => {
    t.same(
      await p.gql(`mutation($o: kindsInsertInput!) { insertIntokindsCollection(objects: [$o]) { affectedCount records { id ${columns} } } }`, {
        variables: { o: { id: 2, ...variablesOf(KINDS) } },
      }),
      { data: { insertIntokindsCollection: { affectedCount: 1, records: [row(2)] } } },
    )
    t.same(await p.gql(`{ kindsByPk(id: 2) { id ${columns} } }`), { data: { kindsByPk: row(2) } }, 'read back as written')
    // Written as literals in the document this time, the same values are stored again.
    const literals = 'i8: "9007199254740993", num: "12345678901234567890.12300", d: "2023-07-29", tstz: "2023-07-28T12:39:05Z", ' +
      'j: "{\\"b\\" : 1, \\"a\\": [1,2]}", m: sad, ma: [happy, sad], i4a: [1, null, 3], ttz: "10:20:30+05:30", ch: "ab"'
    t.same(
      await p.gql(`mutation { updatekindsCollection(set: {${literals}}, filter: {id: {eq: 4}}) { records { id i8 num d tstz j m ma i4a ttz ch } } }`),
      {
        data: {
          updatekindsCollection: {
            records: [{ id: 4, i8: '9007199254740993', num: '12345678901234567890.12300', d: '2023-07-29', tstz: '2023-07-28T18:09:05+05:30', j: json, m: 'sad', ma: ['happy', 'sad'], i4a: [1, null, 3], ttz: '10:20:30+05:30', ch: 'ab  ' }],
          },
        },
      },
    )
    await p.sql('update kinds set (i8, num, d, tstz, j, m, ma, i4a, ttz, ch) = (null, null, null, null, null, null, null, null, null, null) where id = 4')
  })

  t.test('eq filters each filterable type, its value cast to the column type', async (t) => {
    const filterable = KINDS.filter((k) => !k.noFilter)
    const listType = (k: Kind) => (k.graphqlType.startsWith('[') ? `[${k.graphqlType.slice(1, -1)}!]` : k.graphqlType)
    const query =
      `query(${filterable.map((k) => `$${k.column}: ${listType(k)}`).join(', ')}) {` +
      filterable.map((k) => ` ${k.column}: kindsCollection(filter: {${k.column}: {eq: $${k.column}}}) { edges { node { id } } }`).join('') +
      ' }'
    const both = { edges: [{ node: { id: 1 } }, { node: { id: 2 } }] }
    t.same(await p.gql(query, { variables: variablesOf(filterable) }), { data: Object.fromEntries(filterable.map((k) => [k.column, both])) })
  })

  t.test('each type passes through a function, as a query field and as a mutation field', async (t) => {
    const calls = (prefix: string) => functionKinds.map((k) => ` ${k.column}: ${prefix}_${k.column}(v: $${k.column})`).join('')
    const expected = Object.fromEntries(functionKinds.map((k) => [k.column, k.functionOut ?? k.out]))
    const variables = variablesOf(functionKinds)
    t.same(await p.gql(`query(${declarations(functionKinds, true)}) {${calls('q')} }`, { variables }), { data: expected })
    // A mutation's result used to go through the driver: a date became "2023-07-29T00:00:00.000Z"
    // in the Node process's time zone. Two zones far apart give the same answer.
    const tz = process.env.TZ
    try {
      for (const zone of ['Pacific/Kiritimati', 'America/Adak']) {
        process.env.TZ = zone
        t.same(await p.gql(`mutation(${declarations(functionKinds, true)}) {${calls('m')} }`, { variables }), { data: expected }, zone)
      }
    } finally {
      if (tz === undefined) delete process.env.TZ
      else process.env.TZ = tz
    }
  })

  t.test('null elements and empty arrays pass through functions; a required argument takes no null', async (t) => {
    t.same(await p.gql(`{ q_i4a(v: [null, 2]) q_ta(v: []) }`), { data: { q_i4a: [null, 2], q_ta: [] } })
    t.same(await p.gql(`mutation { m_i4a(v: [null]) m_ta(v: []) }`), { data: { m_i4a: [null], m_ta: [] } })
    t.same(await p.gql(`{ q_d(v: null) }`), { data: null, errors: [{ message: 'Expected value of type "Date!", found null.' }] })
  })

  t.test('bad values', async (t) => {
    t.same(await p.gql(`{ q_num(v: 1.5) }`), {
      data: null,
      errors: [{ message: 'Expected value of type "BigFloat!", found 1.5; Invalid input for BigFloat type. String required' }],
    })
    t.same(await p.gql(`query($v: BigFloat!) { q_num(v: $v) }`, { variables: { v: 1.5 } }), {
      data: null,
      errors: [{ message: 'Variable "$v" got invalid value 1.5; Expected type "BigFloat". Invalid input for BigFloat type. String required' }],
    })
    t.same(await p.gql(`query($v: JSON!) { q_jb(v: $v) }`, { variables: { v: { a: 1 } } }), {
      data: null,
      errors: [{ message: 'Variable "$v" got invalid value { a: 1 }; Expected type "JSON". Invalid input for JSON type' }],
    })
    t.same(await p.gql(`{ q_d(v: 20230729) }`), {
      data: null,
      errors: [{ message: 'Expected value of type "Date!", found 20230729; Invalid input for Date type' }],
    })
    t.same(await p.gql(`{ q_i8(v: "12x") }`), {
      data: null,
      errors: [{ message: 'Expected value of type "BigInt!", found "12x"; Invalid input for BigInt type' }],
    })
    // Values of the right GraphQL type that PostgreSQL refuses: its own message.
    t.same(await p.gql(`{ q_d(v: "2023-02-30") }`), { data: null, errors: [{ message: 'date/time field value out of range: "2023-02-30"' }] })
    t.same(await p.gql(`{ q_u(v: "nope") }`), { data: null, errors: [{ message: 'invalid input syntax for type uuid: "nope"' }] })
    t.same(await p.gql(`mutation { m_i2(v: 40000) }`), { data: null, errors: [{ message: 'value "40000" is out of range for type smallint' }] })
    t.same(await p.gql(`mutation { m_jb(v: "{") }`), { data: null, errors: [{ message: 'invalid input syntax for type json' }] })
    t.same(await p.gql(`mutation { insertIntokindsCollection(objects: [{id: 9, vc: "abcde"}]) { affectedCount } }`), {
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 4' }],
    })
    t.same(await p.gql(`{ kindsCollection(filter: {ch: {eq: "abcde"}}) { edges { node { id } } } }`), {
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 4' }],
    })
    t.same((await p.sql('select count(*)::int as n from kinds')).rows, [{ n: 4 }], 'nothing written')
  })
})
