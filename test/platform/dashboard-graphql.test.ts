// The GraphQL tab's explorer and the Overview's charts in headless Chromium:
// the default document answering on a new project (introspection off, no
// tables); a document run as anon, as a chosen user (a token the dashboard
// mints) and as service_role, each under the table's row-level security; the
// refusals; the schema's types read by the platform while introspection is
// off, and by introspection once the page turns it on (after saying what it
// exposes); the schema report when turned on; and the last hour's figures
// drawn with uPlot from the package.
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { EXAMPLE } from '../../control-plane/dashboard/pages/graphql/screen.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-graphql')
  const project = await platform.createProject({ name: 'Notes', auth: true })
  const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
  const ada = await admin.auth.admin.createUser({ email: 'ada@example.com', email_confirm: true })
  const bob = await admin.auth.admin.createUser({ email: 'bob@example.com', email_confirm: true })
  // Assertions before the first subtest would end tap's root test early: a fixture that fails throws.
  if (ada.error || bob.error) throw ada.error ?? bob.error
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  await owner.query(`
    create table public.notes (id serial primary key, owner uuid not null, body text not null);
    alter table public.notes enable row level security;
    create policy own on public.notes for select to authenticated using (owner = auth.uid());
    grant select on public.notes to anon, authenticated;
    create table public.scratch (body text);
    grant select on public.scratch to anon, authenticated;
    insert into public.notes (owner, body) values ('${ada.data.user!.id}', 'ada''s note'), ('${bob.data.user!.id}', 'bob''s note');`)
  await owner.end()
  const graphql = `${dashboard}/projects/${project.ref}/graphql`
  const notes = '{ notesCollection { edges { node { body } } } }'
  const answer = async () => JSON.parse(await text('#gql-answer')) as { data?: { notesCollection: { edges: Array<{ node: { body: string } }> } }; errors?: unknown[] }
  const bodies = async () => (await answer()).data!.notesCollection.edges.map((e) => e.node.body)
  const run = async () => {
    const done = page.waitForResponse((r) => r.url().endsWith('/graphql/run'))
    await page.click('#gql-run')
    await done
    await page.waitForFunction(() => !document.querySelector('#gql-status')!.textContent!.startsWith('Running'))
  }
  const dialogs: string[] = []
  // The session accepts every dialog; this records what was asked.
  page.on('dialog', (dialog) => dialogs.push(dialog.message()))
  await signIn()

  t.test("a new project: the explorer's default document answers, the types are the platform's read", async (t) => {
    const fresh = await platform.createProject({ name: 'Fresh' })
    await page.goto(`${dashboard}/projects/${fresh.ref}/graphql`)
    t.equal(await page.inputValue('#gql-query'), EXAMPLE, 'the document the page starts with')
    await run()
    t.match(await text('#gql-status'), /^HTTP 200 in \d+ ms$/)
    t.same(await answer(), { data: { __typename: 'Query' } }, 'answered as anon, without errors, introspection being off')
    // The same document through the real endpoint, as an app would send it.
    const endpoint = await request<unknown>(`${fresh.baseUrl}/graphql/v1`, { headers: { apikey: fresh.anonKey }, body: { query: EXAMPLE } })
    t.same([endpoint.status, endpoint.json], [200, { data: { __typename: 'Query' } }])
    await page.waitForSelector('#gql-types[data-source="catalogue"][aria-busy="false"]')
    t.match(await text('#gql-types-note'), 'Read by the platform from the database\'s catalogue (schemas public), not as anon: introspection is off')
    t.match(await text('#gql-types'), 'No tables, views or enums yet')
    t.match(await text('#gql-introspection-state'), 'Introspection of schema public is off')
  })

  t.test('the explorer runs as anon, as a chosen user and as service_role', async (t) => {
    await page.goto(graphql)
    t.equal(await page.title(), 'GraphQL · Notes · Baseplane')
    t.equal(await text('#graphql-endpoint'), `${project.baseUrl}/graphql/v1`)
    await page.fill('#gql-query', notes)
    await run()
    t.match(await text('#gql-status'), /^HTTP 200 in \d+ ms$/)
    t.same(await bodies(), [], 'anon sees no notes (no policy for anon)')

    await page.selectOption('#gql-role', 'user')
    t.ok(await page.locator('#gql-user').isVisible())
    await page.fill('#gql-user', 'ada@example.com')
    await run()
    t.same(await bodies(), ["ada's note"], 'the user sees their own note')
    await page.fill('#gql-user', bob.data.user!.id)
    await run()
    t.same(await bodies(), ["bob's note"], 'a user chosen by id')

    await page.selectOption('#gql-role', 'service_role')
    await run()
    t.same((await bodies()).sort(), ["ada's note", "bob's note"], 'service_role bypasses row-level security')
  })

  t.test('variables, GraphQL errors and refusals', async (t) => {
    await page.fill('#gql-query', 'query($n: Int) { notesCollection(first: $n) { edges { node { body } } } }')
    await page.fill('#gql-variables', '{"n": 1}')
    await run()
    t.equal((await bodies()).length, 1)

    await page.fill('#gql-variables', '{not json')
    await page.click('#gql-run')
    t.match(await text('#gql-problem'), /^Variables are not JSON/)

    await page.fill('#gql-variables', '{}')
    await page.fill('#gql-query', '{ nope }')
    await run()
    t.ok((await answer()).errors, 'the endpoint\'s errors are shown as it answered them')

    await page.selectOption('#gql-role', 'user')
    await page.fill('#gql-user', 'nobody@example.com')
    await page.click('#gql-run')
    await page.waitForSelector('#gql-problem:not([hidden])')
    t.equal(await text('#gql-problem'), 'No user with the email nobody@example.com')
    await page.fill('#gql-user', '')
    await page.click('#gql-run')
    await page.waitForFunction(() => document.querySelector('#gql-problem')!.textContent!.startsWith('Give'))
    t.equal(await text('#gql-problem'), "Give the user's email or id to run as")

    const cookies = await page.context().cookies()
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ')
    const badRole = await request<{ code: string }>(`${graphql}/run`, { headers: { cookie }, body: { query: notes, role: 'postgres' } })
    t.equal(badRole.status, 400)
    t.equal(badRole.json.code, 'invalid_argument')
    const signedOut = await request<{ code: string }>(`${graphql}/run`, { body: { query: notes, role: 'service_role' } })
    t.equal(signedOut.status, 401, 'no session, no run')
    const crossSite = await request(`${graphql}/run`, { headers: { cookie, origin: 'http://evil.example' }, body: { query: notes, role: 'service_role' } })
    t.equal(crossSite.status, 403)
  })

  t.test('the types read by the platform, then introspection turned on and off from the page', async (t) => {
    const comment = async () => {
      const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
      await owner.connect()
      const { rows } = await owner.query<{ c: string | null }>(`select obj_description('public'::regnamespace, 'pg_namespace') as c`)
      await owner.end()
      return rows[0]!.c
    }
    const introspect = () => request<{ data?: unknown; errors?: Array<{ message: string }> }>(`${project.baseUrl}/graphql/v1`, { headers: { apikey: project.anonKey }, body: { query: '{ __schema { queryType { name } } }' } })
    await page.goto(graphql)
    // Introspection off: the platform reads the tables itself, whatever the role.
    await page.waitForSelector('#gql-types[data-source="catalogue"][aria-busy="false"]')
    t.match(await text('#gql-types-note'), 'Read by the platform')
    await page.click('button[aria-label="Show type notes"]')
    t.equal(await text('#gql-type-name'), 'notes (object)')
    t.match(await text('#gql-type'), 'body: text!')
    t.match(await text('#gql-type'), 'notesCollection')
    t.match(await text('#gql-report'), 'The schema report is off')
    t.match((await introspect()).json.errors?.[0]?.message, 'Cannot query field "__schema" on type "Query".')

    // The schema report turned on in SQL; then introspection from the page, which keeps the rest of the comment.
    const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
    await owner.connect()
    await owner.query(`comment on schema public is e'Notes app\n@graphql({"schemaReport": {"enabled": true}})'`)
    await owner.end()
    await page.reload()
    t.match(await text('#gql-introspection-state'), 'is off')
    t.match(await text('section:has(#gql-introspection-state)'), 'Anyone holding the anon key (it ships inside your app) may then ask the endpoint for the schema')
    dialogs.length = 0
    await Promise.all([page.waitForNavigation(), page.click('#gql-introspection-toggle')])
    t.match(dialogs[0], /^Turn introspection on\? Anyone holding the anon key/, 'asked first, saying what it exposes')
    t.equal(await text('[role=status]'), 'Introspection of schema public is on: anyone with the anon key may read the schema\'s names and types (never its rows). It applies from the next request.')
    t.equal(await comment(), 'Notes app\n@graphql({"schemaReport":{"enabled":true},"introspection":true})', 'the description and the report kept')
    t.match((await introspect()).json, { data: { __schema: { queryType: { name: 'Query' } } } }, 'the endpoint answers __schema')

    await page.waitForSelector('#gql-report-summary')
    t.match(await text('#gql-report'), /public\.scratch\s+table\s+no primary key/)
    await page.selectOption('#gql-types-role', 'service_role')
    await page.click('#gql-types-load')
    await page.waitForSelector('#gql-types[data-role="service_role"][data-source="introspection"][aria-busy="false"]')
    t.equal(await text('#gql-types-note'), '')
    await page.click('button[aria-label="Show type notes"]')
    t.equal(await text('#gql-type-name'), 'notes (object)')
    t.match(await text('#gql-type'), 'body: String!')

    await Promise.all([page.waitForNavigation(), page.click('#gql-introspection-toggle')])
    t.equal(await text('[role=status]'), 'Introspection of schema public is off: the endpoint answers no __schema or __type. It applies from the next request.')
    t.equal(await comment(), 'Notes app\n@graphql({"schemaReport":{"enabled":true}})')
    t.match((await introspect()).json.errors?.[0]?.message, 'Cannot query field "__schema"')
  })

  t.test('the explorer calls no HTTP endpoint: it answers while the endpoint cannot be fetched', async (t) => {
    // The platform runs in this process: any fetch of a GraphQL endpoint fails from here on.
    const fetched: string[] = []
    const realFetch = globalThis.fetch
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input)
      if (url.includes('/graphql/v1')) {
        fetched.push(url)
        throw new TypeError('fetch failed: no GraphQL endpoint in this test')
      }
      return realFetch(input, init)
    }) as typeof fetch
    t.teardown(() => {
      globalThis.fetch = realFetch
    })
    await page.goto(graphql)
    await page.fill('#gql-query', notes)
    await page.selectOption('#gql-role', 'user')
    await page.fill('#gql-user', 'ada@example.com')
    await run()
    t.match(await text('#gql-status'), /^HTTP 200 in \d+ ms$/)
    t.same(await bodies(), ["ada's note"], 'the user still sees their own note')
    t.same(fetched, [], 'nothing fetched the endpoint')
  })

  t.test('the Overview draws the last hour', async (t) => {
    for (let i = 0; i < 3; i++) await request(`${project.baseUrl}/rest-nothing`, { headers: { apikey: project.anonKey } })
    await page.goto(`${dashboard}/projects/${project.ref}`)
    await page.waitForSelector('#chart-requests canvas')
    t.equal(await page.locator('#charts figure').count(), 3)
    t.match(await text('#chart-requests'), 'Requests by status')
    const samples = await page.evaluate(async (url) => (await fetch(url)).json(), `/dashboard/projects/${project.ref}/metrics.json`)
    t.equal((samples as { minutes: unknown[] }).minutes.length, 60)
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
