// The whole email-and-password journey with supabase-js against a running
// platform: sign up, confirmation mail over real SMTP, its link landing on
// the site URL with a session, sign in, refresh, update, RLS, sign out.
import t from 'tap'
import pg from 'pg'
import { withRequestTransaction } from '../../lib/db/request-transaction.ts'
import { DEFAULT_ROLE_TIMEOUTS } from '../../lib/plans.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { authFixture, call, fragmentOf, linkOf, SITE_URL } from './helpers.ts'

t.test('sign up, confirm by mail, sign in, refresh, update, RLS, sign out', async (t) => {
  const f = await authFixture(t)
  const supabase = f.anon()
  const email = 'Alice@Example.test'

  const signUp = await supabase.auth.signUp({ email, password: 'correct horse', options: { data: { name: 'Alice' } } })
  t.error(signUp.error)
  t.equal(signUp.data.session, null, 'no session before confirmation')
  t.equal(signUp.data.user?.email, 'alice@example.test')
  t.ok(signUp.data.user?.confirmation_sent_at)
  t.same(signUp.data.user?.user_metadata, { name: 'Alice' })

  const notYet = await supabase.auth.signInWithPassword({ email, password: 'correct horse' })
  t.equal(notYet.error?.status, 400)
  t.equal(notYet.error?.code, 'email_not_confirmed')

  const mail = await f.mail.next('alice@example.test')
  t.equal(mail.subject, 'Confirm Your Email')
  t.match(mail.html, SITE_URL, 'the default mail names the site URL')
  const link = linkOf(mail)
  t.match(link, `${f.project.baseUrl}/auth/v1/verify?token=`)
  // The browser opens the link without any apikey.
  const opened = await fetch(link, { redirect: 'manual' })
  t.equal(opened.status, 303)
  const location = opened.headers.get('location')!
  t.ok(location.startsWith(`${SITE_URL}#`), `lands on the site URL: ${location}`)
  const landed = fragmentOf(location)
  t.equal(landed.type, 'signup')
  t.equal(landed.token_type, 'bearer')
  const { data: fromLink, error: setError } = await supabase.auth.setSession({ access_token: landed.access_token!, refresh_token: landed.refresh_token! })
  t.error(setError)
  t.ok(fromLink.user?.email_confirmed_at, 'confirmed by the link')
  t.equal(fromLink.user?.user_metadata.email_verified, true)

  const again = await fetch(link, { redirect: 'manual' })
  const spent = fragmentOf(again.headers.get('location')!)
  t.equal(spent.error_code, 'otp_expired', 'a link works once')
  t.equal(spent.error, 'access_denied')

  const signIn = await supabase.auth.signInWithPassword({ email, password: 'correct horse' })
  t.error(signIn.error)
  const session = signIn.data.session!
  const claims = await verifyJwt(f.project.record, session.access_token)
  t.match(claims, {
    aud: 'authenticated', role: 'authenticated', sub: signIn.data.user!.id, email: 'alice@example.test', phone: '',
    aal: 'aal1', is_anonymous: false, iss: `${f.project.baseUrl}/auth/v1`,
    app_metadata: { provider: 'email', providers: ['email'] }, user_metadata: { name: 'Alice' },
  })
  t.equal((claims.amr as Array<{ method: string }>)[0]!.method, 'password')
  t.equal(claims.session_id, signIn.data.session!.access_token && claims.session_id)
  t.equal((claims.exp as number) - (claims.iat as number), 3600)

  const wrong = await supabase.auth.signInWithPassword({ email, password: 'wrong horse' })
  t.equal(wrong.error?.status, 400)
  t.equal(wrong.error?.code, 'invalid_credentials')
  t.equal(wrong.error?.message, 'Invalid login credentials')
  const nobody = await supabase.auth.signInWithPassword({ email: 'nobody@example.test', password: 'whatever1' })
  t.equal(nobody.error?.code, 'invalid_credentials')

  const refreshed = await supabase.auth.refreshSession()
  t.error(refreshed.error)
  t.not(refreshed.data.session!.refresh_token, session.refresh_token, 'refresh tokens rotate')
  const reused = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
  t.equal(reused.status, 200, 'the parent of the current token gets it back (GoTrue)')
  t.equal(reused.body.refresh_token, refreshed.data.session!.refresh_token)

  const updated = await supabase.auth.updateUser({ data: { name: 'Alice B', drop: null }, password: 'new password 2' })
  t.error(updated.error)
  t.same(updated.data.user?.user_metadata, { name: 'Alice B', email_verified: true })
  const same = await supabase.auth.updateUser({ password: 'new password 2' })
  t.equal(same.error?.status, 422)
  t.equal(same.error?.code, 'same_password')
  const weak = await supabase.auth.updateUser({ password: 'abc' })
  t.equal(weak.error?.status, 422)
  t.equal(weak.error?.code, 'weak_password')
  t.equal((await supabase.auth.signInWithPassword({ email, password: 'correct horse' })).error?.code, 'invalid_credentials', 'old password no longer works')
  const withNew = await supabase.auth.signInWithPassword({ email, password: 'new password 2' })
  t.error(withNew.error)

  // A table whose policy reads auth.uid(): each user sees only their rows.
  const owner = new pg.Client({ connectionString: ownerUrlOf(f.project.record) })
  await owner.connect()
  await owner.query(`create table public.notes (id serial primary key, user_id uuid not null references auth.users (id), body text);
    alter table public.notes enable row level security;
    create policy own on public.notes for all using (user_id = auth.uid()) with check (user_id = auth.uid());`)
  const other = await f.admin().auth.admin.createUser({ email: 'bob@example.test', password: 'bob password', email_confirm: true })
  t.error(other.error)
  await owner.query(`insert into public.notes (user_id, body) values ($1, 'alice 1'), ($1, 'alice 2'), ($2, 'bob 1')`, [withNew.data.user!.id, other.data.user!.id])
  const joined = await owner.query(`select u.email, count(*)::int as n from public.notes n join auth.users u on u.id = n.user_id group by u.email order by u.email`)
  t.same(joined.rows, [{ email: 'alice@example.test', n: 2 }, { email: 'bob@example.test', n: 1 }], 'auth.users joins with project tables')
  await owner.end()
  const api = new pg.Pool({ host: f.project.record.dbHost, port: f.project.record.dbPort, database: f.project.record.dbName, user: f.project.record.dbApiRole, password: f.project.record.dbApiPassword })
  t.teardown(() => api.end())
  const aliceClaims = await verifyJwt(f.project.record, withNew.data.session!.access_token)
  const rows = await withRequestTransaction(api, { role: 'authenticated', claims: aliceClaims }, DEFAULT_ROLE_TIMEOUTS, async (c) => (await c.query('select body, auth.uid() as uid, auth.jwt() ->> \'aal\' as aal from public.notes order by body')).rows)
  t.same(rows.map((r) => r.body), ['alice 1', 'alice 2'])
  t.equal(rows[0].uid, withNew.data.user!.id)
  t.equal(rows[0].aal, 'aal1')
  const anonRows = await withRequestTransaction(api, { role: 'anon', claims: { role: 'anon' } }, DEFAULT_ROLE_TIMEOUTS, async (c) => (await c.query('select * from public.notes')).rows)
  t.same(anonRows, [], 'nobody sees no rows')
  const peek = await withRequestTransaction(api, { role: 'authenticated', claims: aliceClaims }, DEFAULT_ROLE_TIMEOUTS, (c) => c.query('select * from auth.users').then(() => 'read', (e: Error) => e.message))
  t.match(peek, /permission denied/, 'auth tables are not readable by API roles')

  const token = withNew.data.session!.access_token
  const out = await supabase.auth.signOut()
  t.error(out.error)
  const afterLogout = await call(f, 'GET', '/user', undefined, { token })
  t.equal(afterLogout.status, 403)
  t.equal(afterLogout.body.code, 'session_not_found')
  const refreshAfter = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: withNew.data.session!.refresh_token })
  t.equal(refreshAfter.status, 400)
  t.equal(refreshAfter.body.code, 'refresh_token_not_found')
})
