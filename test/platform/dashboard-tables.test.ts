// The Tables tab in headless Chromium: a table made through the form (and a
// type the editor does not offer refused beside its input, nothing made), a
// row inserted, a unique and a not-null violation shown beside the field they
// concern with the typed values kept, a row edited and deleted, the rows
// sorted and filtered, and row-level security with a template policy, checked
// through the Data API as anon.
import t from 'tap'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-tables')
  const project = await platform.createProject({ name: 'Tabled' })
  const tab = `${dashboard}/projects/${project.ref}/tables`
  const byId = (id: string) => `[id="${id}"]`
  const anonRows = async () => (await request<unknown[]>(`${project.baseUrl}/rest/v1/posts?select=title&order=id`, { headers: { apikey: project.anonKey } })).json

  t.test('a table made through the form; a bad type refused beside its input', async (t) => {
    await signIn()
    await page.goto(tab)
    t.equal(await text('nav.tabs a[aria-current=page]'), 'Tables')
    t.match(await text('#te-table-list'), 'No tables in public yet.')
    await page.fill('#te-new-name', 'posts')
    await page.fill('#te-new-2-name', 'title')
    await page.fill('#te-new-2-type', 'money')
    await page.uncheck('#te-new-2-nullable')
    await page.check('#te-new-2-unique')
    await page.click('#te-create-button')
    t.match(await text(byId('table_create-columns.2.type-error')), '"money" is not a type the editor offers')
    t.equal(await page.inputValue('#te-new-name'), 'posts', 'the typed name is kept')
    t.equal(await page.isChecked('#te-new-2-unique'), true, 'and the boxes')
    t.match(await text('#te-table-list'), 'No tables in public yet.', 'nothing was made')
    await page.fill('#te-new-2-type', 'text')
    await page.fill('#te-new-3-name', 'rating')
    await page.fill('#te-new-3-type', 'int4')
    await Promise.all([page.waitForURL(/done=table_created/), page.click('#te-create-button')])
    t.equal(await text('.notice'), 'Table posts created.')
    t.match(await text('#te-columns'), /id\s+primary key\s+bigint\s+no\s+identity \(by default\)[\s\S]*created_at\s+timestamp with time zone\s+no\s+now\(\)[\s\S]*title\s+text\s+no[\s\S]*rating\s+integer\s+yes/)
    t.match(await text('#te-constraints'), /posts_title_key\s+unique\s+\(title\)/)
    t.match(await text('#te-rls-state'), /^On/)
  })

  t.test('rows inserted, with constraint errors beside their field', async (t) => {
    await page.click('#te-views a:has-text("Rows")')
    await page.fill('[id="row_insert-title"]', 'first')
    await page.fill('[id="row_insert-rating"]', '3')
    await Promise.all([page.waitForURL(/done=row_inserted/), page.click('#te-insert-button')])
    t.equal(await text('.notice'), 'Row inserted.')
    t.match(await text('#te-grid'), /1\s+\d{4}-\d\d-\d\d [\d:.+]+\s+first\s+3/)
    await page.fill('[id="row_insert-title"]', 'first')
    await page.fill('[id="row_insert-rating"]', '7')
    await page.click('#te-insert-button')
    t.match(await text(byId('row_insert-v.title-error')), /duplicate key value violates unique constraint "posts_title_key".*Key \(title\)=\(first\) already exists/)
    t.equal(await page.getAttribute('[id="row_insert-title"]', 'aria-invalid'), 'true')
    t.equal(await page.inputValue('[id="row_insert-rating"]'), '7', 'the typed values are kept')
    await page.fill('[id="row_insert-title"]', '')
    await page.click('#te-insert-button')
    t.match(await text(byId('row_insert-v.title-error')), 'null value in column "title"')
    await page.fill('[id="row_insert-title"]', 'second')
    await page.fill('[id="row_insert-rating"]', 'lots')
    await page.click('#te-insert-button')
    t.match(await text(byId('row_insert-v.rating-error')), 'rating: invalid input syntax for type integer')
    await page.fill('[id="row_insert-rating"]', '1')
    await Promise.all([page.waitForURL(/done=row_inserted/), page.click('#te-insert-button')])
    t.match(await text('#te-count'), 'Rows 1 to 2 of 2')
  })

  t.test('rows sorted, filtered, edited and deleted', async (t) => {
    await page.selectOption('#te-sort', 'rating')
    await page.click('#te-filter button')
    t.match(await text('#te-grid tbody'), /second[\s\S]*first/)
    await page.selectOption('#te-fc', 'title')
    await page.selectOption('#te-fo', 'eq')
    await page.fill('#te-fv', 'first')
    await page.click('#te-filter button')
    t.match(await text('#te-count'), 'Rows 1 to 1 of 1')
    await page.click('#te-grid a:has-text("Edit")')
    t.equal(await page.inputValue('[id="row_update-title"]'), 'first')
    await page.fill('[id="row_update-title"]', 'second')
    await page.click('#te-update-button')
    t.match(await text(byId('row_update-v.title-error')), 'already exists', 'the edit refused beside its field')
    await page.fill('[id="row_update-title"]', 'renamed')
    await Promise.all([page.waitForURL(/done=row_updated/), page.click('#te-update-button')])
    t.match(await text('#te-grid'), 'renamed')
    await Promise.all([page.waitForURL(/done=row_deleted/), page.click('#te-grid tbody tr:has-text("second") button:has-text("Delete")')])
    t.match(await text('#te-count'), 'Rows 1 to 1 of 1')
  })

  t.test('row-level security and a template policy, as anon through the Data API', async (t) => {
    t.same(await anonRows(), [], 'on with no policy: anon sees nothing')
    await page.goto(`${tab}?schema=public&table=posts&view=structure`)
    await page.selectOption('#te-template', 'read_all')
    await Promise.all([page.waitForURL(/done=policy_added/), page.click('#te-policy-button')])
    t.match(await text('#te-policies'), /Enable read access for all users\s+SELECT\s+public\s+true/)
    t.same(await anonRows(), [{ title: 'renamed' }])
    await page.selectOption('#te-template', 'own_select')
    await page.click('#te-policy-button')
    t.match(await text(byId('policy_add-column-error')), 'column', 'an own-data template needs a uuid column')
    await page.fill('#te-add-name', 'author')
    await page.fill('#te-add-type', 'uuid')
    await Promise.all([page.waitForURL(/done=column_added/), page.click('#te-add-column-button')])
    t.match(await text('#te-columns'), /author\s+uuid\s+yes/)
    await page.click('#te-rls-toggle')
    await page.waitForURL(/done=rls_off/)
    t.match(await text('#te-rls-state'), /^Off/)
    await page.fill('#te-drop-confirm', 'wrong')
    await page.click('#te-drop-table button')
    t.match(await text(byId('table_drop-confirm-error')), 'Type the table\'s name, "posts"')
    await page.fill('#te-drop-confirm', 'posts')
    await Promise.all([page.waitForURL(/done=table_dropped/), page.click('#te-drop-table button')])
    t.match(await text('#te-table-list'), 'No tables in public yet.')
  })

  t.test("the platform's schemas are read-only", async (t) => {
    await page.goto(`${tab}?schema=auth`)
    t.match(await text('#te-read-only'), "Schema auth is the platform's")
    t.equal(await page.locator('#te-create').count(), 0, 'no new table form')
    await page.goto(`${tab}?schema=auth&table=users`)
    t.match(await text('#te-grid'), 'No rows match.')
    t.equal(await page.locator('#te-insert-form').count(), 0, 'no insert form')
    await page.goto(`${tab}?schema=auth&table=audit_log_entries`)
    t.match(await text('#te-rows-problem'), 'permission denied', "a table the owner may not read says so")
  })

  t.test('stays on the platform', async (t) => {
    t.same(offsite, [])
  })
}
