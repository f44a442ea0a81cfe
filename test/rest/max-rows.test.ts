// A project's own max rows (PostgREST's db-max-rows), set by the operator
// beside the exposed schemas (admin API `/platform/v1/projects/{ref}/rest`,
// CLI `baseplane projects rest --max-rows`): reads and set-returning
// functions answer at most that many rows (count=exact still counts them
// all), from the next request, for that project only; null goes back to the
// node's BASEPLANE_REST_MAX_ROWS (20 on this platform); refusals name the
// field and write nothing.
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { restProject } from './helpers.ts'

const SETUP = `
  create table many (id int primary key);
  insert into many select generate_series(1, 100);
  grant select on many to anon;
  create function all_many() returns setof many language sql stable as 'select * from many order by id';
  create function numbers(n int) returns setof int language sql immutable as 'select generate_series(1, n)';
  grant execute on all functions in schema public to anon;
`
const f = await restProject(t, SETUP, undefined, { BASEPLANE_REST_MAX_ROWS: '20' })
const { project, platform } = f
const other = await restProject(t, SETUP, platform)
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
type View = { ref: string; schemas: string[]; max_rows: number | null; pre_request: string | null; pre_request_problem: string | null; code?: string; message?: string }
const settings = (ref: string, method = 'GET', body?: unknown) =>
  request<View>(`${platform.origin}/platform/v1/projects/${ref}/rest`, { method, headers: adminHeaders, body: body as object })
const s = f.anon()

t.test("by default a response carries the node's max rows", async (t) => {
  t.same((await settings(project.ref)).json, { ref: project.ref, schemas: ['public'], max_rows: null, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })
  const page = await s.from('many').select('id', { count: 'exact' })
  t.equal(page.error, null)
  t.equal(page.data!.length, 20)
  t.equal(page.count, 100)
})

t.test("the project's own max rows, from the next request, for that project only", async (t) => {
  const set = await settings(project.ref, 'PATCH', { max_rows: 7 })
  t.equal(set.status, 200)
  t.same(set.json, { ref: project.ref, schemas: ['public'], max_rows: 7, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false }, 'the schemas kept')

  const page = await s.from('many').select('id', { count: 'exact' }).order('id')
  t.equal(page.error, null)
  t.same(page.data, [1, 2, 3, 4, 5, 6, 7].map((id) => ({ id })))
  t.equal(page.count, 100, 'count=exact still counts every row')
  t.equal(page.status, 206)
  const raw = await f.raw('/many?select=id&order=id', { headers: { prefer: 'count=exact' } })
  t.equal(raw.headers['content-range'], '0-6/100')
  const limited = await s.from('many').select('id').limit(50)
  t.equal(limited.data!.length, 7, 'a larger limit is capped')
  const smaller = await s.from('many').select('id').limit(3)
  t.equal(smaller.data!.length, 3)
  const later = await s.from('many').select('id').order('id').range(95, 120)
  t.same(later.data, [96, 97, 98, 99, 100].map((id) => ({ id })))
  const fn = await s.rpc('all_many')
  t.equal(fn.error, null)
  t.equal((fn.data as unknown[]).length, 7, 'a set-returning function too')
  const scalars = await s.rpc('numbers', { n: 30 })
  t.same(scalars.data, [1, 2, 3, 4, 5, 6, 7])

  const elsewhere = await other.anon().from('many').select('id')
  t.equal(elsewhere.error, null)
  t.equal(elsewhere.data!.length, 20, "another project keeps the node's")

  const above = await settings(project.ref, 'PATCH', { max_rows: 60 })
  t.equal(above.json.max_rows, 60)
  t.equal((await s.from('many').select('id')).data!.length, 60, "set above the node's, the project's holds")
  const back = await settings(project.ref, 'PATCH', { max_rows: null, pre_request: null })
  t.same(back.json, { ref: project.ref, schemas: ['public'], max_rows: null, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })
  t.equal((await s.from('many').select('id')).data!.length, 20, "null: the node's again")
  const both = await settings(project.ref, 'PATCH', { schemas: ['public'], max_rows: 1_000_000 })
  t.equal(both.json.max_rows, 1_000_000)
  t.equal((await s.from('many').select('id')).data!.length, 100)
})

t.test('refusals of the admin API and the CLI write nothing', async (t) => {
  await settings(project.ref, 'PATCH', { max_rows: 9 })
  const bad: Array<[unknown, RegExp]> = [
    [{ max_rows: 0 }, /^max_rows must be a whole number from 1 to 1,000,000, or null for the node's default, got 0$/],
    [{ max_rows: 1_000_001 }, /max_rows must be a whole number from 1 to 1,000,000.*got 1000001/],
    [{ max_rows: -5 }, /max_rows must be a whole number/],
    [{ max_rows: 2.5 }, /max_rows must be a whole number.*got 2.5/],
    [{ max_rows: '50' }, /max_rows must be a whole number.*got "50"/],
    [{ max_rows: true }, /max_rows must be a whole number/],
    [{ max_rows: [10] }, /max_rows must be a whole number/],
    [{ schemas: ['public', 'api'], max_rows: 0 }, /max_rows must be a whole number/],
    [{ schemas: ['auth'], max_rows: 5 }, /schemas may not name "auth"/],
    [{ maxRows: 5 }, /Unknown setting "maxRows": use schemas, max_rows, pre_request, tx_end or plans/],
    [{}, /Give schemas .*, max_rows .*, pre_request .*, tx_end .* or plans/],
  ]
  for (const [body, message] of bad) {
    const reply = await settings(project.ref, 'PATCH', body)
    t.equal(reply.status, 400, JSON.stringify(body))
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, message)
  }
  t.same((await settings(project.ref)).json, { ref: project.ref, schemas: ['public'], max_rows: 9, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false }, 'nothing was written')
  t.equal((await s.from('many').select('id')).data!.length, 9)
  t.equal((await settings('nosuchproject00000000', 'PATCH', { max_rows: 5 })).status, 404)

  const cli = (args: string[]) => runCli(['projects', 'rest', project.ref, ...args], { DATABASE_URL: platform.catalogueUrl })
  const shown = await cli([])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /max rows\s+9 per response/)
  for (const [value, message] of [
    ['0', /--max-rows must be a whole number from 1 to 1,000,000, or default for the node's default, got 0/],
    ['lots', /--max-rows must be a whole number .*got "lots"/],
    ['1000001', /--max-rows must be a whole number/],
    ['-3', /--max-rows must be a whole number/],
  ] as const) {
    const refused = await cli(['--max-rows', value])
    t.equal(refused.code, 1, value)
    t.equal(refused.stdout, '')
    t.match(refused.stderr, message)
  }
  const both = await cli(['--schemas', 'auth', '--max-rows', '5'])
  t.equal(both.code, 1, 'one refused value refuses the whole change')
  t.same((await settings(project.ref)).json, { ref: project.ref, schemas: ['public'], max_rows: 9, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false }, 'nothing was written by the CLI either')

  const changed = await cli(['--max-rows', '25,000'])
  t.equal(changed.code, 0, changed.stderr)
  t.match(changed.stdout, /max rows\s+25,000 per response/)
  const json = await cli(['--json'])
  t.same(JSON.parse(json.stdout), { ref: project.ref, schemas: ['public'], max_rows: 25000, pre_request: null, pre_request_problem: null, tx_end: 'commit', plans: false })
  const reset = await cli(['--max-rows', 'default'])
  t.equal(reset.code, 0, reset.stderr)
  t.match(reset.stdout, /max rows\s+default \(the node's BASEPLANE_REST_MAX_ROWS/)
  t.equal((await settings(project.ref)).json.max_rows, null)
  t.equal((await s.from('many').select('id')).data!.length, 20, 'served as the CLI set it, on the next request')
})
