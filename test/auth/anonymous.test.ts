// Anonymous sign-ins (issue 25; GoTrue's EXTERNAL_ANONYMOUS_USERS_ENABLED,
// off by default) through the unmodified supabase-js: refused while off;
// on, signInAnonymously() gets a session whose user and tokens say
// is_anonymous (refresh keeps it), /settings says so, the admin API lists
// it; the password refusal; conversion by updateUser({email}) and the emailed
// link (and at once under autoconfirm); the per-address limit; a policy on
// auth.jwt() ->> 'is_anonymous' (SQL and GraphQL); the CLI and admin API.
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import pg from 'pg'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { DEFAULT_ROLE_TIMEOUTS } from '../../lib/plans.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { authFixture, type AuthFixture, authSettingsApi, call, fragmentOf, linkOf, SITE_URL } from './helpers.ts'

const DISABLED = [422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled']

/** An app's client whose requests come from `address` (the platform trusts x-forwarded-for here). */
function client(f: AuthFixture, address = '198.51.100.1'): SupabaseClient {
  return createClient(f.project.baseUrl, f.project.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { headers: { 'x-forwarded-for': address } },
  })
}

async function anonymous(f: AuthFixture, address?: string) {
  const supabase = client(f, address)
  const { data, error } = await supabase.auth.signInAnonymously()
  if (error) throw error
  return { supabase, id: data.user!.id, session: data.session! }
}

t.test('anonymous sign-ins', async (t) => {
  const f = await authFixture(t, { BASEPLANE_TRUSTED_PROXIES: '127.0.0.1' })
  const cp = f.test.platform.controlPlane
  const ref = f.project.ref
  const admin = f.admin().auth.admin

  await t.test('off by default', async (t) => {
    const refused = await client(f).auth.signInAnonymously()
    t.same([refused.error?.status, refused.error?.code, refused.error?.message], DISABLED)
    t.equal(refused.data.session, null)
    const raw = await call(f, 'POST', '/signup', { data: {}, gotrue_meta_security: {} }, { version: false })
    t.same(raw.body, { code: 422, error_code: 'anonymous_provider_disabled', msg: 'Anonymous sign-ins are disabled' }, "GoTrue's unversioned shape")
    t.match((await call(f, 'GET', '/settings')).body, { external: { anonymous_users: false } })
  })

  await t.test('the setting: admin API and CLI', async (t) => {
    const api = authSettingsApi(f)
    t.match((await api('GET')).body, { external_anonymous_users_enabled: false, rate_limit_anonymous_users: 30 })
    t.match(await api('PATCH', { external_anonymous_users_enabled: 'yes' }), { status: 400, body: { code: 'invalid_argument', message: /external_anonymous_users_enabled must be true or false/ } })
    t.match(await api('PATCH', { rate_limit_anonymous_users: 0 }), { status: 400, body: { message: /rate_limit_anonymous_users must be a whole number from 1 to 1000000/ } })
    t.match(await api('PATCH', { external_anonymous_users_enabled: true }), { status: 200, body: { external_anonymous_users_enabled: true } })
    t.match((await call(f, 'GET', '/settings')).body, { external: { anonymous_users: true } }, 'GET /settings at once')
    await setAuthOptions(cp, ref, { external_anonymous_users_enabled: false })

    const env = { DATABASE_URL: f.test.catalogueUrl }
    let r = await runCli(['auth', 'settings', ref], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'anonymous sign-ins    off')
    r = await runCli(['auth', 'settings', ref, '--anonymous-users', 'true', '--anonymous-per-hour', '40'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'anonymous sign-ins    on (at most 40 per address per hour)')
    r = await runCli(['auth', 'settings', ref, '--anonymous-users', 'maybe'], env)
    t.equal(r.code, 1)
    t.match(r.stderr, '--anonymous-users must be true or false, got "maybe"')
    r = await runCli(['auth', 'settings', ref, '--anonymous-per-hour', '30', '--json'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(JSON.parse(r.stdout), { external_anonymous_users_enabled: true, rate_limit_anonymous_users: 30 })
    t.match((await call(f, 'GET', '/settings')).body, { external: { anonymous_users: true } })
  })

  await t.test('signInAnonymously: a session, is_anonymous in the user and its tokens, kept by refresh', async (t) => {
    const supabase = client(f)
    const { data, error } = await supabase.auth.signInAnonymously({ options: { data: { plan: 'trial' } } })
    t.equal(error, null)
    t.match(data.session, { token_type: 'bearer', expires_in: 3600, refresh_token: /^[a-z0-9]{24}$/ })
    t.match(data.user, { is_anonymous: true, email: '', phone: '', role: 'authenticated', aud: 'authenticated', user_metadata: { plan: 'trial' } })
    t.same(data.user?.identities, [], 'no identity')
    t.same(data.user?.app_metadata, {}, 'no provider')
    const claims = await verifyJwt(f.project.record, data.session!.access_token)
    t.match(claims, { sub: data.user!.id, role: 'authenticated', aal: 'aal1', is_anonymous: true, email: '', phone: '', user_metadata: { plan: 'trial' } })
    const amr = claims.amr as Array<{ method: string; timestamp: number }>
    t.same(amr.map((m) => m.method), ['anonymous'])
    t.ok(Number.isInteger(amr[0]!.timestamp))

    const me = await supabase.auth.getUser()
    t.equal(me.data.user?.is_anonymous, true)
    const refreshed = await supabase.auth.refreshSession()
    t.error(refreshed.error)
    t.equal(refreshed.data.user?.is_anonymous, true)
    const after = await verifyJwt(f.project.record, refreshed.data.session!.access_token)
    t.match(after, { is_anonymous: true, role: 'authenticated', aal: 'aal1' }, 'refresh keeps the claim')
    t.same((after.amr as Array<{ method: string }>).map((m) => m.method), ['anonymous'])

    const listed = await admin.listUsers()
    t.error(listed.error)
    t.match(listed.data.users.find((u) => u.id === data.user!.id), { is_anonymous: true, email: '' }, 'the admin list shows is_anonymous')
    const enrol = await supabase.auth.mfa.enroll({ factorType: 'totp' })
    t.same([enrol.error?.status, enrol.error?.code], [403, 'no_authorization'], 'no factors for anonymous users')
  })

  await t.test('a password without an address is refused', async (t) => {
    const anon = await anonymous(f)
    const refused = await anon.supabase.auth.updateUser({ password: 'a new password' })
    t.same(
      [refused.error?.status, refused.error?.code, refused.error?.message],
      [422, 'validation_failed', 'Updating password of an anonymous user without an email or phone is not allowed'],
    )
    t.equal((await admin.getUserById(anon.id)).data.user?.is_anonymous, true)
    const metadata = await anon.supabase.auth.updateUser({ data: { nickname: 'ghost' } })
    t.error(metadata.error, 'other updates are allowed')
    t.equal(metadata.data.user?.is_anonymous, true)
  })

  await t.test('conversion: updateUser({email}) and the emailed link', async (t) => {
    const anon = await anonymous(f)
    const since = f.mail.messages.length
    const asked = await anon.supabase.auth.updateUser({ email: 'Casper@Example.test' }, { emailRedirectTo: SITE_URL })
    t.error(asked.error)
    t.match(asked.data.user, { new_email: 'casper@example.test', email: '', is_anonymous: true })
    const mail = await f.mail.next('casper@example.test', since)
    t.equal(mail.subject, 'Confirm Email Change')
    await new Promise((resolve) => setTimeout(resolve, 100))
    t.equal(f.mail.messages.length - since, 1, 'one mail: there is no current address to confirm')
    t.equal((await verifyJwt(f.project.record, (await anon.supabase.auth.refreshSession()).data.session!.access_token)).is_anonymous, true, 'still anonymous until the link')
    t.equal((await f.anon().auth.signInWithPassword({ email: 'casper@example.test', password: 'whatever1' })).error?.code, 'invalid_credentials')

    const opened = await fetch(linkOf(mail), { redirect: 'manual' })
    t.equal(opened.status, 303)
    const landed = fragmentOf(opened.headers.get('location')!)
    t.equal(landed.type, 'email_change')
    const claims = await verifyJwt(f.project.record, landed.access_token!)
    t.match(claims, { sub: anon.id, email: 'casper@example.test', is_anonymous: false, role: 'authenticated' })
    const user = (await admin.getUserById(anon.id)).data.user!
    t.match(user, { email: 'casper@example.test', is_anonymous: false, app_metadata: { provider: 'email', providers: ['email'] } })
    t.ok(user.email_confirmed_at, 'the address is confirmed')
    t.notOk(user.new_email)
    t.match(user.identities, [{ provider: 'email', identity_data: { email: 'casper@example.test', email_verified: true, sub: anon.id } }], 'an email identity is created')
    const refreshed = await anon.supabase.auth.refreshSession()
    t.error(refreshed.error)
    t.equal((await verifyJwt(f.project.record, refreshed.data.session!.access_token)).is_anonymous, false, "the anonymous session's next token is permanent")

    // Now a password may be set, and the account signs in with it.
    const password = await anon.supabase.auth.updateUser({ password: 'casper password' })
    t.error(password.error)
    const signedIn = await f.anon().auth.signInWithPassword({ email: 'casper@example.test', password: 'casper password' })
    t.error(signedIn.error)
    t.equal(signedIn.data.user?.id, anon.id, 'the same user')
    t.equal(signedIn.data.user?.is_anonymous, false)
  })

  await t.test('conversion with email and password together; an address already taken', async (t) => {
    t.error((await admin.createUser({ email: 'taken@example.test', password: 'taken password', email_confirm: true })).error)
    const anon = await anonymous(f)
    const taken = await anon.supabase.auth.updateUser({ email: 'taken@example.test' })
    t.same([taken.error?.status, taken.error?.code], [422, 'email_exists'])
    const since = f.mail.messages.length
    const asked = await anon.supabase.auth.updateUser({ email: 'wisp@example.test', password: 'wisp password' })
    t.error(asked.error, 'a password with the address is allowed (GoTrue)')
    t.equal((await f.anon().auth.signInWithPassword({ email: 'wisp@example.test', password: 'wisp password' })).error?.code, 'invalid_credentials', 'not before the address is confirmed')
    const opened = await fetch(linkOf(await f.mail.next('wisp@example.test', since)), { redirect: 'manual' })
    t.equal(opened.status, 303)
    const signedIn = await f.anon().auth.signInWithPassword({ email: 'wisp@example.test', password: 'wisp password' })
    t.error(signedIn.error)
    t.equal(signedIn.data.user?.id, anon.id)
  })

  await t.test('under autoconfirm the address converts at once, no mail', async (t) => {
    await setAuthOptions(cp, ref, { mailer_autoconfirm: true })
    t.teardown(() => setAuthOptions(cp, ref, { mailer_autoconfirm: false }))
    const anon = await anonymous(f)
    const since = f.mail.messages.length
    const converted = await anon.supabase.auth.updateUser({ email: 'boo@example.test', password: 'boo password' })
    t.error(converted.error)
    t.match(converted.data.user, { email: 'boo@example.test', is_anonymous: false, identities: [{ provider: 'email' }] })
    t.ok(converted.data.user?.email_confirmed_at)
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(f.mail.messages.length, since, 'no mail')
    t.error((await f.anon().auth.signInWithPassword({ email: 'boo@example.test', password: 'boo password' })).error)
  })

  await t.test('at most rate_limit_anonymous_users per address per hour; sign-ups disabled', async (t) => {
    await setAuthOptions(cp, ref, { rate_limit_anonymous_users: 2 })
    t.teardown(() => setAuthOptions(cp, ref, { rate_limit_anonymous_users: 30 }))
    const address = '203.0.113.25'
    const results = await Promise.all([1, 2, 3].map(() => client(f, address).auth.signInAnonymously()))
    t.equal(results.filter((r) => r.error === null).length, 2, 'two of three concurrent sign-ins pass')
    const refused = results.find((r) => r.error !== null)!
    t.same([refused.error?.status, refused.error?.code, refused.error?.message], [429, 'over_request_rate_limit', 'Request rate limit reached'])
    t.equal((await client(f, address).auth.signInAnonymously()).error?.code, 'over_request_rate_limit')
    t.error((await client(f, '203.0.113.26').auth.signInAnonymously()).error, 'another address is not held back')

    await setAuthOptions(cp, ref, { disable_signup: true })
    t.teardown(() => setAuthOptions(cp, ref, { disable_signup: false }))
    const closed = await client(f, '203.0.113.27').auth.signInAnonymously()
    t.same([closed.error?.status, closed.error?.code], [422, 'signup_disabled'])
  })

  await t.test("a policy on auth.jwt() ->> 'is_anonymous'", async (t) => {
    const owner = new pg.Client({ connectionString: ownerUrlOf(f.project.record) })
    await owner.connect()
    t.teardown(() => owner.end())
    await owner.query(`create table public.reviews (id serial primary key, body text not null);
      alter table public.reviews enable row level security;
      create policy read_all on public.reviews for select to authenticated using (true);
      create policy permanent_users_write on public.reviews as restrictive for insert to authenticated
        with check ((auth.jwt() ->> 'is_anonymous')::boolean is false);
      create policy insert_all on public.reviews for insert to authenticated with check (true);
      grant select, insert on public.reviews to authenticated;
      grant usage on sequence public.reviews_id_seq to authenticated;`)

    const anon = await anonymous(f)
    t.error((await admin.createUser({ email: 'reviewer@example.test', password: 'reviewer password', email_confirm: true })).error)
    const permanent = await f.anon().auth.signInWithPassword({ email: 'reviewer@example.test', password: 'reviewer password' })
    t.error(permanent.error)

    const api = new pg.Pool({ host: f.project.record.dbHost, port: f.project.record.dbPort, database: f.project.record.dbName, user: f.project.record.dbApiRole, password: f.project.record.dbApiPassword })
    t.teardown(() => api.end())
    const claims = await verifyJwt(f.project.record, anon.session.access_token)
    const seen = await withRequestTransaction(api, { role: 'authenticated', claims }, DEFAULT_ROLE_TIMEOUTS, async (c) => (await c.query(`select auth.jwt() ->> 'is_anonymous' as flag`)).rows)
    t.same(seen, [{ flag: 'true' }], 'auth.jwt() carries the claim')

    const insert = async (token: string, body: string) => {
      const response = await fetch(`${f.project.baseUrl}/graphql/v1`, {
        method: 'POST',
        headers: { apikey: f.project.anonKey, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `mutation { insertIntoreviewsCollection(objects: [{ body: ${JSON.stringify(body)} }]) { affectedCount } }` }),
      })
      return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: Array<{ message: string }> } }
    }
    const refused = await insert(anon.session.access_token, 'from a guest')
    t.match(refused.body.errors, [{ message: /row-level security/ }], 'an anonymous user may not insert')
    const accepted = await insert(permanent.data.session!.access_token, 'from a member')
    t.same(accepted.body, { data: { insertIntoreviewsCollection: { affectedCount: 1 } } }, 'a permanent user may')
    const { rows } = await owner.query('select body from public.reviews')
    t.same(rows, [{ body: 'from a member' }])
  })

  await t.test('old anonymous users are removed by the operator (CLI and admin API), converted ones stay', async (t) => {
    await setAuthOptions(cp, ref, { external_anonymous_users_enabled: true })
    const old = await anonymous(f, '198.51.100.40')
    const recent = await anonymous(f, '198.51.100.41')
    const converted = await anonymous(f, '198.51.100.42')
    await setAuthOptions(cp, ref, { mailer_autoconfirm: true })
    const made = await converted.supabase.auth.updateUser({ email: 'converted@example.test', password: 'converted password' })
    await setAuthOptions(cp, ref, { mailer_autoconfirm: false })
    t.error(made.error)
    t.equal(made.data.user?.is_anonymous, false, 'converted')
    // Aged by hand: two of them made 40 days ago.
    await adminQuery(withDatabase(await serverUrl(), f.project.record.dbName), `update auth.users set created_at = now() - interval '40 days' where id = any($1::uuid[])`, [[old.id, converted.id]])

    const env = { DATABASE_URL: f.test.catalogueUrl }
    const unconfirmed = await runCli(['auth', 'users', 'purge-anonymous', ref], env)
    t.equal(unconfirmed.code, 2, 'asks for --yes')
    t.match(unconfirmed.stderr, 'deleting anonymous users cannot be undone: add --yes to confirm')
    const purged = await runCli(['auth', 'users', 'purge-anonymous', ref, '--older-than', '30', '--yes'], env)
    t.equal(purged.code, 0, purged.stderr)
    t.equal(purged.stdout, `Deleted 1 anonymous user of ${ref} created more than 30 days ago\n`)
    const ids = async () => (await adminQuery<{ id: string }>(withDatabase(await serverUrl(), f.project.record.dbName), 'select id from auth.users where id = any($1::uuid[]) order by id', [[old.id, recent.id, converted.id]])).rows.map((r) => r.id)
    t.same(await ids(), [recent.id, converted.id].sort(), 'the old guest is gone; the recent one and the converted one stay')
    const refreshed = await client(f).auth.refreshSession({ refresh_token: old.session.refresh_token })
    t.ok(refreshed.error, 'and its session with it')

    const api = (query: string) =>
      fetch(`${f.test.origin}/platform/v1/projects/${ref}/auth/anonymous-users${query}`, { method: 'DELETE', headers: { authorization: `Bearer ${f.test.config.adminToken}` } })
    const bad = await api('?older_than_days=soon')
    t.equal(bad.status, 400)
    t.match(await bad.json(), { code: 'invalid_argument', message: /whole number of days from 0 to 36500, got "soon"/ })
    const anonymousLeft = async () => (await adminQuery<{ n: number }>(withDatabase(await serverUrl(), f.project.record.dbName), 'select count(*)::int as n from auth.users where is_anonymous')).rows[0]!.n
    const before = await anonymousLeft()
    const all = await api('?older_than_days=0')
    t.equal(all.status, 200)
    t.same(await all.json(), { deleted: before, older_than_days: 0 }, 'the admin API removes the rest, this test\'s earlier guests with them')
    t.equal(await anonymousLeft(), 0)
    t.same(await ids(), [converted.id])
  })

  await t.test('off again: refused, as before', async (t) => {
    await setAuthOptions(cp, ref, { external_anonymous_users_enabled: false })
    const refused = await client(f).auth.signInAnonymously()
    t.same([refused.error?.status, refused.error?.code, refused.error?.message], DISABLED)
    t.match((await call(f, 'GET', '/settings')).body, { external: { anonymous_users: false } })
  })
})
