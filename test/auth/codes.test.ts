// Emailed codes and links: six digits, five wrong guesses spend a code (from
// any address), a new code restarts the count, expiry; magic link, recovery,
// email change, invite, PKCE (?code=), redirect allow list.
import crypto from 'node:crypto'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { adminQuery, withDatabase, serverUrl } from '../helpers/db.ts'
import { ALLOWED, authFixture, call, codeOf, fragmentOf, linkOf, SITE_URL } from './helpers.ts'

t.test('codes, links, redirects and PKCE', async (t) => {
  const f = await authFixture(t, { BASEPLANE_TRUSTED_PROXIES: '127.0.0.1' })
  const supabase = f.anon()
  const projectDb = withDatabase(await serverUrl(), f.project.record.dbName)

  await t.test('five wrong guesses from different addresses spend the code; a new code restarts the count', async (t) => {
    const email = 'guess@example.test'
    let since = f.mail.messages.length
    t.error((await supabase.auth.signInWithOtp({ email })).error)
    const first = await f.mail.next(email, since)
    const code = codeOf(first)
    t.match(code, /^\d{6}$/)
    const wrongCode = code === '000000' ? '111111' : '000000'
    for (let i = 0; i < 5; i++) {
      const r = await call(f, 'POST', '/verify', { type: 'email', email, token: wrongCode }, { headers: { 'x-forwarded-for': `10.0.0.${i + 1}` } })
      t.equal(r.status, 403)
      t.equal(r.body.code, 'otp_expired')
      t.equal(r.body.message, 'Token has expired or is invalid')
    }
    const spent = await call(f, 'POST', '/verify', { type: 'email', email, token: code }, { headers: { 'x-forwarded-for': '10.0.0.9' } })
    t.equal(spent.status, 403, 'the right code after five wrong guesses')
    t.equal(spent.body.code, 'otp_expired')

    since = f.mail.messages.length
    t.error((await supabase.auth.signInWithOtp({ email })).error)
    const second = codeOf(await f.mail.next(email, since))
    for (let i = 0; i < 4; i++) await call(f, 'POST', '/verify', { type: 'email', email, token: second === '000000' ? '111111' : '000000' })
    const ok = await supabase.auth.verifyOtp({ email, token: second, type: 'email' })
    t.error(ok.error, 'four wrong guesses leave the new code usable')
    t.ok(ok.data.session?.access_token)
    t.equal(ok.data.user?.email, email)
  })

  await t.test('expired codes answer otp_expired', async (t) => {
    const email = 'late@example.test'
    const since = f.mail.messages.length
    t.error((await supabase.auth.signInWithOtp({ email })).error)
    const mail = await f.mail.next(email, since)
    await adminQuery(projectDb, `update auth.one_time_tokens set created_at = created_at - interval '2 hours' where relates_to = $1`, [email])
    const late = await supabase.auth.verifyOtp({ email, token: codeOf(mail), type: 'email' })
    t.equal(late.error?.status, 403)
    t.equal(late.error?.code, 'otp_expired')
    const lateLink = await fetch(linkOf(mail), { redirect: 'manual' })
    t.equal(lateLink.status, 303)
    t.match(fragmentOf(lateLink.headers.get('location')!), { error_code: 'otp_expired', error_description: 'Email link is invalid or has expired', error: 'access_denied' })
    const byHash = await call(f, 'POST', '/verify', { type: 'email', token_hash: new URL(linkOf(mail)).searchParams.get('token') })
    t.equal(byHash.status, 403)
    t.equal(byHash.body.message, 'Email link is invalid or has expired')
  })

  await t.test('magic link for an existing user lands on an allowed redirect', async (t) => {
    const email = 'magic@example.test'
    t.error((await f.admin().auth.admin.createUser({ email, email_confirm: true })).error)
    const since = f.mail.messages.length
    t.error((await supabase.auth.signInWithOtp({ email, options: { emailRedirectTo: 'http://localhost:3000/welcome', shouldCreateUser: false } })).error)
    const mail = await f.mail.next(email, since)
    t.equal(mail.subject, 'Your Magic Link')
    const opened = await fetch(linkOf(mail), { redirect: 'manual' })
    const location = opened.headers.get('location')!
    t.ok(location.startsWith('http://localhost:3000/welcome#'), location)
    t.equal(fragmentOf(location).type, 'magiclink')
    const noCreate = await supabase.auth.signInWithOtp({ email: 'unknown@example.test', options: { shouldCreateUser: false } })
    t.equal(noCreate.error?.status, 422)
    t.equal(noCreate.error?.code, 'otp_disabled')
  })

  await t.test('redirects that are neither the site URL nor allowed are refused', async (t) => {
    for (const bad of ['https://evil.example/steal', 'http://localhost:3001/x', 'https://app.example.test.evil.example/']) {
      const r = await supabase.auth.signUp({ email: 'redir@example.test', password: 'password1', options: { emailRedirectTo: bad } })
      t.equal(r.error?.status, 400, bad)
      t.equal(r.error?.code, 'validation_failed')
      t.match(r.error?.message, /is not allowed: it must be the site URL or on the project's allowed redirect URLs/)
    }
    const r = await call(f, 'POST', '/recover?redirect_to=' + encodeURIComponent('https://evil.example'), { email: 'magic@example.test' })
    t.equal(r.status, 400)
    t.equal(r.body.code, 'validation_failed')
    const bad = await fetch(f.url('/verify?token=abc&type=signup&redirect_to=' + encodeURIComponent('https://evil.example')), { redirect: 'manual' })
    t.equal(bad.status, 400, 'GET /verify refuses a foreign redirect_to instead of following it')
    t.equal(bad.headers.get('x-sb-error-code'), 'validation_failed')
    const site = await supabase.auth.resetPasswordForEmail('magic@example.test', { redirectTo: `${SITE_URL}/account/reset?x=1` })
    t.error(site.error, 'any path on the site URL is allowed')
    t.ok(ALLOWED)
  })

  await t.test('recovery link, then a new password', async (t) => {
    const email = 'magic@example.test'
    await new Promise((r) => setTimeout(r, 50))
    const mail = f.mail.messages.filter((m) => m.to.includes(email) && m.subject === 'Reset Your Password').pop()!
    t.ok(mail, 'recovery mail sent')
    const location = (await fetch(linkOf(mail), { redirect: 'manual' })).headers.get('location')!
    t.ok(location.startsWith(`${SITE_URL}/account/reset?x=1#`))
    const values = fragmentOf(location)
    t.equal(values.type, 'recovery')
    const client = f.anon()
    t.error((await client.auth.setSession({ access_token: values.access_token!, refresh_token: values.refresh_token! })).error)
    t.error((await client.auth.updateUser({ password: 'recovered pw' })).error)
    t.error((await f.anon().auth.signInWithPassword({ email, password: 'recovered pw' })).error)
    const unknown = await f.anon().auth.resetPasswordForEmail('nobody-here@example.test')
    t.error(unknown.error, 'unknown addresses answer the same')
    const missing = await call(f, 'POST', '/recover', {})
    t.equal(missing.status, 400)
    t.equal(missing.body.message, 'Password recovery requires an email')
  })

  await t.test('email change is confirmed by the new address (secure email change off)', async (t) => {
    // Both addresses confirming (the default) is tested in email-change.test.ts.
    await setAuthOptions(f.test.platform.controlPlane, f.project.ref, { mailer_secure_email_change_enabled: false })
    t.teardown(() => setAuthOptions(f.test.platform.controlPlane, f.project.ref, { mailer_secure_email_change_enabled: true }))
    const client = f.anon()
    t.error((await client.auth.signInWithPassword({ email: 'magic@example.test', password: 'recovered pw' })).error)
    const since = f.mail.messages.length
    const changed = await client.auth.updateUser({ email: 'magic.new@example.test' })
    t.error(changed.error)
    t.equal(changed.data.user?.email, 'magic@example.test')
    t.equal(changed.data.user?.new_email, 'magic.new@example.test')
    const mail = await f.mail.next('magic.new@example.test', since)
    t.equal(mail.subject, 'Confirm Email Change')
    t.match(mail.html, 'magic.new@example.test')
    const verified = await client.auth.verifyOtp({ email: 'magic.new@example.test', token: codeOf(mail), type: 'email_change' })
    t.error(verified.error)
    t.equal(verified.data.user?.email, 'magic.new@example.test')
    t.notOk(verified.data.user?.new_email)
    t.error((await f.anon().auth.signInWithPassword({ email: 'magic.new@example.test', password: 'recovered pw' })).error)
    const taken = await client.auth.updateUser({ email: 'guess@example.test' })
    t.equal(taken.error?.status, 422)
    t.equal(taken.error?.code, 'email_exists')
  })

  await t.test('PKCE: the link lands with ?code=, exchanged with the verifier', async (t) => {
    const verifier = crypto.randomBytes(56).toString('hex')
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url')
    const email = 'pkce@example.test'
    const since = f.mail.messages.length
    const r = await call(f, 'POST', '/signup?redirect_to=' + encodeURIComponent('http://localhost:3000/cb'), { email, password: 'pkce password', code_challenge: challenge, code_challenge_method: 's256' })
    t.equal(r.status, 200)
    const link = linkOf(await f.mail.next(email, since))
    t.match(new URL(link).searchParams.get('token'), /^pkce_/)
    const location = (await fetch(link, { redirect: 'manual' })).headers.get('location')!
    const code = new URL(location).searchParams.get('code')!
    t.ok(location.startsWith('http://localhost:3000/cb?code='), location)
    const bad = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code, code_verifier: 'x'.repeat(50) })
    t.equal(bad.status, 400)
    t.equal(bad.body.code, 'bad_code_verifier')
    const missing = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code })
    t.equal(missing.status, 400)
    t.equal(missing.body.message, 'invalid request: both auth code and code verifier should be non-empty')
    // A wrong verifier leaves the code to its owner (GoTrue keeps the flow until a verifier matches); it is redeemed once.
    const code2 = code
    const exchanged = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code2, code_verifier: verifier })
    t.equal(exchanged.status, 200)
    t.ok(exchanged.body.access_token)
    t.equal(exchanged.body.user.email, email)
    const again = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: code2, code_verifier: verifier })
    t.equal(again.status, 404)
    t.equal(again.body.code, 'flow_state_not_found')
    const half = await call(f, 'POST', '/signup', { email: 'pkce2@example.test', password: 'pkce password', code_challenge: challenge })
    t.equal(half.status, 400)
    t.equal(half.body.message, 'PKCE flow requires code_challenge_method and code_challenge')
    const short = await call(f, 'POST', '/signup', { email: 'pkce2@example.test', password: 'pkce password', code_challenge: 'abc', code_challenge_method: 's256' })
    t.equal(short.body.message, 'code challenge has to be between 43 and 128 characters')
  })

  await t.test('supabase-js PKCE flow: signUp then exchangeCodeForSession', async (t) => {
    const storage = new Map<string, string>()
    const { createClient } = await import('@supabase/supabase-js')
    const client = createClient(f.project.baseUrl, f.project.anonKey, {
      auth: { flowType: 'pkce', persistSession: true, autoRefreshToken: false, detectSessionInUrl: false, storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) } },
    })
    const email = 'pkcejs@example.test'
    const since = f.mail.messages.length
    t.error((await client.auth.signUp({ email, password: 'pkce js pw', options: { emailRedirectTo: 'http://localhost:3000/done' } })).error)
    const location = (await fetch(linkOf(await f.mail.next(email, since)), { redirect: 'manual' })).headers.get('location')!
    const code = new URL(location).searchParams.get('code')!
    const { data, error } = await client.auth.exchangeCodeForSession(code)
    t.error(error)
    t.equal(data.user?.email, email)
    t.equal(data.session?.user.email_confirmed_at !== undefined, true)
  })

  await t.test('invite and generate_link (admin)', async (t) => {
    const admin = f.admin()
    const since = f.mail.messages.length
    const invited = await admin.auth.admin.inviteUserByEmail('invitee@example.test', { redirectTo: 'http://localhost:3000/join' })
    t.error(invited.error)
    t.ok(invited.data.user?.invited_at)
    const mail = await f.mail.next('invitee@example.test', since)
    t.equal(mail.subject, 'You have been invited')
    const location = (await fetch(linkOf(mail), { redirect: 'manual' })).headers.get('location')!
    t.equal(fragmentOf(location).type, 'invite')
    t.ok(location.startsWith('http://localhost:3000/join#'))
    const again = await admin.auth.admin.inviteUserByEmail('invitee@example.test')
    t.equal(again.error?.status, 422)
    t.equal(again.error?.code, 'email_exists')

    const before = f.mail.messages.length
    const generated = await admin.auth.admin.generateLink({ type: 'magiclink', email: 'invitee@example.test' })
    t.error(generated.error)
    t.match(generated.data.properties, { verification_type: 'magiclink', redirect_to: SITE_URL })
    t.match(generated.data.properties?.email_otp, /^\d{6}$/)
    t.equal(generated.data.user?.email, 'invitee@example.test')
    await new Promise((r) => setTimeout(r, 100))
    t.equal(f.mail.messages.length, before, 'generate_link sends nothing')
    const verified = await f.anon().auth.verifyOtp({ token_hash: generated.data.properties!.hashed_token, type: 'magiclink' })
    t.error(verified.error)
    const missing = await admin.auth.admin.generateLink({ type: 'recovery', email: 'nobody@example.test' })
    t.equal(missing.error?.status, 404)
    t.equal(missing.error?.code, 'user_not_found')
    const badType = await call(f, 'POST', '/admin/generate_link', { type: 'bogus', email: 'x@example.test' }, { key: f.project.serviceRoleKey })
    t.equal(badType.status, 400)
    t.equal(badType.body.message, 'Invalid email action link type requested: bogus')
  })
})
