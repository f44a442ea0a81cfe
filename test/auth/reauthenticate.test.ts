// GET /reauthenticate and the nonce of a password change (issue 15 item 4;
// GoTrue's SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION, off by
// default): supabase-js auth.reauthenticate() mails a code with the
// reauthentication template; with the setting on, a session older than
// 24 hours changes its password only with that code as `nonce`; wrong,
// reused, expired and guessed nonces; the mail throttle; refusals.
import t, { type Test } from 'tap'
import { setAuthOptions, setTemplate } from '../../control-plane/auth-settings.ts'
import { authFixture, type AuthFixture, call, codeOf, projectSql, signedIn } from './helpers.ts'

/** Backdates the user's sessions: GoTrue asks no nonce of a session begun within 24 hours. */
const ageSessions = (f: AuthFixture, userId: string) => projectSql(f, `update auth.sessions set created_at = now() - interval '25 hours' where user_id = $1`, [userId])

async function reauthenticate(t: Test, f: AuthFixture, user: { client: ReturnType<AuthFixture['anon']> }, email: string): Promise<string> {
  const since = f.mail.messages.length
  const sent = await user.client.auth.reauthenticate()
  t.error(sent.error)
  return codeOf(await f.mail.next(email, since))
}

t.test('reauthentication', async (t) => {
  const f = await authFixture(t)
  const cp = f.test.platform.controlPlane

  await t.test('off by default: the password changes without a nonce, even from an old session', async (t) => {
    const ada = await signedIn(f, 'ada@example.test')
    await ageSessions(f, ada.id)
    t.error((await ada.client.auth.updateUser({ password: 'new password 1' })).error)
    t.error((await f.anon().auth.signInWithPassword({ email: 'ada@example.test', password: 'new password 1' })).error)
  })

  await setAuthOptions(cp, f.project.ref, { security_update_password_require_reauthentication: true })

  await t.test('reauthenticate() mails a code with the reauthentication template', async (t) => {
    const bob = await signedIn(f, 'bob@example.test')
    const since = f.mail.messages.length
    const sent = await bob.client.auth.reauthenticate()
    t.error(sent.error)
    const mail = await f.mail.next('bob@example.test', since)
    t.equal(mail.subject, 'Confirm reauthentication')
    t.match(mail.html, /enter the code: \d{6}/)
    t.notMatch(mail.html, /href=/, 'a code, no link')
    const user = await f.admin().auth.admin.getUserById(bob.id)
    t.error(user.error)
    const { rows } = await projectSql(f, 'select reauthentication_sent_at is not null as sent from auth.users where id = $1', [bob.id])
    t.equal(rows[0].sent, true, 'reauthentication_sent_at is stamped')
  })

  await t.test('a fresh session needs no nonce (GoTrue); an old one does', async (t) => {
    const cy = await signedIn(f, 'cy@example.test')
    t.error((await cy.client.auth.updateUser({ password: 'fresh session pw' })).error, 'session begun just now')
    await ageSessions(f, cy.id)
    const needed = await cy.client.auth.updateUser({ password: 'old session pw' })
    t.equal(needed.error?.status, 400)
    t.equal(needed.error?.code, 'reauthentication_needed')
    t.equal(needed.error?.message, 'Password update requires reauthentication')
    const never = await cy.client.auth.updateUser({ password: 'old session pw', nonce: '123456' })
    t.equal(never.error?.status, 422)
    t.equal(never.error?.code, 'reauthentication_not_valid', 'no code was ever sent')
    t.equal(never.error?.message, 'Nonce has expired or is invalid')

    const nonce = await reauthenticate(t, f, cy, 'cy@example.test')
    const wrong = await cy.client.auth.updateUser({ password: 'old session pw', nonce: nonce === '000000' ? '111111' : '000000' })
    t.equal(wrong.error?.code, 'reauthentication_not_valid')
    const changed = await cy.client.auth.updateUser({ password: 'old session pw', nonce })
    t.error(changed.error)
    t.error((await f.anon().auth.signInWithPassword({ email: 'cy@example.test', password: 'old session pw' })).error, 'the new password signs in')
    const reused = await cy.client.auth.updateUser({ password: 'yet another pw', nonce })
    t.equal(reused.error?.code, 'reauthentication_not_valid', 'a nonce is spent by its use')
    t.error((await cy.client.auth.updateUser({ data: { theme: 'dark' } })).error, 'other changes need no nonce')
  })

  await t.test('five wrong nonces spend the code; an expired code is refused', async (t) => {
    const dee = await signedIn(f, 'dee@example.test')
    await ageSessions(f, dee.id)
    let nonce = await reauthenticate(t, f, dee, 'dee@example.test')
    const wrong = nonce === '000000' ? '111111' : '000000'
    for (let i = 0; i < 5; i++) t.equal((await dee.client.auth.updateUser({ password: 'guessed pw', nonce: wrong })).error?.code, 'reauthentication_not_valid')
    t.equal((await dee.client.auth.updateUser({ password: 'guessed pw', nonce })).error?.code, 'reauthentication_not_valid', 'spent after five wrong guesses')

    nonce = await reauthenticate(t, f, dee, 'dee@example.test')
    await projectSql(f, `update auth.one_time_tokens set created_at = created_at - interval '2 hours' where user_id = $1 and token_type = 'reauthentication_token'`, [dee.id])
    t.equal((await dee.client.auth.updateUser({ password: 'late pw', nonce })).error?.code, 'reauthentication_not_valid', 'expired after otp_expiry_seconds')
    nonce = await reauthenticate(t, f, dee, 'dee@example.test')
    const weak = await dee.client.auth.updateUser({ password: 'x', nonce })
    t.equal(weak.error?.code, 'weak_password')
    t.error((await dee.client.auth.updateUser({ password: 'finally pw', nonce })).error, 'a refused password does not spend the nonce')
  })

  await t.test('refusals and the mail throttle', async (t) => {
    const eve = await signedIn(f, 'eve@example.test')
    const anonymous = await call(f, 'GET', '/reauthenticate')
    t.same([anonymous.status, anonymous.body.code], [401, 'no_authorization'])
    await projectSql(f, 'update auth.users set email_confirmed_at = null where id = $1', [eve.id])
    const unconfirmed = await eve.client.auth.reauthenticate()
    t.equal(unconfirmed.error?.status, 422)
    t.equal(unconfirmed.error?.code, 'email_not_confirmed')
    t.equal(unconfirmed.error?.message, 'Please verify your email first.')
    await projectSql(f, 'update auth.users set email_confirmed_at = now() where id = $1', [eve.id])

    await setAuthOptions(cp, f.project.ref, { mail_min_interval_seconds: 60 })
    t.teardown(() => setAuthOptions(cp, f.project.ref, { mail_min_interval_seconds: 0 }))
    t.error((await eve.client.auth.reauthenticate()).error)
    const soon = await eve.client.auth.reauthenticate()
    t.equal(soon.error?.status, 429)
    t.equal(soon.error?.code, 'over_email_send_rate_limit')
    t.match(soon.error?.message, /^For security purposes, you can only request this after \d+ seconds\.$/)
  })

  await t.test('the template is editable; its body must keep the code', async (t) => {
    await t.rejects(setTemplate(cp, f.project.ref, 'reauthentication', { subject: 'Code', body: '<p>no code</p>' }), {
      code: 'invalid_argument',
      message: "The reauthentication template's body must contain {{ .Token }} (the code the user enters); it was refused",
    })
    await setTemplate(cp, f.project.ref, 'reauthentication', { subject: '{{ .Token }} is your code', body: '<p>Hi {{ .Email }}, enter the code: {{ .Token }}</p>' })
    const fay = await signedIn(f, 'fay@example.test')
    const since = f.mail.messages.length
    t.error((await fay.client.auth.reauthenticate()).error)
    const mail = await f.mail.next('fay@example.test', since)
    t.equal(mail.subject, `${codeOf(mail)} is your code`)
    t.match(mail.html, 'Hi fay@example.test')
  })
})
