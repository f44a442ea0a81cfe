// Secure email change (issue 15 item 4; GoTrue's MAILER_SECURE_EMAIL_CHANGE_ENABLED,
// on by default): updateUser({email}) mails both addresses a link of type
// email_change; the first confirmation (either one, code or link) answers
// GoTrue's message and changes nothing; the second changes the address and
// signs in. With the setting off only the new address confirms. Toggling the
// setting mid-change cannot let one address alone make it. PKCE, resend,
// generate_link's email_change_current, the admin API and the CLI.
import crypto from 'node:crypto'
import t, { type Test } from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { runCli } from '../helpers/cli.ts'
import { authFixture, type AuthFixture, call, codeOf, fragmentOf, linkOf, type ReceivedMail, signedIn, SITE_URL } from './helpers.ts'

const PENDING = 'Confirmation link accepted. Please proceed to confirm link sent to the other email'

/** Asks for the change and waits for the mails it sends (to `to`, in that order). */
async function requestChange(t: Test, f: AuthFixture, client: ReturnType<AuthFixture['anon']>, newEmail: string, to: string[]): Promise<ReceivedMail[]> {
  const since = f.mail.messages.length
  const changed = await client.auth.updateUser({ email: newEmail })
  t.error(changed.error)
  t.equal(changed.data.user?.new_email, newEmail)
  const mails = await Promise.all(to.map((address) => f.mail.next(address, since)))
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(f.mail.messages.length - since, to.length, `${to.length} mail(s)`)
  return mails
}

const get = (link: string) => fetch(link, { redirect: 'manual' }).then((r) => ({ status: r.status, location: r.headers.get('location') ?? '' }))

t.test('secure email change', async (t) => {
  const f = await authFixture(t)
  const cp = f.test.platform.controlPlane
  const admin = f.admin().auth.admin
  const emailOf = async (id: string) => (await admin.getUserById(id)).data.user?.email

  await t.test('on by default: both addresses confirm, new one first (codes)', async (t) => {
    const ada = await signedIn(f, 'ada@example.test')
    const [toNew, toCurrent] = await requestChange(t, f, ada.client, 'ada.new@example.test', ['ada.new@example.test', 'ada@example.test'])
    for (const mail of [toNew!, toCurrent!]) {
      t.equal(mail.subject, 'Confirm Email Change')
      t.match(mail.html, 'from ada@example.test to ada.new@example.test')
      t.match(new URL(linkOf(mail)).searchParams.get('type'), 'email_change', 'the link type is email_change for both')
    }
    t.not(codeOf(toNew!), codeOf(toCurrent!), 'each address has its own code')

    // A code is checked against the address it went to.
    const crossed = await ada.client.auth.verifyOtp({ email: 'ada.new@example.test', token: codeOf(toCurrent!), type: 'email_change' })
    t.equal(crossed.error?.status, 403)
    t.equal(crossed.error?.code, 'otp_expired')

    const first = await call(f, 'POST', '/verify', { type: 'email_change', email: 'ada.new@example.test', token: codeOf(toNew!) })
    t.equal(first.status, 200)
    t.same(first.body, { msg: PENDING, code: '200' }, "GoTrue's answer, its code a string")
    t.equal(await emailOf(ada.id), 'ada@example.test', 'nothing changed yet')
    const again = await call(f, 'POST', '/verify', { type: 'email_change', email: 'ada.new@example.test', token: codeOf(toNew!) })
    t.same([again.status, again.body.code], [403, 'otp_expired'], 'that code is spent')

    const second = await ada.client.auth.verifyOtp({ email: 'ada@example.test', token: codeOf(toCurrent!), type: 'email_change' })
    t.error(second.error)
    t.ok(second.data.session?.access_token, 'the second confirmation signs in')
    t.equal(second.data.user?.email, 'ada.new@example.test')
    t.notOk(second.data.user?.new_email)
    t.match(second.data.user?.identities, [{ provider: 'email', identity_data: { email: 'ada.new@example.test', email_verified: true } }])
    t.error((await f.anon().auth.signInWithPassword({ email: 'ada.new@example.test', password: 'password 123' })).error)
    const old = await f.anon().auth.signInWithPassword({ email: 'ada@example.test', password: 'password 123' })
    t.equal(old.error?.code, 'invalid_credentials', 'the old address no longer signs in')
  })

  await t.test('current address first, by the links; supabase-js sees no error and no session', async (t) => {
    const bob = await signedIn(f, 'bob@example.test')
    const [toNew, toCurrent] = await requestChange(t, f, bob.client, 'bob.new@example.test', ['bob.new@example.test', 'bob@example.test'])
    const first = await get(linkOf(toCurrent!))
    t.equal(first.status, 303)
    t.equal(first.location, `${SITE_URL}#message=${PENDING.replace(/ /g, '+')}&sb=`)
    t.equal(await emailOf(bob.id), 'bob@example.test')
    const reused = await get(linkOf(toCurrent!))
    t.same(fragmentOf(reused.location).error_code, 'otp_expired', 'a used link fails')

    const second = await get(linkOf(toNew!))
    t.equal(second.status, 303)
    const values = fragmentOf(second.location)
    t.equal(values.type, 'email_change')
    t.ok(values.access_token && values.refresh_token)
    t.equal(await emailOf(bob.id), 'bob.new@example.test')

    // Through supabase-js: the first confirmation is no error and no session.
    const [toNew2, toCurrent2] = await requestChange(t, f, bob.client, 'bob.third@example.test', ['bob.third@example.test', 'bob.new@example.test'])
    const pending = await bob.client.auth.verifyOtp({ email: 'bob.third@example.test', token: codeOf(toNew2!), type: 'email_change' })
    t.error(pending.error)
    t.equal(pending.data.session, null)
    t.error((await bob.client.auth.verifyOtp({ email: 'bob.new@example.test', token: codeOf(toCurrent2!), type: 'email_change' })).error)
    t.equal(await emailOf(bob.id), 'bob.third@example.test')
  })

  await t.test('a new request replaces both links; resend mails both again', async (t) => {
    const cy = await signedIn(f, 'cy@example.test')
    const [oldNew] = await requestChange(t, f, cy.client, 'cy.one@example.test', ['cy.one@example.test', 'cy@example.test'])
    const [toNew, toCurrent] = await requestChange(t, f, cy.client, 'cy.two@example.test', ['cy.two@example.test', 'cy@example.test'])
    t.same(fragmentOf((await get(linkOf(oldNew!))).location).error_code, 'otp_expired', 'the first request is void')
    const since = f.mail.messages.length
    t.error((await f.anon().auth.resend({ type: 'email_change', email: 'cy.two@example.test' })).error)
    const [reNew, reCurrent] = await Promise.all([f.mail.next('cy.two@example.test', since), f.mail.next('cy@example.test', since)])
    t.same(fragmentOf((await get(linkOf(toNew!))).location).error_code, 'otp_expired', 'resent: the earlier links are void')
    t.same(fragmentOf((await get(linkOf(toCurrent!))).location).error_code, 'otp_expired')
    t.equal(fragmentOf((await get(linkOf(reCurrent!))).location).message, PENDING)
    t.ok(fragmentOf((await get(linkOf(reNew!))).location).access_token)
    t.equal(await emailOf(cy.id), 'cy.two@example.test')
  })

  await t.test('both links opened at once: one answers the message, the other makes the change', async (t) => {
    const ivy = await signedIn(f, 'ivy@example.test')
    const [toNew, toCurrent] = await requestChange(t, f, ivy.client, 'ivy.new@example.test', ['ivy.new@example.test', 'ivy@example.test'])
    const answers = (await Promise.all([get(linkOf(toNew!)), get(linkOf(toCurrent!))])).map((r) => fragmentOf(r.location))
    t.same(answers.map((a) => (a.message === PENDING ? 'pending' : a.access_token ? 'session' : a.error_code)).sort(), ['pending', 'session'])
    t.equal(await emailOf(ivy.id), 'ivy.new@example.test')
  })

  await t.test('toggling the setting mid-change: one address alone never makes it', async (t) => {
    const dee = await signedIn(f, 'dee@example.test')
    const [toNew, toCurrent] = await requestChange(t, f, dee.client, 'dee.new@example.test', ['dee.new@example.test', 'dee@example.test'])
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: false })
    t.equal(fragmentOf((await get(linkOf(toNew!))).location).message, PENDING, 'the current address still has to confirm what was asked under the setting')
    t.equal(await emailOf(dee.id), 'dee@example.test')
    t.ok(fragmentOf((await get(linkOf(toCurrent!))).location).access_token)
    t.equal(await emailOf(dee.id), 'dee.new@example.test')
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: true })
  })

  await t.test('off: only the new address is mailed and confirms', async (t) => {
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: false })
    t.teardown(() => setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: true }))
    const eve = await signedIn(f, 'eve@example.test')
    const [toNew] = await requestChange(t, f, eve.client, 'eve.new@example.test', ['eve.new@example.test'])
    const done = await eve.client.auth.verifyOtp({ email: 'eve.new@example.test', token: codeOf(toNew!), type: 'email_change' })
    t.error(done.error)
    t.equal(done.data.user?.email, 'eve.new@example.test')
    // A change asked with the setting on, asked again with it off: the new address alone now confirms.
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: true })
    await requestChange(t, f, eve.client, 'eve.third@example.test', ['eve.third@example.test', 'eve.new@example.test'])
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: false })
    const [again] = await requestChange(t, f, eve.client, 'eve.third@example.test', ['eve.third@example.test'])
    t.ok(fragmentOf((await get(linkOf(again!))).location).access_token)
    t.equal(await emailOf(eve.id), 'eve.third@example.test')
  })

  await t.test('PKCE: the first link answers the message in the query too, the second a code', async (t) => {
    const fay = await signedIn(f, 'fay@example.test')
    const verifier = crypto.randomBytes(56).toString('hex')
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url')
    const since = f.mail.messages.length
    const r = await call(f, 'PUT', '/user', { email: 'fay.new@example.test', code_challenge: challenge, code_challenge_method: 's256' }, { token: fay.token })
    t.equal(r.status, 200)
    const [toNew, toCurrent] = await Promise.all([f.mail.next('fay.new@example.test', since), f.mail.next('fay@example.test', since)])
    t.match(new URL(linkOf(toCurrent!)).searchParams.get('token'), /^pkce_/)
    const first = await get(linkOf(toNew!))
    const url = new URL(first.location)
    t.equal(url.searchParams.get('message'), PENDING)
    t.equal(fragmentOf(first.location).message, PENDING)
    const second = new URL((await get(linkOf(toCurrent!))).location)
    const code = second.searchParams.get('code')
    t.ok(code, '?code= on the second')
    const exchanged = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: verifier })
    t.equal(exchanged.status, 200)
    t.equal(exchanged.body.user.email, 'fay.new@example.test')
  })

  await t.test('refusals: an address taken meanwhile, a taken address at request', async (t) => {
    const gus = await signedIn(f, 'gus@example.test')
    const [toNew, toCurrent] = await requestChange(t, f, gus.client, 'gus.new@example.test', ['gus.new@example.test', 'gus@example.test'])
    t.error((await admin.createUser({ email: 'gus.new@example.test', password: 'password 123' })).error)
    t.equal(fragmentOf((await get(linkOf(toNew!))).location).message, PENDING)
    t.equal(fragmentOf((await get(linkOf(toCurrent!))).location).error_code, 'email_exists')
    t.equal(await emailOf(gus.id), 'gus@example.test')
    const taken = await gus.client.auth.updateUser({ email: 'ada.new@example.test' })
    t.equal(taken.error?.status, 422)
    t.equal(taken.error?.code, 'email_exists')
  })

  await t.test("generate_link's email_change_current follows the setting", async (t) => {
    await signedIn(f, 'hal@example.test')
    const current = await admin.generateLink({ type: 'email_change_current', email: 'hal@example.test', newEmail: 'hal.new@example.test' })
    t.error(current.error)
    t.equal(current.data.properties?.verification_type, 'email_change')
    const newLink = await admin.generateLink({ type: 'email_change_new', email: 'hal@example.test', newEmail: 'hal.new@example.test' })
    t.error(newLink.error)
    t.equal(fragmentOf((await get(current.data.properties!.action_link)).location).message, PENDING)
    t.ok(fragmentOf((await get(newLink.data.properties!.action_link)).location).access_token)
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: false })
    t.teardown(() => setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: true }))
    const refused = await admin.generateLink({ type: 'email_change_current', email: 'hal.new@example.test', newEmail: 'hal.third@example.test' })
    t.equal(refused.error?.status, 400)
    t.equal(refused.error?.message, 'Enable secure email change to generate link for current email')
  })

  await t.test('the setting: admin API and CLI, not in GET /settings', async (t) => {
    const api = (method: string, body?: unknown) =>
      fetch(`${f.test.origin}/platform/v1/projects/${f.project.ref}/auth`, {
        method,
        headers: { authorization: `Bearer ${f.test.config.adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
    t.match((await api('GET')).body, { mailer_secure_email_change_enabled: true, security_update_password_require_reauthentication: false })
    t.match(await api('PATCH', { mailer_secure_email_change_enabled: false }), { status: 200, body: { mailer_secure_email_change_enabled: false } })
    t.match(await api('PATCH', { mailer_secure_email_change_enabled: 'no' }), { status: 400, body: { code: 'invalid_argument', message: /mailer_secure_email_change_enabled must be true or false/ } })

    const env = { DATABASE_URL: f.test.catalogueUrl }
    let r = await runCli(['auth', 'settings', f.project.ref, '--secure-email-change', 'true'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'email change          confirmed by the current and the new address')
    r = await runCli(['auth', 'settings', f.project.ref, '--secure-email-change', 'false', '--json'], env)
    t.equal(r.code, 0, r.stderr)
    t.equal(JSON.parse(r.stdout).mailer_secure_email_change_enabled, false)
    r = await runCli(['auth', 'settings', f.project.ref, '--secure-email-change', 'maybe'], env)
    t.equal(r.code, 1, 'a refused value (cli/README.md: exit status)')
    t.match(r.stderr, '--secure-email-change must be true or false, got "maybe"')
    await setAuthOptions(cp, f.project.ref, { mailer_secure_email_change_enabled: true })

    const settings = await call(f, 'GET', '/settings')
    t.notOk('mailer_secure_email_change_enabled' in settings.body, "GoTrue's /settings does not show it")
  })
})
