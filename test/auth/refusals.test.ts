// Refusals with their status and GoTrue code, both error shapes, admin
// endpoints, logout scopes, concurrent refreshes, /settings and /health.
import t from 'tap'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { authFixture, call } from './helpers.ts'

/** Lets the catalogue's change notification reach the data plane. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

t.test('refusals, admin, sessions', async (t) => {
  const f = await authFixture(t)
  const admin = f.admin()
  const created = await admin.auth.admin.createUser({ email: 'carol@example.test', password: 'carol password', email_confirm: true, user_metadata: { team: 'a' } })
  t.error(created.error)
  const carolId = created.data.user!.id

  await t.test('error shapes: versioned and legacy', async (t) => {
    const versioned = await call(f, 'POST', '/token?grant_type=password', { email: 'carol@example.test', password: 'nope nope' })
    t.equal(versioned.status, 400)
    t.same(versioned.body, { code: 'invalid_credentials', message: 'Invalid login credentials' })
    t.equal(versioned.headers.get('x-supabase-api-version'), '2024-01-01')
    t.equal(versioned.headers.get('x-sb-error-code'), 'invalid_credentials')
    const legacy = await call(f, 'POST', '/token?grant_type=password', { email: 'carol@example.test', password: 'nope nope' }, { version: false })
    t.same(legacy.body, { code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' })
    t.equal(legacy.headers.get('x-sb-error-code'), 'invalid_credentials')
    t.equal(legacy.headers.get('x-supabase-api-version'), null)
    const weak = await call(f, 'POST', '/signup', { email: 'weak@example.test', password: 'abc' }, { version: false })
    t.equal(weak.status, 422)
    t.match(weak.body, { code: 422, error_code: 'weak_password', msg: 'Password should be at least 6 characters.', weak_password: { reasons: ['length'] } })
    const bad = await call(f, 'POST', '/signup', '{"email": ')
    t.equal(bad.status, 400)
    t.equal(bad.body.code, 'bad_json')
    t.match(bad.body.message, /^Could not parse request body as JSON: /)
    const nothing = await call(f, 'GET', '/nothing-here')
    t.equal(nothing.status, 404)
    t.equal(nothing.body.code, 'not_found')
  })

  await t.test('sign-up refusals', async (t) => {
    const cases: Array<[unknown, number, string, string]> = [
      [{ password: 'password1' }, 422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled'],
      [{ phone: '+15551234567', password: 'password1' }, 400, 'phone_provider_disabled', 'Phone signups are disabled'],
      [{ email: 'x@example.test' }, 400, 'validation_failed', 'Signup requires a valid password'],
      [{ email: 'x@example.test', password: 'p'.repeat(73) }, 400, 'validation_failed', 'Password cannot be longer than 72 characters'],
      [{ email: 'not-an-address', password: 'password1' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
      [{ email: 'x@example.test', password: 'short' }, 422, 'weak_password', 'Password should be at least 6 characters.'],
    ]
    for (const [body, status, code, message] of cases) {
      const r = await call(f, 'POST', '/signup', body)
      t.equal(r.status, status, JSON.stringify(body))
      t.equal(r.body.code, code)
      t.equal(r.body.message, message)
    }
    // An existing confirmed address: a user-shaped answer with no identities, and no mail.
    const before = f.mail.messages.length
    const dup = await f.anon().auth.signUp({ email: 'carol@example.test', password: 'whatever1' })
    t.error(dup.error)
    t.same(dup.data.user?.identities, [])
    t.not(dup.data.user?.id, carolId)
    await new Promise((r) => setTimeout(r, 100))
    t.equal(f.mail.messages.length, before)
    // Unknown keys and nulls are accepted, as auth-js sends them.
    const extra = await call(f, 'POST', '/signup', { email: 'extra@example.test', password: 'password1', gotrue_meta_security: { captcha_token: null }, code_challenge: null, code_challenge_method: null, data: null })
    t.equal(extra.status, 200)
  })

  await t.test('token refusals', async (t) => {
    let r = await call(f, 'POST', '/token?grant_type=password', { password: 'x' })
    t.same([r.status, r.body.code, r.body.message], [400, 'validation_failed', 'missing email or phone'])
    r = await call(f, 'POST', '/token?grant_type=password', { email: 'a@example.test', phone: '+1555', password: 'x' })
    t.same([r.status, r.body.message], [400, 'Only an email address or phone number should be provided on login.'])
    r = await call(f, 'POST', '/token?grant_type=magic', {})
    t.same([r.status, r.body.code, r.body.message], [400, 'invalid_credentials', 'unsupported_grant_type'])
    r = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: 'short' })
    t.same([r.status, r.body.code, r.body.message], [400, 'validation_failed', 'Refresh token is not valid'])
    r = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: 'abcdefghijklmnopqrstuvwx' })
    t.same([r.status, r.body.code, r.body.message], [400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found'])
    r = await call(f, 'POST', '/token?grant_type=pkce', { auth_code: '00000000-0000-0000-0000-000000000000', code_verifier: 'v'.repeat(50) })
    t.same([r.status, r.body.code], [404, 'flow_state_not_found'])
  })

  await t.test('verify refusals', async (t) => {
    const cases: Array<[unknown, number, string, string]> = [
      [{ token: '123456', email: 'carol@example.test' }, 400, 'validation_failed', 'Verify requires a verification type'],
      [{ type: 'signup', email: 'carol@example.test' }, 400, 'validation_failed', 'Verify requires either a token or a token hash'],
      [{ type: 'signup', token_hash: 'abc', email: 'carol@example.test' }, 400, 'validation_failed', 'Only the token_hash and type should be provided'],
      [{ type: 'bogus', token: '123456', email: 'carol@example.test' }, 400, 'validation_failed', 'Unsupported verification type'],
      [{ type: 'sms', token: '123456', phone: '+15551234567' }, 403, 'otp_expired', 'Token has expired or is invalid'],
      [{ type: 'signup', token: '123456', email: 'bad address' }, 422, 'validation_failed', 'Invalid email format'],
      [{ type: 'signup', token: '123456', email: 'carol@example.test' }, 403, 'otp_expired', 'Token has expired or is invalid'],
      [{ type: 'magiclink', token_hash: 'f'.repeat(56) }, 403, 'otp_expired', 'Email link is invalid or has expired'],
    ]
    for (const [body, status, code, message] of cases) {
      const r = await call(f, 'POST', '/verify', body)
      t.same([r.status, r.body.code, r.body.message], [status, code, message], JSON.stringify(body))
    }
    const open = await fetch(f.url('/verify?token=nope&type=signup'), { redirect: 'manual' })
    t.equal(open.status, 303, 'GET /verify needs no apikey')
    t.match(open.headers.get('location'), 'https://app.example.test#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=')
  })

  await t.test('user endpoints need a user token', async (t) => {
    const noBearer = await fetch(f.url('/user'), { headers: { apikey: f.project.anonKey, 'x-supabase-api-version': '2024-01-01' } })
    t.equal(noBearer.status, 401)
    t.same(await noBearer.json(), { code: 'no_authorization', message: 'This endpoint requires a valid Bearer token' })
    const anonBearer = await call(f, 'GET', '/user', undefined, { token: f.project.anonKey })
    t.same([anonBearer.status, anonBearer.body.code, anonBearer.body.message], [403, 'bad_jwt', 'invalid claim: missing sub claim'])
    const forged = await call(f, 'GET', '/user', undefined, { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' })
    t.same([forged.status, forged.body.code, forged.body.message], [403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, signature is invalid'], 'a token that does not verify is refused as GoTrue does')
    const session = (await f.anon().auth.signInWithPassword({ email: 'carol@example.test', password: 'carol password' })).data.session!
    const appMeta = await call(f, 'PUT', '/user', { app_metadata: { admin: true } }, { token: session.access_token })
    t.same([appMeta.status, appMeta.body.code, appMeta.body.message], [403, 'not_admin', 'User not allowed'])
    await admin.auth.admin.deleteUser(carolId)
    const gone = await call(f, 'GET', '/user', undefined, { token: session.access_token })
    t.same([gone.status, gone.body.code], [403, 'user_not_found'])
  })

  await t.test('admin endpoints', async (t) => {
    const notAdmin = await call(f, 'GET', '/admin/users')
    t.same([notAdmin.status, notAdmin.body.code, notAdmin.body.message], [403, 'not_admin', 'User not allowed'])
    const users: string[] = []
    for (const name of ['d1', 'd2', 'd3']) {
      const r = await admin.auth.admin.createUser({ email: `${name}@example.test`, email_confirm: true, app_metadata: { plan: 'gold' } })
      t.error(r.error)
      t.match(r.data.user?.app_metadata, { provider: 'email', providers: ['email'], plan: 'gold' })
      users.push(r.data.user!.id)
    }
    const page = await admin.auth.admin.listUsers({ page: 1, perPage: 2 })
    t.error(page.error)
    t.equal(page.data.users.length, 2)
    t.equal((page.data as { total?: number }).total, 4)
    t.equal((page.data as { nextPage?: number | null }).nextPage, 2)
    const raw = await call(f, 'GET', '/admin/users?page=-1', undefined, { key: f.project.serviceRoleKey })
    t.same([raw.status, raw.body.code], [400, 'validation_failed'])
    const dup = await admin.auth.admin.createUser({ email: 'd1@example.test' })
    t.same([dup.error?.status, dup.error?.code], [422, 'email_exists'])
    const none = await call(f, 'POST', '/admin/users', {}, { key: f.project.serviceRoleKey })
    t.same([none.status, none.body.message], [400, 'Cannot create a user without either an email or phone'])
    const both = await call(f, 'POST', '/admin/users', { email: 'z@example.test', password: 'password1', password_hash: '$2a$10$' + 'a'.repeat(53) }, { key: f.project.serviceRoleKey })
    t.same([both.status, both.body.message], [400, 'Only a password or a password hash should be provided'])
    const got = await admin.auth.admin.getUserById(users[0]!)
    t.equal(got.data.user?.email, 'd1@example.test')
    const badId = await call(f, 'GET', '/admin/users/not-a-uuid', undefined, { key: f.project.serviceRoleKey })
    t.same([badId.status, badId.body.code, badId.body.message], [404, 'validation_failed', 'user_id must be an UUID'])
    const missing = await admin.auth.admin.getUserById('00000000-0000-4000-8000-000000000000')
    t.same([missing.error?.status, missing.error?.code], [404, 'user_not_found'])
    const updated = await admin.auth.admin.updateUserById(users[0]!, { password: 'set by admin', user_metadata: { nick: 'dee' }, ban_duration: '1h' })
    t.error(updated.error)
    t.ok(updated.data.user?.banned_until)
    const banned = await f.anon().auth.signInWithPassword({ email: 'd1@example.test', password: 'set by admin' })
    t.same([banned.error?.status, banned.error?.code], [400, 'user_banned'])
    t.error((await admin.auth.admin.updateUserById(users[0]!, { ban_duration: 'none' })).error)
    t.error((await f.anon().auth.signInWithPassword({ email: 'd1@example.test', password: 'set by admin' })).error)
    // supabase-js 2.119 reads the user before the DELETE (whose body it ignores) and answers that user;
    // its UUID check now takes upper case, which GoTrue's uuid parsing takes too.
    const deleted = await admin.auth.admin.deleteUser(users[1]!.toUpperCase())
    t.error(deleted.error)
    t.equal(deleted.data.user?.id, users[1], 'the deleted user, read just before')
    const audited = await adminQuery(withDatabase(await serverUrl(), f.project.record.dbName), `select payload->>'actor_id' as actor from auth.audit_log_entries where payload->>'action' = 'user_deleted' and lower(payload->>'actor_id') = $1`, [users[1]])
    t.same(audited.rows, [{ actor: users[1] }], 'audited under the id as stored, lower case')
    t.same((await admin.auth.admin.getUserById(users[1]!)).error?.status, 404)
    t.error((await admin.auth.admin.deleteUser(users[2]!, true)).error, 'soft delete')
    const soft = await admin.auth.admin.getUserById(users[2]!)
    t.ok(soft.data.user?.deleted_at)
  })

  await t.test('logout scopes', async (t) => {
    const email = 'd1@example.test'
    const sign = async () => (await f.anon().auth.signInWithPassword({ email, password: 'set by admin' })).data.session!
    const [a, b, c] = [await sign(), await sign(), await sign()]
    const userOk = async (token: string) => (await call(f, 'GET', '/user', undefined, { token })).status
    const badScope = await call(f, 'POST', '/logout?scope=everything', undefined, { token: a.access_token })
    t.same([badScope.status, badScope.body.code, badScope.body.message], [400, 'validation_failed', 'Unsupported logout scope "everything"'])
    t.equal((await call(f, 'POST', '/logout?scope=others', undefined, { token: a.access_token })).status, 204)
    t.same([await userOk(a.access_token), await userOk(b.access_token), await userOk(c.access_token)], [200, 403, 403])
    const d = await sign()
    t.equal((await call(f, 'POST', '/logout?scope=local', undefined, { token: a.access_token })).status, 204)
    t.same([await userOk(a.access_token), await userOk(d.access_token)], [403, 200])
    const e = await sign()
    t.equal((await call(f, 'POST', '/logout', undefined, { token: d.access_token })).status, 204)
    t.same([await userOk(d.access_token), await userOk(e.access_token)], [403, 403], 'global is the default')
  })

  await t.test('concurrent refreshes of one token: one rotates, all get its token', async (t) => {
    const session = (await f.anon().auth.signInWithPassword({ email: 'd1@example.test', password: 'set by admin' })).data.session!
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })),
    )
    t.same(results.map((r) => r.status), Array(8).fill(200))
    t.equal(new Set(results.map((r) => r.body.refresh_token)).size, 1)
    const next = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: results[0]!.body.refresh_token })
    t.equal(next.status, 200)
    // A grandparent reused after the interval revokes the whole session.
    await f.test.platform.controlPlane.catalogue.query(`update baseplane.projects set auth_settings = auth_settings || '{"refresh_token_reuse_interval_seconds": 0}' where ref = $1`, [f.project.ref])
    await settle()
    const reuse = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
    t.same([reuse.status, reuse.body.code], [400, 'refresh_token_already_used'])
    const family = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: next.body.refresh_token })
    t.same([family.status, family.body.code], [400, 'refresh_token_not_found'], 'the family is revoked')
    const access = await call(f, 'GET', '/user', undefined, { token: next.body.access_token })
    t.same([access.status, access.body.code], [403, 'session_not_found'])
  })

  await t.test('settings and health', async (t) => {
    const s = await call(f, 'GET', '/settings')
    t.equal(s.status, 200)
    t.match(s.body, { external: { email: true, google: false, phone: false }, disable_signup: false, mailer_autoconfirm: false })
    const h = await call(f, 'GET', '/health')
    t.match(h.body, { name: 'GoTrue' })
    await f.test.platform.controlPlane.catalogue.query(`update baseplane.projects set auth_settings = auth_settings || '{"disable_signup": true}' where ref = $1`, [f.project.ref])
    await settle()
    const closed = await call(f, 'POST', '/signup', { email: 'late@example.test', password: 'password1' })
    t.same([closed.status, closed.body.code, closed.body.message], [422, 'signup_disabled', 'Signups not allowed for this instance'])
  })
})
