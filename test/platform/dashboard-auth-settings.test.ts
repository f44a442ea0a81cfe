// The Auth tab's settings drawn from Auth's settings table (issue 37 items 6
// and 8), in headless Chromium against a running platform: every setting the
// table declares has its input, showing what the admin API answers; the
// WebAuthn second factors' switches and relying party, and the hooks (URIs,
// write-only signing secrets), are saved and read back through the admin API;
// a refusal is drawn beside each field it concerns, keeps what was typed and
// stores nothing; a save that changes nothing says so; the tab fits a phone.
import t from 'tap'
import { AUTH_OPTIONS } from '../../workers/auth/face.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

type AuthView = Record<string, unknown>

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-auth-settings')
  const project = await platform.createProject({ name: 'Keys and Hooks', auth: true })
  const ref = project.ref
  const authTab = `${dashboard}/projects/${ref}/auth`
  const settings = async () => {
    const reply = await request<AuthView>(`${platform.origin}/platform/v1/projects/${ref}/auth`, { headers: { authorization: `Bearer ${platform.config.adminToken}` } })
    if (reply.status !== 200) throw new Error(`GET /auth answered ${reply.status}`)
    return reply.json
  }
  const submit = async (button: string) => {
    await Promise.all([page.waitForNavigation(), page.click(`button:has-text("${button}")`)])
  }
  await signIn()

  t.test("every setting of the table has its input, showing the admin API's value", async (t) => {
    const view = await settings()
    await page.goto(authTab)
    t.equal(await page.title(), 'Auth · Keys and Hooks · Baseplane')
    for (const option of AUTH_OPTIONS) {
      const input = `#setting-${option.name}`
      t.equal(await page.locator(input).count(), 1, `${option.name} has an input`)
      if (option.type === 'integer') t.equal(await page.inputValue(input), String(view[option.name]), `${option.name} as the admin API answers it`)
      else if (option.type === 'switch') t.equal(await page.isChecked(input), view[option.name], `${option.name} as the admin API answers it`)
      else t.equal(await page.inputValue(input), '', `${option.name}: empty while it follows its default or is not set`)
    }
    t.match(await text('label[for="setting-webauthn_rp_id"]'), `empty: the site URL's host (now ${view.webauthn_rp_id})`)
    t.equal(await text('#setting-hook_send_email_secrets-count'), 'none set')
  })

  t.test('WebAuthn: switches and relying party saved and read back; a save that changes nothing says so; empty goes back to the defaults', async (t) => {
    const defaults = await settings()
    await page.goto(authTab)
    await page.check('#setting-mfa_web_authn_enroll_enabled')
    await page.check('#setting-mfa_web_authn_verify_enabled')
    await page.fill('#setting-webauthn_rp_id', 'shop.example.test')
    await page.fill('#setting-webauthn_rp_display_name', 'Corner Shop')
    await page.fill('#setting-webauthn_rp_origins', 'https://app.shop.example.test\n\n  https://shop.example.test  ')
    await submit('Save WebAuthn settings')
    t.equal(
      await text('[role=status]'),
      'WebAuthn settings saved: WebAuthn enrolment on, WebAuthn verification on, relying party ID, relying party name, WebAuthn origins. It applies from the next request.',
    )
    t.match(await settings(), {
      mfa_web_authn_enroll_enabled: true,
      mfa_web_authn_verify_enabled: true,
      webauthn_rp_id: 'shop.example.test',
      webauthn_rp_display_name: 'Corner Shop',
      webauthn_rp_origins: ['https://app.shop.example.test', 'https://shop.example.test'],
    })
    t.equal(await page.inputValue('#setting-webauthn_rp_origins'), 'https://app.shop.example.test\nhttps://shop.example.test', 'one origin a line')

    await submit('Save WebAuthn settings')
    t.equal(await text('[role=status]'), 'WebAuthn settings saved; nothing changed.')

    await page.fill('#setting-webauthn_rp_id', '')
    await page.fill('#setting-webauthn_rp_display_name', '')
    await page.fill('#setting-webauthn_rp_origins', '')
    await page.uncheck('#setting-mfa_web_authn_verify_enabled')
    await submit('Save WebAuthn settings')
    t.equal(await text('[role=status]'), 'WebAuthn settings saved: WebAuthn verification off, relying party ID, relying party name, WebAuthn origins. It applies from the next request.')
    const after = await settings()
    t.same(
      [after.mfa_web_authn_enroll_enabled, after.mfa_web_authn_verify_enabled, after.webauthn_rp_id, after.webauthn_rp_display_name, after.webauthn_rp_origins],
      [true, false, defaults.webauthn_rp_id, defaults.webauthn_rp_display_name, defaults.webauthn_rp_origins],
      'the relying party follows the site URL again',
    )
  })

  t.test('WebAuthn: every refused field shows its error beside it, keeps what was typed, stores nothing', async (t) => {
    const before = await settings()
    await page.goto(authTab)
    await page.fill('#setting-webauthn_rp_id', 'Not A Domain')
    await page.fill('#setting-webauthn_rp_origins', 'ftp://shop.example.test')
    await page.fill('#setting-webauthn_rp_display_name', 'x'.repeat(101))
    await submit('Save WebAuthn settings')
    t.match(await text('#webauthn-webauthn_rp_id-error'), 'webauthn_rp_id must be a lower-case domain name')
    t.match(await text('#webauthn-webauthn_rp_display_name-error'), 'webauthn_rp_display_name must be a name of 1 to 100 characters')
    t.match(await text('#webauthn-webauthn_rp_origins-error'), 'webauthn_rp_origins: "ftp://shop.example.test" is not an origin browsers use for WebAuthn')
    t.equal(await page.getAttribute('#setting-webauthn_rp_id', 'aria-describedby'), 'webauthn-webauthn_rp_id-error')
    t.equal(await page.locator('.field-error').count(), 3, 'one error beside each field, none at the button')
    t.equal(await page.inputValue('#setting-webauthn_rp_id'), 'Not A Domain', 'the typed value stays')
    t.same(await settings(), before, 'nothing of the refused form was stored')

    // A check across two settings: the origins must be on the relying party ID.
    await page.fill('#setting-webauthn_rp_id', 'shop.example.test')
    await page.fill('#setting-webauthn_rp_display_name', '')
    await page.fill('#setting-webauthn_rp_origins', 'https://elsewhere.example.test')
    await submit('Save WebAuthn settings')
    t.equal(await text('#webauthn-webauthn_rp_origins-error'), 'webauthn_rp_origins: https://elsewhere.example.test is not on shop.example.test (the webauthn_rp_id) or a subdomain of it')
    t.equal(await page.locator('.field-error').count(), 1)
    t.same(await settings(), before, 'nothing stored')
  })

  t.test('Hooks: set, refused beside the field, secrets never shown, removed', async (t) => {
    const secret = `v1,whsec_${Buffer.alloc(24, 5).toString('base64')}`
    await page.goto(authTab)
    await page.fill('#setting-hook_custom_access_token_uri', 'pg-functions://postgres/public/custom_claims')
    await page.fill('#setting-hook_send_email_uri', 'https://mail.example.test/hook')
    await submit('Save hooks')
    t.equal(
      await text('#hooks-hook_send_email_uri-error'),
      'hook_send_email_uri is an HTTP endpoint: set hook_send_email_secrets too ("v1,whsec_<base64>"), with which each call is signed',
    )
    t.equal(await page.inputValue('#setting-hook_send_email_uri'), 'https://mail.example.test/hook', 'the typed URI stays')
    t.match(await settings(), { hook_custom_access_token_uri: null, hook_send_email_uri: null }, 'neither hook stored')

    await page.fill('#setting-hook_send_email_secrets', secret)
    await submit('Save hooks')
    t.equal(await text('[role=status]'), 'Hooks saved: access token hook, send email hook, send email hook secrets. It applies from the next request.')
    t.match(await settings(), { hook_custom_access_token_uri: 'pg-functions://postgres/public/custom_claims', hook_send_email_uri: 'https://mail.example.test/hook', hook_send_email_secrets_set: 1 })
    t.equal(await text('#setting-hook_send_email_secrets-count'), '1 set')
    t.equal(await page.inputValue('#setting-hook_send_email_secrets'), '', 'the secret is never drawn back')
    t.notOk((await page.content()).includes(secret.slice(9)), 'nor anywhere in the page')

    await submit('Save hooks')
    t.equal(await text('[role=status]'), 'Hooks saved; nothing changed.', 'an empty secret input keeps the secret')
    t.equal((await settings()).hook_send_email_secrets_set, 1)

    await page.fill('#setting-hook_custom_access_token_uri', 'https://tokens.example.test/hook')
    await submit('Save hooks')
    t.match(await text('#hooks-hook_custom_access_token_uri-error'), 'hook_custom_access_token_uri must look like pg-functions://postgres/<schema>/<function>')
    t.equal((await settings()).hook_custom_access_token_uri, 'pg-functions://postgres/public/custom_claims', 'unchanged')

    await page.goto(authTab)
    await page.fill('#setting-hook_custom_access_token_uri', '')
    await page.fill('#setting-hook_send_email_uri', '')
    await page.check('#setting-hook_send_email_secrets-clear')
    await submit('Save hooks')
    t.equal(await text('[role=status]'), 'Hooks saved: access token hook, send email hook, send email hook secrets. It applies from the next request.')
    t.match(await settings(), { hook_custom_access_token_uri: null, hook_send_email_uri: null, hook_send_email_secrets_set: 0 })
    t.equal(await page.locator('#setting-hook_send_email_secrets-clear').count(), 0, 'nothing left to remove')
  })

  t.test('the Auth tab fits a phone', async (t) => {
    await page.setViewportSize({ width: 375, height: 740 })
    await page.goto(authTab)
    // Every text outside the tables (which scroll inside their .scroll box) ends within the screen.
    const wide = await page.evaluate(() => {
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
      const found: string[] = []
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.closest('.scroll')) continue
        const range = document.createRange()
        range.selectNodeContents(node)
        if (range.getBoundingClientRect().right > 375) found.push((node.textContent ?? '').trim().slice(0, 80))
      }
      return found
    })
    t.same(wide, [], 'no text reaches past the screen')
    t.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 375)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
