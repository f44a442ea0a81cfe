// The REST tab in headless Chromium: the project's tables, views and functions
// listed (read by the platform); a GET as anon answering the rows its policy
// allows, as a chosen user their own, as service_role every row, with
// count=exact's Content-Range; a POST with return=representation that
// inserts (checked in SQL afterwards); a write as service_role asked for
// first, and not sent when the operator says no (nor by a call that did not
// confirm); a bad filter shown as PostgREST's PGRST100 by its parts; the
// request going through the data plane (a suspended project is refused as
// an app would be); the page fitting 1280x800 and 390x844; the exposed
// schemas' form and the Schema choice; the max rows and pre-request
// function's form (one that cannot be called refused, one dropped since said).
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { resumeProject, suspendProject } from '../../control-plane/suspension.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-rest')
  const project = await platform.createProject({ name: 'Notes', auth: true })
  const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
  const ada = await admin.auth.admin.createUser({ email: 'ada@example.com', email_confirm: true })
  const bob = await admin.auth.admin.createUser({ email: 'bob@example.com', email_confirm: true })
  // Assertions before the first subtest would end tap's root test early: a fixture that fails throws.
  if (ada.error || bob.error) throw ada.error ?? bob.error
  const adaId = ada.data.user!.id
  const bobId = bob.data.user!.id
  const sql = async <R extends pg.QueryResultRow>(text: string): Promise<R[]> => {
    const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
    await owner.connect()
    try {
      return (await owner.query<R>(text)).rows
    } finally {
      await owner.end()
    }
  }
  await sql(`
    create table public.notes (id serial primary key, owner uuid not null, body text not null, published boolean not null default false);
    alter table public.notes enable row level security;
    create policy published on public.notes for select to anon using (published);
    create policy own on public.notes for select to authenticated using (owner = auth.uid());
    create policy write_own on public.notes for insert to authenticated with check (owner = auth.uid());
    grant select on public.notes to anon;
    grant select, insert on public.notes to authenticated;
    grant usage on sequence public.notes_id_seq to authenticated;
    create view public.published_notes as select id, body from public.notes where published;
    revoke all on public.published_notes from anon;
    create function public.add(a int, b int default 1) returns int language sql immutable as 'select a + b';
    insert into public.notes (owner, body, published) values
      ('${adaId}', 'ada public', true), ('${adaId}', 'ada private', false), ('${bobId}', 'bob private', false);`)
  const rest = `${dashboard}/projects/${project.ref}/rest`
  const dialogs: string[] = []
  // The session accepts every dialog unless a test says otherwise; this records what was asked.
  page.on('dialog', (dialog) => dialogs.push(dialog.message()))

  const send = async () => {
    const done = page.waitForResponse((r) => r.url().endsWith('/rest/run'))
    await page.click('#rest-run')
    await done
    await page.waitForFunction(() => !document.querySelector('#rest-status')!.textContent!.startsWith('Sending'))
  }
  const status = async () => Number(await page.getAttribute('#rest-meta', 'data-status'))
  const answer = async () => JSON.parse(await text('#rest-answer')) as unknown
  const bodies = async () => ((await answer()) as Array<{ body: string }>).map((row) => row.body).sort()
  const get = async (path: string, role: 'anon' | 'user' | 'service_role', user?: string) => {
    await page.selectOption('#rest-method', 'GET')
    await page.fill('#rest-path', path)
    await page.selectOption('#rest-role', role)
    if (user !== undefined) await page.fill('#rest-user', user)
    await send()
  }
  await signIn()

  t.test("the tab lists the project's tables, views and functions", async (t) => {
    await page.goto(rest)
    t.equal(await page.title(), 'REST · Notes · Baseplane')
    t.equal(await page.getAttribute('nav.tabs a[aria-current=page]', 'href'), `/dashboard/projects/${project.ref}/rest`)
    t.equal(await text('#rest-endpoint'), `${project.baseUrl}/rest/v1`)
    await page.waitForSelector('#rest-relations[aria-busy="false"]')
    t.same(await page.locator('#rest-relations button').allInnerTexts(), ['notes', 'published_notes'])
    t.same(await page.locator('#rest-functions button').allInnerTexts(), ['rpc/add'])
    t.match(await text('#rest-schema-note'), 'exposed schemas: public')
    t.same(await page.locator('#rest-paths option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value)), ['notes', 'published_notes', 'rpc/add'], 'suggested as the path is typed')

    await page.click('button[aria-label="Read table notes"]')
    t.equal(await page.inputValue('#rest-method'), 'GET')
    t.equal(await page.inputValue('#rest-path'), 'notes?select=*&limit=10')
    await page.click('button[aria-label="Call function add"]')
    t.equal(await page.inputValue('#rest-method'), 'POST')
    t.equal(await page.inputValue('#rest-path'), 'rpc/add')
    t.same(JSON.parse(await page.inputValue('#rest-body')), { a: null, b: null }, 'its arguments to fill in')
    await page.fill('#rest-body', '{"a": 40, "b": 2}')
    await page.selectOption('#rest-role', 'anon')
    await send()
    t.equal(await status(), 200)
    t.equal(await answer(), 42)

    const fresh = await platform.createProject({ name: 'Fresh' })
    await page.goto(`${dashboard}/projects/${fresh.ref}/rest`)
    await page.waitForSelector('#rest-relations[aria-busy="false"]')
    t.match(await text('#rest-relations'), 'No tables or views yet')
    t.match(await text('#rest-functions'), 'No functions.')
  })

  t.test("a GET as anon answers the rows its policy allows, a user's their own, service_role's all", async (t) => {
    await page.goto(rest)
    await get('notes?select=id,body&order=id', 'anon')
    t.equal(await status(), 200)
    t.same(await answer(), [{ id: 1, body: 'ada public' }], 'anon: the published row only, as its policy says')
    t.match(await text('#rest-meta'), /^HTTP 200 · Content-Range 0-0\/\* · \d+ ms$/)
    t.equal(await text('#rest-sent'), 'GET /rest/v1/notes?select=id,body&order=id', 'the request as the endpoint got it')
    t.ok(await page.locator('#rest-error').isHidden(), 'no error shown for an answer')

    await get('notes?select=body', 'user', 'ada@example.com')
    t.same(await bodies(), ['ada private', 'ada public'], 'a user chosen by email: their own notes')
    await get('notes?select=body', 'user', bobId)
    t.same(await bodies(), ['bob private'], 'a user chosen by id')

    await page.check('#rest-prefer-count')
    await get('notes?select=body', 'service_role')
    t.same(await bodies(), ['ada private', 'ada public', 'bob private'], 'service_role: every row')
    t.equal(await page.getAttribute('#rest-meta', 'data-range'), '0-2/3', 'count=exact: the total in Content-Range')
    await get('notes?select=body&limit=1', 'service_role')
    t.equal(await status(), 206, 'a partial page of a counted read')
    t.equal(await page.getAttribute('#rest-meta', 'data-range'), '0-0/3')
    await page.uncheck('#rest-prefer-count')

    await get('published_notes?select=body', 'anon')
    t.equal(await status(), 401, 'the view is not granted to anon: refused as the endpoint refuses it')
    t.equal(await text('#rest-error-code'), '42501')
  })

  t.test('a POST with return=representation inserts, as a user; checked in SQL', async (t) => {
    await page.goto(rest)
    await page.selectOption('#rest-method', 'POST')
    t.ok(await page.locator('#rest-body').isVisible(), 'a write has a body')
    await page.fill('#rest-path', 'notes?select=owner,body')
    await page.fill('#rest-body', JSON.stringify({ owner: adaId, body: 'from the dashboard' }))
    await page.check('#rest-prefer-return')
    await page.selectOption('#rest-role', 'user')
    await page.fill('#rest-user', 'ada@example.com')
    dialogs.length = 0
    await send()
    t.equal(await status(), 201)
    t.same(await answer(), [{ owner: adaId, body: 'from the dashboard' }], 'the row as written')
    t.match(await text('#rest-meta'), 'Preference-Applied return=representation')
    t.same(dialogs, [], 'a write as a user is not asked about: row-level security holds it')
    t.same(await sql(`select owner::text, body from public.notes where body = 'from the dashboard'`), [{ owner: adaId, body: 'from the dashboard' }])

    // The same user may not write another's note: the policy's refusal, in PostgREST's shape.
    await page.fill('#rest-body', JSON.stringify({ owner: bobId, body: 'forged' }))
    await send()
    t.equal(await status(), 403)
    t.equal(await text('#rest-error-code'), '42501')
    t.match(await text('#rest-error-message'), 'new row violates row-level security policy')
    t.same(await sql(`select body from public.notes where body = 'forged'`), [])

    await page.fill('#rest-body', '{"owner": ')
    await page.click('#rest-run')
    t.match(await text('#rest-problem'), /^The body is not JSON/)
    t.equal(await page.getAttribute('#rest-body', 'aria-invalid'), 'true')
    await page.uncheck('#rest-prefer-return')
  })

  t.test('a write as service_role is asked for first, and not sent when refused', async (t) => {
    await page.goto(rest)
    await page.selectOption('#rest-method', 'POST')
    await page.fill('#rest-path', 'notes')
    await page.fill('#rest-body', JSON.stringify({ owner: bobId, body: 'as service_role' }))
    await page.selectOption('#rest-role', 'service_role')

    // Refused (the session accepts real dialogs, so this one is answered in the page): nothing reaches the dashboard, nothing is written.
    let runs = 0
    const count = (r: { url(): string }) => {
      if (r.url().endsWith('/rest/run')) runs++
    }
    page.on('request', count)
    await page.evaluate(() => {
      const asked: string[] = []
      Object.assign(window, { asked })
      window.confirm = (message?: string) => {
        asked.push(message ?? '')
        return false
      }
    })
    await page.click('#rest-run')
    await page.waitForFunction(() => document.querySelector('#rest-status')!.textContent === 'Not sent.')
    page.off('request', count)
    t.equal(runs, 0, 'not sent')
    const asked = await page.evaluate(() => (window as unknown as { asked: string[] }).asked)
    t.match(asked, [/^Send this write as service_role\? service_role bypasses row-level security/])
    t.same(await sql(`select body from public.notes where body = 'as service_role'`), [])

    // A call that did not confirm (another script, an old page) is refused by the dashboard too.
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    const unconfirmed = await request<{ code: string }>(`${rest}/run`, { headers: { cookie }, body: { method: 'POST', path: 'notes', body: '{"owner":"' + bobId + '","body":"as service_role"}', role: 'service_role' } })
    t.equal(unconfirmed.status, 409)
    t.equal(unconfirmed.json.code, 'confirmation_required')
    t.same(await sql(`select body from public.notes where body = 'as service_role'`), [])

    // Accepted: sent, and written past row-level security (no insert policy lets anyone write bob's note but bob).
    await page.reload()
    await page.selectOption('#rest-method', 'POST')
    await page.fill('#rest-path', 'notes')
    await page.fill('#rest-body', JSON.stringify({ owner: bobId, body: 'as service_role' }))
    await page.selectOption('#rest-role', 'service_role')
    dialogs.length = 0
    await send()
    t.equal(dialogs.length, 1, 'asked once')
    t.equal(await status(), 201)
    t.equal(await text('#rest-answer'), '(no body)', 'return=minimal: no body')
    t.same(await sql(`select owner::text from public.notes where body = 'as service_role'`), [{ owner: bobId }])

    // A read as service_role is not asked about.
    dialogs.length = 0
    await get('notes?select=id&limit=1', 'service_role')
    t.same(dialogs, [])
  })

  t.test("a bad filter shows PGRST100 with PostgREST's message; refusals of the form", async (t) => {
    await page.goto(rest)
    await get('notes?id=zz.1', 'anon')
    t.equal(await status(), 400)
    t.ok(await page.locator('#rest-error').isVisible())
    t.equal(await text('#rest-error-code'), 'PGRST100')
    t.match(await text('#rest-error-message'), /^"failed to parse filter \(zz\.1\)" \(line 1, column \d+\)$/)
    t.match(((await answer()) as { code: string }).code, 'PGRST100', 'the body as the endpoint answered it')
    // The same request from an app, for comparison.
    const app = await request<{ code: string; message: string }>(`${project.baseUrl}/rest/v1/notes?id=zz.1`, { method: 'GET', headers: { apikey: project.anonKey } })
    t.same([app.status, app.json.code, app.json.message], [400, 'PGRST100', await text('#rest-error-message')])

    await get('nots?select=*', 'anon')
    t.equal(await status(), 404)
    t.equal(await text('#rest-error-code'), 'PGRST205')
    t.match(await text('#rest-error-hint'), 'notes')

    await page.selectOption('#rest-role', 'user')
    await page.fill('#rest-user', 'nobody@example.com')
    await page.click('#rest-run')
    await page.waitForSelector('#rest-problem:not([hidden])')
    t.equal(await text('#rest-problem'), 'No user with the email nobody@example.com')

    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    const run = (body: Record<string, unknown>, headers: Record<string, string> = { cookie }) => request<{ code: string; field?: string }>(`${rest}/run`, { headers, body })
    const escape = await run({ method: 'GET', path: '../auth/v1/admin/users', role: 'service_role' })
    t.same([escape.status, escape.json.field], [400, 'path'], 'no path out of /rest/v1')
    const badMethod = await run({ method: 'TRACE', path: 'notes', role: 'anon' })
    t.same([badMethod.status, badMethod.json.field], [400, 'method'])
    const badRole = await run({ method: 'GET', path: 'notes', role: 'postgres' })
    t.same([badRole.status, badRole.json.code], [400, 'invalid_argument'])
    const badPrefer = await run({ method: 'GET', path: 'notes', role: 'anon', prefer: ['tx=commit'] })
    t.same([badPrefer.status, badPrefer.json.field], [400, 'prefer'])
    t.equal((await run({ method: 'GET', path: 'notes', role: 'anon' }, {})).status, 401, 'no session, no request')
    t.equal((await run({ method: 'GET', path: 'notes', role: 'anon' }, { cookie, origin: 'http://evil.example' })).status, 403, 'not from another site')
  })

  t.test('the request goes through the data plane: a suspended project is refused as an app is', async (t) => {
    await suspendProject(platform.platform.controlPlane, project.ref, 'unpaid invoice')
    try {
      await page.goto(rest)
      await get('notes?select=body', 'service_role')
      t.equal(await status(), 403)
      t.equal(await text('#rest-error-code'), 'project_suspended')
      t.notMatch(await text('#rest-answer'), 'unpaid', "never the operator's reason, as the endpoint answers")
    } finally {
      await resumeProject(platform.platform.controlPlane, project.ref)
    }
    await get('notes?select=body&published=is.true', 'anon')
    t.same(await bodies(), ['ada public'], 'answered again once resumed')
  })

  t.test('the page fits 1280x800 and 390x844 without scrolling sideways', async (t) => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height })
      await page.goto(rest)
      await page.waitForSelector('#rest-relations[aria-busy="false"]')
      // A long answer and a long path scroll inside their boxes, not the page.
      await get(`notes?select=id,owner,body,published&order=id&body=neq.${'x'.repeat(300)}`, 'service_role')
      t.equal(await status(), 200)
      const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth])
      t.ok(scroll <= client, `${width}x${height}: ${scroll} <= ${client}`)
      const box = await page.locator('#rest-answer').boundingBox()
      t.ok(box !== null && box.x >= 0 && box.x + box.width <= width, `${width}x${height}: the answer within the window`)
    }
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('the exposed schemas: refused beside the field, saved, and a second schema asked for by the Schema choice', async (t) => {
    await sql(`create schema api; create table api.books (id int primary key, title text not null); insert into api.books values (1, 'Dune');
      grant usage on schema api to anon, authenticated, service_role; grant select on api.books to anon;`)
    const settings = `${platform.origin}/platform/v1/projects/${project.ref}/rest`
    const admin = { authorization: `Bearer ${platform.config.adminToken}` }
    const exposed = async () => (await request<{ schemas: string[] }>(settings, { headers: admin })).json.schemas
    await page.goto(rest)
    t.equal(await page.inputValue('#rest-schemas'), 'public')
    t.equal(await page.locator('#rest-profile').count(), 0, 'one schema exposed: no Schema choice')

    await page.fill('#rest-schemas', 'public, auth')
    await Promise.all([page.waitForNavigation(), page.click('#rest-schemas-save')])
    t.match(await text('#rest_schemas-schemas-error'), 'may not name "auth"')
    t.equal(await page.getAttribute('#rest-schemas', 'aria-invalid'), 'true')
    t.equal(await page.inputValue('#rest-schemas'), 'public, auth', 'the typed list kept')
    t.same(await exposed(), ['public'], 'nothing saved')

    await page.fill('#rest-schemas', 'public, api')
    await Promise.all([page.waitForNavigation(), page.click('#rest-schemas-save')])
    t.equal(await text('[role=status]'), 'Exposed schemas saved (the first is the default). It applies from the next request.')
    t.same(await exposed(), ['public', 'api'])
    t.equal(await page.inputValue('#rest-schemas'), 'public, api')
    await page.waitForSelector('#rest-relations[aria-busy="false"]')
    t.match(await text('#rest-schema-note'), 'exposed schemas: public, api')
    await page.click('button[aria-label="Read table api.books"]')
    t.equal(await page.inputValue('#rest-profile'), 'api', 'picking a table picks its schema')
    await page.selectOption('#rest-role', 'anon')
    await send()
    t.equal(await status(), 200)
    t.same(await answer(), [{ id: 1, title: 'Dune' }], 'sent with Accept-Profile: api')

    t.equal((await request(settings, { method: 'PATCH', headers: admin, body: { schemas: ['public'] } })).status, 200)
  })

  t.test('the max rows and the pre-request function: refused beside their fields, saved, and back to the defaults', async (t) => {
    const settings = `${platform.origin}/platform/v1/projects/${project.ref}/rest`
    const admin = { authorization: `Bearer ${platform.config.adminToken}` }
    const saved = async () => {
      const { max_rows, pre_request } = (await request<{ max_rows: number | null; pre_request: string | null }>(settings, { headers: admin })).json
      return { max_rows, pre_request }
    }
    const save = () => Promise.all([page.waitForNavigation(), page.click('#rest-requests-save')])
    await page.goto(rest)
    t.equal(await page.inputValue('#rest-max-rows'), '', "empty: the node's default")
    t.equal(await page.inputValue('#rest-pre-request'), '', 'empty: none')

    await page.fill('#rest-max-rows', '0')
    await page.fill('#rest-pre-request', 'public.a.b')
    await save()
    t.match(await text('#rest_requests-max_rows-error'), 'Max rows must be a whole number from 1 to 1,000,000')
    t.match(await text('#rest_requests-pre_request-error'), 'Pre-request function must name a function as schema.function or function', 'each refusal beside its own field')
    t.equal(await page.getAttribute('#rest-max-rows', 'aria-invalid'), 'true')
    t.equal(await page.getAttribute('#rest-pre-request', 'aria-invalid'), 'true')
    t.equal(await page.inputValue('#rest-max-rows'), '0', 'the typed values kept')
    t.equal(await page.inputValue('#rest-pre-request'), 'public.a.b')
    t.same(await saved(), { max_rows: null, pre_request: null }, 'nothing saved')

    await page.fill('#rest-max-rows', '2')
    await page.fill('#rest-pre-request', 'x;drop')
    await save()
    t.match(await text('#rest_requests-pre_request-error'), 'got "x;drop"')
    t.equal(await page.locator('#rest_requests-max_rows-error').count(), 0, 'the valid field has no error')
    t.equal(await page.getAttribute('#rest-max-rows', 'aria-invalid'), null)
    t.same(await saved(), { max_rows: null, pre_request: null }, 'one refused field saves neither')

    await page.fill('#rest-pre-request', '')
    await save()
    t.equal(await text('[role=status]'), 'Max rows and pre-request function saved. It applies from the next request.')
    t.same(await saved(), { max_rows: 2, pre_request: null })
    t.equal(await page.inputValue('#rest-max-rows'), '2')
    await get('notes?select=id', 'service_role')
    t.equal(await status(), 200)
    t.equal(((await answer()) as unknown[]).length, 2, 'the tab\'s own request is capped too')

    // One that cannot be called is refused beside the field, with why.
    await page.fill('#rest-pre-request', 'public.check_request')
    await save()
    t.equal(
      await text('#rest_requests-pre_request-error'),
      "The pre-request function public.check_request cannot be called: the project's database has no function public.check_request() taking no arguments",
    )
    t.same(await saved(), { max_rows: 2, pre_request: null }, 'nothing saved')

    // Named once it exists: the function being called is test/rest/request-settings.test.ts's.
    await sql('create function public.check_request() returns void language plpgsql as $$begin end$$')
    await page.fill('#rest-pre-request', ' public.check_request ')
    await save()
    t.same(await saved(), { max_rows: 2, pre_request: 'public.check_request' }, 'saved trimmed, the max rows kept')
    t.equal(await page.inputValue('#rest-pre-request'), 'public.check_request', 'shown as saved')
    t.equal(await page.locator('#rest-pre-request-problem').count(), 0, 'callable: nothing to say')

    // Dropped since: the tab says every request fails, and the max rows may still be saved beside it.
    await sql('drop function public.check_request()')
    await page.goto(rest)
    t.equal(
      await text('#rest-pre-request-problem'),
      "The pre-request function public.check_request cannot be called: the project's database has no function public.check_request() taking no arguments. Every request of the project fails until it can, or until it is emptied here.",
    )
    await page.fill('#rest-max-rows', '3')
    await save()
    t.same(await saved(), { max_rows: 3, pre_request: 'public.check_request' }, 'the unchanged function is not checked again')

    await page.fill('#rest-max-rows', '')
    await page.fill('#rest-pre-request', '')
    await save()
    t.same(await saved(), { max_rows: null, pre_request: null }, 'emptied: the defaults again')
    t.equal(await page.inputValue('#rest-pre-request'), '')
  })

  t.test('the transaction end and the plans: refused beside their fields, saved, and back to the defaults', async (t) => {
    const settings = `${platform.origin}/platform/v1/projects/${project.ref}/rest`
    const admin = { authorization: `Bearer ${platform.config.adminToken}` }
    const saved = async () => {
      const { tx_end, plans } = (await request<{ tx_end: string; plans: boolean }>(settings, { headers: admin })).json
      return { tx_end, plans }
    }
    const save = () => Promise.all([page.waitForNavigation(), page.click('#rest-tx-plans-save')])
    await page.goto(rest)
    t.equal(await page.inputValue('#rest-tx-end'), 'commit', "PostgREST's default")
    t.equal(await page.inputValue('#rest-plans'), 'false', 'off by default')

    // A value the choices do not offer (a hand-made post) is refused beside its field.
    await page.evaluate(() => {
      for (const [id, value] of [['rest-tx-end', 'sometimes'], ['rest-plans', 'maybe']]) {
        const option = document.createElement('option')
        option.value = value!
        document.getElementById(id!)!.append(option)
        ;(document.getElementById(id!) as HTMLSelectElement).value = value!
      }
    })
    await save()
    t.match(await text('#rest_tx_plans-tx_end-error'), 'Transaction end must be one of commit, commit-allow-override, rollback, rollback-allow-override, got "sometimes"')
    t.match(await text('#rest_tx_plans-plans-error'), 'Plans must be true or false, got "maybe"', 'each refusal beside its own field')
    t.same(await saved(), { tx_end: 'commit', plans: false }, 'nothing saved')

    await page.selectOption('#rest-tx-end', 'commit-allow-override')
    await page.selectOption('#rest-plans', 'true')
    await save()
    t.equal(await text('[role=status]'), 'Transaction end and plans saved. It applies from the next request.')
    t.same(await saved(), { tx_end: 'commit-allow-override', plans: true })
    t.equal(await page.inputValue('#rest-tx-end'), 'commit-allow-override', 'shown as saved')
    t.equal(await page.inputValue('#rest-plans'), 'true')

    await page.selectOption('#rest-tx-end', 'commit')
    await page.selectOption('#rest-plans', 'false')
    await save()
    t.same(await saved(), { tx_end: 'commit', plans: false }, 'the defaults again')
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
