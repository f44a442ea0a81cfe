// The operator's dashboard in headless Chromium, against a running platform.
import fs from 'node:fs'
import t from 'tap'
import { chromium, type Page } from 'playwright-core'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

// playwright-core downloads no browser: these tests drive an installed Chromium
// (CI installs Debian's). Without one they are skipped, saying so, so that
// `npm test` passes on a machine that has none.
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
if (fs.existsSync(executablePath)) await browserTests(executablePath)
else t.plan(0, `no Chromium at ${executablePath} (install chromium or set CHROMIUM_PATH): the dashboard's browser tests are skipped`)

async function browserTests(executablePath: string): Promise<void> {
  const platform = await startTestPlatform(t)
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  t.teardown(() => browser.close())
  const page: Page = await browser.newPage()
  page.on('dialog', (dialog) => dialog.accept())
  const dashboard = `${platform.origin}/dashboard`
  const text = (selector: string) => page.locator(selector).innerText()

  t.test('signing in with the admin token', async (t) => {
    await page.goto(dashboard)
    t.equal(await page.title(), 'Sign in · Baseplane')
    await page.fill('#token', 'not the token')
    await page.click('button:has-text("Sign in")')
    t.equal(await text('[role=alert]'), 'That is not the platform admin token')
    await page.fill('#token', platform.config.adminToken!)
    await page.click('button:has-text("Sign in")')
    t.equal(await page.title(), 'Projects · Baseplane')
    t.match(await text('main'), 'No projects yet.')
  })

  let ref = ''

  t.test('creating a project and using its keys', async (t) => {
    await page.fill('#name', 'Corner Shop')
    await page.selectOption('#plan', 'pro')
    await page.click('button:has-text("Create project")')
    t.match(await text('[role=status]'), /^Created project [a-z]{20}$/)
    ref = (await text('h1 code')).trim()
    const baseUrl = await text('#base-url')
    t.equal(baseUrl, `${platform.origin}/project/${ref}`)
    const anonKey = await text('#anon-key')
    const health = await request(`${baseUrl}/health`, { headers: { apikey: anonKey } })
    t.same(health.json, { status: 'ok', ref, plan: 'pro', services: { auth: false, graphql: true, push: false } })
    t.notOk(await page.locator('#service-role-key').isVisible(), 'the service_role key is hidden until asked for')
  })

  t.test('switching Auth on, and auth settings', async (t) => {
    await page.click('form[action$="/products/auth"] button')
    t.equal(await text('[role=status]'), 'Auth turned on')
    const anonKey = await text('#anon-key')
    const health = await request(`${platform.origin}/project/${ref}/auth/v1/health`, { headers: { apikey: anonKey } })
    t.equal(health.status, 200, 'Auth answers on the next request')

    await page.fill('#site-url', 'not a url')
    await page.evaluate(() => document.querySelector('#site-url')!.setAttribute('type', 'text'))
    await page.click('button:has-text("Save redirects")')
    t.match(await text('[role=alert]'), /Site URL/)
    await page.fill('#site-url', 'https://shop.example.com')
    await page.fill('#allow', 'http://localhost:3000/**\nhttps://preview.example.com')
    await page.click('button:has-text("Save redirects")')
    t.equal(await text('[role=status]'), 'Redirects saved')
    t.equal(await page.inputValue('#site-url'), 'https://shop.example.com')
    t.equal(await page.inputValue('#allow'), 'http://localhost:3000/**\nhttps://preview.example.com')
    const settings = await request(`${platform.origin}/project/${ref}/auth/v1/settings`, { headers: { apikey: anonKey } })
    t.equal(settings.status, 200)
  })

  t.test('editing and resetting an email template', async (t) => {
    await page.click('a[href$="/auth/templates/recovery"]')
    await page.fill('#subject', 'Reset your Corner Shop password')
    await page.fill('#body', '<p>No link here</p>')
    await page.click('button:has-text("Save template")')
    t.match(await text('[role=alert]'), '{{ .ConfirmationURL }}')
    await page.fill('#subject', 'Reset your Corner Shop password')
    await page.fill('#body', '<p><a href="{{ .ConfirmationURL }}">Reset</a></p>')
    await page.click('button:has-text("Save template")')
    t.equal(await text('[role=status]'), 'Template recovery saved')
    t.equal(await page.inputValue('#subject'), 'Reset your Corner Shop password')
    await page.click('button:has-text("Reset to default")')
    t.equal(await text('[role=status]'), 'Template recovery reset to the default')
    t.not(await page.inputValue('#subject'), 'Reset your Corner Shop password')
    await page.goto(`${dashboard}/projects/${ref}`)
  })

  t.test('Google sign-in says what is missing', async (t) => {
    t.equal(await text('#google-callback'), `${platform.origin}/project/${ref}/auth/v1/callback`)
    await page.fill('#client-id', 'abc.apps.googleusercontent.com')
    await page.click('button:has-text("Save Google settings")')
    t.equal(await text('[role=status]'), 'Google settings saved')
    t.match(await text('main'), /Not offered: missing .*secret/)
    await page.fill('#client-secret', 'GOCSPX-secret')
    await page.check('#google-enabled')
    await page.click('button:has-text("Save Google settings")')
    t.match(await text('main'), 'Offered to users')
    t.notMatch(await page.content(), 'GOCSPX-secret', 'the secret is never shown again')
  })

  t.test('switching Push on shows its three cards', async (t) => {
    await page.click('form[action$="/products/push"] button')
    t.equal(await text('[role=status]'), 'Push turned on')
    t.match(await text('#push-web'), /Ready/)
    t.match(await text('#push-web code'), /^[A-Za-z0-9_-]{80,}$/, 'the VAPID public key, ready at once')
    t.match(await text('#push-apns'), `Needs the app's key`)
    t.match(await text('#push-fcm'), 'Needs a service account')
  })

  t.test('plan change, key rotation, forms from other sites, deletion', async (t) => {
    const before = await text('#anon-key')
    await page.selectOption('#plan', 'business')
    await page.click('button:has-text("Change plan")')
    t.equal(await text('[role=status]'), 'Plan changed to business')
    await page.click('button:has-text("Rotate JWT secret and keys")')
    t.equal(await text('[role=status]'), 'New JWT secret and keys')
    t.not(await text('#anon-key'), before)
    const health = await request(`${platform.origin}/project/${ref}/health`, { headers: { apikey: before } })
    t.equal(health.status, 401, 'the old key stops working')

    const cookies = await page.context().cookies()
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ')
    const crossSite = await request(`${dashboard}/projects/${ref}/delete`, {
      headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `confirm=${ref}`,
    })
    t.equal(crossSite.status, 403, 'a form posted from another site is refused')
    const noCookie = await request(`${dashboard}/projects/${ref}/delete`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `confirm=${ref}` })
    t.equal(noCookie.status, 401, 'a form without a session is refused')

    await page.fill('#confirm', 'wrong')
    await page.click('button:has-text("Delete project")')
    t.equal(await text('[role=alert]'), `Type ${ref} to confirm`)
    await page.fill('#confirm', ref)
    await page.click('button:has-text("Delete project")')
    t.equal(await text('[role=status]'), `Deleted project ${ref}`)
    t.match(await text('main'), 'No projects yet.')
  })

  t.test('signing out', async (t) => {
    await page.click('button:has-text("Sign out")')
    t.equal(await page.title(), 'Sign in · Baseplane')
    await page.goto(`${dashboard}/projects/${ref}`)
    t.equal(await page.title(), 'Sign in · Baseplane')
  })
}
