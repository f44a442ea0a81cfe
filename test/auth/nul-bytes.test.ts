// A NUL (\u0000) in an auth input: PostgreSQL text and jsonb cannot hold one,
// so it used to reach SQL and answer 500 (issue 11). /verify answers it as
// GoTrue answers any token that matches nothing; every other endpoint refuses
// it up front with validation_failed, before any SQL.
import t from 'tap'
import { authFixture, call, fragmentOf, SITE_URL } from './helpers.ts'

t.test('a NUL in an auth input is a bad input, never a 500', async (t) => {
  const f = await authFixture(t)
  const admin = f.admin()
  const created = await admin.auth.admin.createUser({ email: 'dora@example.test', password: 'dora password', email_confirm: true })
  t.error(created.error)

  await t.test('GET /verify: the error redirect of a link that matches nothing', async (t) => {
    for (const token of ['%00abc', 'abc%00', 'pkce_%00']) {
      const opened = await fetch(f.url(`/verify?token=${token}&type=signup`), { redirect: 'manual' })
      t.equal(opened.status, 303, token)
      const location = opened.headers.get('location')!
      t.ok(location.startsWith(`${SITE_URL}`), location)
      t.match(fragmentOf(location), { error: 'access_denied', error_code: 'otp_expired', error_description: 'Email link is invalid or has expired', sb: '' })
    }
  })

  await t.test('POST /verify: 403 otp_expired, as for any unknown token', async (t) => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ type: 'signup', token_hash: '\u0000abc' }, 'Email link is invalid or has expired'],
      [{ type: 'magiclink', token_hash: 'f'.repeat(55) + '\u0000' }, 'Email link is invalid or has expired'],
      [{ type: 'email', token: '\u000012345', email: 'dora@example.test' }, 'Token has expired or is invalid'],
    ]
    for (const [body, message] of cases) {
      const versioned = await call(f, 'POST', '/verify', body)
      t.same([versioned.status, versioned.body], [403, { code: 'otp_expired', message }], JSON.stringify(body))
      const legacy = await call(f, 'POST', '/verify', body, { version: false })
      t.same([legacy.status, legacy.body], [403, { code: 403, error_code: 'otp_expired', msg: message }], JSON.stringify(body))
    }
    const badEmail = await call(f, 'POST', '/verify', { type: 'email', token: '123456', email: 'dora\u0000@example.test' })
    t.same([badEmail.status, badEmail.body], [422, { code: 'validation_failed', message: 'Invalid email format' }])
  })

  await t.test('other endpoints: 400 validation_failed naming the field', async (t) => {
    const session = await f.anon().auth.signInWithPassword({ email: 'dora@example.test', password: 'dora password' })
    t.error(session.error)
    const token = session.data.session!.access_token
    const cases: Array<[string, string, unknown, { token?: string; key?: string }, string]> = [
      ['POST', '/signup', { email: 'eve@example.test', password: 'eve\u0000password' }, {}, 'password'],
      ['POST', '/token?grant_type=password', { email: 'dora@example.test', password: 'dora\u0000' }, {}, 'password'],
      ['POST', '/token?grant_type=refresh_token', { refresh_token: '\u0000' }, {}, 'refresh_token'],
      ['POST', '/token?grant_type=pkce', { auth_code: 'a\u0000', code_verifier: 'v'.repeat(43) }, {}, 'auth_code'],
      ['PUT', '/user', { data: { nested: ['fine', 'not\u0000fine'] } }, { token }, 'data.nested'],
      ['PUT', '/user', { data: { 'key\u0000': 1 } }, { token }, 'data'],
      ['POST', '/recover', { email: 'dora@example.test', gotrue_meta_security: { captcha_token: '\u0000' } }, {}, 'gotrue_meta_security.captcha_token'],
      ['GET', '/admin/users?filter=%00dora', undefined, { key: f.project.serviceRoleKey }, 'filter'],
      ['POST', '/otp?redirect_to=%00', { email: 'dora@example.test' }, {}, 'redirect_to'],
    ]
    for (const [method, path, body, options, field] of cases) {
      const r = await call(f, method, path, body, options)
      t.same([r.status, r.body], [400, { code: 'validation_failed', message: `${field} must not contain a NUL character (\\u0000)` }], `${method} ${path}`)
    }
    // Nothing was written by the refused sign-up, and the account still signs in.
    const listed = await admin.auth.admin.listUsers({ page: 1, perPage: 50 })
    t.error(listed.error)
    t.same(listed.data.users.map((u) => u.email), ['dora@example.test'])
    t.error((await f.anon().auth.signInWithPassword({ email: 'dora@example.test', password: 'dora password' })).error)
  })
})
