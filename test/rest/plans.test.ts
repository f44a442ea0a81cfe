// Plans on request (PostgREST's db-plan-enabled), the project's setting
// beside the max rows (admin API `plans`, CLI `baseplane projects rest
// --plans true|false`): with it, `Accept: application/vnd.pgrst.plan[+json|+text]`
// (supabase-js `.explain()`) answers the EXPLAIN of the statement the request
// would run, as the caller (its role and policies), for the `for=` media,
// with the `options=`; the plan's transaction is always rolled back, so
// `analyze` keeps no write. Without it (the default) a plan is 406 PGRST107,
// as before.
import t from 'tap'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { restProject, type RestFixture } from './helpers.ts'

const SETUP = `
  create table items (id int primary key, owner text not null);
  insert into items values (1, 'anon'), (2, 'someone'), (3, 'someone');
  alter table items enable row level security;
  create policy anon_items on items for all to anon using (owner = 'anon') with check (owner = 'anon');
  grant select, insert, update, delete on items to anon, service_role;
  create function items_of(who text) returns setof items language sql stable as 'select * from items where owner = who';
  grant execute on function items_of(text) to anon;
`
const f = await restProject(t, SETUP)
const { platform } = f
const off = await restProject(t, SETUP, platform)
const adminHeaders = { authorization: `Bearer ${platform.config.adminToken}` }
type View = { plans: boolean; tx_end: string; code?: string; message?: string }
const settings = (fixture: RestFixture, method = 'GET', body?: unknown) =>
  request<View>(`${platform.origin}/platform/v1/projects/${fixture.project.ref}/rest`, { method, headers: adminHeaders, body: body as object })
const ids = async (fixture: RestFixture) => (await fixture.sql('select id from items order by id')).rows.map((row) => row.id as number)

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Actual Rows'?: number
  Plans?: PlanNode[]
}
type JsonPlan = Array<{ Plan: PlanNode; 'Execution Time'?: number }>

/** Every node of a JSON plan, depth first. */
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)]
const scanOf = (plan: JsonPlan, relation: string) => nodes(plan[0]!.Plan).find((node) => node['Relation Name'] === relation)

t.before(async () => {
  const set = await settings(f, 'PATCH', { plans: true })
  t.equal(set.status, 200)
  t.equal(set.json.plans, true)
})

t.test('off by default: a plan is 406 PGRST107, as before', async (t) => {
  t.equal((await settings(off)).json.plans, false)
  const plan = await off.anon().from('items').select('*').explain()
  t.equal(plan.status, 406)
  t.equal(plan.error?.code, 'PGRST107')
  t.equal(plan.error?.message, 'None of these media types are available: application/vnd.pgrst.plan+text; for="application/json"; options=;')
  const json = await off.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json' } })
  t.equal(json.status, 406)
  const fallback = await off.raw('/items?select=id', { headers: { accept: 'application/vnd.pgrst.plan+json, application/json' } })
  t.equal(fallback.status, 200, 'the next acceptable type answers')
  t.same(fallback.json, [{ id: 1 }])
})

t.test("the statement's plan, in text or JSON, for the media asked for", async (t) => {
  const s = f.anon()
  const text = await s.from('items').select('*').explain()
  t.equal(text.error, null)
  t.equal(text.status, 200)
  t.match(text.data as unknown as string, /^Aggregate {2}\(cost=/)
  const raw = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan' } })
  t.equal(raw.headers['content-type'], 'application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8')
  t.match(raw.text, /^Aggregate.*\n(.*\n)+$/)

  const json = await s.from('items').select('*').explain({ format: 'json' })
  t.equal(json.error, null)
  const plan = json.data as unknown as JsonPlan
  t.equal(plan[0]!.Plan['Node Type'], 'Aggregate')
  t.ok(scanOf(plan, 'items'), 'the table is read')
  const rawJson = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json' } })
  t.equal(rawJson.headers['content-type'], 'application/vnd.pgrst.plan+json; for="application/json"; charset=utf-8')
  t.equal(rawJson.headers['content-range'], undefined)

  const single = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object"; options=verbose|bogus' } })
  t.equal(single.status, 200)
  t.equal(single.headers['content-type'], 'application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object+json"; options=verbose; charset=utf-8')
  const csv = await f.raw('/items?select=id', { headers: { accept: 'application/vnd.pgrst.plan+json; for="text/csv"' } })
  t.equal(csv.status, 200)
  t.equal(csv.headers['content-type'], 'application/vnd.pgrst.plan+json; for="text/csv"; charset=utf-8')
  const rpc = await s.rpc('items_of', { who: 'anon' }).explain({ format: 'json' })
  t.equal(rpc.error, null)
  t.ok(nodes((rpc.data as unknown as JsonPlan)[0]!.Plan).length > 0)
  const unknownFor = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json; for="text/html"' } })
  t.equal(unknownFor.status, 406, 'a for= this API does not produce is not acceptable')
})

t.test('run as the caller, under its policies; options as asked', async (t) => {
  const anon = await f.anon().from('items').select('*').explain({ analyze: true, verbose: true, format: 'json' })
  t.equal(anon.error, null)
  const plan = anon.data as unknown as JsonPlan
  t.type(plan[0]!['Execution Time'], 'number', 'analyze ran it')
  t.equal(scanOf(plan, 'items')!['Actual Rows'], 1, "anon's policy lets one row through")
  const service = await f.service().from('items').select('*').explain({ analyze: true, format: 'json' })
  t.equal(service.error, null)
  t.equal(scanOf(service.data as unknown as JsonPlan, 'items')!['Actual Rows'], 3, 'service_role bypasses it')
  const text = await f.anon().from('items').select('*').explain({ verbose: true })
  t.match(text.data as unknown as string, /Filter: \(items\.owner = 'anon'::text\)/, "the policy's condition is in the plan")
  const raw = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json; for="application/json"; options=analyze|verbose|settings|buffers|wal;' } })
  t.equal(raw.status, 200)
  t.equal(raw.headers['content-type'], 'application/vnd.pgrst.plan+json; for="application/json"; options=analyze|verbose|settings|buffers|wal; charset=utf-8')
})

t.test('analyze on a write keeps nothing', async (t) => {
  const s = f.anon()
  const insert = await s.from('items').insert({ id: 4, owner: 'anon' }).explain({ analyze: true, format: 'json' })
  t.equal(insert.error, null)
  t.ok(nodes((insert.data as unknown as JsonPlan)[0]!.Plan).some((node) => node['Node Type'] === 'ModifyTable'), 'the insert was planned')
  const del = await s.from('items').delete().eq('id', 1).select().explain({ analyze: true })
  t.equal(del.error, null)
  t.match(del.data as unknown as string, /Delete on/)
  const update = await f.service().from('items').update({ owner: 'anon' }).gte('id', 1).explain({ analyze: true })
  t.equal(update.error, null)
  t.same(await ids(f), [1, 2, 3], 'the insert and the delete were rolled back')
  t.same((await f.sql("select count(*)::int as n from items where owner = 'anon'")).rows, [{ n: 1 }], 'and the update')
  const refused = await s.from('items').insert({ id: 5, owner: 'someone' }).explain({ analyze: true })
  t.equal(refused.status, 401, "the policy's check refuses it as it refuses the write")
  t.equal(refused.error?.code, '42501')
})

t.test("PostgreSQL's refusal of the options, and the pre-request function before the plan", async (t) => {
  const wal = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan+json; options=wal' } })
  t.equal(wal.status, 400, 'wal needs analyze, as PostgreSQL says')
  t.equal((wal.json as { code: string }).code, '22023')
  const head = await f.raw('/items', { method: 'HEAD', headers: { accept: 'application/vnd.pgrst.plan' } })
  t.equal(head.status, 200)
  t.equal(head.headers['content-type'], 'application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8')

  // PostgREST's recipe: a pre-request function that refuses plans but to some callers.
  await f.sql(`create function public.no_plans() returns void language plpgsql as $$
    begin
      if current_setting('request.headers', true)::json->>'accept' like 'application/vnd.pgrst.plan%'
         and current_setting('request.headers', true)::json->>'x-planner' is distinct from 'me' then
        raise insufficient_privilege using message = 'Not allowed to use application/vnd.pgrst.plan';
      end if;
    end $$;
    grant execute on function public.no_plans() to anon, authenticated, service_role;`)
  t.equal((await settings(f, 'PATCH', { pre_request: 'public.no_plans' })).status, 200)
  const refused = await f.anon().from('items').select('*').explain()
  t.equal(refused.status, 401)
  t.equal(refused.error?.message, 'Not allowed to use application/vnd.pgrst.plan')
  const allowed = await f.raw('/items', { headers: { accept: 'application/vnd.pgrst.plan', 'x-planner': 'me' } })
  t.equal(allowed.status, 200)
  const plain = await f.anon().from('items').select('id')
  t.equal(plain.error, null, 'other requests pass')
  t.equal((await settings(f, 'PATCH', { pre_request: null })).status, 200)
})

t.test('refusals of the admin API and the CLI write nothing; off again from the next request', async (t) => {
  for (const [body, message] of [
    [{ plans: 'yes' }, /^plans must be true or false, got "yes"$/],
    [{ plans: null }, /^plans must be true or false, got null$/],
    [{ plans: 1 }, /^plans must be true or false, got 1$/],
  ] as const) {
    const reply = await settings(f, 'PATCH', body)
    t.equal(reply.status, 400, JSON.stringify(body))
    t.equal(reply.json.code, 'invalid_argument')
    t.match(reply.json.message, message)
  }
  t.equal((await settings(f)).json.plans, true, 'nothing was written')

  const cli = (args: string[]) => runCli(['projects', 'rest', f.project.ref, ...args], { DATABASE_URL: platform.catalogueUrl })
  const shown = await cli([])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, /plans\s+true \(Accept: application\/vnd\.pgrst\.plan answers the statement's EXPLAIN\)/)
  const refused = await cli(['--plans', 'maybe'])
  t.equal(refused.code, 1)
  t.equal(refused.stdout, '')
  t.match(refused.stderr, /--plans must be true or false, got "maybe"/)
  const changed = await cli(['--plans', 'false'])
  t.equal(changed.code, 0, changed.stderr)
  t.match(changed.stdout, /plans\s+false/)
  t.equal((await settings(f)).json.plans, false)
  const plan = await f.anon().from('items').select('*').explain()
  t.equal(plan.status, 406, 'served as the CLI set it, on the next request')
  t.equal(plan.error?.code, 'PGRST107')
})
