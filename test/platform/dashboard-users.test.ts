// The Users tab in headless Chromium: list, search, paging, detail
// (identities, factors, sessions, last sign-in), create, invite, recovery
// link, ban and lift, remove a TOTP factor, sign out everywhere, delete; each
// refusal shown beside its field. The same operations from the CLI are in
// test/cli/auth-users.test.ts.
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { startMailCatcher } from '../auth/helpers.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const mail = await startMailCatcher(t)
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-users', { SMTP_URL: mail.url })
  const project = await platform.createProject({ name: 'Tea Room', auth: true })
  const off = await platform.createProject({ name: 'No Auth' })
  await setAuthOptions(platform.platform.controlPlane, project.ref, { mail_min_interval_seconds: 0 })
  const client = () =>
    createClient(project.baseUrl, project.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    })
  const users = `${dashboard}/projects/${project.ref}/users`
  await signIn()

  t.test('a project without Auth says what to do', async (t) => {
    await page.goto(`${dashboard}/projects/${off.ref}/users`)
    t.match(await text('.empty'), 'Auth is off')
  })

  t.test('an empty list says what to do', async (t) => {
    await page.goto(users)
    t.equal(await page.title(), 'Users · Tea Room · Baseplane')
    t.match(await text('.empty'), 'No users yet. Create one or send an invitation below')
  })

  t.test('creating a user; a refusal keeps the address beside the field', async (t) => {
    await page.fill('#new-email', 'ada@example.com')
    await page.fill('#new-password', '123')
    await page.click('button:has-text("Create user")')
    t.match(await text('#create-password-error'), /Password should be at least/)
    t.equal(await page.inputValue('#new-email'), 'ada@example.com', 'the typed address is kept')
    await page.fill('#new-password', 'correct horse battery')
    await page.click('button:has-text("Create user")')
    t.equal(await text('[role=status]'), 'User created, with the address confirmed.')
    t.equal(await text('#user-email'), 'ada@example.com')
    t.equal(await text('#user-status'), 'active')
    t.equal(await text('#user-last-sign-in'), 'never')
    t.match(await text('main'), 'No sessions: the user is signed in nowhere.')

    await page.goto(users)
    await page.fill('#new-email', 'ada@example.com')
    await page.click('button:has-text("Create user")')
    t.match(await text('#create-email-error'), /already been registered/)
  })

  t.test('inviting a user sends the mail', async (t) => {
    const since = mail.messages.length
    await page.fill('#invite-email', 'not-an-address')
    await page.evaluate(() => document.querySelector('#invite-email')!.setAttribute('type', 'text'))
    await page.click('button:has-text("Send invitation")')
    t.ok(await page.locator('#invite-email-error').isVisible(), 'a bad address is refused beside the field')
    t.equal(await page.inputValue('#invite-email'), 'not-an-address')
    await page.fill('#invite-email', 'grace@example.com')
    await page.click('button:has-text("Send invitation")')
    t.match(await text('[role=status]'), 'Invitation sent')
    t.equal(await text('#user-status'), 'invited')
    const invite = await mail.next('grace@example.com', since)
    t.match(invite.subject, /invited/i)
  })

  let ada = ''

  t.test('the detail shows sessions, factors and the last sign-in', async (t) => {
    const supabase = client()
    const signedIn = await supabase.auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse battery' })
    t.equal(signedIn.error, null)
    const enrolled = await supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' })
    t.equal(enrolled.error, null)
    ada = signedIn.data.user!.id
    await page.goto(`${users}/${ada}`)
    t.not(await text('#user-last-sign-in'), 'never')
    t.match(await text('main'), 'email')
    t.equal(await page.locator('section:has(h2:text("Sessions")) tbody tr').count(), 1)
    t.equal(await page.getAttribute('button:has-text("Remove")', 'aria-label'), 'Remove totp factor Phone')
  })

  t.test('search by email and paging', async (t) => {
    const admin = createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
    for (let i = 0; i < 20; i++) {
      const { error } = await admin.auth.admin.createUser({ email: `bulk${String(i).padStart(2, '0')}@example.org`, email_confirm: true })
      t.equal(error, null)
    }
    await page.goto(users)
    t.match(await text('#users-count'), '22 users, page 1 of 2')
    await page.click('a:has-text("Next page")')
    t.match(await text('#users-count'), 'page 2 of 2')
    t.equal(await page.locator('main tbody tr').count(), 2)
    await page.fill('#user-search', 'ada@')
    await page.click('button:has-text("Search")')
    t.match(await text('#users-count'), '1 user, page 1 of 1')
    t.equal(await text('main tbody td a'), 'ada@example.com')
    await page.fill('#user-search', 'nobody-here')
    await page.click('button:has-text("Search")')
    t.match(await text('.empty'), "No user's email contains “nobody-here”")
  })

  t.test('recovery link, ban and lift, remove the factor, sign out everywhere', async (t) => {
    await page.goto(`${users}/${ada}`)
    const since = mail.messages.length
    await page.click('button:has-text("Send a recovery link")')
    t.equal(await text('[role=status]'), 'Recovery link sent to the user’s address.')
    t.ok(await mail.next('ada@example.com', since))

    await page.click('button:has-text("Remove")')
    t.equal(await text('[role=status]'), 'Factor removed: the user signs in without it.')
    t.match(await text('main'), 'No second factors.')

    const second = client()
    const signedIn = await second.auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse battery' })
    t.equal(signedIn.error, null)
    await page.reload()
    t.equal(await page.locator('section:has(h2:text("Sessions")) tbody tr').count(), 2)
    await page.click('button:has-text("Sign out everywhere")')
    t.match(await text('[role=status]'), 'Signed out everywhere')
    t.match(await text('main'), 'No sessions')
    const refreshed = await second.auth.refreshSession({ refresh_token: signedIn.data.session!.refresh_token })
    t.ok(refreshed.error, 'the refresh token no longer works')

    await page.selectOption('#ban-duration', '24h')
    await page.click('button:has-text("Ban")')
    t.match(await text('[role=status]'), 'Ban saved')
    t.match(await text('#user-status'), /^banned until /)
    const banned = await client().auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse battery' })
    t.equal(banned.error?.code, 'user_banned')
    await page.click('button:has-text("Lift the ban")')
    t.equal(await text('[role=status]'), 'Ban lifted: the user can sign in again.')
    t.equal(await text('#user-status'), 'active')
  })

  t.test('a forged ban duration is refused beside the field', async (t) => {
    await page.evaluate(() => {
      const option = document.createElement('option')
      option.value = 'forever'
      option.textContent = 'forever'
      document.querySelector('#ban-duration')!.append(option)
    })
    await page.selectOption('#ban-duration', 'forever')
    await page.click('button:has-text("Ban")')
    t.match(await text('#ban-duration-error'), 'a duration such as 24h')
  })

  t.test('deleting a user', async (t) => {
    await page.click('button:has-text("Delete user")')
    t.equal(await text('[role=status]'), 'User deleted.')
    const missing = await page.goto(`${users}/${ada}`)
    t.equal(missing?.status(), 404)
    const bad = await page.goto(`${users}/not-a-uuid`)
    t.equal(bad?.status(), 404)
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
