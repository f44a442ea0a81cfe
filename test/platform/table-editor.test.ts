// The table editor through the admin API on a running platform (real
// PostgreSQL): the schemas shown and hidden, a table made and changed and its
// structure read back, rows paged, sorted, filtered, inserted, edited and
// deleted as the owner, each constraint's refusal naming its column, bad
// types and names refused with nothing written, and RLS with a template
// policy seen through the Data API as anon and as a signed-in user.
import crypto from 'node:crypto'
import t from 'tap'
import { SignJWT } from 'jose'
import type { RowsView, TablesView, TableView, RowView } from '../../control-plane/table-editor.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Editor' })
const admin = `${platform.origin}/platform/v1/projects/${project.ref}/tables`
const headers = { authorization: `Bearer ${platform.config.adminToken}` }
const call = <T = unknown>(path: string, options: { method?: string; body?: object } = {}) => request<T & { code?: string; message?: string; column?: string }>(`${admin}${path}`, { headers, ...options })

t.test('schemas: public and the platform read-only ones, never its private ones', async (t) => {
  const listed = await call<TablesView>('')
  t.equal(listed.status, 200)
  const names = listed.json.schemas.map((s) => s.name)
  t.ok(names.includes('public'))
  t.match(listed.json.schemas.find((s) => s.name === 'public'), { editable: true })
  t.match(listed.json.schemas.find((s) => s.name === 'auth'), { editable: false, tables: [{ name: 'audit_log_entries' }] })
  for (const hidden of ['push', 'graphql', 'extensions', 'baseplane_storage', 'pg_catalog', 'information_schema']) t.notOk(names.includes(hidden), `${hidden} is hidden`)
  t.ok(listed.json.types.includes('timestamptz'))
})

t.test('a table made, its structure read back, then altered', async (t) => {
  const authors = await call<TableView>('', {
    method: 'POST',
    body: {
      name: 'authors',
      rls: false,
      columns: [
        { name: 'id', type: 'int8', identity: true, primary_key: true },
        { name: 'email', type: 'text', nullable: false, unique: true },
        { name: 'joined', type: 'timestamptz', default: 'now()', nullable: false },
      ],
    },
  })
  t.equal(authors.status, 201, authors.text)
  t.match(authors.json, {
    schema: 'public',
    name: 'authors',
    primary_key: ['id'],
    rls: { enabled: false, forced: false },
    columns: [
      { name: 'id', type: 'bigint', nullable: false, identity: 'by default', primary_key: true },
      { name: 'email', type: 'text', nullable: false, default: null },
      { name: 'joined', type: 'timestamp with time zone', default: 'now()' },
    ],
    unique_constraints: [{ columns: ['email'] }],
  })
  const posts = await call<TableView>('', {
    method: 'POST',
    body: {
      name: 'posts',
      rls: false,
      columns: [
        { name: 'id', type: 'uuid', default: 'gen_random_uuid()', primary_key: true },
        { name: 'title', type: 'varchar(80)', nullable: false },
        { name: 'status', type: 'text', default: 'draft' },
        { name: 'author_id', type: 'int8', references: { table: 'authors', column: 'id', on_delete: 'cascade' } },
        { name: 'score', type: 'int4' },
      ],
    },
  })
  t.equal(posts.status, 201, posts.text)
  t.match(posts.json.foreign_keys, [{ columns: ['author_id'], references: { schema: 'public', table: 'authors', columns: ['id'] }, on_delete: 'cascade' }])
  t.match(posts.json.columns[2], { name: 'status', default: "'draft'::text" })
  t.ok(posts.json.indexes.some((i) => i.primary && i.definition.includes('(id)')))

  const altered = await call<TableView>('/public/posts', {
    method: 'PATCH',
    body: {
      actions: [
        { action: 'add_column', column: { name: 'body', type: 'text', default: 'untitled' } },
        { action: 'rename_column', name: 'score', to: 'rating' },
        { action: 'set_type', name: 'rating', type: 'numeric(5,2)' },
        { action: 'set_nullable', name: 'status', nullable: false },
        { action: 'set_default', name: 'status', default: null },
      ],
    },
  })
  t.equal(altered.status, 200, altered.text)
  t.same(altered.json.columns.map((c) => [c.name, c.type, c.nullable, c.default]), [
    ['id', 'uuid', false, 'gen_random_uuid()'],
    ['title', 'character varying(80)', false, null],
    ['status', 'text', false, null],
    ['author_id', 'bigint', true, null],
    ['rating', 'numeric(5,2)', true, null],
    ['body', 'text', true, "'untitled'::text"],
  ])
  const check = await call<TableView>('/public/posts', { method: 'PATCH', body: { actions: [{ action: 'add_column', column: { name: 'words', type: 'int4' } }] } })
  t.equal(check.status, 200)
  // A check constraint the editor has no form for, made by the owner's own SQL, is shown and mapped all the same.
  const owner = await ownerQuery(`alter table public.posts add constraint words_positive check (words > 0)`)
  t.equal(owner, 'ok')
  const described = await call<TableView>('/public/posts')
  t.match(described.json.check_constraints, [{ name: 'words_positive', columns: ['words'], definition: 'CHECK ((words > 0))' }])
  const fkDropped = await call<TableView>('/public/posts', { method: 'PATCH', body: { actions: [{ action: 'drop_constraint', name: posts.json.foreign_keys[0]!.name }] } })
  t.same(fkDropped.json.foreign_keys, [])
  const fkBack = await call<TableView>('/public/posts', {
    method: 'PATCH',
    body: { actions: [{ action: 'add_foreign_key', name: 'posts_author', columns: ['author_id'], references: { table: 'authors', columns: ['id'] } }] },
  })
  t.match(fkBack.json.foreign_keys, [{ name: 'posts_author', columns: ['author_id'], on_delete: 'no action' }])
})

/** A statement as the owner, through the platform's own connection string. */
async function ownerQuery(sql: string): Promise<string> {
  const pg = (await import('pg')).default
  const url = await request<{ db_url: string }>(`${platform.origin}/platform/v1/projects/${project.ref}/db-url`, { headers })
  const client = new pg.Client({ connectionString: url.json.db_url })
  await client.connect()
  try {
    await client.query(sql)
    return 'ok'
  } finally {
    await client.end()
  }
}

t.test("names are quoted, whatever they hold; the project's enums are types", async (t) => {
  t.equal(await ownerQuery(`create type public.mood as enum ('happy', 'sad')`), 'ok')
  const listed = await call<TablesView>('')
  t.ok(listed.json.types.includes('mood'))
  const odd = await call<TableView>('', {
    method: 'POST',
    body: { name: 'Order "Items"; drop table authors', rls: false, columns: [{ name: 'id', type: 'int4', primary_key: true }, { name: 'how', type: 'mood' }, { name: 'moods', type: 'mood[]' }] },
  })
  t.equal(odd.status, 201, odd.text)
  t.same(odd.json.columns.map((c) => c.type), ['integer', 'mood', 'mood[]'])
  const path = `/public/${encodeURIComponent('Order "Items"; drop table authors')}`
  const row = await call<RowView>(`${path}/rows`, { method: 'POST', body: { values: { id: 1, how: 'sad', moods: '{happy,sad}' } } })
  t.match([row.status, row.json.row], [201, { id: '1', how: 'sad', moods: '{happy,sad}' }])
  const badEnum = await call<RowView>(`${path}/rows`, { method: 'POST', body: { values: { id: 2, how: 'meh' } } })
  t.match([badEnum.status, badEnum.json.code, badEnum.json.column], [400, 'invalid_value', 'how'])
  t.equal((await call(`${path}?confirm=${encodeURIComponent('Order "Items"; drop table authors')}`, { method: 'DELETE' })).status, 200)
  t.equal((await call('/public/authors')).status, 200, 'authors is still there')
})

t.test('bad types and names are refused with 400 naming the field, nothing written', async (t) => {
  const before = (await call<TablesView>('')).json.schemas.find((s) => s.name === 'public')!.tables.map((x) => x.name)
  const badType = await call('', { method: 'POST', body: { name: 'things', columns: [{ name: 'id', type: 'int8', primary_key: true }, { name: 'x', type: 'int4; drop table authors' }] } })
  t.equal(badType.status, 400)
  t.match(badType.json, { code: 'invalid_argument', column: 'columns.1.type', message: /columns\.1\.type: "int4; drop table authors" is not a type the editor offers/ })
  const badName = await call('', { method: 'POST', body: { name: 'x'.repeat(64), columns: [{ name: 'id', type: 'int8' }] } })
  t.match([badName.status, badName.json.column], [400, 'name'])
  const both = await call('', { method: 'POST', body: { name: 'ok_name', columns: [{ name: '', type: 'money' }] } })
  t.equal(both.status, 400)
  t.match(both.json.message, /columns\.0\.name is required.*columns\.0\.type: "money"/)
  t.equal(both.json.column, 'columns.0.name', 'the first refusal names its field')
  // A definition PostgreSQL refuses (a default that is no integer) rolls the whole table back.
  const badDefault = await call('', { method: 'POST', body: { name: 'counters', columns: [{ name: 'n', type: 'int4', default: 'many' }] } })
  t.match([badDefault.status, badDefault.json.code], [400, 'invalid_definition'])
  const alterHalf = await call('/public/posts', {
    method: 'PATCH',
    body: { actions: [{ action: 'add_column', column: { name: 'fresh', type: 'text' } }, { action: 'set_type', name: 'id', type: 'int4' }] },
  })
  t.match([alterHalf.status, alterHalf.json.code], [400, 'invalid_definition'], "gen_random_uuid() is no int4's default")
  t.notOk((await call<TableView>('/public/posts')).json.columns.some((c) => c.name === 'fresh'), 'the first action was rolled back with the second')
  const after = (await call<TablesView>('')).json.schemas.find((s) => s.name === 'public')!.tables.map((x) => x.name)
  t.same(after, before, 'no table was made')
  const platformSchema = await call('', { method: 'POST', body: { schema: 'auth', name: 'mine', columns: [{ name: 'id', type: 'int8' }] } })
  t.match([platformSchema.status, platformSchema.json.column], [400, 'schema'])
  const unreadable = await call('/auth/audit_log_entries/rows')
  t.match([unreadable.status, unreadable.json.code], [403, 'permission_denied'], "the owner's own grants decide")
  const readOnly = await call('/auth/users/rows', { method: 'POST', body: { values: {} } })
  t.match([readOnly.status, readOnly.json.code], [403, 'read_only_schema'])
})

t.test('rows: inserted, paged, sorted, filtered, edited and deleted; constraint errors beside their column', async (t) => {
  const ada = await call<RowView>('/public/authors/rows', { method: 'POST', body: { values: { email: 'ada@example.com' } } })
  t.equal(ada.status, 201, ada.text)
  t.match(ada.json.row, { id: '1', email: 'ada@example.com', joined: /^\d{4}-/ })
  await call('/public/authors/rows', { method: 'POST', body: { values: { email: 'bob@example.com' } } })
  const unique = await call('/public/authors/rows', { method: 'POST', body: { values: { email: 'ada@example.com' } } })
  t.match([unique.status, unique.json.code, unique.json.column], [409, 'unique_violation', 'email'])
  t.match(unique.json.message, /duplicate key value violates unique constraint .*Key \(email\)=\(ada@example.com\) already exists/)
  const notNull = await call('/public/authors/rows', { method: 'POST', body: { values: { email: null } } })
  t.match([notNull.status, notNull.json.code, notNull.json.column], [400, 'not_null_violation', 'email'])
  const fk = await call('/public/posts/rows', { method: 'POST', body: { values: { title: 'lost', status: 'draft', author_id: 99 } } })
  t.match([fk.status, fk.json.code, fk.json.column], [409, 'foreign_key_violation', 'author_id'])
  const check = await call('/public/posts/rows', { method: 'POST', body: { values: { title: 'zero', status: 'draft', words: 0 } } })
  t.match([check.status, check.json.code, check.json.column], [400, 'check_violation', 'words'])
  const badValue = await call('/public/posts/rows', { method: 'POST', body: { values: { title: 'nan', status: 'draft', rating: 'lots' } } })
  t.match([badValue.status, badValue.json.code, badValue.json.column], [400, 'invalid_value', 'rating'])
  const unknown = await call('/public/posts/rows', { method: 'POST', body: { values: { nope: 1 } } })
  t.match([unknown.status, unknown.json.column], [400, 'nope'])

  for (const [title, rating] of [['c', 3], ['a', 1], ['b', 2], ['d', null]] as const) {
    const made = await call('/public/posts/rows', { method: 'POST', body: { values: { title, status: 'live', author_id: 1, rating } } })
    t.equal(made.status, 201, made.text)
  }
  const sorted = await call<RowsView>('/public/posts/rows?sort=rating&order=desc&limit=2')
  t.same(sorted.json.rows.map((r) => r.title), ['c', 'b'])
  t.equal(sorted.json.total, 4)
  const second = await call<RowsView>('/public/posts/rows?sort=rating&order=desc&limit=2&offset=2')
  t.same(second.json.rows.map((r) => [r.title, r.rating]), [['a', '1.00'], ['d', null]], 'NULL last, and visible as null')
  const filtered = await call<RowsView>('/public/posts/rows?sort=title&where.rating=gt.1')
  t.same([filtered.json.rows.map((r) => r.title), filtered.json.total], [['b', 'c'], 2])
  const like = await call<RowsView>(`/public/posts/rows?where.title=like.${encodeURIComponent('%a%')}`)
  t.same(like.json.rows.map((r) => r.title), ['a'])
  const isNull = await call<RowsView>('/public/posts/rows?where.rating=is_null')
  t.same(isNull.json.rows.map((r) => r.title), ['d'])
  const badFilter = await call('/public/posts/rows?where.rating=gt.many')
  t.equal(badFilter.status, 400)
  const badSort = await call('/public/posts/rows?sort=nope')
  t.match([badSort.status, badSort.json.column], [400, 'sort'])

  const id = filtered.json.rows[0]!.id!
  const edited = await call<RowView>('/public/posts/rows', { method: 'PATCH', body: { key: { id }, values: { title: 'B', rating: '2.5' } } })
  t.match([edited.status, edited.json.row], [200, { id, title: 'B', rating: '2.50' }])
  const editRefused = await call('/public/posts/rows', { method: 'PATCH', body: { key: { id }, values: { title: null } } })
  t.match([editRefused.status, editRefused.json.column], [400, 'title'])
  const noKey = await call('/public/posts/rows', { method: 'PATCH', body: { key: { title: 'B' }, values: { title: 'C' } } })
  t.match([noKey.status, noKey.json.column], [400, 'key'])
  const deleted = await call('/public/posts/rows', { method: 'DELETE', body: { key: { id } } })
  t.equal(deleted.status, 200)
  const again = await call('/public/posts/rows', { method: 'DELETE', body: { key: { id } } })
  t.match([again.status, again.json.code], [404, 'row_not_found'])
  t.equal((await call<RowsView>('/public/posts/rows')).json.total, 3)
})

t.test('RLS on and template policies, seen through the Data API', async (t) => {
  const made = await call<TableView>('', {
    method: 'POST',
    body: {
      name: 'notes',
      columns: [
        { name: 'id', type: 'int8', identity: true, primary_key: true },
        { name: 'body', type: 'text' },
        { name: 'user_id', type: 'uuid' },
      ],
    },
  })
  t.equal(made.status, 201, made.text)
  t.same(made.json.rls, { enabled: true, forced: false }, 'on by default, as Supabase makes tables')
  const mine = crypto.randomUUID()
  for (const [body, user] of [['mine', mine], ['theirs', crypto.randomUUID()]]) await call('/public/notes/rows', { method: 'POST', body: { values: { body, user_id: user } } })
  const rest = (token: string) => request<Array<{ body: string }>>(`${project.baseUrl}/rest/v1/notes?select=body&order=id`, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` } })
  t.same((await rest(project.anonKey)).json, [], 'RLS on, no policy: anon sees nothing')

  const wrongColumn = await call('/public/notes/policies', { method: 'POST', body: { template: 'own_select', column: 'body' } })
  t.match([wrongColumn.status, wrongColumn.json.column], [400, 'column'])
  const own = await call<TableView>('/public/notes/policies', { method: 'POST', body: { template: 'own_select', column: 'user_id' } })
  t.equal(own.status, 201, own.text)
  t.match(own.json.policies, [{ name: 'Enable users to view their own data only', command: 'SELECT', roles: ['authenticated'], using: /auth\.uid\(\).*= user_id/ }])
  const token = await new SignJWT({ role: 'authenticated', aud: 'authenticated' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(mine)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(project.record.jwtSecret))
  t.same((await rest(token)).json, [{ body: 'mine' }], "a user sees only their own rows")
  t.same((await rest(project.anonKey)).json, [], 'anon still nothing')

  const everyone = await call<TableView>('/public/notes/policies', { method: 'POST', body: { template: 'read_all' } })
  t.match(everyone.json.policies.find((p) => p.name === 'Enable read access for all users'), { command: 'SELECT', roles: ['public'], using: 'true' })
  t.same((await rest(project.anonKey)).json, [{ body: 'mine' }, { body: 'theirs' }], 'read for everyone: anon reads all')
  const twice = await call('/public/notes/policies', { method: 'POST', body: { template: 'read_all' } })
  t.match([twice.status, twice.json.code], [409, 'already_exists'])

  const dropped = await call<TableView>(`/public/notes/policies/${encodeURIComponent('Enable read access for all users')}`, { method: 'DELETE' })
  t.equal(dropped.json.policies.length, 1)
  t.same((await rest(project.anonKey)).json, [])
  const off = await call<TableView>('/public/notes/rls', { method: 'PUT', body: { enabled: false } })
  t.same(off.json.rls, { enabled: false, forced: false })
  t.equal((await rest(project.anonKey)).json.length, 2, 'RLS off: the grants alone decide')
})

t.test('a table dropped only when its name is repeated', async (t) => {
  const refused = await call('/public/notes', { method: 'DELETE' })
  t.match([refused.status, refused.json.code], [409, 'confirmation_required'])
  const dependents = await call('/public/authors?confirm=authors', { method: 'DELETE' })
  t.match([dependents.status, dependents.json.code], [409, 'has_dependents'])
  const dropped = await call('/public/notes?confirm=notes', { method: 'DELETE' })
  t.equal(dropped.status, 200)
  t.equal((await call('/public/notes')).status, 404)
})

t.test('a suspended project is refused with a reason, not a failed connection', async (t) => {
  const suspended = await request(`${platform.origin}/platform/v1/projects/${project.ref}/suspend`, { headers, body: { reason: 'unpaid' } })
  t.equal(suspended.status, 200, suspended.text)
  const refused = await call('')
  t.match([refused.status, refused.json.code], [409, 'project_not_active'])
  t.equal((await request(`${platform.origin}/platform/v1/projects/${project.ref}/resume`, { headers, method: 'POST' })).status, 200)
  t.equal((await call('')).status, 200, 'resumed, it answers again')
})
