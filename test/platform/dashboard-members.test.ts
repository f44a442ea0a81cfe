// The dashboard for members (issue 42 item 3) in headless Chromium: the
// operator invites from a project's Members tab, each invitee sets a password
// from the mail and is signed in; each role on each page of its project (the
// tabs drawn, the service_role key only for developers and owners, the forms
// the role may not use refused on the server with 403), a member of A refused
// everything of B; the owner changes a role; the Account page makes a token
// (shown once, working against the admin API) and enrols TOTP, which the next
// sign-in asks for.
import { generateSync } from 'otplib'
import type { BrowserContext, Page } from 'playwright-core'
import t from 'tap'
import { linkOf, startMailCatcher } from '../auth/helpers.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const mail = await startMailCatcher(t)
  const { platform, page, dashboard, offsite, text, signIn, browser } = await dashboardSession(t, 'dashboard-members', { SMTP_URL: mail.url })
  const a = await platform.createProject({ name: 'Alpha', auth: true })
  const b = await platform.createProject({ name: 'Beta' })
  const PASSWORD = 'correct horse 42'
  const TABS = ['', '/auth', '/users', '/graphql', '/rest', '/push', '/realtime', '/storage', '/usage', '/database', '/keys', '/members', '/settings']
  const members: Record<string, { context: BrowserContext; page: Page }> = {}

  /** A fresh browser of the member's own, signed in by the invitation's link. */
  async function accept(email: string, since: number): Promise<Page> {
    const link = linkOf(await mail.next(email, since))
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const own = await context.newPage()
    await own.goto(link)
    await own.fill('#password', PASSWORD)
    await Promise.all([own.waitForURL(`${dashboard}`), own.click('#accept')])
    members[email] = { context, page: own }
    return own
  }

  await signIn()

  t.test('the operator invites from the Members tab', async (t) => {
    await page.goto(`${dashboard}/projects/${a.ref}/members`)
    for (const [email, role] of [
      ['owner@example.com', 'owner'],
      ['dev@example.com', 'developer'],
      ['reader@example.com', 'read-only'],
    ]) {
      const since = mail.messages.length
      await page.fill('#member-email', email!)
      await page.selectOption('#member-role', role!)
      await page.click('button:has-text("Send the invitation")')
      t.match(await text('.notice'), /Invitation sent/)
      t.equal(await page.locator(`tr[data-email="${email}"] .member-role`).innerText(), role)
      const own = await accept(email!, since)
      t.match(await own.locator('main').innerText(), 'Alpha', `${email} sees project A`)
    }
    await page.fill('#member-email', 'not-an-email')
    await page.evaluate(() => document.querySelector('#member-email')!.setAttribute('type', 'text'))
    await page.click('button:has-text("Send the invitation")')
    t.match(await text('#invite-email-error'), /email address/, 'a bad address is refused beside the field')
  })

  t.test('each member sees only their projects, no servers and no new-project form', async (t) => {
    for (const email of Object.keys(members)) {
      const own = members[email]!.page
      await own.goto(dashboard)
      const main = await own.locator('main').innerText()
      t.match(main, 'Alpha')
      t.notMatch(main, 'Beta', `${email} sees nothing of B`)
      t.equal(await own.locator('#servers-link').count(), 0)
      t.equal(await own.locator('#name').count(), 0, 'no new-project form')
      t.equal((await own.goto(`${dashboard}/servers`))!.status(), 403)
      t.equal((await own.goto(`${dashboard}/members`))!.status(), 403, "the list of every member is the operator's")
    }
  })

  t.test('each role on each page of its project; everything of B refused', async (t) => {
    for (const email of Object.keys(members)) {
      const own = members[email]!.page
      for (const tab of TABS) {
        const reply = await own.goto(`${dashboard}/projects/${a.ref}${tab}`)
        t.equal(reply!.status(), 200, `${email}: A${tab || ' overview'}`)
        const refused = await own.goto(`${dashboard}/projects/${b.ref}${tab}`)
        t.equal(refused!.status(), 403, `${email}: B${tab || ' overview'} refused`)
        t.match(await own.locator('#forbidden').innerText(), 'not a member')
      }
      await own.goto(`${dashboard}/projects/${a.ref}`)
      const tabs = await own.locator('nav.tabs a').allInnerTexts()
      t.ok(tabs.includes('Members') && tabs.includes('Settings'), `${email}'s tabs: ${tabs.join(', ')}`)
      const hidden = await own.locator('#service-role-hidden').count()
      t.equal(hidden, email === 'reader@example.com' ? 1 : 0, `${email}: the service_role key ${hidden ? 'hidden' : 'shown'}`)
    }
  })

  t.test('forms the role may not use are refused on the server', async (t) => {
    const post = (email: string, path: string, form: Record<string, string> = {}) => members[email]!.page.request.post(`${dashboard}${path}`, { form, maxRedirects: 0 })
    // [path, form, the least role that may]
    const cases: Array<[string, Record<string, string>, 'read-only' | 'developer' | 'owner' | 'operator']> = [
      [`/projects/${a.ref}/database/reveal`, {}, 'developer'],
      [`/projects/${a.ref}/products/push`, { enabled: 'on' }, 'developer'],
      [`/projects/${a.ref}/keys/signing/rotate`, { alg: 'ES256' }, 'owner'],
      [`/projects/${a.ref}/keys/rotate`, {}, 'owner'],
      [`/projects/${a.ref}/members`, { email: 'x@example.com', role: 'owner' }, 'owner'],
      [`/projects/${a.ref}/plan`, { plan: 'pro' }, 'operator'],
      [`/projects/${a.ref}/suspend`, { reason: 'no', confirm: a.ref }, 'operator'],
      ['/projects', { name: 'Mine' }, 'operator'],
    ]
    const rank = { 'read-only': 0, developer: 1, owner: 2, operator: 3 }
    const roles: Record<string, keyof typeof rank> = { 'reader@example.com': 'read-only', 'dev@example.com': 'developer', 'owner@example.com': 'owner' }
    for (const [path, form, least] of cases) {
      for (const [email, role] of Object.entries(roles)) {
        const reply = await post(email, path, form)
        if (rank[role] >= rank[least]) t.not(reply.status(), 403, `${role}: ${path} allowed (${reply.status()})`)
        else t.equal(reply.status(), 403, `${role}: ${path} refused`)
      }
    }
    const deleteB = await post('owner@example.com', `/projects/${b.ref}/delete`, { confirm: b.ref })
    t.equal(deleteB.status(), 403, "an owner of A cannot delete B")
    const explorer = await members['reader@example.com']!.page.request.post(`${dashboard}/projects/${a.ref}/graphql/run`, { data: { query: '{ __typename }', role: 'service_role' } })
    t.equal(explorer.status(), 403, "a read-only member cannot run documents as service_role")
    t.equal((await explorer.json()).code, 'insufficient_role')
    const { rows } = await platform.platform.controlPlane.catalogue.query<{ plan: string; state: string }>('select plan, state from baseplane.projects where ref = $1', [a.ref])
    t.same(rows[0], { plan: 'free', state: 'active' }, 'the operator-only forms changed nothing')
  })

  t.test("the owner changes a member's role; it applies at once", async (t) => {
    const owner = members['owner@example.com']!.page
    await owner.goto(`${dashboard}/projects/${a.ref}/members`)
    const row = owner.locator('tr[data-email="reader@example.com"]')
    await row.locator('select').selectOption('developer')
    await row.locator('button:has-text("Change role")').click()
    t.match(await owner.locator('.notice').innerText(), /Role changed/)
    const reader = members['reader@example.com']!.page
    await reader.goto(`${dashboard}/projects/${a.ref}`)
    t.equal(await reader.locator('#service-role-hidden').count(), 0, 'now a developer: the key is shown')
    const dev = members['dev@example.com']!.page
    await dev.goto(`${dashboard}/projects/${a.ref}/members`)
    t.equal(await dev.locator('#invite-member').count(), 0, 'a developer gets no invitation form')
    const { rows } = await platform.platform.controlPlane.catalogue.query<{ actor: string }>("select actor from baseplane.events where kind = 'member.role_changed' and ref = $1 order by id desc limit 1", [a.ref])
    t.equal(rows[0]?.actor, 'member:owner@example.com')
  })

  t.test('the Account page: a token shown once that works, revoked; TOTP enrolled and asked for', async (t) => {
    const dev = members['dev@example.com']!.page
    await dev.goto(`${dashboard}/account`)
    t.equal(await dev.locator('#account-email').innerText(), 'dev@example.com')
    await dev.fill('#token-name', 'laptop')
    await dev.click('button:has-text("Create token")')
    const token = (await dev.locator('#token-value').innerText()).trim()
    t.match(token, /^bp_pat_/)
    const used = await request<Array<{ ref: string }>>(`${platform.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${token}` } })
    t.same(used.json.map((p) => p.ref), [a.ref], 'the token lists the member’s projects')
    await dev.goto(`${dashboard}/account`)
    t.equal(await dev.locator('#token-value').count(), 0, 'never shown again')
    await dev.locator('tr[data-token="laptop"] button:has-text("Revoke")').click()
    t.match(await dev.locator('.notice').innerText(), /revoked/)
    t.equal((await request(`${platform.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${token}` } })).status, 401)

    const secret = await dev.locator('#totp-secret').innerText()
    await dev.fill('#totp-code', '000000')
    await dev.click('button:has-text("Enrol")')
    t.ok(await dev.locator('#totp-code-error').isVisible(), 'a wrong code is refused beside the field')
    const fresh = await dev.locator('#totp-secret').innerText()
    await dev.fill('#totp-code', generateSync({ secret: fresh }))
    await dev.click('button:has-text("Enrol")')
    t.match(await dev.locator('.notice').innerText(), /enrolled/)
    t.not(fresh, '', secret)
    await dev.click('button:has-text("Sign out")')
    await dev.fill('#email', 'dev@example.com')
    await dev.fill('#password', PASSWORD)
    await dev.click('#member-sign-in-button')
    t.match(await dev.locator('[role=alert]').first().innerText(), /code from your authenticator/)
    await dev.fill('#password', PASSWORD)
    // The step just used at enrolment is refused; the next one signs in.
    await dev.fill('#code', generateSync({ secret: fresh, epoch: Math.floor(Date.now() / 1000) + 30 }))
    await dev.click('#member-sign-in-button')
    t.match(await dev.locator('main').innerText(), 'Alpha', 'signed in with the code')
  })

  t.test("the operator's list of every member, and its events with their actors", async (t) => {
    await page.goto(`${dashboard}/members`)
    const main = await text('main')
    for (const email of Object.keys(members)) t.match(main, email)
    t.match(main, `${a.ref} (developer)`)
    const events = await request<{ events: Array<{ kind: string; actor: string | null }> }>(`${platform.origin}/platform/v1/events?project=${a.ref}&limit=1000`, {
      headers: { authorization: `Bearer ${platform.config.adminToken}` },
    })
    const invited = events.json.events.filter((e) => e.kind === 'member.invited').map((e) => e.actor)
    // Newest first: the owner's invitation (the forms test), then the operator's three from the Members tab.
    t.same(invited, ['member:owner@example.com', 'operator', 'operator', 'operator'], 'each invitation with who sent it')
    t.ok(events.json.events.some((e) => e.kind === 'project.changed' && e.actor === 'member:dev@example.com'), "a developer's saved form is recorded with who made it")
  })

  t.test('nothing left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
