// The data API's refusals, each with PostgREST's code, status and message,
// and hostile input refused in milliseconds before any SQL: a large select,
// thousands of or terms, unknown operators, bad casts, deep logic trees.
// Also: the routes, an embed with no relationship (PGRST200), aggregates off,
// profiles, media types, CORS, and the platform's own refusals in this shape.
import t from 'tap'
import { resumeProject, suspendProject } from '../../control-plane/suspension.ts'
import { eventually } from '../helpers/eventually.ts'
import { restProject } from './helpers.ts'

const f = await restProject(t, `create table notes (id int primary key, title text); insert into notes values (1, 'a'); grant select on notes to anon`)
const s = f.anon()

const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now()
  const value = await work()
  return { value, ms: performance.now() - started }
}

t.test('parse errors are PGRST100 with the parser position', async (t) => {
  const op = await f.raw('/notes?id=foo.1')
  t.equal(op.status, 400)
  t.same(op.json, { code: 'PGRST100', details: 'unexpected "f" expecting "not" or operator (eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, in, is, isdistinct, fts, plfts, phfts, wfts, cs, cd, ov, sl, sr, nxr, nxl, adj)', hint: null, message: '"failed to parse filter (foo.1)" (line 1, column 1)' })
  const select = await f.raw('/notes?select=id,')
  t.same(select.json, { code: 'PGRST100', details: 'unexpected end of input expecting field name (* or [a..z0..9_$])', hint: null, message: '"failed to parse select parameter (id,)" (line 1, column 4)' })
  const cast = await f.raw('/notes?select=id::int;drop')
  t.match(cast.json, { code: 'PGRST100', message: /failed to parse select parameter/ })
  // A cast's words go into the statement: only a type name passes, never words that change the statement.
  const smuggled = await f.raw(`/notes?select=${encodeURIComponent('id::int from notes as x')}`)
  t.equal(smuggled.status, 400, 'words after a cast are refused')
  t.match(smuggled.json, { code: 'PGRST100', message: /failed to parse select parameter/ })
  const spaced = await f.raw(`/notes?select=${encodeURIComponent('id::double precision')}`)
  t.equal(spaced.status, 200, 'a type name of several words is one')
  const is = await f.raw('/notes?id=is.maybe')
  t.match(is.json, { code: 'PGRST100', details: 'unexpected "m" expecting null, not_null, true, false or unknown' })
  const tree = await f.raw('/notes?or=(id.eq.1')
  t.match(tree.json, { code: 'PGRST100', message: '"failed to parse logic tree ((id.eq.1)" (line 1, column 9)' })
  const order = await f.raw('/notes?order=id.sideways')
  t.match(order.json, { code: 'PGRST100', message: /failed to parse order/ })
  const limit = await f.raw('/notes?limit=-1')
  t.same({ status: limit.status, body: limit.json }, { status: 416, body: { code: 'PGRST103', details: 'Limit should be greater than or equal to zero.', hint: null, message: 'Requested range not satisfiable' } })
  const range = await f.raw('/notes', { headers: { range: '5-1' } })
  t.same(range.json, { code: 'PGRST103', details: 'The lower boundary must be lower than or equal to the upper boundary in the Range header.', hint: null, message: 'Requested range not satisfiable' })
  const badCast = await s.from('notes').select('id::nosuchtype')
  t.equal(badCast.status, 400)
  t.match(badCast.error, { code: '42704', message: 'type "nosuchtype" does not exist' })
  const badColumn = await s.from('notes').select('nope')
  t.same(badColumn.error, { code: '42703', details: null, hint: null, message: 'column notes.nope does not exist' })
  const badValue = await s.from('notes').select().eq('id', 'x')
  t.match(badValue.error, { code: '22P02', message: 'invalid input syntax for type integer: "x"' })
})

t.test('hostile input is refused in milliseconds, before any SQL', async (t) => {
  const columns = Array.from({ length: 1200 }, (_, i) => `c${i}`).join(',')
  const wide = await timed(() => f.raw(`/notes?select=${columns}`))
  t.same(wide.value.json, { code: 'PGRST100', details: null, hint: null, message: 'Request is too large: select has 501 items, more than the 500 allowed' })
  t.ok(wide.ms < 1000, `answered in ${wide.ms.toFixed(1)} ms`)
  const terms = Array.from({ length: 1500 }, (_, i) => `id.eq.${i}`).join(',')
  const ors = await timed(() => f.raw(`/notes?or=(${terms})`))
  t.same(ors.value.json, { code: 'PGRST100', details: null, hint: null, message: 'Request is too large: the filters has 501 items, more than the 500 allowed' })
  const deep = await f.raw(`/notes?or=(${'and('.repeat(40)}id.eq.1${')'.repeat(40)})`)
  t.same(deep.json, { code: 'PGRST100', details: null, hint: null, message: 'Request is too deep: logic trees nest more than 16 levels' })
  // Past the HTTP server's 16 KB of request line and headers: refused by the server itself.
  const huge = await f.raw(`/notes?select=${'a'.repeat(100 * 1024)}`)
  t.equal(huge.status, 431)
})

t.test('routes, methods, profiles, media types', async (t) => {
  const root = await f.raw<{ swagger: string }>('/')
  t.same({ status: root.status, swagger: root.json.swagger }, { status: 200, swagger: '2.0' }, 'the root is the OpenAPI description (openapi.test.ts)')
  const deep = await f.raw('/notes/1')
  t.same({ status: deep.status, body: deep.json }, { status: 404, body: { code: 'PGRST125', details: null, hint: null, message: 'Invalid path specified in request URL' } })
  const missing = await s.from('note').select()
  t.same(missing.error, { code: 'PGRST205', details: null, hint: "Perhaps you meant the table 'public.notes'", message: "Could not find the table 'public.note' in the schema cache" })
  const profile = await s.schema('private').from('notes').select()
  t.equal(profile.status, 406)
  t.same(profile.error, { code: 'PGRST106', details: null, hint: 'Only the following schemas are exposed: public', message: 'Invalid schema: private' })
  const media = await f.raw('/notes', { headers: { accept: 'application/xml' } })
  t.same({ status: media.status, body: media.json }, { status: 406, body: { code: 'PGRST107', details: null, hint: null, message: 'None of these media types are available: application/xml' } })
  const type = await f.raw('/notes', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' })
  t.same(type.json, { code: 'PGRST102', details: null, hint: null, message: 'Content-Type not acceptable: application/xml' })
  const typed = await f.raw('/notes?select=id')
  t.equal(typed.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('an embed with no relationship and aggregates (off by default) are refused in PostgREST\'s words', async (t) => {
  const embed = await s.from('notes').select('id, author(name)')
  t.equal(embed.status, 400)
  t.same(embed.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'notes' and 'author' in the schema 'public', but no matches were found.",
    hint: null,
    message: "Could not find a relationship between 'notes' and 'author' in the schema cache",
  })
  const spread = await f.raw('/notes?select=id,...author!inner(name)')
  t.match(spread.json, { code: 'PGRST200' })
  const refFilter = await f.raw('/notes?author.name=eq.x')
  t.same(refFilter.json, { code: 'PGRST108', details: null, hint: "Verify that 'author' is included in the 'select' query parameter.", message: "'author' is not an embedded resource in this request" })
  const aggregate = await f.raw('/notes?select=id.count()')
  t.same(aggregate.json, { code: 'PGRST123', details: null, hint: null, message: 'Use of aggregate functions is not allowed' })
})

t.test('the platform\'s refusals and CORS, in this shape', async (t) => {
  const noKey = await f.raw('/notes', { headers: { apikey: '' } })
  t.equal(noKey.status, 401)
  t.match(noKey.json, { code: 'no_api_key', details: null, hint: String, message: String })
  const preflight = await f.raw('/notes', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH' } })
  t.equal(preflight.status, 204)
  t.match(preflight.headers['access-control-allow-methods'], /PATCH/)
  const cors = await f.raw('/notes', { headers: { origin: 'https://app.example', prefer: 'count=exact' } })
  t.equal(cors.headers['access-control-allow-origin'], '*')
  t.match(cors.headers['access-control-expose-headers'], /content-range/)
})

t.test('a suspended project answers 403 project_suspended in this shape', async (t) => {
  const other = await restProject(t, `create table notes (id int primary key)`, f.platform)
  await suspendProject(f.platform.platform.controlPlane, other.project.ref, 'abuse report')
  await eventually('the data plane sees the suspension', 10000, async () => (await other.anon().from('notes').select()).status === 403)
  const refused = await other.anon().from('notes').select()
  t.match(refused.error, { code: 'project_suspended', details: null, hint: null, message: String })
  await resumeProject(f.platform.platform.controlPlane, other.project.ref)
  await eventually('served again', 10000, async () => (await other.anon().from('notes').select()).error === null)
  t.pass('resumed')
})
