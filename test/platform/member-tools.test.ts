// The developers' tools (issue 42 items 4 to 7) as members call them with
// their personal access tokens, through the admin API's access checks: the
// SQL editor, the table editor, the generated types and the migrations, for
// each role, and nothing of a project the member is not on.
import pg from 'pg'
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { startMailCatcher } from '../auth/helpers.ts'
import { request } from '../helpers/http.ts'
import { inviteMember } from '../helpers/members.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const mail = await startMailCatcher(t)
const platform = await startTestPlatform(t, { SMTP_URL: mail.url })
const admin = `${platform.origin}/platform/v1`
const a = await platform.createProject({ name: 'Tools A' })
const b = await platform.createProject({ name: 'Tools B' })
const owner = new pg.Client({ connectionString: ownerUrlOf(a.record) })
await owner.connect()
t.teardown(() => owner.end())
await owner.query(`create table notes (id int primary key, body text); insert into notes values (1, 'first')`)

const developer = await inviteMember(platform, mail, 'tools-dev@example.com', [{ ref: a.ref, role: 'developer' }])
const reader = await inviteMember(platform, mail, 'tools-reader@example.com', [{ ref: a.ref, role: 'read-only' }])

const call = (who: { headers: Record<string, string> }, method: string, path: string, body?: unknown) =>
  request<Record<string, unknown> & { code?: string; message?: string }>(`${admin}${path}`, { method, headers: who.headers, ...(body === undefined ? {} : { body: body as object }) })

t.test('the SQL editor: a developer writes, a read-only member only reads', async (t) => {
  const read = await call(reader, 'POST', `/projects/${a.ref}/database/query`, { query: 'select id, body from notes order by id' })
  t.equal(read.status, 201, read.text)
  t.same(read.json, [{ id: 1, body: 'first' }])
  const refused = await call(reader, 'POST', `/projects/${a.ref}/database/query`, { query: "insert into notes values (2, 'by the reader')" })
  t.equal(refused.status, 400, 'a read-only member runs read-only')
  t.match(refused.json.message, /read-only/)
  const written = await call(developer, 'POST', `/projects/${a.ref}/database/query`, { query: "insert into notes values (3, 'by the developer') returning id" })
  t.equal(written.status, 201, written.text)
  t.same((await owner.query('select id from notes order by id')).rows, [{ id: 1 }, { id: 3 }], "the reader's insert left nothing")
})

t.test('the table editor: reads for every member, writes for a developer', async (t) => {
  const listed = await call(reader, 'GET', `/projects/${a.ref}/tables`)
  t.equal(listed.status, 200, listed.text)
  t.match(JSON.stringify(listed.json), /notes/)
  const table = { name: 'tags', columns: [{ name: 'id', type: 'int8', primary_key: true }, { name: 'label', type: 'text' }] }
  const refused = await call(reader, 'POST', `/projects/${a.ref}/tables`, table)
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'insufficient_role')
  t.equal((await owner.query(`select to_regclass('public.tags') is null as absent`)).rows[0].absent, true, 'nothing was made')
  const made = await call(developer, 'POST', `/projects/${a.ref}/tables`, table)
  t.equal(made.status, 201, made.text)
  t.equal((await owner.query(`select to_regclass('public.tags') is null as absent`)).rows[0].absent, false)
})

t.test('generated types and migrations: types for every member, a push for a developer', async (t) => {
  const types = await call(reader, 'GET', `/projects/${a.ref}/types/typescript`)
  t.equal(types.status, 200, types.text)
  t.match(types.json.types, /notes: \{/)
  const migration = { migrations: [{ version: '20261207000000', name: 'add_flags', statements: ['create table flags (id int primary key)'] }] }
  const refused = await call(reader, 'POST', `/projects/${a.ref}/database/migrations`, migration)
  t.equal(refused.status, 403)
  t.equal(refused.json.code, 'insufficient_role')
  const pushed = await call(developer, 'POST', `/projects/${a.ref}/database/migrations`, migration)
  t.ok(pushed.status >= 200 && pushed.status < 300, pushed.text)
  const ledger = await owner.query(`select version, name, created_by from supabase_migrations.schema_migrations`)
  t.same(ledger.rows, [{ version: '20261207000000', name: 'add_flags', created_by: 'member:tools-dev@example.com' }], 'the ledger names who pushed it')
  const listed = await call(reader, 'GET', `/projects/${a.ref}/database/migrations`)
  t.equal(listed.status, 200)
  t.same(listed.json, [{ version: '20261207000000', name: 'add_flags' }])
})

t.test("a member of A is refused every tool of B and learns nothing of it", async (t) => {
  for (const [method, path, body] of [
    ['POST', `/projects/${b.ref}/database/query`, { query: 'select 1' }],
    ['GET', `/projects/${b.ref}/tables`, undefined],
    ['GET', `/projects/${b.ref}/types/typescript`, undefined],
    ['GET', `/projects/${b.ref}/database/migrations`, undefined],
    ['POST', `/projects/${b.ref}/database/migrations`, { migrations: [] }],
  ] as const) {
    const reply = await call(developer, method, path, body)
    t.equal(reply.status, 403, `${method} ${path}`)
    t.equal(reply.json.code, 'not_a_member', `${method} ${path}`)
  }
})
