// The SQL tab in headless Chromium: a run as the owner drawing the columns
// with their types and NULL apart from the text 'NULL'; the same table as
// anon, as a chosen user and as service_role under its row-level security;
// pages (the next one read-only); PostgreSQL's error with its position, the
// line marked and the hint; EXPLAIN; snippets saved, opened, rewritten and
// deleted; the history redrawn after each run; and the calls' refusals
// (a bad role, no session, another site).
import pg from 'pg'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-sql')
  const project = await platform.createProject({ name: 'Ledger', auth: true })
  const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
  const ada = await admin.auth.admin.createUser({ email: 'ada@example.com', email_confirm: true })
  if (ada.error) throw ada.error
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  await owner.connect()
  await owner.query(`
    create table public.notes (id int primary key, owner uuid, body text, public boolean not null default false);
    alter table public.notes enable row level security;
    create policy everyone on public.notes for select to anon using (public);
    create policy own on public.notes for select to authenticated using (public or owner = auth.uid());
    grant select on public.notes to anon, authenticated, service_role;
    insert into public.notes values (1, '${ada.data.user!.id}', 'ada''s', false), (2, null, 'NULL', true), (3, null, null, false);`)
  await owner.end()
  const sql = `${dashboard}/projects/${project.ref}/sql`
  const run = async (button = '#sql-run') => {
    const done = page.waitForResponse((r) => r.url().endsWith('/sql/run'))
    const redrawn = page.waitForResponse((r) => r.url().endsWith('/sql/history.json'))
    await page.click(button)
    await done
    await redrawn
  }
  const cells = () => page.$$eval('#sql-result tbody tr', (rows) => rows.map((row) => Array.from(row.querySelectorAll('td')).map((td) => (td.querySelector('.sql-null') ? '<null>' : td.textContent))))
  const ids = async () => (await cells()).map((row) => row[0])
  await signIn()

  t.test('the owner: columns with their types, NULL apart from the text NULL', async (t) => {
    await page.goto(sql)
    t.equal(await page.title(), 'SQL · Ledger · Baseplane')
    t.equal(await page.locator('nav.tabs a[aria-current=page]').innerText(), 'SQL')
    t.equal(await page.inputValue('#sql-role'), 'owner', 'the owner first')
    await page.fill('#sql-query', 'select id, body from public.notes order by id')
    await run()
    t.same(await page.$$eval('#sql-result thead th', (ths) => ths.map((th) => th.textContent)), ['idinteger', 'bodytext'])
    t.same(await cells(), [['1', "ada's"], ['2', 'NULL'], ['3', '<null>']])
    t.match(await text('#sql-meta'), /^SELECT · rows 1–3 of 3 · 1 statement · \d+ ms · as owner$/)
  })

  t.test('each role under row-level security', async (t) => {
    await page.fill('#sql-query', 'select id from public.notes order by id')
    await page.selectOption('#sql-role', 'anon')
    await run()
    t.same(await ids(), ['2'], 'anon')
    await page.selectOption('#sql-role', 'user')
    t.ok(await page.locator('#sql-user').isVisible())
    await page.fill('#sql-user', 'ada@example.com')
    await run()
    t.same(await ids(), ['1', '2'], 'ada')
    t.match(await text('#sql-meta'), /as ada@example.com/)
    await page.fill('#sql-user', 'nobody@example.com')
    await run()
    t.equal(await text('#sql-problem'), 'No user with the email nobody@example.com')
    t.equal(await page.getAttribute('#sql-user', 'aria-invalid'), 'true')
    await page.selectOption('#sql-role', 'service_role')
    await run()
    t.same(await ids(), ['1', '2', '3'], 'service_role')
    await page.selectOption('#sql-role', 'owner')
  })

  t.test('pages: the next one runs the text again, read-only', async (t) => {
    await page.fill('#sql-query', 'select g from generate_series(1, 250) g')
    await run()
    t.equal((await ids()).length, 100)
    t.match(await text('#sql-meta'), /rows 1–100, more/)
    t.ok(await page.locator('#sql-next').isVisible())
    t.notOk(await page.locator('#sql-prev').isVisible())
    await run('#sql-next')
    t.equal((await ids())[0], '101')
    t.match(await text('#sql-meta'), /rows 101–200, more .*read-only/)
    await run('#sql-next')
    t.same([(await ids()).length, await page.locator('#sql-next').isVisible()], [50, false])
    t.match(await text('#sql-meta'), /rows 201–250 of 250/)
    await run('#sql-prev')
    t.equal((await ids())[0], '101')
  })

  t.test("an error: PostgreSQL's code, message and hint, the line marked under its position", async (t) => {
    await page.fill('#sql-query', 'select 1;\nselect no_such(1)')
    await run()
    t.ok(await page.locator('#sql-error').isVisible())
    t.equal(await text('#sql-error-code'), '42883')
    t.equal(await text('#sql-error-message'), 'function no_such(integer) does not exist')
    t.match(await text('#sql-error-hint'), /No function matches the given name/)
    t.equal(await text('#sql-error-position'), 'line 2, column 8 (character 18)')
    t.equal(await page.locator('#sql-error-at').textContent(), 'LINE 2: select no_such(1)\n               ^')
    t.notOk(await page.locator('#sql-result').isVisible())
  })

  t.test('EXPLAIN, as text and as JSON', async (t) => {
    await page.fill('#sql-query', 'select * from public.notes')
    await run('#sql-explain')
    t.match(await text('#sql-plan'), /^Seq Scan on notes/)
    t.match(await text('#sql-meta'), /rolled back/)
    await page.check('#sql-explain-json')
    await run('#sql-explain')
    t.match(JSON.parse(await text('#sql-plan')), [{ Plan: { 'Node Type': 'Seq Scan' } }])
    await page.uncheck('#sql-explain-json')
  })

  t.test('snippets: saved, opened, rewritten, deleted; the history lists the runs', async (t) => {
    await page.fill('#sql-query', 'select count(*) from public.notes')
    await page.fill('#sql-snippet-name', 'Count notes')
    await page.click('#sql-snippet-save')
    await page.waitForSelector('#sql-snippets tr[data-id]')
    t.match(await text('#sql-snippets'), /Count notes/)
    await page.click('#sql-snippet-save')
    await page.waitForSelector('#sql-snippet-problem:not([hidden])')
    t.match(await text('#sql-snippet-problem'), /Give|name/, 'no name given')
    await page.fill('#sql-snippet-name', 'Count notes')
    await page.click('#sql-snippet-save')
    await page.waitForFunction(() => document.querySelector('#sql-snippet-problem')!.textContent!.includes('already'))
    await page.fill('#sql-query', 'select 2')
    await page.click('#sql-snippets button[data-load]')
    t.equal(await page.inputValue('#sql-query'), 'select count(*) from public.notes')
    await page.fill('#sql-query', 'select count(*) from public.notes where public')
    const saved = page.waitForResponse((r) => r.url().endsWith('/sql/snippets.json'))
    await page.click('#sql-snippets button[data-save]')
    await saved
    await page.reload()
    await page.waitForSelector('#sql-snippets tr[data-id]')
    t.match(await text('#sql-snippets'), /where public/, 'rewritten, drawn by the server too')
    t.match(await text('#sql-history'), /select \* from public\.notes/)
    t.match(await text('#sql-history'), /error 42883/)
    t.match(await text('#sql-history'), /service_role/)
    await page.click('#sql-snippets button[data-delete]')
    await page.waitForSelector('#sql-snippets .empty')
    t.equal(await text('#sql-snippets'), 'No snippets saved yet.')
  })

  t.test("the calls' refusals", async (t) => {
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    const badRole = await request<{ code: string; field: string }>(`${sql}/run`, { headers: { cookie }, body: { query: 'select 1', role: 'postgres' } })
    t.same([badRole.status, badRole.json.code, badRole.json.field], [400, 'invalid_argument', 'role'])
    const signedOut = await request(`${sql}/run`, { body: { query: 'select 1', role: 'owner' } })
    t.equal(signedOut.status, 401)
    const crossSite = await request(`${sql}/run`, { headers: { cookie, origin: 'http://evil.example' }, body: { query: 'select 1', role: 'owner' } })
    t.equal(crossSite.status, 403)
    t.same(offsite, [], 'nothing left 127.0.0.1')
  })
}
