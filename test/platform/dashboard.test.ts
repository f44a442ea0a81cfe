// The operator's dashboard in headless Chromium, against a running platform:
// sign-in and out, projects, the Overview, Settings and Auth tabs, and the
// dashboard's bugs of issue 16 (refused saves keep the input, one redirect a
// line, server-side sign-out, no URL text in the alert box, phone widths,
// contrast, distinct accessible names).
import t from 'tap'
import { getAuthSettings } from '../../control-plane/auth-settings.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard')

  t.test('signing in with the admin token', async (t) => {
    await page.goto(dashboard)
    t.equal(await page.title(), 'Sign in · Baseplane')
    t.equal(await text('#token-hint'), 'The token is the one in BASEPLANE_ADMIN_TOKEN (the start banner says where).', "this node's token, wherever its home is")
    await page.fill('#token', 'not the token')
    await page.click('button:has-text("Sign in")')
    t.equal(await text('[role=alert]'), 'That is not the platform admin token')
    await signIn()
    t.equal(await page.title(), 'Projects · Baseplane')
    t.match(await text('main'), 'No projects yet. Create one below')
  })

  t.test('a refused new project keeps the typed name', async (t) => {
    await page.fill('#name', 'Corner Shop')
    await page.evaluate(() => {
      const option = document.createElement('option')
      option.textContent = 'platinum'
      document.querySelector('#plan')!.append(option)
    })
    await page.selectOption('#plan', 'platinum')
    await page.click('button:has-text("Create project")')
    t.match(await text('#create-plan-error'), 'Unknown plan "platinum"')
    t.equal(await page.inputValue('#name'), 'Corner Shop')
    t.equal(await page.getAttribute('#plan', 'aria-invalid'), 'true')
  })

  let ref = ''

  t.test('creating a project: the Overview with its keys and tabs', async (t) => {
    await page.fill('#name', 'Corner Shop')
    await page.selectOption('#plan', 'pro')
    await page.click('button:has-text("Create project")')
    t.match(await text('[role=status]'), /^Created project [a-z]{20}\./)
    ref = (await text('#project-ref')).trim()
    t.equal(await text('#project-name'), 'Corner Shop')
    t.equal(await page.title(), 'Overview · Corner Shop · Baseplane')
    const tabs = await page.locator('nav.tabs a').allInnerTexts()
    t.same(tabs, ['Overview', 'Auth', 'Users', 'GraphQL', 'REST', 'SQL', 'Push', 'Realtime', 'Storage', 'Tables', 'Usage', 'Database', 'Keys', 'Members', 'Settings'])
    t.equal(await page.getAttribute('nav.tabs a[aria-current=page]', 'href'), `/dashboard/projects/${ref}`)
    const baseUrl = await text('#base-url')
    t.equal(baseUrl, `${platform.origin}/project/${ref}`)
    const anonKey = await text('#anon-key')
    const health = await request(`${baseUrl}/health`, { headers: { apikey: anonKey } })
    t.same(health.json, { status: 'ok', ref, plan: 'pro', services: { auth: false, graphql: true, push: false, rest: true, storage: true }, database: 'up' })
    t.notOk(await page.locator('#service-role-key').isVisible(), 'the service_role key is hidden until asked for')
    t.match(await text('main'), 'Turn Auth on under Settings')
  })

  t.test('copy buttons copy the key', async (t) => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: platform.origin })
    await page.click('button[aria-label="Copy anon key"]')
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), await text('#anon-key'))
    t.equal(await text('button[aria-label="Copy anon key"]'), 'Copied')
  })

  t.test('each tab has its own page with the project in view; empty states say what to do', async (t) => {
    for (const [tab, title] of [
      ['auth', 'Auth'],
      ['push', 'Push'],
      ['settings', 'Settings'],
    ] as const) {
      const answer = await page.goto(`${dashboard}/projects/${ref}/${tab}`)
      t.equal(answer?.status(), 200)
      t.equal(await page.title(), `${title} · Corner Shop · Baseplane`)
      t.equal(await text('#project-ref'), ref)
      t.equal(await page.getAttribute('nav.tabs a[aria-current=page]', 'href'), `/dashboard/projects/${ref}/${tab}`)
    }
    await page.goto(`${dashboard}/projects/${ref}/auth`)
    t.match(await text('.empty'), 'Auth is off. Turn it on under Settings')
    await page.goto(`${dashboard}/projects/${ref}/push`)
    t.match(await text('.empty'), 'Push is off. Turn it on under Settings')
  })

  t.test('switching Auth on: distinct names, notice says it applies on the next request', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/settings`)
    t.equal(await text('#auth-toggle'), 'Turn Auth on')
    t.equal(await text('#push-toggle'), 'Turn Push on')
    await page.click('#auth-toggle')
    t.equal(await text('[role=status]'), 'Auth turned on. It applies from the next request.')
    t.equal(await text('#auth-state'), 'Auth: on')
    t.equal(await text('#auth-toggle'), 'Turn Auth off')
    const anonKey = (await request<{ anon_key: string }>(`${platform.origin}/platform/v1/projects/${ref}/keys`, { headers: { authorization: `Bearer ${platform.config.adminToken}` } })).json
    const health = await request(`${platform.origin}/project/${ref}/auth/v1/health`, { headers: { apikey: anonKey.anon_key } })
    t.equal(health.status, 200, 'Auth answers on the next request')
  })

  t.test('redirects: a refusal keeps the input beside the field; one URL a line', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/auth`)
    await page.evaluate(() => document.querySelector('#site-url')!.setAttribute('type', 'text'))
    await page.fill('#site-url', 'not a url')
    await page.fill('#allow', 'http://localhost:3000/**\nhttps://preview.example.com')
    const refused = page.waitForResponse((r) => r.url().endsWith('/auth/redirects'))
    await page.click('button:has-text("Save redirects")')
    t.equal((await refused).status(), 400)
    t.match(await text('#redirects-site_url-error'), /^Site URL/)
    t.equal(await page.getAttribute('#site-url', 'aria-describedby'), 'redirects-site_url-error')
    t.equal(await page.inputValue('#site-url'), 'not a url', 'the typed site URL is kept')
    t.equal(await page.inputValue('#allow'), 'http://localhost:3000/**\nhttps://preview.example.com', 'the typed list is kept')
    t.equal(await page.locator('.error').count(), 0, 'no error box at the top')

    await page.fill('#site-url', 'https://shop.example.com')
    await page.fill('#allow', 'http://localhost:3000/a b')
    await page.click('button:has-text("Save redirects")')
    t.match(await text('#redirects-allow-error'), 'Allowed redirect URL', 'a line with a space is one (bad) URL, not two')
    t.equal(await page.inputValue('#allow'), 'http://localhost:3000/a b')

    await page.fill('#allow', 'http://localhost:3000/**\n\n  https://preview.example.com  ')
    await page.click('button:has-text("Save redirects")')
    t.equal(await text('[role=status]'), 'Redirects saved: site URL, allowed redirect URLs. It applies from the next request.')
    t.equal(await page.inputValue('#site-url'), 'https://shop.example.com')
    t.equal(await page.inputValue('#allow'), 'http://localhost:3000/**\nhttps://preview.example.com')
    await page.click('button:has-text("Save redirects")')
    t.equal(await text('[role=status]'), 'Redirects saved; nothing changed.')
  })

  t.test('editing and resetting an email template; a refusal keeps the typed body', async (t) => {
    const names = await page.locator('td a').evaluateAll((links) => links.map((a) => a.getAttribute('aria-label')))
    t.ok(names.length >= 5, 'an Edit link a template')
    t.equal(new Set(names).size, names.length, 'each Edit link has its own accessible name')
    t.notOk(names.includes(null))
    await page.click('a[href$="/auth/templates/recovery"]')
    await page.fill('#subject', 'Reset your Corner Shop password')
    await page.fill('#body', '<p>No link here</p>')
    await page.click('button:has-text("Save template")')
    t.match(await text('#template-body-error'), '{{ .ConfirmationURL }}')
    t.equal(await page.inputValue('#subject'), 'Reset your Corner Shop password', 'the typed subject is kept')
    t.equal(await page.inputValue('#body'), '<p>No link here</p>', 'the typed body is kept')
    await page.fill('#body', '<p><a href="{{ .ConfirmationURL }}">Reset</a></p>')
    await page.click('button:has-text("Save template")')
    t.equal(await text('[role=status]'), 'Template recovery saved: subject, body. It applies from the next request.')
    t.equal(await page.inputValue('#subject'), 'Reset your Corner Shop password')
    await page.click('button:has-text("Reset to default")')
    t.equal(await text('[role=status]'), 'Template recovery reset to the default. It applies from the next request.')
    t.not(await page.inputValue('#subject'), 'Reset your Corner Shop password')
  })

  t.test('Google sign-in says what is missing and what changed', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/auth`)
    t.equal(await text('#google-callback'), `${platform.origin}/project/${ref}/auth/v1/callback`)
    await page.fill('#client-id', 'abc.apps.googleusercontent.com')
    await page.click('button:has-text("Save Google settings")')
    t.equal(await text('[role=status]'), 'Google settings saved: client ID. It applies from the next request.')
    t.match(await text('#google-state'), /Not offered: missing .*secret/)
    await page.fill('#client-secret', 'GOCSPX-secret')
    await page.check('#google-enabled')
    await page.click('button:has-text("Save Google settings")')
    t.equal(await text('[role=status]'), 'Google settings saved: client secret, switched on. It applies from the next request.')
    t.match(await text('#google-state'), 'Offered to users')
    t.notMatch(await page.content(), 'GOCSPX-secret', 'the secret is never shown again')
    await page.fill('#client-id', '   ')
    await page.click('button:has-text("Save Google settings")')
    t.match(await text('#google-client_id-error'), 'must not be empty')
    t.equal(await page.inputValue('#client-id'), '   ')
  })

  t.test('Google: app client IDs for native sign-in, and removing client ID and secret', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/auth`)
    await page.fill('#additional-client-ids', 'ios.apps.googleusercontent.com\n\n  android.apps.googleusercontent.com  ')
    await page.click('button:has-text("Save Google settings")')
    t.equal(await text('[role=status]'), 'Google settings saved: app client IDs. It applies from the next request.')
    t.equal(await page.inputValue('#additional-client-ids'), 'ios.apps.googleusercontent.com\nandroid.apps.googleusercontent.com')
    t.same((await getAuthSettings(platform.platform.controlPlane, ref)).google.additional_client_ids, ['ios.apps.googleusercontent.com', 'android.apps.googleusercontent.com'])

    await page.click('button:has-text("Remove client ID and secret")')
    t.equal(await text('[role=status]'), 'Google client ID and secret removed; Google sign-in is not offered. It applies from the next request.')
    t.match(await text('#google-state'), /Not offered: missing client ID, client secret/)
    t.equal(await page.inputValue('#client-id'), '')
    t.equal(await page.locator('button:has-text("Remove client ID and secret")').count(), 0, 'nothing left to remove')
    const google = (await getAuthSettings(platform.platform.controlPlane, ref)).google
    t.same({ client_id: google.client_id, client_secret_set: google.client_secret_set, offered: google.offered }, { client_id: null, client_secret_set: false, offered: false })
  })

  t.test('a refusal is drawn beside the field its error names (error.field), whatever its sentence says', async (t) => {
    const auth = `${dashboard}/projects/${ref}/auth`
    await page.goto(auth)
    await page.evaluate(() => document.querySelector('#site-url')!.setAttribute('type', 'text'))
    await page.fill('#site-url', 'ftp://shop.example.com')
    await page.click('button:has-text("Save redirects")')
    t.equal(await text('#site-url + .field-error'), 'Site URL must be an http or https URL, got "ftp://shop.example.com"')
    t.equal(await page.getAttribute('#site-url', 'aria-describedby'), 'redirects-site_url-error')
    t.equal(await page.locator('.field-error').count(), 1, 'one error, beside the site URL only')
    t.equal(await page.getAttribute('#allow', 'aria-invalid'), null)

    await page.goto(auth)
    await page.fill('#client-id', 'web.apps.googleusercontent.com')
    await page.fill('#client-secret', '   ')
    const refused = page.waitForResponse((r) => r.url().endsWith('/auth/google'))
    await page.click('button:has-text("Save Google settings")')
    t.equal((await refused).status(), 400)
    t.equal(await text('#client-secret + .field-error'), 'The Google client secret must not be empty')
    t.equal(await page.getAttribute('#client-secret', 'aria-describedby'), 'google-client_secret-error')
    t.equal(await page.getAttribute('#client-id', 'aria-invalid'), null, 'the client ID the sentence does not name is not marked either')
    t.equal(await page.locator('.field-error').count(), 1)
    t.equal(await page.inputValue('#client-id'), 'web.apps.googleusercontent.com', 'the typed client ID is kept')
    t.equal(await page.inputValue('#client-secret'), '', 'the secret is never drawn back')

    await page.fill('#additional-client-ids', 'ios.apps.googleusercontent.com\nnot a client id')
    await page.click('button:has-text("Save Google settings")')
    t.match(await text('#additional-client-ids + .field-error'), 'google.additional_client_ids: "not a client id" is not a client ID')
    t.equal(await page.locator('.field-error').count(), 1)
    t.equal((await getAuthSettings(platform.platform.controlPlane, ref)).google.client_id, null, 'nothing of the refused forms was stored')
  })

  t.test('Auth settings: numbers and switches; a refused number keeps what was typed beside its field and stores nothing', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/auth`)
    t.equal(await page.inputValue('#setting-mail_per_hour'), '30')
    t.equal(await page.isChecked('#setting-mailer_secure_email_change_enabled'), true, 'secure email change is on by default')
    await page.fill('#setting-mail_per_hour', '120')
    await page.check('#setting-disable_signup')
    await page.click('button:has-text("Save settings")')
    t.equal(await text('[role=status]'), 'Settings saved: mails per hour, sign-ups closed. It applies from the next request.')
    const saved = await getAuthSettings(platform.platform.controlPlane, ref)
    t.same([saved.mail_per_hour, saved.disable_signup, saved.mailer_secure_email_change_enabled], [120, true, true])

    await page.fill('#setting-otp_expiry_seconds', '5')
    await page.uncheck('#setting-disable_signup')
    await page.click('button:has-text("Save settings")')
    t.equal(await text('#settings-otp_expiry_seconds-error'), 'Email links and codes expire after: a whole number from 60 to 86400, got "5"')
    t.equal(await page.inputValue('#setting-otp_expiry_seconds'), '5', 'the typed number stays')
    t.equal(await page.isChecked('#setting-disable_signup'), false, 'the typed switch stays')
    const unchanged = await getAuthSettings(platform.platform.controlPlane, ref)
    t.same([unchanged.otp_expiry_seconds, unchanged.disable_signup], [saved.otp_expiry_seconds, true], 'nothing of the refused form was stored')

    await page.goto(`${dashboard}/projects/${ref}/auth`)
    await page.uncheck('#setting-disable_signup')
    await page.click('button:has-text("Save settings")')
    t.equal(await text('[role=status]'), 'Settings saved: sign-ups open. It applies from the next request.')
    t.equal((await getAuthSettings(platform.platform.controlPlane, ref)).disable_signup, false)
  })

  t.test('the alert box shows no text from the URL', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/auth?error=Your+account+is+suspended,+call+555&notice=Send+bitcoin`)
    t.equal(await page.locator('[role=status], .error').count(), 0)
    t.notMatch(await text('main'), /suspended|bitcoin/)
    await page.goto(`${dashboard}/projects/${ref}/settings?done=plan&v=free&v=${encodeURIComponent('<b>call 555</b> now')}`)
    t.equal(await page.locator('[role=status]').count(), 0, 'a notice value that is not a word is dropped with its notice')
    await page.goto(`${dashboard}/projects/${ref}/settings?done=no_such_code`)
    t.equal(await page.locator('[role=status]').count(), 0)
    const missing = await page.goto(`${dashboard}/no-such-page-call-555`)
    t.equal(missing?.status(), 404)
    t.notMatch(await text('main'), 'call-555')
  })

  t.test('phone width: nothing overflows; grey text contrast is at least 4.5:1', async (t) => {
    await page.setViewportSize({ width: 375, height: 740 })
    for (const path of ['', `/projects/${ref}`, `/projects/${ref}/auth`, `/projects/${ref}/settings`, `/projects/${ref}/push`]) {
      await page.goto(`${dashboard}${path}`)
      const width = await page.evaluate(() => document.documentElement.scrollWidth)
      t.ok(width <= 375, `${path || '/'} is ${width}px wide at 375px`)
    }
    await page.goto(`${dashboard}/projects/${ref}/settings`)
    // A string, not a function: tsx's helpers are not defined in the page.
    const ratio = (await page.evaluate(`(() => {
      const rgb = (text) => text.match(/\\d+/g).slice(0, 3).map(Number)
      const lum = (c) => {
        const [r, g, b] = c.map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
      }
      const off = document.querySelector('#push-state')
      const fg = lum(rgb(getComputedStyle(off).color))
      const bg = lum(rgb(getComputedStyle(off.closest('section')).backgroundColor))
      return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)
    })()`)) as number
    t.ok(ratio >= 4.5, `"off" text contrast ${ratio.toFixed(2)}:1`)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('plan change, key rotation, forms from other sites, deletion', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}`)
    const before = await text('#anon-key')
    await page.goto(`${dashboard}/projects/${ref}/settings`)
    await page.selectOption('#plan', 'business')
    await page.click('button:has-text("Change plan")')
    t.equal(await text('[role=status]'), 'Plan changed from pro to business. It applies from the next request.')
    await page.click('button:has-text("Rotate JWT secret and keys")')
    t.match(await text('[role=status]'), /^New JWT secret/)
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

    await page.goto(`${dashboard}/projects/${ref}/settings`)
    await page.fill('#confirm', 'wrong')
    await page.click('button:has-text("Delete project")')
    t.equal(await text('#delete-confirm-error'), `Type ${ref} to confirm`)
    t.equal(await page.inputValue('#confirm'), 'wrong')
    await page.fill('#confirm', ref)
    await page.click('button:has-text("Delete project")')
    t.equal(await text('[role=status]'), `Deleted project ${ref} and dropped its database.`)
    t.match(await text('main'), 'No projects yet.')
  })

  t.test('signing out ends the session on the server', async (t) => {
    const cookies = await page.context().cookies()
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ')
    const before = await request(dashboard, { headers: { cookie } })
    t.match(before.text, 'Projects · Baseplane', 'the copied cookie works while signed in')
    await page.click('button:has-text("Sign out")')
    t.equal(await page.title(), 'Sign in · Baseplane')
    const after = await request(dashboard, { headers: { cookie } })
    t.match(after.text, 'Sign in · Baseplane', 'the same cookie, replayed after signing out, is refused')
    const forged = await request(dashboard, { headers: { cookie: 'bp_dashboard=abc.def' } })
    t.match(forged.text, 'Sign in · Baseplane')
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
