// The dashboard's Settings tab suspends a project (a reason and its ref typed
// to confirm, refusals beside their field with the input kept) and resumes
// it; the state and the reason show to the operator, the project's callers
// get project_suspended. In headless Chromium against a running platform.
import t from 'tap'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-suspension')
  const project = await platform.createProject({ name: 'Corner Shop' })
  const health = () => request<{ code?: string }>(`${project.baseUrl}/health`, { headers: { apikey: project.anonKey } })
  await signIn()

  t.test('refusals are drawn beside their field, the input kept, nothing suspended', async (t) => {
    await page.goto(`${dashboard}/projects/${project.ref}/settings`)
    t.match(await text('#state'), 'Active')
    await page.fill('#suspend-confirm', project.ref)
    await page.click('button:has-text("Suspend project")')
    t.match(await text('#suspend-reason-error'), /^reason is required/)
    t.equal(await page.getAttribute('#reason', 'aria-invalid'), 'true')
    t.equal(await page.inputValue('#suspend-confirm'), project.ref, 'the typed ref is kept')
    await page.fill('#reason', 'Unpaid since March')
    await page.fill('#suspend-confirm', 'wrong')
    await page.click('button:has-text("Suspend project")')
    t.equal(await text('#suspend-confirm-error'), `Type ${project.ref} to confirm`)
    t.equal(await page.inputValue('#reason'), 'Unpaid since March', 'the typed reason is kept')
    t.equal((await health()).status, 200, 'still answering')
  })

  t.test('suspend with a reason and the ref, then resume', async (t) => {
    await page.fill('#reason', 'Unpaid since March')
    await page.fill('#suspend-confirm', project.ref)
    await page.click('button:has-text("Suspend project")')
    t.equal(await text('[role=status]'), `Project ${project.ref} is suspended: every service refuses it, its roles cannot connect and its push waits. It applies from the next request.`)
    t.match(await text('#state'), 'Suspended since')
    t.equal(await text('#state-reason'), 'Unpaid since March', 'the reason, for the operator')
    t.notOk(await page.locator('#suspend').count(), 'no second suspension is offered')
    const refused = await health()
    t.same([refused.status, refused.json.code], [403, 'project_suspended'])
    t.notMatch(JSON.stringify(refused.json), /Unpaid/, 'never to the callers')

    await page.goto(dashboard)
    t.match(await text('main table'), /Corner Shop\s+\S+\s+free\s+suspended/)

    await page.goto(`${dashboard}/projects/${project.ref}/settings`)
    await page.click('button:has-text("Resume project")')
    t.equal(await text('[role=status]'), `Project ${project.ref} is resumed: it answers again and sends its queued push. It applies from the next request.`)
    t.match(await text('#state'), 'Active')
    t.equal((await health()).status, 200)
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
